package sink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// idRange are the ids from first to last.
func idRange(first, last int64) []int64 {
	var out []int64
	for i := first; i <= last; i++ {
		out = append(out, i)
	}
	return out
}

func people(n int) []v1.Employee {
	var es []v1.Employee
	for i := int64(1); i <= int64(n); i++ {
		manager := int64(0)
		if i > 1 {
			manager = 1
		}
		if i%5 == 0 {
			manager = 9999 // a manager the collection never lists
		}
		es = append(es, sinktest.Employee(i, i%3+1, manager, "Engineer"))
	}
	return es
}

func served(t *testing.T, s *sink.Store) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for page := int64(1); ; page++ {
		list, err := s.ListEmployees(context.Background(), v1.Page{Number: page, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 0 {
			return out
		}
		for _, e := range list.Items {
			out[e.ID] = string(e.AppendJSON(nil))
		}
	}
}

func historyRows(t *testing.T, s *sink.Store) int {
	t.Helper()
	var n int
	if err := sinktest.DB(s).QueryRowContext(context.Background(), `SELECT count(*) FROM employees_history`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLoadRoundTrip(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		es := people(23)
		// A shifting walk sees a record twice: the last copy counts once.
		dup := sinktest.Employee(7, 1, 1, "Engineer")
		res := sinktest.WalkEmployees(t, s, append(slices.Clone(es), dup), 10, sink.MergeOptions{Complete: true})
		if res.Inserted != 23 || res.Updated != 0 || res.Unchanged != 0 || res.Deleted != 0 {
			t.Fatalf("first load: %+v", res)
		}
		got := served(t, s)
		if len(got) != 23 {
			t.Fatalf("served %d", len(got))
		}
		es[6] = dup
		for _, e := range es {
			if want := string(e.AppendJSON(nil)); got[e.ID] != want {
				t.Errorf("employee %d\n got %s\nwant %s", e.ID, got[e.ID], want)
			}
		}
		var fks, stubs int
		if err := sinktest.DB(s).QueryRowContext(context.Background(), `SELECT count(*) FROM employees WHERE listed AND working_pattern_id = 9 AND holiday_allowance_id = 3 AND department_id IS NOT NULL`).Scan(&fks); err != nil {
			t.Fatal(err)
		}
		if err := sinktest.DB(s).QueryRowContext(context.Background(), `SELECT count(*) FROM employees WHERE id = 9999 AND NOT listed`).Scan(&stubs); err != nil {
			t.Fatal(err)
		}
		if fks != 23 || stubs != 1 {
			t.Errorf("foreign keys on %d rows (want 23), unlisted manager rows %d (want 1)", fks, stubs)
		}
		var unlistedDeps int
		if err := sinktest.DB(s).QueryRowContext(context.Background(), `SELECT count(*) FROM departments WHERE NOT listed`).Scan(&unlistedDeps); err != nil {
			t.Fatal(err)
		}
		deps, _ := s.ListRecords(context.Background(), "departments", v1.Page{Number: 1, Size: 25})
		if deps.Total != 0 || unlistedDeps != 3 {
			t.Errorf("departments served %d (want 0: never walked), unlisted rows %d (want 3)", deps.Total, unlistedDeps)
		}
	})
}

func TestLoadUnchangedWritesNothing(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		es := people(40)
		sinktest.WalkEmployees(t, s, es, 7, sink.MergeOptions{Complete: true})
		v0, _ := s.Version(ctx)
		h0 := historyRows(t, s)
		res := sinktest.WalkEmployees(t, s, es, 13, sink.MergeOptions{Complete: true})
		if res.Inserted != 0 || res.Updated != 0 || res.Unchanged != 40 || res.Deleted != 0 {
			t.Errorf("second load of the same data: %+v", res)
		}
		if v1, _ := s.Version(ctx); v1 != v0 {
			t.Errorf("the warehouse version moved (%d → %d): something was written", v0, v1)
		}
		if h1 := historyRows(t, s); h1 != h0 {
			t.Errorf("history grew %d → %d", h0, h1)
		}
	})
}

func TestLoadChangesAndSoftDeletes(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		es := people(30)
		sinktest.WalkEmployees(t, s, es, 10, sink.MergeOptions{Complete: true})
		next := slices.Clone(es)
		next[4] = sinktest.Employee(5, 3, 9999, "Principal Engineer") // changed title and department
		next = slices.Delete(next, 9, 10)                             // id 10 leaves
		next = append(next, sinktest.Employee(31, 1, 1, "New"))       // id 31 joins
		res := sinktest.WalkEmployees(t, s, next, 10, sink.MergeOptions{Complete: true})
		if res.Inserted != 1 || res.Updated != 1 || res.Unchanged != 28 || res.Deleted != 1 {
			t.Fatalf("counts %+v, want 1 inserted, 1 updated, 28 unchanged, 1 deleted", res)
		}
		got := served(t, s)
		if _, ok := got[10]; ok || len(got) != 30 {
			t.Errorf("id 10 still served, or %d served", len(got))
		}
		var deletedAt *string
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT CAST(deleted_at AS text) FROM employees WHERE id = 10`).Scan(&deletedAt); err != nil || deletedAt == nil {
			t.Errorf("id 10 was not kept with deleted_at: %v", err)
		}
		var versions int
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT count(*) FROM employees_history WHERE id = 5`).Scan(&versions); err != nil || versions != 2 {
			t.Errorf("history of id 5: %d versions, %v", versions, err)
		}
		// "Who was in which department" on a date: one query over the history.
		var current, open int
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT count(*) FROM employees_history WHERE valid_to IS NULL AND listed AND deleted_at IS NULL`).Scan(&current); err != nil {
			t.Fatal(err)
		}
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT count(*) FROM employees_history WHERE id = 5 AND valid_to IS NULL AND department_id = 3`).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if current != 30 || open != 1 {
			t.Errorf("current history versions %d (want 30), id 5 current in dept 3: %d", current, open)
		}
		// Back again: a soft-deleted record that reappears is served again.
		res = sinktest.WalkEmployees(t, s, append(next, sinktest.Employee(10, 2, 1, "Engineer")), 10, sink.MergeOptions{Complete: true})
		if res.Inserted != 1 || res.Deleted != 0 {
			t.Errorf("reappearance: %+v", res)
		}
		if _, ok := served(t, s)[10]; !ok {
			t.Error("id 10 not served after it reappeared")
		}
	})
}

// holdMessages are a merge's holds' messages, joined.
func holdMessages(res sink.MergeResult) string {
	var msgs []string
	for _, h := range res.Holds {
		msgs = append(msgs, h.Message)
	}
	return strings.Join(msgs, "; ")
}

// TestShrinkGuard holds the present deletion guard, folded into the load guards: a complete walk
// that would delete more than max(10 records, 10 %) of the served records is held whole.
func TestShrinkGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		n, keep    int
		opts       sink.MergeOptions
		deleted    int64
		refused    int64
		reasonHas  string
		servedLeft int
	}{
		{"within the share", 200, 185, sink.MergeOptions{Complete: true}, 15, 0, "", 185},
		{"over the share", 200, 170, sink.MergeOptions{Complete: true}, 0, 30, "employees: 200 → 170 records (30, 15%, would be deleted; at most 10% allowed)", 200},
		{"over the share but fewer than 10 records", 20, 12, sink.MergeOptions{Complete: true}, 8, 0, "", 12},
		{"custom share", 200, 120, sink.MergeOptions{Complete: true, Guards: sink.GuardSettings{MaxShrink: 0.5}}, 80, 0, "", 120},
		{"accepted by key", 200, 120, sink.MergeOptions{Complete: true, Accept: []string{"shrink:employees"}}, 80, 0, "", 120},
		{"allowed mass delete", 200, 40, sink.MergeOptions{Complete: true, AllowMassDelete: true}, 160, 0, "", 40},
		{"source lists nobody", 200, 0, sink.MergeOptions{Complete: true, Guards: sink.GuardSettings{MaxShrink: 1}}, 0, 200, "employees: the source lists none while the warehouse serves 200", 200},
		{"incomplete walk deletes nothing", 200, 40, sink.MergeOptions{}, 0, 0, "", 200},
		{"dry run", 200, 190, sink.MergeOptions{Complete: true, DryRun: true}, 10, 0, "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			backends(t, func(t *testing.T, s *sink.Store) {
				es := people(tt.n)
				sinktest.WalkEmployees(t, s, es, 100, sink.MergeOptions{Complete: true})
				res := sinktest.WalkEmployees(t, s, es[:tt.keep], 100, tt.opts)
				if res.Deleted != tt.deleted || res.DeletionsRefused != tt.refused || !strings.Contains(holdMessages(res), tt.reasonHas) ||
					res.Held() != (tt.reasonHas != "") {
					t.Errorf("result %+v: %s", res, holdMessages(res))
				}
				if n := len(served(t, s)); n != tt.servedLeft {
					t.Errorf("%d served after, want %d", n, tt.servedLeft)
				}
			})
		})
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		v0, _ := s.Version(ctx)
		res := sinktest.WalkEmployees(t, s, people(12), 5, sink.MergeOptions{Complete: true, DryRun: true})
		if res.Inserted != 12 {
			t.Errorf("dry run counts %+v", res)
		}
		if v1, _ := s.Version(ctx); v1 != v0 || len(served(t, s)) != 0 {
			t.Error("the dry run wrote")
		}
	})
}

func TestLoadWorkingPatterns(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		var ps []v1.WorkingPattern
		for _, raw := range []string{
			`{"id":31,"name":"Office","default":true,"total_hours":"37.5","mon":true,"tue":true,"wed":true,"thu":true,"fri":true,"sat":false,"sun":false,"mon_hr":"7.5","tue_hr":"7.5","wed_hr":"7.5","thu_hr":"7.5","fri_hr":"7.5","sat_hr":"0.0","sun_hr":"0.0","created_at":"2020-01-01T00:00:00Z","updated_at":"2020-01-01T00:00:00Z"}`,
			`{"id":32,"name":"Weekend","default":false,"total_hours":"16.00","mon":false,"tue":false,"wed":false,"thu":false,"fri":false,"sat":true,"sun":true,"mon_hr":"0","tue_hr":"0","wed_hr":"0","thu_hr":"0","fri_hr":"0","sat_hr":"8","sun_hr":"8","created_at":"2020-01-01T00:00:00+01:00","updated_at":"2020-01-01T00:00:00Z","colour":"red"}`,
		} {
			var p v1.WorkingPattern
			if err := json.Unmarshal([]byte(raw), &p); err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		l, err := s.BeginLoad(ctx, sink.WorkingPatterns)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.AddWorkingPatterns(ctx, ps); err != nil {
			t.Fatal(err)
		}
		// The seeded default is not the source's: a complete walk retires it, and the guard,
		// which protects the source's records, lets a first sync into a new warehouse do so; it
		// is no deletion of the source's.
		res, err := l.Merge(ctx, sink.MergeOptions{Complete: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Inserted != 2 || res.Deleted != 0 || res.SeedRetired != 1 || len(res.Holds) != 0 {
			t.Errorf("counts %+v", res)
		}
		list, err := s.ListWorkingPatterns(ctx, v1.Page{Number: 1, Size: 25})
		if err != nil || list.Total != 2 {
			t.Fatalf("served %+v %v", list, err)
		}
		for i := range ps {
			if got, want := string(list.Items[i].AppendJSON(nil)), string(ps[i].AppendJSON(nil)); got != want {
				t.Errorf("pattern\n got %s\nwant %s", got, want)
			}
		}
	})
}

// The seeded default pattern gives way to the source's patterns without tripping the guard or
// counting as deleted (nor as a deletion candidate, which would make a sync walk again to
// confirm it), stays while the source lists none, is replaced, counted new, by a pattern of the
// source's of its id, and never shields the source's own records from the guard.
func TestSeedAndTheGuard(t *testing.T) {
	t.Parallel()
	pattern := func(id int64) v1.WorkingPattern {
		var p v1.WorkingPattern
		raw := fmt.Sprintf(`{"id":%d,"name":"P%d","default":false,"total_hours":"40.0"}`, id, id)
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// staged is a load with the working patterns ids staged, not merged; the caller closes it.
	staged := func(t *testing.T, s *sink.Store, ids []int64) *sink.Load {
		ctx := context.Background()
		l, err := s.BeginLoad(ctx, sink.WorkingPatterns)
		if err != nil {
			t.Fatal(err)
		}
		var ps []v1.WorkingPattern
		for _, id := range ids {
			ps = append(ps, pattern(id))
		}
		if err := l.AddWorkingPatterns(ctx, ps); err != nil {
			l.Close()
			t.Fatal(err)
		}
		return l
	}
	merge := func(t *testing.T, s *sink.Store, ids []int64, opts sink.MergeOptions) sink.MergeResult {
		l := staged(t, s, ids)
		defer l.Close()
		res, err := l.Merge(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	candidates := func(t *testing.T, s *sink.Store, ids []int64) int64 {
		l := staged(t, s, ids)
		defer l.Close()
		n, err := l.DeletionCandidates(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	complete := sink.MergeOptions{Complete: true}
	tests := []struct {
		name       string
		before     []int64 // a first walk, when not nil
		walk       []int64
		inserted   int64
		deleted    int64
		retired    int64
		refused    int64
		reasonHas  string
		servedLeft int64
	}{
		{"first sync retires the seed", nil, []int64{31, 32}, 2, 0, 1, 0, "", 2},
		{"the source's own id 1 replaces the seed", nil, []int64{1, 31}, 2, 0, 0, 0, "", 2},
		{"a source without patterns keeps the seed", nil, []int64{}, 0, 0, 0, 0, "", 1},
		{"an emptied source is still held", []int64{31, 32}, []int64{}, 0, 0, 0, 2, "lists none while the warehouse serves 2", 2},
		{"the share counts source records only", idRange(31, 70), idRange(31, 58), 0, 0, 0, 12, "40 → 28 records", 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			backends(t, func(t *testing.T, s *sink.Store) {
				if tt.before != nil {
					merge(t, s, tt.before, complete)
				}
				if tt.before == nil {
					// A new warehouse's seed is no deletion candidate: a sync has nothing to confirm.
					if n := candidates(t, s, tt.walk); n != 0 {
						t.Errorf("%d deletion candidates in a new warehouse, want 0", n)
					}
				}
				res := merge(t, s, tt.walk, complete)
				if res.Inserted != tt.inserted || res.Updated != 0 || res.Deleted != tt.deleted || res.SeedRetired != tt.retired || res.DeletionsRefused != tt.refused || !strings.Contains(holdMessages(res), tt.reasonHas) ||
					(tt.reasonHas == "" && len(res.Holds) > 0) {
					t.Errorf("result %+v: %s", res, holdMessages(res))
				}
				list, err := s.ListWorkingPatterns(context.Background(), v1.Page{Number: 1, Size: 100})
				if err != nil || list.Total != tt.servedLeft {
					t.Errorf("served %d working patterns (%v), want %d", list.Total, err, tt.servedLeft)
				}
			})
		})
	}
}

// A run's ledger row holds what the run did.
func TestRunLedger(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		start := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
		id, err := s.StartRun(ctx, "run-1", sink.Employees, start)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := s.Runs(ctx, 10)
		if err != nil || len(runs) != 1 || runs[0].Status != sink.RunRunning {
			t.Fatalf("runs %+v %v", runs, err)
		}
		r := sink.Run{ID: id, FinishedAt: start.Add(time.Minute), Status: sink.RunHeld, Pages: 3, Requests: 4,
			Retries: 1, RateLimited: 1, Walks: 1, TotalReported: 250, RecordsSeen: 250, DistinctRecords: 250,
			Inserted: 1, Updated: 2, Unchanged: 247, DeletionsRefused: 30, Error: "guard"}
		if err := s.FinishRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		runs, err = s.Runs(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		r.RunID, r.Resource, r.StartedAt, r.Account = "run-1", sink.Employees, start, "default" // the account of Options.Account's default
		if fmt.Sprintf("%+v", runs[0]) != fmt.Sprintf("%+v", r) {
			t.Errorf("ledger row\n got %+v\nwant %+v", runs[0], r)
		}
	})
}
