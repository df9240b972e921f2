package demo

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/sync/walk"
)

// TestDemoReportShowsLeavers: the demo's account (its seed and default size) synced, working
// patterns and employees, and reported as the demo reports it (reportOptions, as of the
// generated data's today, 2026-06-01) has leavers in every full month shown and a 12-month
// turnover an HR director would recognise (10-14 %: UK employers lose 10-15 % a year). The
// leavers are exactly those the source gives a leaving date in the months shown (Jul 2024 to
// Jun 2026): a leaver it sends no date for is never counted in them (whether left out, or
// counted from the sync that first saw them, after the as-of day), and a Pending leaver's date
// is still to come.
func TestDemoReportShowsLeavers(t *testing.T) {
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: Employees, Seed: demoSeed, AbsenceYears: demoAbsenceYears})
	asOf := fakeupstream.Today()
	const windowFrom, lastYearFrom, asOfDay = "2024-07-01", "2025-07-01", "2026-06-01"

	// From the records: the dated leavers of the 24 months, and of the 12 ending with June 2026.
	var inWindow, inLastYear, undated, pending int64
	for _, raw := range acct.Employees {
		var e struct {
			Status      string
			LeavingDate *string `json:"leaving_date"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Status == "Pending leaver":
			pending++
		case e.Status != "Ex-employee":
		case e.LeavingDate == nil:
			undated++
		case *e.LeavingDate >= windowFrom && *e.LeavingDate <= asOfDay:
			inWindow++
			if *e.LeavingDate >= lastYearFrom {
				inLastYear++
			}
		}
	}
	if inWindow == 0 || inLastYear == 0 || undated == 0 || pending == 0 {
		t.Fatalf("the demo's account lacks a case: %d dated leavers in the 24 months, %d in the last 12, %d undated, %d pending",
			inWindow, inLastYear, undated, pending)
	}

	demoBackends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		up := sourcetest.NewServer(acct.Options())
		t.Cleanup(up.Close)
		c, err := up.NewFastClient(client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := walk.New(c, s, walk.Options{Concurrency: 2}).Run(ctx, []sink.Resource{sink.WorkingPatterns, sink.Employees}); err != nil {
			t.Fatal(err)
		}
		r, err := s.PeopleReport(ctx, reportOptions(asOf))
		if err != nil {
			t.Fatal(err)
		}
		var leavers int64
		byMonth := map[string]int64{}
		for _, m := range r.Movements {
			leavers += m.Leavers
			byMonth[m.Month] += m.Leavers
		}
		for _, m := range r.Months[:len(r.Months)-1] { // June 2026 is one day long
			if byMonth[m] == 0 {
				t.Errorf("no leavers in %s", m)
			}
		}
		if leavers != inWindow {
			t.Errorf("the report's leavers of %s to %s: %d, want the %d the source dated in them", r.Months[0], r.AsOf, leavers, inWindow)
		}
		if len(r.Turnover) == 0 {
			t.Fatal("no turnover")
		}
		last := r.Turnover[len(r.Turnover)-1]
		if last.Month != "2026-06-01" || last.Leavers12m != inLastYear || !last.Turnover12m.Valid {
			t.Errorf("turnover of the 12 months to %s: %d leavers, %v; want %d leavers and a rate", last.Month, last.Leavers12m, last.Turnover12m, inLastYear)
		}
		lo, hi := 1.0, 0.0
		for _, m := range r.Turnover {
			if m.Month >= r.Months[0] {
				lo, hi = min(lo, m.Turnover12m.Float64), max(hi, m.Turnover12m.Float64)
			}
			if m.Month >= r.Months[0] && (!m.Turnover12m.Valid || m.Turnover12m.Float64 < 0.10 || m.Turnover12m.Float64 > 0.14) {
				t.Errorf("turnover of the 12 months to %s: %d leavers, %v; want 10-14 %%", m.Month, m.Leavers12m, m.Turnover12m)
			}
		}
		t.Logf("12-month turnover to %s: %d leavers, %.2f %%; from %s, %.2f to %.2f %%", last.Month, last.Leavers12m, 100*last.Turnover12m.Float64,
			r.Months[0], 100*lo, 100*hi)
	})
}
