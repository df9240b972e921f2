package events_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestMain runs the tests through sinktest.Main, which drops the databases they make on
// Postgres (and the template they copy) when they end.
func TestMain(m *testing.M) { sinktest.Main(m) }

// movedClock is a clock the test moves (Add), from 1 June 2026, 09:00 UTC: the warehouse's and
// the deliveries' (sink.Options.Now, DeliverOptions.Now).
type movedClock struct{ ns atomic.Int64 }

func newMovedClock() *movedClock {
	c := &movedClock{}
	c.ns.Store(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *movedClock) Now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *movedClock) Add(d time.Duration) { c.ns.Add(int64(d)) }
