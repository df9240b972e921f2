package sink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// eventClock is a clock the test moves.
type eventClock struct{ ns atomic.Int64 }

func (c *eventClock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }
func (c *eventClock) set(s string)   { c.ns.Store(mustTime(s).UnixNano()) }
func mustTime(s string) time.Time    { t, err := time.Parse(time.RFC3339, s); must(err); return t }
func must(err error) {
	if err != nil {
		panic(err)
	}
}
func eventKey(e sink.Event) string  { return fmt.Sprintf("%d %s", e.EmployeeID, e.Type) }
func eventAt(e sink.Event) string   { return e.EffectiveAt.Format(time.RFC3339) }
func (c *eventClock) stamp() string { return c.Now().Format(time.RFC3339) }
func keys(es []sink.Event) (out []string) {
	for _, e := range es {
		out = append(out, eventKey(e))
	}
	return out
}
func sortedKeys(es []sink.Event) (o []string) { o = keys(es); slices.Sort(o); return o }

// eventStore is a store of backend whose clock the test moves, set at start (RFC 3339).
func eventStore(t *testing.T, backend, start string) (*sink.Store, *eventClock) {
	t.Helper()
	clock := &eventClock{}
	clock.set(start)
	return sinktest.Store(t, backend, sink.Options{Now: clock.Now}), clock
}

// eventPerson is employee id of department dept, with line manager manager (0: none), as
// built locally: written from its fields (no Sent), which the tests change.
func eventPerson(id, dept, manager int64, title, joined string) v1.Employee {
	e := sinktest.Employee(id, dept, manager, title)
	e.CompanyJoinDate, e.Sent = joined, nil
	return e
}

// eventPeople are the employees of the events tests: ids 1 to n, current, in department 1,
// with line manager 1.
func eventPeople(n int) []v1.Employee {
	out := make([]v1.Employee, n)
	for i := range out {
		out[i] = eventPerson(int64(i+1), 1, 1, "Engineer", "2020-01-01")
	}
	out[0] = eventPerson(1, 1, 0, "Chief", "2019-01-01")
	return out
}

func byID(es []v1.Employee, id int64) *v1.Employee {
	for i := range es {
		if es[i].ID == id {
			return &es[i]
		}
	}
	panic(id)
}

// TestEventsFromLoads walks a workforce through joiners, movers and leavers on both backends
// with a clock the test controls, across the change to British Summer Time (29 March 2026,
// 01:00 UTC): the first load takes a baseline and tells nothing; joiners and leavers dated
// ahead are scheduled and take effect at local midnight, which is 23:00 UTC once the clocks
// have gone forward; a moved date withdraws the pending event; a leaving taken back is
// cancelled; a leaver back is a rehire; a load that changes nothing tells nothing; and the
// feed numbers the published events 1, 2, 3… in the order they took effect.
func TestEventsFromLoads(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, clock := eventStore(t, backend, "2026-03-27T12:00:00Z")
			walk := func(es []v1.Employee) sink.EventsResult {
				t.Helper()
				// Clones: the load keeps nothing of them, the test changes them after.
				res := sinktest.WalkEmployees(t, s, slices.Clone(es), 50, sink.MergeOptions{Complete: true, AllowMassDelete: true, RunID: "run-" + clock.stamp()})
				return res.Events
			}
			var seen int64
			published := func(what string, want ...string) []sink.Event {
				t.Helper()
				got, err := s.Events(ctx, seen, 1000)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range got {
					seen++
					if e.Seq != seen || e.State != sink.EventPublished || e.EffectiveAt.After(clock.Now()) {
						t.Errorf("%s: %s is #%d (%s, effective %s), want #%d published by %s", what, eventKey(e), e.Seq, e.State, eventAt(e), seen, clock.stamp())
					}
				}
				slices.Sort(want)
				if g := sortedKeys(got); !slices.Equal(g, want) {
					t.Errorf("%s: published %q, want %q", what, g, want)
				}
				return got
			}
			pending := func(what string, want ...string) {
				t.Helper()
				got, err := s.ListEvents(ctx, sink.EventFilter{State: sink.EventPending})
				if err != nil {
					t.Fatal(err)
				}
				var g []string
				for _, e := range got {
					g = append(g, eventKey(e)+" at "+eventAt(e))
				}
				slices.Sort(g)
				slices.Sort(want)
				if !slices.Equal(g, want) {
					t.Errorf("%s: pending %q, want %q", what, g, want)
				}
			}

			people := eventPeople(12)
			if r := walk(people); !r.Baseline || r.Derived != 0 {
				t.Errorf("first load: %+v, want the baseline and nothing derived", r)
			}
			published("first load")
			if r := walk(people); r.Baseline || r.Derived != 0 {
				t.Errorf("the same load again: %+v, want nothing derived", r)
			}

			// 13 joins on 1 April (ahead), 14 joined last week; 3 moves department and title;
			// 4's last day is Sunday 29 March, the day the clocks go forward; 5 is gone.
			clock.set("2026-03-27T13:00:00Z")
			next := append(slices.Clone(people), eventPerson(13, 1, 1, "Analyst", "2026-04-01"), eventPerson(14, 1, 1, "Analyst", "2026-03-20"))
			*byID(next, 3) = eventPerson(3, 2, 1, "Lead engineer", "2020-01-01")
			byID(next, 4).LeavingDate = "2026-03-29"
			next = slices.DeleteFunc(next, func(e v1.Employee) bool { return e.ID == 5 })
			walk(next)
			got := published("joiners, a mover, leavers", "13 joiner.scheduled", "14 joiner.effective", "3 mover", "4 leaver.scheduled", "5 leaver.effective")
			for _, e := range got {
				if e.Type == sink.EventMover {
					var members []string
					for _, c := range e.Data.Changes {
						members = append(members, c.Member+" "+string(c.Before)+" → "+string(c.After))
					}
					if want := []string{`department {"id":1} → {"id":2}`, `job_title "Engineer" → "Lead engineer"`}; !slices.Equal(members, want) {
						t.Errorf("the mover's changes: %q, want %q", members, want)
					}
				}
				if e.RunID != "run-2026-03-27T13:00:00Z" {
					t.Errorf("%s names run %q", eventKey(e), e.RunID)
				}
			}
			// Local midnight after Sunday 29 March is 23:00 UTC (BST); 1 April's is 23:00 UTC on
			// 31 March.
			pending("dated ahead", "4 leaver.effective at 2026-03-29T23:00:00Z", "13 joiner.effective at 2026-03-31T23:00:00Z")

			clock.set("2026-03-29T22:59:59Z")
			if n, err := s.PublishDue(ctx); err != nil || n != 0 {
				t.Errorf("a second before local midnight: published %d (%v)", n, err)
			}
			clock.set("2026-03-29T23:00:00Z")
			if n, err := s.PublishDue(ctx); err != nil || n != 1 {
				t.Errorf("at local midnight: published %d (%v), want 1", n, err)
			}
			published("at 4's local midnight", "4 leaver.effective")

			// 13's start moves to 2 April; 6 is to leave on 30 June; 4 is back, current.
			clock.set("2026-03-30T09:00:00Z")
			byID(next, 13).CompanyJoinDate = "2026-04-02"
			byID(next, 6).LeavingDate = "2026-06-30"
			byID(next, 4).LeavingDate = ""
			walk(next)
			published("moved, scheduled, back", "13 joiner.scheduled", "6 leaver.scheduled", "4 rehire")
			pending("moved", "13 joiner.effective at 2026-04-01T23:00:00Z", "6 leaver.effective at 2026-06-30T23:00:00Z")
			withdrawn, err := s.ListEvents(ctx, sink.EventFilter{State: sink.EventWithdrawn})
			if err != nil || !slices.Equal(keys(withdrawn), []string{"13 joiner.effective"}) {
				t.Errorf("withdrawn: %q (%v), want 13's first joiner.effective", keys(withdrawn), err)
			}

			// 6 stays after all; nothing else changes.
			clock.set("2026-03-31T09:00:00Z")
			byID(next, 6).LeavingDate = ""
			walk(next)
			published("taken back", "6 leaver.cancelled")
			pending("taken back", "13 joiner.effective at 2026-04-01T23:00:00Z")
			if r := walk(next); r.Derived != 0 {
				t.Errorf("the same load again: %d derived", r.Derived)
			}
			clock.set("2026-04-02T08:00:00Z")
			walk(next) // a load publishes what has come due, as the worker's schedule does
			published("13's first day", "13 joiner.effective")
		})
	}
}

// TestEventsBrakeOnMassLeaving: a load that would make more than max(5, 5 %) leavers holds
// their events (the others go out); they wait, in the outbox, until released.
func TestEventsBrakeOnMassLeaving(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, clock := eventStore(t, backend, "2026-06-01T09:00:00Z")
			people := eventPeople(40)
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true, RunID: "baseline"})

			// Five leavers: at the limit, out.
			clock.set("2026-06-02T09:00:00Z")
			for id := int64(2); id <= 6; id++ {
				byID(people, id).LeavingDate = "2026-06-01"
			}
			res := sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true, RunID: "five"})
			if res.Events.Leavers != 5 || res.Events.Held != 0 || res.Events.Published != 5 {
				t.Errorf("five leavers: %+v, want 5 published", res.Events)
			}
			// Six, and a mover: the leavers held, the mover out.
			clock.set("2026-06-03T09:00:00Z")
			for id := int64(10); id <= 15; id++ {
				byID(people, id).LeavingDate = "2026-06-02"
			}
			byID(people, 20).JobTitle = "Principal"
			res = sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true, RunID: "six"})
			if res.Events.Leavers != 6 || res.Events.Limit != 5 || res.Events.Held != 6 || res.Events.Published != 1 {
				t.Errorf("six leavers: %+v, want 6 held and the mover published", res.Events)
			}
			n, runs, err := s.HeldEvents(ctx)
			if err != nil || n != 6 || !slices.Equal(runs, []string{"six"}) {
				t.Errorf("held: %d by %q (%v)", n, runs, err)
			}
			feed, _ := s.Events(ctx, 0, 100)
			if len(feed) != 6 || feed[5].Type != sink.EventMover {
				t.Errorf("the feed: %q, want the five leavers and the mover", keys(feed))
			}
			if _, _, err := s.ReleaseEvents(ctx, "five"); !errors.Is(err, sink.ErrNoHeldEvents) {
				t.Errorf("release of a run holding nothing: %v", err)
			}
			released, out, err := s.ReleaseEvents(ctx, "six")
			if err != nil || released != 6 || out != 6 {
				t.Errorf("release: %d released, %d published (%v)", released, out, err)
			}
			feed, _ = s.Events(ctx, 6, 100)
			if got := strings.Join(keys(feed), ","); got != "10 leaver.effective,11 leaver.effective,12 leaver.effective,13 leaver.effective,14 leaver.effective,15 leaver.effective" {
				t.Errorf("released: %s", got)
			}
		})
	}
}

// TestEventsOnlyFromCompleteLoads: a walk the collection changed under (not complete), a dry
// run and a held load derive nothing; the next complete load tells what changed since.
func TestEventsOnlyFromCompleteLoads(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _ := eventStore(t, backend, "2026-06-01T09:00:00Z")
			people := eventPeople(20)
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			byID(people, 7).JobTitle = "Staff engineer"
			for _, opts := range []sink.MergeOptions{{}, {Complete: true, DryRun: true}} {
				if res := sinktest.WalkEmployees(t, s, slices.Clone(people), 50, opts); res.Events.Derived != 0 {
					t.Errorf("%+v: derived %d", opts, res.Events.Derived)
				}
			}
			if feed, _ := s.Events(ctx, 0, 10); len(feed) != 0 {
				t.Errorf("published %q", keys(feed))
			}
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			if feed, _ := s.Events(ctx, 0, 10); !slices.Equal(keys(feed), []string{"7 mover"}) {
				t.Errorf("the complete load: %q, want 7's move", keys(feed))
			}
		})
	}
}

// TestEventsErasedWithThePerson: erasing a person deletes their events, whatever their state,
// and the next loads tell nothing of them (what the events last knew of them is taken again
// from their erased row); the others' events stay.
func TestEventsErasedWithThePerson(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, clock := eventStore(t, backend, "2026-06-01T09:00:00Z")
			people := eventPeople(20)
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			byID(people, 7).JobTitle = "Staff engineer"
			byID(people, 7).LeavingDate = "2026-09-30" // scheduled, and pending
			byID(people, 8).JobTitle = "Staff engineer"
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			if _, err := s.EraseEmployee(ctx, 7, nil, "subject request"); err != nil {
				t.Fatal(err)
			}
			all, err := s.ListEvents(ctx, sink.EventFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if got := sortedKeys(all); !slices.Equal(got, []string{"8 mover"}) {
				t.Errorf("after the erasure: %q, want 8's move alone", got)
			}
			clock.set("2026-06-02T09:00:00Z")
			if res := sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true}); res.Events.Derived != 0 {
				all, _ := s.ListEvents(ctx, sink.EventFilter{Limit: 1000})
				t.Errorf("the load after the erasure derived %d: %q", res.Events.Derived, keys(all))
			}
		})
	}
}

// TestEventsAcrossTheClockChanges: a leaving takes effect at the local midnight after the last
// day, in events.time_zone, on either side of both of the year's clock changes in London
// (29 March 2026 forward, 25 October 2026 back) and in another zone.
func TestEventsAcrossTheClockChanges(t *testing.T) {
	t.Parallel()
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		zone      *time.Location
		lastDay   string
		effective string
	}{
		{nil, "2026-03-28", "2026-03-29T00:00:00Z"}, // the midnight before the change: GMT
		{nil, "2026-03-29", "2026-03-29T23:00:00Z"}, // after it: BST
		{nil, "2026-10-24", "2026-10-24T23:00:00Z"}, // BST still at midnight
		{nil, "2026-10-25", "2026-10-26T00:00:00Z"}, // GMT again
		{newYork, "2026-12-31", "2027-01-01T05:00:00Z"},
	} {
		t.Run(tt.lastDay, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clock := &eventClock{}
			clock.set("2026-03-01T12:00:00Z")
			s := sinktest.Store(t, "sqlite", sink.Options{Now: clock.Now, Events: sink.EventSettings{Zone: tt.zone}})
			people := eventPeople(10)
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			byID(people, 4).LeavingDate = tt.lastDay
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			got, err := s.ListEvents(ctx, sink.EventFilter{State: sink.EventPending})
			if err != nil || len(got) != 1 || eventAt(got[0]) != tt.effective {
				t.Fatalf("pending: %+v (%v), want 4's leaving effective at %s", got, err, tt.effective)
			}
		})
	}
}

// TestPublishDueWithNothingDueTakesNoLock: the events job's minute, when nothing has come due,
// is a read: it neither waits for nor takes the writers' lock, which another process (here a
// second store on the warehouse) holds throughout. A write in its place waits for the lock.
func TestPublishDueWithNothingDueTakesNoLock(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			a, b, _, _ := sinktest.TwoStores(t, backend, sink.Options{})
			ctx := context.Background()
			// b takes the writers' lock as a load's transaction does: SQLite's begins immediate,
			// Postgres's locks meta's row.
			tx, err := sinktest.DB(b).BeginTxx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			if backend == "postgres" {
				if _, err := tx.ExecContext(ctx, `SELECT 1 FROM meta FOR UPDATE`); err != nil {
					t.Fatal(err)
				}
			}
			blocked, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			if _, err := a.QueueDeliveries(blocked, []string{"idp"}); err == nil {
				t.Fatal("a write went ahead while another store held the writers' lock: the test proves nothing")
			}
			within, cancel := context.WithTimeout(ctx, slowness.Bound(5*time.Second))
			defer cancel()
			if n, err := a.PublishDue(within); err != nil || n != 0 {
				t.Errorf("PublishDue with nothing due, the lock held elsewhere: %d, %v; want 0 at once", n, err)
			}
		})
	}
}
