package sink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// The person erased, P (employee 42), is written with markers no other value contains: after the
// erasure none of them may be found anywhere in the warehouse.
var erasedMarkers = []string{
	"Zorblax", "Quendrith", "zq-mail@marker.example", "dob-1979-zq", "zq-home@personal.example",
	"ZQ-absence-note", "ZQ-fever-note", "ZQ-review-words", "ZQ-sicktype", "ZQ-leave-note", "92817.13", "ZQ-pay-note",
	"ZQ-refused-why", "ZQ-title-twin",
}

// personP is P's record at the source: version 0 was their first (another first name, another
// department), version 1 is now.
func personP(version int) string {
	first, dept := "Zorblax", 2
	if version == 0 {
		first, dept = "Zorblaxa", 1
	}
	return fmt.Sprintf(`{"id":42,"first_name":%q,"last_name":"Quendrith","email":"zq-mail@marker.example","job_title":"Chef",`+
		`"status":"Active","company_join_date":"2019-04-01","age":47,"department":{"id":%d,"name":"Dept %d"},`+
		`"line_manager":{"id":44,"first_name":"Rhoswen","last_name":"Teague"},"dob":"dob-1979-zq","personal_email":"zq-home@personal.example"}`,
		first, dept, dept)
}

// The rest of the source: Q (43), whom P manages; R (44), who approves; P's events, and one of
// Q's that P approved.
var (
	personQ = `{"id":43,"first_name":"Quinella","last_name":"Ostrander","email":"quinella@example.com","job_title":"Cook","status":"Active",` +
		`"department":{"id":2,"name":"Dept 2"},"line_manager":{"id":42,"first_name":"Zorblax","last_name":"Quendrith","email":"zq-mail@marker.example"},` +
		`"holiday_approver":{"id":42,"first_name":"Zorblax","name":"Zorblax Quendrith"}}`
	personR   = `{"id":44,"first_name":"Rhoswen","last_name":"Teague","email":"rhoswen@example.com","job_title":"Head chef","status":"Active","department":{"id":2,"name":"Dept 2"}}`
	erasedSrc = map[*v1.Collection][]string{
		v1.Absences: {
			`{"id":901,"employee":{"id":42,"first_name":"Zorblax","last_name":"Quendrith"},"approved_by":{"id":44,"first_name":"Rhoswen"},` +
				`"deducted":"2.0","work_units":"2.0","start_date":"2026-03-02","end_date":"2026-03-03","cancelled":false,"notes":"ZQ-absence-note","type":"Holiday"}`,
			`{"id":902,"employee":{"id":43,"first_name":"Quinella"},"approved_by":{"id":42,"first_name":"Zorblax","last_name":"Quendrith","email":"zq-mail@marker.example"},` +
				`"deducted":"1.0","start_date":"2026-04-01","end_date":"2026-04-01","cancelled":false,"notes":"Q's own note","type":"Holiday"}`,
		},
		v1.Sicknesses: {
			`{"id":5,"employee":{"id":42,"first_name":"Zorblax"},"company_sicknesstype":{"id":8,"name":"ZQ-sicktype"},"start_date":"2026-01-05",` +
				`"end_date":"2026-01-09","deducted":"5.0","status":"returned","reason":"ZQ-fever-note","review_notes":"ZQ-review-words","fit_note_required":true}`,
			`{"id":6,"employee":{"id":43,"first_name":"Quinella"},"company_sicknesstype":{"id":9,"name":"Back pain"},"start_date":"2019-02-01",` +
				`"end_date":"2019-02-03","deducted":"3.0","status":"returned","reason":"lifting","review_notes":"physio","gp":"Dr Who"}`,
		},
		v1.LeaveRequests: {
			`{"id":7,"employee":{"id":42,"first_name":"Zorblax"},"approved_by":{"id":44,"first_name":"Rhoswen"},"start_date":"2026-08-01",` +
				`"end_date":"2026-08-14","status":"approved","notes":"ZQ-leave-note","type":"Holiday"}`,
		},
		v1.Salaries: {
			`{"id":3,"employee":{"id":42,"first_name":"Zorblax","last_name":"Quendrith"},"amount":"92817.13","currency":"GBP","note":"ZQ-pay-note"}`,
		},
	}
	erasedCollections = []*v1.Collection{v1.Absences, v1.Sicknesses, v1.LeaveRequests, v1.Salaries}
)

func decodeEmployees(t *testing.T, bodies ...string) []v1.Employee {
	t.Helper()
	out := make([]v1.Employee, len(bodies))
	for i, b := range bodies {
		if err := out[i].UnmarshalJSON([]byte(b)); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
	}
	return out
}

// syncErased loads the source as a sync does: employees (P at version), then P's events. It
// returns the merges' results by collection.
func syncErased(t *testing.T, s *sink.Store, version int) map[string]sink.MergeResult {
	t.Helper()
	out := map[string]sink.MergeResult{}
	out["employees"] = sinktest.WalkEmployees(t, s, decodeEmployees(t, personP(version), personQ, personR), 10, sink.MergeOptions{})
	for _, c := range erasedCollections {
		out[c.Name] = sinktest.WalkRecords(t, s, c, sinktest.Records(t, c, erasedSrc[c]...), sink.MergeOptions{})
	}
	return out
}

// markersIn scans every column of every table of the warehouse for the markers
// (sinktest.MarkersIn).
func markersIn(t *testing.T, s *sink.Store, markers []string) []string {
	t.Helper()
	return sinktest.MarkersIn(t, s, markers)
}

// markersInFiles are the markers found in the bytes of the SQLite warehouse's files.
func markersInFiles(t *testing.T, s *sink.Store, markers []string) []string {
	t.Helper()
	return sinktest.MarkersInFiles(t, s, markers)
}

// TestEraseEmployee is the erasure engine's acceptance test: a person with history, a report, events
// of every kind, unknown members, a create's answer and an onboarding row is erased; nothing of
// theirs is found in any column of any table afterwards (nor, on SQLite, in the file's bytes);
// the facts of their employment stay; a sync brings nothing back; lifting the erasure lets the
// next sync bring their current values back.
func TestEraseEmployee(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		syncErased(t, s, 0)
		nextMillisecond()
		syncErased(t, s, 1)
		if n := sinktest.QueryString(t, s, `SELECT count(*) FROM employees_history WHERE id = 42`); n != "2" {
			t.Fatalf("P has %s versions, want 2", n)
		}
		// The answer kept for a create of P, and the onboarding rows that sent and created them.
		if _, ok, err := s.ReserveIdempotency(ctx, v1.IdempotencyClaim{Client: "hr-app", Key: "k1", Hash: "h1", TTL: time.Hour, Stale: time.Minute}); err != nil || !ok {
			t.Fatalf("reserve: %v %v", ok, err)
		}
		if err := s.CompleteIdempotency(ctx, "hr-app", "k1", v1.IdempotencyRecord{Status: 201, EmployeeID: 42, Location: "http://x/v1/employees/42",
			Body: []byte(`{"employees":[{"id":42,"first_name":"Zorblax","last_name":"Quendrith","email":"zq-mail@marker.example","job_title":"ZQ-title-twin-kept","join_date":"2019-04-01"}]}` + "\n")}); err != nil {
			t.Fatal(err)
		}
		for _, r := range []sink.OnboardingRow{
			{FileHash: "f1", FileName: "cohort.csv", Line: 2, Email: "ZQ-MAIL@marker.example", Status: sink.RowRejected, Reason: "ZQ-refused-why", RequestHash: "rh"},
			{FileHash: "f2", FileName: "cohort2.csv", Line: 2, Email: "other-spelling@example.com", Status: sink.RowCreated, EmployeeID: 42},
			{FileHash: "f2", FileName: "cohort2.csv", Line: 3, Email: "someone@example.com", Status: sink.RowCreated, EmployeeID: 50, Reason: "kept"},
		} {
			if err := s.PutOnboardingRow(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		// The markers are there before: the scans can find them.
		before := markersIn(t, s, erasedMarkers)
		for _, m := range erasedMarkers {
			if !slices.ContainsFunc(before, func(f string) bool { return strings.HasSuffix(f, ": "+m) }) && m != "ZQ-title-twin" {
				t.Errorf("marker %s not found before the erasure: the scan cannot fail", m)
			}
		}
		if s.Dialect() == schema.SQLite && len(markersInFiles(t, s, []string{"ZQ-fever-note"})) == 0 {
			t.Error("the file holds no marker before the erasure: its check cannot fail")
		}

		res, err := s.EraseEmployee(ctx, 42, nil, "subject request 2026-11")
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"employees", "employees_history", "absences", "absences_history", "sicknesses", "sicknesses_history",
			"leave_requests", "leave_requests_history", "salaries", "idempotency_keys", "onboarding_rows", "erasures"} {
			if res.Rows[table] == 0 {
				t.Errorf("erase changed no row of %s: %v", table, res.Rows)
			}
		}
		// The job title of the create's answer is kept: it is a fact of employment.
		if found := markersIn(t, s, erasedMarkers); len(found) != 1 || found[0] != "idempotency_keys.body: ZQ-title-twin" {
			t.Errorf("after the erasure, found %q", found)
		}
		if s.Dialect() == schema.SQLite {
			if found := markersInFiles(t, s, erasedMarkers[:len(erasedMarkers)-1]); len(found) > 0 {
				t.Errorf("the database's files still hold %q", found)
			}
		}
		checkFactsKept(t, s)

		// The log says what was erased, with counts, and nothing of the person.
		var logs []struct{ Action, Subject, Classes, Rows string }
		if err := sinktest.DB(s).SelectContext(ctx, &logs, `SELECT action, subject, classes, rows FROM erasure_log`); err != nil {
			t.Fatal(err)
		}
		if len(logs) != 1 || logs[0].Action != "erase" || logs[0].Subject != "employee 42" || logs[0].Classes != "identifying,free_text,financial,health" {
			t.Fatalf("log = %+v", logs)
		}
		var counts map[string]int64
		if err := json.Unmarshal([]byte(logs[0].Rows), &counts); err != nil || counts["employees_history"] != res.Rows["employees_history"] || counts["sicknesses"] != 1 {
			t.Errorf("logged rows %s (%v), erase said %v", logs[0].Rows, err, res.Rows)
		}

		// A sync of the same source: nothing of P comes back, nothing is even written.
		nextMillisecond()
		for c, r := range syncErased(t, s, 1) {
			if r.Inserted+r.Updated != 0 {
				t.Errorf("a sync after the erasure wrote %s: %+v", c, r)
			}
		}
		if found := markersIn(t, s, erasedMarkers); len(found) != 1 {
			t.Errorf("after a sync, found %q", found)
		}
		checkFactsKept(t, s)
		// A change at the source (P's old name and department again) is synced, still erased.
		nextMillisecond()
		if r := syncErased(t, s, 0)["employees"]; r.Updated != 1 {
			t.Errorf("P's move: %+v", r)
		}
		if found := markersIn(t, s, erasedMarkers); len(found) != 1 {
			t.Errorf("after a change, found %q", found)
		}

		// Lifted: the next sync brings P's current values back; their history stays erased.
		list, err := s.Erasures(ctx)
		if err != nil || len(list) != 1 || list[0].LiftedAt != "" || list[0].Subject() != "employee 42" || list[0].Reason != "subject request 2026-11" {
			t.Fatalf("erasures = %+v, %v", list, err)
		}
		if _, err := s.LiftErasure(ctx, list[0].ID, "request withdrawn"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LiftErasure(ctx, list[0].ID, "again"); err == nil {
			t.Error("lifting a lifted erasure: no error")
		}
		nextMillisecond()
		syncErased(t, s, 1)
		if got := sinktest.QueryString(t, s, `SELECT first_name FROM employees WHERE id = 42`); got != "Zorblax" {
			t.Errorf("after the lift, P's first name is %s", got)
		}
		if got := sinktest.QueryString(t, s, `SELECT reason FROM sicknesses WHERE id = 5`); got != "ZQ-fever-note" {
			t.Errorf("after the lift, P's sickness reason is %s", got)
		}
		if got := sinktest.QueryString(t, s, `SELECT count(*) FROM employees_history WHERE id = 42 AND first_name IS NULL`); got == "0" {
			t.Error("after the lift, P's erased versions came back")
		}
		if got := sinktest.QueryString(t, s, `SELECT count(*) FROM erasure_log WHERE action = 'lift' AND reason = 'request withdrawn'`); got != "1" {
			t.Errorf("lifts logged: %s", got)
		}
	})
}

// checkFactsKept: P's employment facts stay after the erasure, and Q's own names.
func checkFactsKept(t *testing.T, s *sink.Store) {
	t.Helper()
	for q, want := range map[string]string{
		`SELECT department_id FROM employees WHERE id = 42`:                                            "2",
		`SELECT job_title FROM employees WHERE id = 42`:                                                "Chef",
		`SELECT CAST(company_join_date AS text) FROM employees WHERE id = 42`:                          "2019-04-01",
		`SELECT count(*) FROM employees WHERE department_id = 2 AND listed AND deleted_at IS NULL`:     "3",
		`SELECT count(*) FROM employees_history WHERE id = 42 AND department_id = 1 AND listed`:        "1",
		`SELECT CAST(deducted AS text) FROM absences WHERE id = 901`:                                   "2.0",
		`SELECT CAST(start_date AS text) FROM sicknesses WHERE id = 5`:                                 "2026-01-05",
		`SELECT CAST(deducted AS text) FROM sicknesses WHERE id = 5`:                                   "5.0",
		`SELECT status FROM sicknesses WHERE id = 5`:                                                   "returned",
		`SELECT employee_id FROM sicknesses WHERE id = 5`:                                              "42",
		`SELECT status FROM leave_requests WHERE id = 7`:                                               "approved",
		`SELECT approved_by_id FROM leave_requests WHERE id = 7`:                                       "44",
		`SELECT first_name FROM employees WHERE id = 43`:                                               "Quinella",
		`SELECT line_manager_id FROM employees WHERE id = 43`:                                          "42",
		`SELECT approved_by_id FROM absences WHERE id = 902`:                                           "42",
		`SELECT notes FROM absences WHERE id = 902`:                                                    "Q's own note",
		`SELECT reason FROM sicknesses WHERE id = 6`:                                                   "lifting",
		`SELECT first_name FROM employees WHERE id = 44`:                                               "Rhoswen",
		`SELECT count(*) FROM onboarding_rows WHERE reason = 'kept' AND email = 'someone@example.com'`: "1",
		`SELECT location FROM idempotency_keys WHERE employee_id = 42`:                                 "http://x/v1/employees/42",
		// The request's hash went (an unsalted hash of who they were); the record stays.
		`SELECT request_hash FROM idempotency_keys WHERE employee_id = 42`:                                   v1.ErasedRequestHash,
		`SELECT count(*) FROM employees_history WHERE id = 43 AND line_manager_id = 42 AND valid_to IS NULL`: "1",
	} {
		if got := sinktest.QueryString(t, s, q); got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}
	// Q as served: their own names, their manager by id alone.
	q, _, err := s.Employee(context.Background(), 43)
	if err != nil {
		t.Fatal(err)
	}
	if q.FirstName != "Quinella" || q.LineManager == nil || q.LineManager.ID != 42 || q.LineManager.FirstName != "" {
		t.Errorf("Q served as %s", q.AppendJSON(nil))
	}
}

// TestEraseRecords: retention erases the health details of a sickness that ended long ago; its
// dates, days and status stay, and a sync brings nothing back.
func TestEraseRecords(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		syncErased(t, s, 1)
		res, err := s.EraseRecords(ctx, "sicknesses", []int64{6}, []v1.Class{v1.Health}, "retention: sickness details after 6 years", "nightly retention")
		if err != nil {
			t.Fatal(err)
		}
		// The row's update writes its erased version (the trigger); the version before is erased.
		if res.Rows["sicknesses"] != 1 || res.Rows["sicknesses_history"] != 1 || len(res.IDs) != 1 {
			t.Errorf("rows = %v, ids %v", res.Rows, res.IDs)
		}
		if n := sinktest.QueryString(t, s, `SELECT count(*) FROM sicknesses_history WHERE id = 6`); n != "2" {
			t.Errorf("sickness 6 has %s versions, want 2", n)
		}
		health := []string{"lifting", "physio", "Back pain", "Dr Who"}
		check := func(when string) {
			t.Helper()
			if found := markersIn(t, s, health); len(found) > 0 {
				t.Errorf("%s: found %q", when, found)
			}
			for q, want := range map[string]string{
				`SELECT CAST(start_date AS text) FROM sicknesses WHERE id = 6`: "2019-02-01",
				`SELECT CAST(end_date AS text) FROM sicknesses WHERE id = 6`:   "2019-02-03",
				`SELECT CAST(deducted AS text) FROM sicknesses WHERE id = 6`:   "3.0",
				`SELECT status FROM sicknesses WHERE id = 6`:                   "returned",
				`SELECT company_sicknesstype_id FROM sicknesses WHERE id = 6`:  "<null>",
				`SELECT employee_id FROM sicknesses WHERE id = 6`:              "43",
				// Another sickness keeps its details; the employee's names are not health data.
				`SELECT reason FROM sicknesses WHERE id = 5`:     "ZQ-fever-note",
				`SELECT first_name FROM employees WHERE id = 43`: "Quinella",
			} {
				if got := sinktest.QueryString(t, s, q); got != want {
					t.Errorf("%s: %s = %s, want %s", when, q, got, want)
				}
			}
		}
		check("erased")
		if got := sinktest.QueryString(t, s, `SELECT action || ' ' || subject || ' ' || classes || ' ' || cause FROM erasure_log`); got != "retention sicknesses 6 health retention: sickness details after 6 years" {
			t.Errorf("log: %s", got)
		}
		nextMillisecond()
		if r := syncErased(t, s, 1)["sicknesses"]; r.Inserted+r.Updated != 0 {
			t.Errorf("a sync after the erasure wrote sicknesses: %+v", r)
		}
		check("synced")
		if _, err := s.EraseRecords(ctx, "sicknesses", []int64{6}, []v1.Class{v1.Employment}, "request", ""); err == nil {
			t.Error("erasing employment facts: no error")
		}
		if _, err := s.EraseRecords(ctx, "sicknesses", []int64{6}, nil, "whenever", ""); err == nil {
			t.Error("a cause that is neither a request nor a retention rule: no error")
		}
	})
}

// TestEraseDuringLoad: a load staged before an erasure does not merge what it staged.
func TestEraseDuringLoad(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		l, err := s.BeginLoad(ctx, sink.Employees)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.AddEmployees(ctx, decodeEmployees(t, personP(1), personQ, personR)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EraseEmployee(ctx, 42, []v1.Class{v1.Identifying}, "request"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Merge(ctx, sink.MergeOptions{}); err == nil || !strings.Contains(err.Error(), sink.ErrErasedDuringLoad.Error()) {
			t.Fatalf("merge = %v, want %v", err, sink.ErrErasedDuringLoad)
		}
		if found := markersIn(t, s, erasedMarkers); len(found) > 0 {
			t.Errorf("found %q", found)
		}
	})
}

// BenchmarkStageEmployees stages a page of employees with no erasure in force and with one (of
// someone else): the erasures are read once per load, not per record, so the two cost alike.
func BenchmarkStageEmployees(b *testing.B) {
	for _, erased := range []bool{false, true} {
		b.Run(fmt.Sprintf("erased=%v", erased), func(b *testing.B) {
			s := openSQLite(b)
			ctx := context.Background()
			if erased {
				if _, err := s.EraseEmployee(ctx, 999999, nil, "bench"); err != nil {
					b.Fatal(err)
				}
			}
			es := make([]v1.Employee, 100)
			for i := range es {
				if err := es[i].UnmarshalJSON([]byte(personQ)); err != nil {
					b.Fatal(err)
				}
				es[i].ID = int64(i + 1)
			}
			l, err := s.BeginLoad(ctx, sink.Employees)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ResetTimer()
			for b.Loop() {
				if err := l.AddEmployees(ctx, es); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestErasureIDsWithoutGaps: the ids of erasures and of the erasure log run without gaps, on
// both warehouses, whatever was rolled back between them: dry runs of an erase (a record's, a
// batch of records') between real erasures and lifts, then a batch, an onboarding rows'
// retention and a run's entry, number 1, 2, 3… (a Postgres sequence drawn by a rolled-back
// insert is not given back: an auditor would read its gap as an entry deleted).
func TestErasureIDsWithoutGaps(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		syncErased(t, s, 1)
		if err := s.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: "h", FileName: "a.csv", Line: 2, Email: "a@example.com", Status: "created", EmployeeID: 43}); err != nil {
			t.Fatal(err)
		}
		dry := sink.EraseOptions{DryRun: true}
		batches := []sink.ErasureBatch{{Kind: sink.ErasureRecord, Collection: "sicknesses", IDs: []int64{5, 6},
			Classes: []v1.Class{v1.Health}, Cause: sink.ErasureCauseRetention + "sickness details", Reason: "nightly"}}
		for range 3 {
			if _, err := s.EraseRecords(ctx, "sicknesses", []int64{6}, []v1.Class{v1.Health}, "request", "", dry); err != nil {
				t.Fatal(err)
			}
			if _, err := s.EraseEmployee(ctx, 42, []v1.Class{v1.Identifying}, "asked"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.EraseBatches(ctx, batches, dry); err != nil {
				t.Fatal(err)
			}
			if _, err := s.LiftErasure(ctx, lastID(t, s, "erasures"), "test"); err != nil {
				t.Fatal(err)
			}
		}
		res, err := s.EraseBatches(ctx, batches, sink.EraseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.EraseOnboardingRows(ctx, time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), sink.ErasureCauseRetention+"onboarding files", false); err != nil {
			t.Fatal(err)
		} else if n == 0 {
			t.Fatal("no onboarding row erased: the test's data has none")
		}
		if err := s.LogRetentionRun(ctx, map[string]int64{"x": 1}); err != nil {
			t.Fatal(err)
		}
		// 3 employee erasures, then the batch's 2.
		if want := []int64{4, 5}; !slices.Equal(res[0].IDs, want) {
			t.Errorf("the batch's erasures are %v, want %v", res[0].IDs, want)
		}
		// 3 × (erase, lift), the batch, the onboarding rows, the run.
		for table, n := range map[string]int{"erasures": 5, "erasure_log": 9} {
			got := sinktest.QueryString(t, s, `SELECT count(*) || ' ' || min(id) || '-' || max(id) FROM `+table)
			if want := fmt.Sprintf("%d 1-%d", n, n); got != want {
				t.Errorf("%s: %s rows, ids from-to; want %s", table, got, want)
			}
		}
	})
}

// lastID is the highest id of table.
func lastID(t *testing.T, s *sink.Store, table string) int64 {
	t.Helper()
	var id int64
	if _, err := fmt.Sscan(sinktest.QueryString(t, s, `SELECT max(id) FROM `+table), &id); err != nil {
		t.Fatal(err)
	}
	return id
}
