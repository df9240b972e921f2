package walk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/walk"
)

// dated is a record of a dated collection, with its dates ("" for none) and notes.
func dated(id int64, start, end, notes string) json.RawMessage {
	e := "null"
	if end != "" {
		e = `"` + end + `"`
	}
	return json.RawMessage(fmt.Sprintf(`{"id":%d,"employee":{"id":1},"start_date":"%s","end_date":%s,"notes":%q}`, id, start, e, notes))
}

// served is what the warehouse serves of a collection: each record's notes and dates by id;
// soft-deleted records are not served.
func served(t *testing.T, store *sink.Store, name string) map[int64]string {
	t.Helper()
	coll := v1.CollectionNamed(name)
	list, err := store.ListRecords(context.Background(), name, v1.Page{Number: 1, Size: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for i := range list.Items {
		r := &list.Items[i]
		if len(r.Sent) > 0 { // a page carries only the ID and Sent of a record kept as sent
			var sent struct {
				StartDate string `json:"start_date"`
				EndDate   string `json:"end_date"`
				Notes     string `json:"notes"`
			}
			if err := json.Unmarshal(r.Sent, &sent); err != nil {
				t.Fatalf("%s %d: %v", name, r.ID, err)
			}
			out[r.ID] = sent.StartDate + ".." + sent.EndDate + " " + sent.Notes
			continue
		}
		out[r.ID] = coll.Get(r, "start_date").Text + ".." + coll.Get(r, "end_date").Text + " " + coll.Get(r, "notes").Text
	}
	return out
}

// TestWindowedWalk: with a window policy, a run walks absences only within the window around
// today (its requests are the window's pages), writes the changes inside it, never deletes a
// record outside it, and widens to the whole collection (with the confirming walk a deletion
// always gets) when a record inside the window is missing, so that a record moved out of the
// window is updated, not deleted. A full walk comes when the last one is older than FullEvery,
// and when asked for.
func TestWindowedWalk(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			// Today is 2026-11-23: the window is 2026-08-25..2027-11-23.
			now := time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)
			absences := []json.RawMessage{
				dated(1, "2026-11-20", "2026-11-21", "inside"),
				dated(2, "2020-01-01", "2020-01-02", "far past"),
				dated(3, "2027-06-01", "2027-06-01", "inside, ahead"),
				dated(4, "2029-01-01", "2029-01-05", "far ahead"),
				dated(5, "2026-08-20", "2026-08-30", "overlaps the window's start"),
			}
			for i := range int64(150) { // two pages of history before the window
				absences = append(absences, dated(100+i, "2021-03-01", "2021-03-02", "history"))
			}
			leave := []json.RawMessage{
				// Starts before the window and ends inside it: leave requests match by start
				// date, so the window's walk neither asks for it nor misses it.
				dated(1, "2026-08-01", "2026-09-30", "starts before the window"),
				dated(2, "2026-12-01", "2026-12-02", "inside"),
			}
			up, store, c := newSync(t, backend, 3, fakeupstream.Options{Collections: map[string][]json.RawMessage{
				"absences": absences, "leave_requests": leave}})
			policy := &walk.WindowPolicy{DaysBack: 90, DaysAhead: 365, FullEvery: 7 * 24 * time.Hour}
			run := func(at time.Time, full bool, rs ...sink.Resource) []walk.Result {
				t.Helper()
				results, err := walk.New(c, store, walk.Options{Concurrency: 2, Window: policy, Full: full,
					Now: func() time.Time { return at }}).Run(ctx, rs)
				if err != nil {
					t.Fatal(err)
				}
				return results
			}
			window := func(r walk.Result) string {
				if r.Window == nil {
					return "all"
				}
				return r.Window.String()
			}

			// Never walked whole: the first run is a full walk.
			r := run(now, false, "absences")[0]
			if window(r) != "all" || r.Inserted != 155 || r.Pages != 2 {
				t.Fatalf("first run: walked %s, %d new, %d pages; want all, 155, 2", window(r), r.Inserted, r.Pages)
			}

			// The next night: one record changes inside the window, one is added, and two
			// outside it are deleted at the source. The run walks the window's one page, writes
			// the two, and deletes nothing.
			now = now.Add(24 * time.Hour)
			edited := slices.Clone(absences)
			edited[0] = dated(1, "2026-11-20", "2026-11-21", "inside, edited")
			edited = slices.Delete(edited, 3, 4) // 4, far ahead
			edited = slices.Delete(edited, 1, 2) // 2, far past
			edited = append(edited, dated(6, "2026-11-30", "2026-11-30", "new"))
			up.SetCollection("absences", edited)
			r = run(now, false, "absences")[0]
			if window(r) != "2026-08-26..2027-11-24" || r.Requests != 1 || r.Inserted != 1 || r.Updated != 1 || r.Deleted != 0 || r.Status != sink.RunOK {
				t.Fatalf("windowed run: walked %s, %d requests, %d new, %d changed, %d deleted, %s; want the window, 1, 1, 1, 0, ok",
					window(r), r.Requests, r.Inserted, r.Updated, r.Deleted, r.Status)
			}
			got := served(t, store, "absences")
			if got[2] == "" || got[4] == "" || got[1] != "2026-11-20..2026-11-21 inside, edited" || got[6] == "" {
				t.Fatalf("after the windowed run the warehouse serves 1 %q, 2 %q, 4 %q, 6 %q", got[1], got[2], got[4], got[6])
			}
			runs, err := store.Runs(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if runs[0].Window == nil || runs[0].Window.String() != "2026-08-26..2027-11-24" {
				t.Errorf("the ledger says the run walked %v", runs[0].Window)
			}

			// Record 5 moves out of the window (its dates change to 2024) and record 3 is
			// deleted: both are missing from the window's walk. The run walks the whole
			// collection to tell them apart: 5 is updated, 3 is deleted, and so are 2 and 4,
			// which the whole walk (and its confirming walk) found gone too.
			now = now.Add(24 * time.Hour)
			var moved []json.RawMessage
			for _, raw := range edited {
				switch mustID(t, raw) {
				case 3:
					continue
				case 5:
					raw = dated(5, "2024-08-20", "2024-08-30", "moved")
				}
				moved = append(moved, raw)
			}
			up.SetCollection("absences", moved)
			r = run(now, false, "absences")[0]
			if window(r) != "all" || r.Walks != 3 || r.Updated != 1 || r.Deleted != 3 || r.Status != sink.RunOK {
				t.Fatalf("a window missing records: walked %s in %d walks, %d changed, %d deleted, %s; want all, 3, 1, 3, ok",
					window(r), r.Walks, r.Updated, r.Deleted, r.Status)
			}
			got = served(t, store, "absences")
			if got[5] != "2024-08-20..2024-08-30 moved" || got[3] != "" || got[2] != "" || got[4] != "" || len(got) != len(moved) {
				t.Fatalf("after widening the warehouse serves %d records: 5 %q, 3 %q, 2 %q, 4 %q", len(got), got[5], got[3], got[2], got[4])
			}

			// That run walked the whole collection: the next is windowed again; a week after
			// it, the full walk is due; and --full walks whole whatever the policy says.
			for _, step := range []struct {
				after time.Duration
				full  bool
				want  string
			}{
				{24 * time.Hour, false, "2026-08-28..2027-11-26"},
				{7 * 24 * time.Hour, false, "all"},
				{24 * time.Hour, false, "2026-09-05..2027-12-04"},
				{0, true, "all"},
			} {
				now = now.Add(step.after)
				if r := run(now, step.full, "absences")[0]; window(r) != step.want || r.Inserted+r.Updated+r.Deleted != 0 {
					t.Errorf("%s (full %v): walked %s, wrote %d new, %d changed, %d deleted; want %s and nothing written",
						now.Format(time.DateOnly), step.full, window(r), r.Inserted, r.Updated, r.Deleted, step.want)
				}
			}

			// Leave requests match by start date: one that started before the window and
			// ends inside it is not asked for, and is not missing.
			run(now, true, "leave_requests")
			now = now.Add(24 * time.Hour)
			r = run(now, false, "leave_requests")[0]
			if window(r) == "all" || r.Walks != 1 || r.Deleted != 0 {
				t.Errorf("leave requests: walked %s in %d walks, %d deleted; want the window, 1 walk, none", window(r), r.Walks, r.Deleted)
			}
			if got := served(t, store, "leave_requests"); len(got) != 2 {
				t.Errorf("leave requests served: %v", got)
			}
		})
	}
}
