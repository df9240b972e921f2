package client

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestStatsContext(t *testing.T) {
	t.Parallel()
	if s := StatsFrom(context.Background()); s != nil {
		t.Errorf("StatsFrom(Background) = %v", s)
	}
	var s Stats
	ctx := WithStats(context.Background(), &s)
	if StatsFrom(ctx) != &s {
		t.Error("StatsFrom does not return the attached Stats")
	}
	// The adders accept a nil *Stats: a context without Stats.
	var none *Stats
	none.addRequest(true)
	none.addFailure(true)
	none.addWaited(time.Second)
	none.addBackedOff(time.Second)

	s.addRequest(false)
	s.addRequest(true)
	s.addFailure(true)
	s.addFailure(false)
	s.addWaited(time.Second)
	s.addWaited(-time.Second) // ignored
	s.addBackedOff(2 * time.Second)
	want := StatsSnapshot{Requests: 2, Retries: 1, RateLimited: 1, Failures: 2, Waited: time.Second, BackedOff: 2 * time.Second}
	if got := s.Snapshot(); got != want {
		t.Errorf("Snapshot = %+v, want %+v", got, want)
	}
}

// Stats are counted per context: concurrent calls with the same Stats add up, calls with other
// Stats or none do not touch them.
func TestStatsCountedAcrossCalls(t *testing.T) {
	t.Parallel()
	srv, _ := scriptServer(t, rateLimited(""), status(500))
	c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	var run, other Stats
	ctx := WithStats(context.Background(), &run)
	// The first call meets the 429 and the 500 (in some order with the others).
	if _, _, err := c.ListEmployees(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 5 {
				var err error
				switch i % 3 {
				case 0:
					_, _, err = c.ListEmployees(ctx, 1)
				case 1:
					_, _, err = c.ListWorkingPatterns(ctx, 1)
				default:
					_, _, err = c.ListEmployees(WithStats(context.Background(), &other), 1)
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if _, _, err := c.ListEmployees(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	got := run.Snapshot()
	want := StatsSnapshot{Requests: 3 + 6*5, Retries: 2, RateLimited: 1, Failures: 2, Waited: time.Minute}
	if got.BackedOff <= 0 {
		t.Errorf("BackedOff = %v", got.BackedOff)
	}
	got.BackedOff = 0
	if got != want {
		t.Errorf("run stats %+v, want %+v", got, want)
	}
	if o := other.Snapshot(); o.Requests != 2*5 || o.Retries != 0 {
		t.Errorf("other stats %+v", o)
	}
}
