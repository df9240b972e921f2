package sourcetest

import (
	"time"

	"github.com/hrsync/hrsync/source/client"
)

// NewFastClient returns a client of s for tests that provoke faults: unpaced, and retrying at
// once, so a test of retries and outages takes milliseconds. What opts sets is kept.
func (s *Server) NewFastClient(opts client.Options) (*client.Client, error) {
	opts.RateLimitWindow = max(opts.RateLimitWindow, time.Millisecond)
	if opts.RetryInitial == 0 {
		opts.RetryInitial, opts.RetryMax = time.Millisecond, 5*time.Millisecond
	}
	return client.New(s.URL+"/v1", s.APIKey(), opts)
}
