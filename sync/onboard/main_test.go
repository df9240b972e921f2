package onboard_test

import (
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

func TestMain(m *testing.M) { sinktest.Main(m) }

// fastClient is unpaced and retries at once, so fault tests take milliseconds.
func fastClient(t testing.TB, up *sourcetest.Server, opts client.Options) *client.Client {
	t.Helper()
	c, err := up.NewFastClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newUpstream starts a fake source of n generated employees, closed when the test ends.
func newUpstream(t testing.TB, n int, opts fakeupstream.Options) *sourcetest.Server {
	t.Helper()
	if opts.Employees == nil {
		opts.Employees = fakeupstream.Generate(n, 42)
	}
	up := sourcetest.NewServer(opts)
	t.Cleanup(up.Close)
	return up
}
