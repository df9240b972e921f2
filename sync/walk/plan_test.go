package walk_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/walk"
)

// TestPlanSaysWhatTheRunWillDo: a run told to plan (Options.Planned) says, before it walks
// anything, each collection's pages: on a new warehouse by each collection's first page (read
// once: a one-page collection's walk takes it as its own, a longer one reads it again at its
// start), afterwards by the ledger's last run, reading nothing to plan. The plan's requests are
// the run's, each collection's result is told as it finishes (before the next one's first
// page), and the progress says which collection of how many.
func TestPlanSaysWhatTheRunWillDo(t *testing.T) {
	t.Parallel()
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 230, Seed: 9})
	resources := []sink.Resource{"departments", sink.WorkingPatterns, sink.Employees, "sicknesses", "statutory_holiday_countries"}
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			opts := acct.Options()
			opts.Unavailable = map[string]int{"statutory_holiday_countries": 404}
			up, store, c := newSync(t, backend, 0, opts)
			ctx := context.Background()
			run := func() (walk.Plan, []string, []walk.Result, int) {
				var plan walk.Plan
				var events []string
				before := up.NumRequests()
				sopts := walk.Options{Concurrency: 2,
					Planned: func(p walk.Plan) {
						plan = p
						events = append(events, fmt.Sprintf("plan after %d requests", up.NumRequests()-before))
					},
					Progress: func(p walk.Progress) {
						if p.PagesDone == 1 {
							events = append(events, fmt.Sprintf("%d/%d %s", p.Collection, p.Collections, p.Resource))
						}
					},
					Finished: func(r walk.Result) { events = append(events, "finished "+string(r.Resource)) },
				}
				rs, err := walk.New(c, store, sopts).Run(ctx, resources)
				if err != nil {
					t.Fatal(err)
				}
				return plan, events, rs, up.NumRequests() - before
			}

			// A new warehouse: sized by the first pages.
			plan, events, rs, requests := run()
			wantPages := map[sink.Resource]int64{"departments": 1, sink.WorkingPatterns: 1, sink.Employees: 3,
				"sicknesses": int64((len(acct.Collections["sicknesses"]) + 99) / 100), "statutory_holiday_countries": 0}
			if plan.Probes != int64(len(resources)) {
				t.Errorf("first plan: %d probes, want one per collection (%d)", plan.Probes, len(resources))
			}
			for i, p := range plan.Collections {
				want := walk.SizedByFirstPage
				if p.Resource == "statutory_holiday_countries" {
					want = walk.NotOffered
				}
				if p.Resource != resources[i] || p.Pages != wantPages[p.Resource] || p.Sized != want {
					t.Errorf("first plan, collection %d: %s %d pages sized by %q; want %s %d pages by %q",
						i, p.Resource, p.Pages, p.Sized, resources[i], wantPages[resources[i]], want)
				}
			}
			// Every collection walked once and as planned; the run's requests are the plan's.
			var made int64
			for _, r := range rs {
				made += r.Requests
				if r.Status == sink.RunOK && (r.Walks != 1 || r.Pages != wantPages[r.Resource]) {
					t.Errorf("%s: %d walks, %d pages; want 1 walk of %d pages", r.Resource, r.Walks, r.Pages, wantPages[r.Resource])
				}
			}
			if plan.Probes+plan.Requests() != int64(requests) || made != int64(requests) {
				t.Errorf("first run: planned %d+%d requests, the results count %d, the source answered %d",
					plan.Probes, plan.Requests(), made, requests)
			}
			want := fmt.Sprint([]string{"plan after 5 requests",
				"1/5 departments", "finished departments", "2/5 working_patterns", "finished working_patterns",
				"3/5 employees", "finished employees", "4/5 sicknesses", "finished sicknesses", "finished statutory_holiday_countries"})
			if fmt.Sprint(events) != want {
				t.Errorf("first run told\n %v\nwant\n %v", events, want)
			}

			// Again: sized by the ledger, nothing read to plan.
			plan, events, _, requests = run()
			if plan.Probes != 0 || plan.Requests() != int64(requests) || events[0] != "plan after 0 requests" {
				t.Errorf("second plan: %d probes, %d requests planned, %d made; told %v", plan.Probes, plan.Requests(), requests, events)
			}
			for _, p := range plan.Collections {
				want := walk.SizedByLastRun
				if p.Resource == "statutory_holiday_countries" {
					want = walk.NotOffered
				}
				if p.Pages != wantPages[p.Resource] || p.Sized != want {
					t.Errorf("second plan: %s %d pages sized by %q; want %d by %q", p.Resource, p.Pages, p.Sized, wantPages[p.Resource], want)
				}
			}
		})
	}
}
