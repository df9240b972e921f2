package sink_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestLeavers: who has left, and since when, from what the source sends and what the history
// saw: a sent leaving date that has passed; the sync that first saw someone as Ex-employee (or,
// never seen otherwise, the first that saw them); the sync after which the source stopped
// listing them. A current employee, a pending leaver whose date is to come and a returner are
// no leavers.
func TestLeavers(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		emp := func(id int64, status, leaving string) v1.Employee {
			e := sinktest.Employee(id, 1, 0, "Engineer")
			e.Status, e.LeavingDate = status, leaving
			return e
		}
		walk := func(es ...v1.Employee) time.Time {
			t.Helper()
			// Allowed to soft-delete one of nine: more than the guard's default share.
			sinktest.WalkEmployees(t, s, es, 10, sink.MergeOptions{Complete: true, AllowMassDelete: true})
			return time.Now().UTC()
		}
		before := time.Now().UTC().Add(-time.Second)
		first := []v1.Employee{
			emp(1, "Current employee", ""),           // leaves at the second walk
			emp(2, "Ex-employee", "2020-05-31"),      // a sent leaving date
			emp(3, "Ex-employee", ""),                // never seen otherwise
			emp(4, "Current employee", ""),           // no longer listed at the second walk
			emp(5, "Pending leaver", "2999-01-31"),   // a date to come
			emp(6, "Current employee", "2019-01-01"), // a date left behind: a returner
			emp(7, "Ex-employee", ""),                // returns at the second walk
			emp(8, "Current employee", ""),           // current throughout
			emp(9, "Pending leaver", "2021-02-28"),   // a pending leaver whose date has passed
		}
		afterFirst := walk(first...)
		time.Sleep(1100 * time.Millisecond) // timestamps are to the second
		second := slices.Clone(first)
		second[0] = emp(1, "Ex-employee", "")
		second[6] = emp(7, "Current employee", "")
		second = slices.Delete(second, 3, 4) // id 4
		betweenWalks := time.Now().UTC().Add(-time.Second)
		afterSecond := walk(second...)

		got, err := s.Leavers(ctx, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		byID := map[int64]sink.Leaver{}
		for _, l := range got {
			byID[l.EmployeeID] = l
		}
		for _, id := range []int64{5, 6, 7, 8} {
			if l, ok := byID[id]; ok {
				t.Errorf("employee %d is no leaver, got %+v", id, l)
			}
		}
		within := func(id int64, from string, lo, hi time.Time) {
			t.Helper()
			l, ok := byID[id]
			switch {
			case !ok:
				t.Errorf("employee %d: not a leaver", id)
			case l.From != from || l.Left.Before(lo.Truncate(time.Second)) || l.Left.After(hi):
				t.Errorf("employee %d: left %v (%s), want %s within %v … %v", id, l.Left, l.From, from, lo, hi)
			}
		}
		day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
		within(1, sink.LeftOnStatus, betweenWalks, afterSecond)
		within(2, sink.LeftOnLeavingDate, day("2020-05-31"), day("2020-05-31"))
		within(3, sink.LeftOnStatus, before, afterFirst)
		within(4, sink.LeftOnUnlisted, betweenWalks, afterSecond)
		within(9, sink.LeftOnLeavingDate, day("2021-02-28"), day("2021-02-28"))
		if len(got) != 5 {
			t.Errorf("%d leavers, want 5: %+v", len(got), got)
		}
	})
}
