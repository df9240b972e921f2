package syncreport

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sync/walk"
)

// fakeTerminal is a terminal for the tests: a buffer that says it is one (see IsTerminal).
type fakeTerminal struct{ bytes.Buffer }

func (*fakeTerminal) IsTerminal() bool { return true }

// testClock is a clock a test moves by hand.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time          { return c.t }
func (c *testClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// reportRun plays one run to a report: a plan of three collections (departments of one page and
// employees of three, sized by their first pages; absences not offered), the pages, a log line
// of each level, and each collection's end.
func reportRun(t *testing.T, rep *Report, clk *testClock) {
	t.Helper()
	var o walk.Options
	rep.Options(&o)
	log := rep.Logger(config.Settings{})
	start := clk.now()
	result := func(r sink.Resource, status string, pages, requests, records int64, took time.Duration) walk.Result {
		return walk.Result{Run: sink.Run{Resource: r, Status: status, Pages: pages, Requests: requests, Walks: min(pages, 1),
			DistinctRecords: records, Inserted: records, StartedAt: start, FinishedAt: start.Add(took)}}
	}
	if o.Planned != nil {
		o.Planned(walk.Plan{Probes: 3, Collections: []walk.Planned{
			{Resource: "departments", Pages: 1, Requests: 0, Sized: walk.SizedByFirstPage},
			{Resource: sink.Employees, Pages: 3, Requests: 3, Sized: walk.SizedByFirstPage},
			{Resource: "absences", Sized: walk.NotOffered},
		}})
	}
	progress := func(n int, r sink.Resource, done, total int64) {
		if o.Progress != nil {
			o.Progress(walk.Progress{Resource: r, Collection: n, Collections: 3, Walk: 1, PagesDone: done, PagesTotal: total})
		}
	}
	clk.advance(time.Second)
	progress(1, "departments", 1, 1)
	log.Info("sync finished", "resource", "departments")
	log.Warn("retrying", "resource", "departments", "status", 503)
	o.Finished(result("departments", sink.RunOK, 1, 2, 8, time.Second))
	clk.advance(time.Second)
	progress(2, sink.Employees, 1, 3)
	progress(2, sink.Employees, 2, 3) // within redrawEvery of the last: not drawn
	clk.advance(time.Second)
	progress(2, sink.Employees, 3, 3)
	o.Finished(result(sink.Employees, sink.RunOK, 3, 3, 250, 2*time.Second))
	skipped := result("absences", sink.RunUnavailable, 0, 0, 0, 0)
	skipped.Error = "the account does not offer absences (source answered 404)"
	o.Finished(skipped)
	clk.advance(500 * time.Millisecond)
	rep.Close()
	rep.Close() // once
}

// logTime is the time a log line carries, which is the log's own clock.
var logTime = regexp.MustCompile(`time=\S+ `)

// TestSyncReportOnATerminal: on a terminal the report opens with the plan (the collections,
// their pages, the requests and the time they take at the account's rate), keeps one progress
// line for the whole run redrawn in place (at most every redrawEvery, and at each walk's first
// and last page), writes warnings and errors above it and no other log line, writes each
// collection's summary as it finishes, and closes with a line of totals.
func TestSyncReportOnATerminal(t *testing.T) {
	clk := &testClock{time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	var term fakeTerminal // stdout and stderr: one terminal
	rep := New(&term, &term, true, "", 60, false, clk.now)
	reportRun(t, rep, clk)
	const clear = "\r\033[K"
	want := "plan: 3 collections, 4 pages, 3 requests, ~3.06s at 60 requests a minute (sized by each collection's first page; 3 requests made to size them)\n" +
		"  pages: departments 1, employees 3, absences (not offered)\n" +
		clear + "1/3 departments: page 1/1 · 1/4 pages in all · ~3.06s left" +
		clear + `level=WARN msg=retrying resource=departments status=503` + "\n" +
		clear + "1/3 departments: page 1/1 · 1/4 pages in all · ~3.06s left" +
		clear + "departments: ok — 8 records: 8 new, 0 changed, 0 unchanged, 0 deleted; 1 pages, 2 requests, 0 retries, 0 rate-limited, 1 walks, 1s\n" +
		clear + "2/3 employees: page 1/3 · 2/4 pages in all · ~2.04s left" +
		clear + "2/3 employees: page 3/3 · 4/4 pages in all · ~0s left" +
		clear + "employees: ok — 250 records: 250 new, 0 changed, 0 unchanged, 0 deleted; 3 pages, 3 requests, 0 retries, 0 rate-limited, 1 walks, 2s\n" +
		"absences: unavailable — skipped: the account does not offer absences (source answered 404)\n" +
		"total: 3 collections in 3.5s, 4 pages, 5 requests; 258 records: 258 new, 0 changed, 0 unchanged, 0 deleted; 1 unavailable\n"
	if got := logTime.ReplaceAllString(term.String(), ""); got != want {
		t.Errorf("the terminal shows\n%q\nwant\n%q", got, want)
	}
}

// TestSyncReportPiped: piped, the report writes each collection's summary as it finishes and
// the totals, plans nothing, draws no progress, leaves the log as configured (its info lines
// included), and writes no control character.
func TestSyncReportPiped(t *testing.T) {
	clk := &testClock{time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	var out, logs bytes.Buffer
	rep := New(&out, &logs, false, "account acme: ", 60, true, clk.now)
	var o walk.Options
	rep.Options(&o)
	if o.Planned != nil || o.Progress != nil {
		t.Error("piped, the report asks for a plan or progress")
	}
	reportRun(t, rep, clk)
	want := "account acme: departments: ok (dry run: nothing written) — 8 records: 8 new, 0 changed, 0 unchanged, 0 deleted; 1 pages, 2 requests, 0 retries, 0 rate-limited, 1 walks, 1s\n" +
		"account acme: employees: ok (dry run: nothing written) — 250 records: 250 new, 0 changed, 0 unchanged, 0 deleted; 3 pages, 3 requests, 0 retries, 0 rate-limited, 1 walks, 2s\n" +
		"account acme: absences: unavailable — skipped: the account does not offer absences (source answered 404)\n" +
		"account acme: total: 3 collections in 3.5s, 4 pages, 5 requests; 258 records: 258 new, 0 changed, 0 unchanged, 0 deleted; 1 unavailable (dry run: nothing written)\n"
	if out.String() != want {
		t.Errorf("stdout\n%q\nwant\n%q", out.String(), want)
	}
	wantLogs := "level=INFO msg=\"sync finished\" resource=departments\nlevel=WARN msg=retrying resource=departments status=503\n"
	if got := logTime.ReplaceAllString(logs.String(), ""); got != wantLogs {
		t.Errorf("logs\n%q\nwant\n%q", got, wantLogs)
	}
	if s := out.String() + logs.String(); strings.ContainsAny(s, "\r\033") {
		t.Errorf("control characters piped: %q", s)
	}
}

// TestProgressLine: the line names the collection of how many, the walk after the first, the
// pages of the walk and of the run, and the time left: at the account's rate, else at the pace
// so far; cut to fit 80 columns.
func TestProgressLine(t *testing.T) {
	clk := &testClock{time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	plan := walk.Plan{Collections: []walk.Planned{
		{Resource: sink.Employees, Pages: 50, Requests: 50, Sized: walk.SizedByLastRun},
		{Resource: "absences", Pages: 360, Requests: 360, Sized: walk.SizedByLastRun},
		{Resource: "leave_requests", Pages: 510, Requests: 510, Sized: walk.SizedByLastRun},
	}}
	tests := []struct {
		name   string
		rate   int
		prefix string
		events []walk.Progress
		want   string
	}{
		{"at the rate", 60, "", []walk.Progress{
			{Resource: sink.Employees, Collection: 1, Collections: 3, Walk: 1, PagesDone: 50, PagesTotal: 50},
			{Resource: "absences", Collection: 2, Collections: 3, Walk: 1, PagesDone: 1, PagesTotal: 360},
		}, "2/3 absences: page 1/360 · 51/920 pages in all · ~14m46s left"},
		{"a second walk adds its pages", 60, "", []walk.Progress{
			{Resource: sink.Employees, Collection: 1, Collections: 3, Walk: 1, PagesDone: 50, PagesTotal: 50},
			{Resource: sink.Employees, Collection: 1, Collections: 3, Walk: 2, PagesDone: 10, PagesTotal: 50},
		}, "1/3 employees (walk 2): page 10/50 · 60/970 pages in all · ~15m28s left"},
		{"unpaced: at the pace so far", 0, "", []walk.Progress{
			{Resource: sink.Employees, Collection: 1, Collections: 3, Walk: 1, PagesDone: 46, PagesTotal: 50},
		}, "1/3 employees: page 46/50 · 46/920 pages in all · ~38s left"},
		{"cut to fit", 60, "account a-long-account-name: ", []walk.Progress{
			{Resource: "leave_requests", Collection: 3, Collections: 3, Walk: 2, PagesDone: 100, PagesTotal: 510},
		}, "account a-long-account-name: 3/3 leave_requests (walk 2): page 100/510 · 100/5…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var term fakeTerminal
			rep := New(&term, &term, true, tt.prefix, tt.rate, false, clk.now)
			rep.planned(plan)
			for _, e := range tt.events {
				clk.advance(2 * time.Second)
				rep.progress(e)
			}
			if rep.line != tt.want {
				t.Errorf("line %q\nwant %q", rep.line, tt.want)
			}
			if n := len([]rune(rep.line)); n > progressWidth {
				t.Errorf("%d characters, more than %d", n, progressWidth)
			}
		})
	}
}

// screen is what a terminal shows of out once it is all written: "\r\033[K" clears the line
// the cursor is on, and the text after it writes that line again.
func screen(out string) string {
	var b strings.Builder
	for i, part := range strings.Split(out, "\r\033[K") {
		if i > 0 {
			// Back to the start of the line, and clear it: drop what follows the last newline.
			s := b.String()
			b.Reset()
			b.WriteString(s[:strings.LastIndex(s, "\n")+1])
		}
		b.WriteString(part)
	}
	return b.String()
}

func TestScreen(t *testing.T) {
	for in, want := range map[string]string{
		"a\n\r\033[Kprogress 1\r\033[Kprogress 2":           "a\nprogress 2",
		"a\n\r\033[Kprogress\r\033[Kwarn\n\r\033[Kprogress": "a\nwarn\nprogress",
		"a\n\r\033[Kprogress\r\033[Kb\n":                    "a\nb\n",
	} {
		if got := screen(in); got != want {
			t.Errorf("screen(%q) = %q, want %q", in, got, want)
		}
	}
}

// firstSyncExample plays the first sync of a 5,000-person account at 60 requests a minute, as
// fakeupstream.GenerateAccount makes one (seed 42, a year of events), to a terminal, and
// returns what the terminal shows when absences are at their 212th page (mid) and at the end.
// docs/sync.md shows both; TestSyncDocsExample holds it to them.
func firstSyncExample(t *testing.T) (mid, end string) {
	t.Helper()
	type coll struct {
		name           sink.Resource
		pages, records int64
	}
	colls := []coll{{"departments", 1, 8}, {"divisions", 1, 4}, {"locations", 1, 6}, {"holiday_allowances", 1, 3},
		{"other_leave_reasons", 1, 9}, {"statutory_holiday_countries", 1, 6}, {"company_training_types", 1, 6},
		{sink.WorkingPatterns, 1, 6}, {sink.Employees, 50, 5000}, {"absences", 323, 32229}, {"sicknesses", 48, 4793},
		{"leave_requests", 364, 36385}, {"employee_training_courses", 54, 5335}}
	clk := &testClock{time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	var term fakeTerminal
	rep := New(&term, &term, true, "", 60, false, clk.now)
	var o walk.Options
	rep.Options(&o)
	perRequest := Paced(1, 60)
	// The plan: each collection sized by its first page, one request each; a one-page walk is
	// its probe.
	plan := walk.Plan{}
	rep.Begin(len(colls))
	for _, c := range colls {
		clk.advance(perRequest)
		plan.Probes++
		req := c.pages
		if c.pages == 1 {
			req = 0
		}
		plan.Collections = append(plan.Collections, walk.Planned{Resource: c.name, Pages: c.pages, Requests: req, Sized: walk.SizedByFirstPage})
	}
	o.Planned(plan)
	for i, c := range colls {
		start := clk.now()
		requests := c.pages + 1 // the probe, and the walk
		if c.pages == 1 {
			requests = 1
		}
		for p := int64(1); p <= c.pages; p++ {
			if c.pages > 1 {
				clk.advance(perRequest)
			}
			o.Progress(walk.Progress{Resource: c.name, Collection: i + 1, Collections: len(colls), Walk: 1, PagesDone: p, PagesTotal: c.pages})
			if c.name == "absences" && p == 212 {
				mid = screen(term.String())
			}
		}
		o.Finished(walk.Result{Run: sink.Run{Resource: c.name, Status: sink.RunOK, Pages: c.pages, Requests: requests, Walks: 1,
			DistinctRecords: c.records, Inserted: c.records, StartedAt: start, FinishedAt: clk.now()}})
	}
	rep.Close()
	return mid, screen(term.String())
}

// TestSyncDocsExample: docs/sync.md shows what the first paced sync of a 5,000-person account
// prints, mid-run and at its end, as the report prints it.
func TestSyncDocsExample(t *testing.T) {
	mid, end := firstSyncExample(t)
	doc, err := os.ReadFile("../../../../docs/sync.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"first-sync-mid": mid, "first-sync-end": end} {
		block := regexp.MustCompile("(?s)<!-- " + name + " -->\n```text\n(.*?)```\n").FindSubmatch(doc)
		if block == nil {
			t.Errorf("docs/sync.md has no block marked <!-- %s -->; it should read\n%s", name, want)
			continue
		}
		if got := string(block[1]); got != strings.TrimRight(want, "\n")+"\n" {
			t.Errorf("docs/sync.md's %s block\n%s\nwant\n%s", name, got, want)
		}
	}
}

// TestProgressLineTimesRequests: the time left is that of the requests still to make, not of
// the pages: a one-page collection the plan read makes none.
func TestProgressLineTimesRequests(t *testing.T) {
	clk := &testClock{time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	var term fakeTerminal
	rep := New(&term, &term, true, "", 60, false, clk.now)
	rep.planned(walk.Plan{Probes: 3, Collections: []walk.Planned{
		{Resource: "departments", Pages: 1, Sized: walk.SizedByFirstPage},
		{Resource: "divisions", Pages: 1, Sized: walk.SizedByFirstPage},
		{Resource: sink.Employees, Pages: 50, Requests: 50, Sized: walk.SizedByFirstPage},
	}})
	rep.progress(walk.Progress{Resource: "departments", Collection: 1, Collections: 3, Walk: 1, PagesDone: 1, PagesTotal: 1})
	if want := "1/3 departments: page 1/1 · 1/52 pages in all · ~51s left"; rep.line != want {
		t.Errorf("line %q\nwant %q", rep.line, want)
	}
}

// A run that failed before it started (a read-only SQLite warehouse refuses the ledger row)
// prints no duration rather than the zero time's "-2562047h47m16s".
func TestPrintResultOfARunThatNeverStarted(t *testing.T) {
	start := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		res      walk.Result
		want     string
		wantNone string
	}{
		{"never started", walk.Result{Run: sink.Run{Resource: sink.Employees, Status: sink.RunFailed, StartedAt: start}},
			"0 walks\n", "-2562047h"},
		{"finished", walk.Result{Run: sink.Run{Resource: sink.Employees, Status: sink.RunOK, StartedAt: start, FinishedAt: start.Add(1500 * time.Millisecond)}},
			"0 walks, 1.5s\n", ""},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		PrintResult(&b, "", tt.res, false)
		if !strings.HasSuffix(b.String(), tt.want) || (tt.wantNone != "" && strings.Contains(b.String(), tt.wantNone)) {
			t.Errorf("%s: printed %q, want it to end %q", tt.name, b.String(), tt.want)
		}
	}
}

// TestPrintResultOfGuards: a held load names each guard, before → after, with the key that
// accepts it, and says nothing was written; a dry run says it would be held; an accepted load
// says who accepted it and why, or the setting; the changes worth a look are named whether or
// not a guard tripped, a first load naming none.
func TestPrintResultOfGuards(t *testing.T) {
	start := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	profile := &sink.LoadProfile{Before: 200, After: 200, Columns: []sink.ColumnProfile{
		{Column: "job_title", FilledBefore: 200, FilledAfter: 0},
		{Column: "email", FilledBefore: 200, FilledAfter: 200},
		{Column: "department_id", FilledBefore: 190, FilledAfter: 190, Reference: true, UnlistedBefore: 0, UnlistedAfter: 20},
		{Column: "cost_centre", FilledBefore: 180, FilledAfter: 160, Member: true},
		{Column: "nickname", FilledBefore: 10, FilledAfter: 12, Member: true},
	}}
	fill := sink.Hold{Guard: sink.GuardFill, Resource: sink.Employees, Column: "job_title", BeforeCount: 200, BeforeOf: 200, AfterOf: 200,
		Message: "employees.job_title: 100% → 0% filled (200 of 200 records → 0 of 200)"}
	run := sink.Run{Resource: sink.Employees, Status: sink.RunHeld, Pages: 2, Requests: 2, Walks: 1, DistinctRecords: 200,
		Updated: 200, StartedAt: start, FinishedAt: start.Add(time.Second), Holds: []sink.Hold{fill}, Profile: profile}
	accepted := run
	accepted.Status, accepted.AcceptedBy, accepted.AcceptReason = sink.RunOK, "tester", "titles moved to a custom field"
	accepted.Holds = []sink.Hold{fill}
	accepted.Holds[0].Accepted = true
	first := run
	first.Status, first.Holds, first.Inserted, first.Updated = sink.RunOK, nil, 200, 0
	first.Profile = &sink.LoadProfile{After: 200, Columns: profile.Columns}
	line := "employees: %s — 200 records: %s; 2 pages, 2 requests, 0 retries, 0 rate-limited, 1 walks, 1s\n"
	look := `  worth a look: employees.department_id: 0% → 10% point at no listed record (0 of 190 → 20 of 190)
  worth a look: employees.cost_centre (a member the source sends): 90% → 80% filled (180 of 200 records → 160 of 200)
`
	for _, tc := range []struct {
		name   string
		res    walk.Result
		dryRun bool
		acc    accepting
		want   string
	}{
		{"held", walk.Result{Run: run}, false, accepting{}, fmt.Sprintf(line, "held (nothing written)", "0 new, 200 changed, 0 unchanged, 0 deleted") +
			"  held: employees.job_title: 100% → 0% filled (200 of 200 records → 0 of 200) [fill:employees.job_title]\n" +
			"  nothing of this load was written: the warehouse, its history and the replica are as they were\n" + look},
		{"still held", walk.Result{Run: run, StillHeld: true}, false, accepting{}, fmt.Sprintf(line, "held (nothing written)", "0 new, 200 changed, 0 unchanged, 0 deleted") +
			"  held: employees.job_title: 100% → 0% filled (200 of 200 records → 0 of 200) [fill:employees.job_title]\n" +
			"  still held, by the same guards as the last run: nothing of this load was written\n" + look},
		{"a dry run", walk.Result{Run: run}, true, accepting{}, fmt.Sprintf(line, "would be held (dry run: nothing written)", "0 new, 200 changed, 0 unchanged, 0 deleted") +
			"  would be held: employees.job_title: 100% → 0% filled (200 of 200 records → 0 of 200) [fill:employees.job_title]\n" + look},
		{"accepted by a person", walk.Result{Run: accepted, Lifted: true}, false, accepting{}, fmt.Sprintf(line, "ok", "0 new, 200 changed, 0 unchanged, 0 deleted") +
			"  accepted by tester (\"titles moved to a custom field\"): employees.job_title: 100% → 0% filled (200 of 200 records → 0 of 200)\n" + look},
		{"accepted for good", walk.Result{Run: accepted}, false, accepting{forGood: []string{"fill:employees.job_title"}}, fmt.Sprintf(line, "ok", "0 new, 200 changed, 0 unchanged, 0 deleted") +
			"  accepted for good (sync.guards.accept): employees.job_title: 100% → 0% filled (200 of 200 records → 0 of 200)\n" + look},
		{"lifted by itself", walk.Result{Run: first, Lifted: true}, false, accepting{}, fmt.Sprintf(line, "ok", "200 new, 0 changed, 0 unchanged, 0 deleted") +
			"  the hold of the last run lifted: the source is back within the guards\n"},
		{"a first load", walk.Result{Run: first}, false, accepting{}, fmt.Sprintf(line, "ok", "200 new, 0 changed, 0 unchanged, 0 deleted")},
	} {
		var b strings.Builder
		printResult(&b, "", tc.res, tc.dryRun, tc.acc)
		if b.String() != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, b.String(), tc.want)
		}
	}
	if got := totalsLine([]walk.Result{{Run: run}}, true, time.Second); !strings.Contains(got, "; 1 would be held (dry run: nothing written)") {
		t.Errorf("dry run's totals: %s", got)
	}
	if got := totalsLine([]walk.Result{{Run: run}}, false, time.Second); !strings.HasSuffix(got, "; 1 held") {
		t.Errorf("totals: %s", got)
	}
}
