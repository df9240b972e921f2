package retention_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/retention"
)

func TestMain(m *testing.M) { sinktest.Main(m) }

// The account: L1 (61) left on a leaving date long ago; L2 (62) is listed as Ex-employee, seen
// so by the sync (their leaving dated by it); C (63) is a current employee. Each is written with
// markers of their own; those of L1 and L2 must go, C's must stay.
var (
	leaverMarkers = []string{
		"Lyrrandel", "Oxbrine", "lyr-mail@marker.example", "lyr-dob-1971", "lyr-home@personal.example",
		"Pelquist", "Vantorre", "pel-mail@marker.example", "pel-dob-1980",
		"LYR-absence-note", "LYR-fever-note", "LYR-review-words", "LYR-sicktype", "PEL-fever-note", "PEL-review-words",
		"71234.56", "LYR-pay-note", "lyr-unknown-sick",
	}
	currentMarkers = []string{"Cressida", "Hallowmere", "cress@marker.example", "CRESS-absence-note", "CRESS-fever-note", "CRESS-review-words"}
)

func employees(t *testing.T) []v1.Employee {
	t.Helper()
	bodies := []string{
		`{"id":61,"first_name":"Lyrrandel","last_name":"Oxbrine","email":"lyr-mail@marker.example","job_title":"Baker","status":"Ex-employee",` +
			`"company_join_date":"2010-02-01","leaving_date":"2015-03-31","department":{"id":7,"name":"Bakery"},"dob":"lyr-dob-1971","personal_email":"lyr-home@personal.example"}`,
		`{"id":62,"first_name":"Pelquist","last_name":"Vantorre","email":"pel-mail@marker.example","job_title":"Porter","status":"Ex-employee",` +
			`"company_join_date":"2012-06-01","department":{"id":7,"name":"Bakery"},"line_manager":{"id":61,"first_name":"Lyrrandel","last_name":"Oxbrine"},"dob":"pel-dob-1980"}`,
		`{"id":63,"first_name":"Cressida","last_name":"Hallowmere","email":"cress@marker.example","job_title":"Head baker","status":"Current employee",` +
			`"company_join_date":"2011-01-01","department":{"id":7,"name":"Bakery"}}`,
	}
	out := make([]v1.Employee, len(bodies))
	for i, b := range bodies {
		if err := out[i].UnmarshalJSON([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// events are the events of the three, as the source sends them; C's sickness is recent.
func events(recent string) map[*v1.Collection][]string {
	return map[*v1.Collection][]string{
		v1.Absences: {
			`{"id":801,"employee":{"id":61,"first_name":"Lyrrandel"},"deducted":"2.0","start_date":"2014-03-02","end_date":"2014-03-03","cancelled":false,"notes":"LYR-absence-note","type":"Holiday"}`,
			`{"id":803,"employee":{"id":63,"first_name":"Cressida"},"deducted":"1.0","start_date":"2014-04-01","end_date":"2014-04-01","cancelled":false,"notes":"CRESS-absence-note","type":"Holiday"}`,
		},
		v1.Sicknesses: {
			`{"id":11,"employee":{"id":61,"first_name":"Lyrrandel"},"company_sicknesstype":{"id":8,"name":"LYR-sicktype"},"start_date":"2014-01-05",` +
				`"end_date":"2014-01-09","deducted":"5.0","status":"returned","reason":"LYR-fever-note","review_notes":"LYR-review-words","gp":"lyr-unknown-sick"}`,
			`{"id":12,"employee":{"id":62,"first_name":"Pelquist"},"start_date":"2019-02-01",` +
				`"end_date":"2019-02-03","deducted":"3.0","status":"returned","reason":"PEL-fever-note","review_notes":"PEL-review-words"}`,
			`{"id":13,"employee":{"id":63,"first_name":"Cressida"},"start_date":"` + recent + `","deducted":"1.0","status":"returned",` +
				`"reason":"CRESS-fever-note","review_notes":"CRESS-review-words"}`,
		},
		v1.Salaries: {
			`{"id":3,"employee":{"id":61,"first_name":"Lyrrandel","last_name":"Oxbrine"},"amount":"71234.56","currency":"GBP","note":"LYR-pay-note"}`,
		},
	}
}

var eventCollections = []*v1.Collection{v1.Absences, v1.Sicknesses, v1.Salaries}

// load syncs the account as a sync does: employees, then their events.
func load(t *testing.T, s *sink.Store, recent string) {
	t.Helper()
	ctx := context.Background()
	sinktest.WalkEmployees(t, s, employees(t), 10, sink.MergeOptions{})
	src := events(recent)
	for _, c := range eventCollections {
		var rs []v1.Record
		for _, b := range src[c] {
			r, err := c.Decode([]byte(b))
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
		}
		l, err := s.BeginLoad(ctx, sink.Resource(c.Name))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.AddRecords(ctx, rs); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Distinct(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Merge(ctx, sink.MergeOptions{}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
}

// headcount is how many of department 7 the history counts as employed on day: joined by then,
// not left by then, in the version current now.
const headcount = `SELECT count(*) FROM employees_history WHERE department_id = 7 AND valid_to IS NULL
AND company_join_date <= ? AND (leaving_date IS NULL OR leaving_date > ?)`

// TestRetention is retention's acceptance test, on both warehouses: a retention run with short
// periods takes every identifying, health and free-text value of the leavers out of every
// column of every table (history and JSON included; on SQLite, out of the file's bytes), leaves
// their employment facts counted and the current employee as they were; the next sync keeps them
// erased; a second run erases nothing new; a dry run changes nothing and reports what the real
// run then does; the old onboarding files and ledger rows go, the recent ones stay.
func TestRetention(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := sinktest.Store(t, backend, sink.Options{})
			now := time.Now().UTC()
			recent := now.AddDate(0, 0, -10).Format(time.DateOnly)
			load(t, s, recent)
			load(t, s, recent) // a second sync: nothing new, the history as it is
			// The history's versions are stamped to the millisecond: the erase's new versions
			// come after the sync's, in the dry run as in the run.
			time.Sleep(5 * time.Millisecond)

			// The onboarding folder: old and recent files in processed/ and failed/, and the
			// ledger's rows of an old file and a recent one.
			dir := t.TempDir()
			old := now.AddDate(0, -3, 0)
			files := map[string]bool{ // name → due
				"processed/old.csv": true, "processed/old.csv.result.csv": true, "failed/bad.csv": true,
				"processed/new.csv": false, "failed/notes.txt": false,
			}
			for name, due := range files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("first_name,email\nX,x@example.com\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if due || name == "failed/notes.txt" {
					if err := os.Chtimes(p, old, old); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i, r := range []sink.OnboardingRow{
				{FileHash: "h-old", FileName: "old.csv", Line: 2, Email: "onb-old@marker.example", Status: "rejected", Reason: "ONB-refused-why", RequestHash: "ONB-hash-old"},
				{FileHash: "h-new", FileName: "new.csv", Line: 2, Email: "onb-new@marker.example", Status: "created", EmployeeID: 63, RequestHash: "ONB-hash-new"},
			} {
				if err := s.PutOnboardingRow(ctx, r); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					if _, err := sinktest.DB(s).ExecContext(ctx, sinktest.DB(s).Rebind(`UPDATE onboarding_rows SET updated_at = ? WHERE file_hash = 'h-old'`),
						old.Format(v1.TimestampLayout)); err != nil {
						t.Fatal(err)
					}
				}
			}
			onbOld := []string{"onb-old@marker.example", "ONB-refused-why", "ONB-hash-old"}
			onbNew := []string{"onb-new@marker.example", "ONB-hash-new"}

			day := func(d int) retention.Period { return retention.Period{Days: d} }
			rules := retention.Rules{
				Leavers: map[v1.Class]retention.Period{v1.Identifying: day(1), v1.FreeText: day(1), v1.Financial: day(1), v1.Health: day(1)},
				// C's recent sickness is within it; L2's (2019) and L1's are past it.
				SicknessDetails: retention.Period{Years: 1},
				OnboardingFiles: retention.Period{Months: 1},
				OnboardingDir:   dir,
			}
			// L2 left when the sync first saw them as Ex-employee (now): the run is dated two
			// days on.
			at := func() time.Time { return now.Add(48 * time.Hour) }
			if got := sinktest.MarkersIn(t, s, leaverMarkers); len(got) < len(leaverMarkers) {
				t.Fatalf("before the run, the markers found are %v: the test's data does not hold them all", got)
			}
			headBefore := sinktest.QueryString(t, s, headcount, "2013-01-01", "2013-01-01")
			if headBefore != "3" {
				t.Fatalf("headcount on 2013-01-01 before: %s, want 3", headBefore)
			}

			// The dry run changes nothing, and says what the run will do.
			dry, err := retention.Run(ctx, s, rules, retention.Options{DryRun: true, Now: at})
			if err != nil {
				t.Fatal(err)
			}
			if got := sinktest.MarkersIn(t, s, leaverMarkers); len(got) < len(leaverMarkers) {
				t.Fatalf("the dry run erased: only %v are left", got)
			}
			for name := range files {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Fatalf("the dry run deleted %s: %v", name, err)
				}
			}
			if log, _ := s.ErasureLog(ctx); len(log) != 0 {
				t.Fatalf("the dry run logged %v", log)
			}
			if es, _ := s.Erasures(ctx); len(es) != 0 {
				t.Fatalf("the dry run recorded erasures %v", es)
			}

			res, err := retention.Run(ctx, s, rules, retention.Options{Now: at})
			if err != nil {
				t.Fatal(err)
			}
			// The dry run took no ids: the run's erasures and log entries number from 1, without
			// a gap an auditor would read as an entry deleted.
			for _, table := range []string{"erasures", "erasure_log"} {
				if got := sinktest.QueryString(t, s, `SELECT CASE WHEN min(id) = 1 AND max(id) = count(*) THEN 'no gaps' ELSE count(*) || ' ids from ' || min(id) || ' to ' || max(id) END FROM `+table); got != "no gaps" {
					t.Errorf("%s after a dry run then a run: %s", table, got)
				}
			}
			dry.DryRun = false
			said, did := dry, res
			if s.Dialect() == schema.SQLite {
				// SQLite's history triggers stamp each statement to the millisecond: a row
				// changed twice in one erase (a leaver's own, then as a leaver's report) makes
				// one version or two as the clock ticks or not between them, in the dry run as
				// in the run. The versions' count is the clock's; every other count must agree.
				said, did = withoutHistory(dry), withoutHistory(res)
			}
			if !reflect.DeepEqual(said, did) {
				t.Errorf("the dry run said\n%+v\nthe run did\n%+v", said, did)
			}
			byRule := map[string]retention.RuleResult{}
			for _, rr := range res.Rules {
				byRule[rr.Rule] = rr
			}
			for _, c := range retention.LeaverClasses {
				if rr := byRule[retention.LeaverRule(c)]; rr.Subjects != 2 || rr.What != "people" {
					t.Errorf("%s: %+v, want 2 people", retention.LeaverRule(c), rr)
				}
			}
			// L1's and L2's sicknesses went with the leavers' health: none is left to the rule.
			if rr := byRule[retention.RuleSicknessDetails]; rr.Subjects != 0 {
				t.Errorf("sickness_details: %+v, want none (the leavers' went with leavers.health; C's is recent)", rr)
			}
			if rr := byRule[retention.RuleOnboardingFiles]; rr.Subjects != 1 || rr.Files != 3 {
				t.Errorf("onboarding_files: %+v, want 1 row and 3 files", rr)
			}
			if rr := byRule["leavers.identifying"]; rr.Rows["employees"] < 2 || rr.Rows["employees_history"] < 2 || rr.Rows["erasures"] != 2 {
				t.Errorf("leavers.identifying rows: %v", rr.Rows)
			}

			if got := sinktest.MarkersIn(t, s, append(append([]string{}, leaverMarkers...), onbOld...)); len(got) > 0 {
				t.Errorf("after the run, found %v", got)
			}
			if s.Dialect() == schema.SQLite {
				if got := sinktest.MarkersInFiles(t, s, leaverMarkers); len(got) > 0 {
					t.Errorf("after the run, the database's files hold %v", got)
				}
			}
			for _, m := range append(append([]string{}, currentMarkers...), onbNew...) {
				if got := sinktest.MarkersIn(t, s, []string{m}); len(got) == 0 {
					t.Errorf("the current employee's or the recent onboarding row's %s is gone", m)
				}
			}
			for name, due := range files {
				_, err := os.Stat(filepath.Join(dir, name))
				if gone := os.IsNotExist(err); gone != due {
					t.Errorf("%s: gone %v, want %v", name, gone, due)
				}
			}
			// The facts of employment stay: counted on a date, their department, dates and days.
			if got := sinktest.QueryString(t, s, headcount, "2013-01-01", "2013-01-01"); got != headBefore {
				t.Errorf("headcount on 2013-01-01 after: %s, want %s", got, headBefore)
			}
			if got := sinktest.QueryString(t, s, headcount, "2016-01-01", "2016-01-01"); got != "2" { // L1 left in 2015
				t.Errorf("headcount on 2016-01-01 after: %s, want 2", got)
			}
			if got := sinktest.QueryString(t, s, `SELECT count(*) FROM sicknesses WHERE employee_id IN (61, 62) AND start_date IS NOT NULL AND deducted IS NOT NULL`); got != "2" {
				t.Errorf("the leavers' sicknesses' dates and days: %s rows, want 2", got)
			}

			// The next sync keeps them erased.
			load(t, s, recent)
			if got := sinktest.MarkersIn(t, s, leaverMarkers); len(got) > 0 {
				t.Errorf("after the next sync, found %v", got)
			}

			// A second run erases nothing new, and still logs the run.
			before := len(mustLog(t, s))
			again, err := retention.Run(ctx, s, rules, retention.Options{Now: at})
			if err != nil {
				t.Fatal(err)
			}
			if again.Erased() != 0 {
				t.Errorf("the second run erased %+v", again)
			}
			log := mustLog(t, s)
			if len(log) != before+1 || log[len(log)-1].Cause != sink.RetentionRunCause {
				t.Errorf("the second run logged %+v, want its run's entry alone", log[before:])
			}
			last, ok, err := s.LastRetentionRun(ctx)
			if err != nil || !ok || time.Since(last) > time.Minute {
				t.Errorf("last retention run: %v %v %v", last, ok, err)
			}
		})
	}
}

func mustLog(t *testing.T, s *sink.Store) []sink.RetentionLog {
	t.Helper()
	log, err := s.ErasureLog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// TestNoRules: with no rule, a run plans nothing, erases nothing, and still logs the run.
func TestNoRules(t *testing.T) {
	s := sinktest.Store(t, "sqlite", sink.Options{})
	res, err := retention.Run(context.Background(), s, retention.Rules{}, retention.Options{})
	if err != nil || len(res.Rules) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if (retention.Rules{}).Any() {
		t.Error("the zero rules are some")
	}
}

// TestSicknessDetails: the sickness_details rule alone takes the health members of the
// sicknesses that ended before the period (a leaver's or not), every version of them, and
// nothing else; a recent sickness and the people stay; a second run finds nothing due.
func TestSicknessDetails(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := sinktest.Store(t, backend, sink.Options{})
			recent := time.Now().UTC().AddDate(0, 0, -10).Format(time.DateOnly)
			load(t, s, recent)
			rules := retention.Rules{SicknessDetails: retention.Period{Years: 1}}
			res, err := retention.Run(ctx, s, rules, retention.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rules) != 1 || res.Rules[0].Subjects != 2 || res.Rules[0].Rows["sicknesses"] != 2 {
				t.Fatalf("result %+v, want sicknesses 11 and 12", res)
			}
			if got := sinktest.MarkersIn(t, s, []string{"LYR-fever-note", "LYR-review-words", "LYR-sicktype", "lyr-unknown-sick", "PEL-fever-note", "PEL-review-words"}); len(got) > 0 {
				t.Errorf("found %v", got)
			}
			for _, m := range []string{"CRESS-fever-note", "Lyrrandel", "LYR-absence-note", "71234.56"} {
				if len(sinktest.MarkersIn(t, s, []string{m})) == 0 {
					t.Errorf("%s is gone", m)
				}
			}
			if again, err := retention.Run(ctx, s, rules, retention.Options{}); err != nil || again.Erased() != 0 {
				t.Errorf("second run: %+v %v", again, err)
			}
		})
	}
}

// withoutHistory is r without its counts of the _history tables.
func withoutHistory(r retention.Result) retention.Result {
	out := r
	out.Rules = nil
	for _, rr := range r.Rules {
		rows := map[string]int64{}
		for t, n := range rr.Rows {
			if !strings.HasSuffix(t, "_history") {
				rows[t] = n
			}
		}
		rr.Rows = rows
		out.Rules = append(out.Rules, rr)
	}
	return out
}
