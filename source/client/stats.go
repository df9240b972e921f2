package client

import (
	"context"
	"sync/atomic"
	"time"
)

// Stats counts what a Client did for one run (a sync, an onboarding pass). Attach it to the
// context given to the Client's methods with WithStats; every request made with that context
// adds to it. It is safe for concurrent use.
type Stats struct {
	// Requests is the number of HTTP attempts sent, retries included.
	Requests atomic.Int64
	// Retries is the number of attempts that repeated a failed one.
	Retries atomic.Int64
	// RateLimited is the number of 429 answers.
	RateLimited atomic.Int64
	// Failures is the number of attempts that failed: transport errors and error statuses.
	Failures atomic.Int64
	// Waited is the time, in nanoseconds, spent waiting for the request budget: pacing and
	// rate-limit windows (after a 429).
	Waited atomic.Int64
	// BackedOff is the time, in nanoseconds, spent sleeping between a failed attempt (5xx,
	// dropped connection, timeout) and its retry.
	BackedOff atomic.Int64
}

// StatsSnapshot is a copy of Stats' counters at one moment.
type StatsSnapshot struct {
	Requests, Retries, RateLimited, Failures int64
	Waited, BackedOff                        time.Duration
}

// Snapshot reads the counters.
func (s *Stats) Snapshot() StatsSnapshot {
	return StatsSnapshot{
		Requests:    s.Requests.Load(),
		Retries:     s.Retries.Load(),
		RateLimited: s.RateLimited.Load(),
		Failures:    s.Failures.Load(),
		Waited:      time.Duration(s.Waited.Load()),
		BackedOff:   time.Duration(s.BackedOff.Load()),
	}
}

type statsKey struct{}

// WithStats returns a context whose requests are counted in s.
func WithStats(ctx context.Context, s *Stats) context.Context {
	return context.WithValue(ctx, statsKey{}, s)
}

// StatsFrom returns the Stats attached to ctx, or nil.
func StatsFrom(ctx context.Context) *Stats {
	s, _ := ctx.Value(statsKey{}).(*Stats)
	return s
}

// The adders below accept a nil *Stats (no Stats in the context).

func (s *Stats) addRequest(retry bool) {
	if s == nil {
		return
	}
	s.Requests.Add(1)
	if retry {
		s.Retries.Add(1)
	}
}

func (s *Stats) addFailure(rateLimited bool) {
	if s == nil {
		return
	}
	s.Failures.Add(1)
	if rateLimited {
		s.RateLimited.Add(1)
	}
}

func (s *Stats) addWaited(d time.Duration) {
	if s != nil && d > 0 {
		s.Waited.Add(int64(d))
	}
}

func (s *Stats) addBackedOff(d time.Duration) {
	if s != nil && d > 0 {
		s.BackedOff.Add(int64(d))
	}
}
