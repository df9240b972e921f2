package sink_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// Recorded shapes (UPSTREAM.md): an absence of a listed employee, approved, with a leave reason;
// one of an employee the collection does not list, cancelled, with "" and null values.
var (
	absenceA = `{"id":901,"employee":{"id":1,"first_name":"Ana","last_name":"Lopez","email":"ana@example.com"},` +
		`"approved_by":{"id":2,"first_name":"Bo","last_name":"Berg"},"leave_reason":{"id":3,"name":"Compassionate & <Family>"},` +
		`"deducted":"1.5","work_units":"3.0","start_date":"2026-03-02","end_date":"2026-03-03","half_start":false,` +
		`"half_end":true,"half_start_am_pm":"","half_end_am_pm":"am","cancelled":false,"notes":"","type":"OtherLeave",` +
		`"created_at":"2026-02-20T09:15:00+01:00","updated_at":"2026-02-21T10:00:00+01:00","source_system":"hr"}`
	absenceB = `{"id":902,"employee":{"id":77,"first_name":"Gone","last_name":"Person","email":null},"approved_by":null,` +
		`"leave_reason":null,"deducted":"0.5","work_units":"1.0","start_date":"2026-04-01","end_date":"2026-04-01",` +
		`"half_start":true,"half_end":false,"half_start_am_pm":"pm","half_end_am_pm":null,"cancelled":true,"notes":"flu?",` +
		`"type":"Holiday","created_at":"2026-03-30T08:00:00Z","updated_at":"2026-03-31T08:00:00Z"}`
	sickness = `{"id":5,"employee":{"id":1},"company_sicknesstype":{"id":8,"name":"Cold","colour":"red"},` +
		`"start_date":"2026-01-05","end_date":null,"half_start":false,"half_start_am_pm":null,"half_end":false,` +
		`"half_end_am_pm":null,"deducted":"2.0","status":"returned","reason":"","review_notes":null,"fit_note_required":null}`
)

// TestDeclaredCollectionRoundTrip: records of a collection the wire declares are merged and
// served back exactly as the source's normal form; references to tables the warehouse holds
// leave unlisted rows there; an unchanged walk writes nothing; a change writes one row; a
// complete walk retires what it no longer lists.
func TestDeclaredCollectionRoundTrip(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		putN(t, s, 1)
		recs := sinktest.Records(t, v1.Absences, absenceA, absenceB)
		if res := sinktest.WalkRecords(t, s, v1.Absences, recs, sink.MergeOptions{Complete: true}); res.Inserted != 2 {
			t.Fatalf("first merge %+v, want 2 inserted", res)
		}
		list, err := s.ListRecords(ctx, "absences", v1.Page{Number: 1, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		if list.Total != 2 || len(list.Items) != 2 {
			t.Fatalf("served %d of total %d, want 2", len(list.Items), list.Total)
		}
		for i := range recs {
			want := string(v1.Absences.AppendJSON(nil, &recs[i]))
			if got := string(v1.Absences.AppendJSON(nil, &list.Items[i])); got != want {
				t.Errorf("served\n got %s\nwant %s", got, want)
			}
		}
		// The approver, the unlisted employee and the leave reason are rows of their tables,
		// unlisted: served neither as employees nor as leave reasons.
		var unlisted int
		if err := sinktest.DB(s).GetContext(ctx, &unlisted, `SELECT count(*) FROM employees WHERE NOT listed AND id IN (2, 77)`); err != nil || unlisted != 2 {
			t.Errorf("unlisted employees %d (%v), want 2", unlisted, err)
		}
		reasons, err := s.ListRecords(ctx, "other_leave_reasons", v1.Page{Number: 1, Size: 100})
		if err != nil || reasons.Total != 0 {
			t.Errorf("leave reasons served %d (%v), want 0: known only from a reference", reasons.Total, err)
		}
		var name string
		if err := sinktest.DB(s).GetContext(ctx, &name, `SELECT name FROM other_leave_reasons WHERE id = 3`); err != nil || name != "Compassionate & <Family>" {
			t.Errorf("leave reason 3 name %q (%v)", name, err)
		}

		v1Before, _ := s.Version(ctx)
		if res := sinktest.WalkRecords(t, s, v1.Absences, recs, sink.MergeOptions{Complete: true}); res.Unchanged != 2 || res.Inserted+res.Updated+res.Deleted != 0 {
			t.Errorf("unchanged walk %+v, want 2 unchanged and nothing written", res)
		}
		if v, _ := s.Version(ctx); v != v1Before {
			t.Errorf("an unchanged walk moved the version %d → %d", v1Before, v)
		}

		changed := sinktest.Records(t, v1.Absences, absenceA)
		changed[0].Values[v1.Absences.Index("cancelled")] = v1.BoolValue(true)
		if res := sinktest.WalkRecords(t, s, v1.Absences, changed, sink.MergeOptions{Complete: true, AllowMassDelete: true}); res.Updated != 1 || res.Deleted != 1 {
			t.Errorf("walk with one changed and one gone %+v, want 1 updated and 1 deleted", res)
		}
		r, _, err := s.Record(ctx, "absences", 901)
		if err != nil || !v1.Absences.Get(&r, "cancelled").Bool {
			t.Errorf("absence 901 after the change: %+v, %v", r, err)
		}
		if _, _, err := s.Record(ctx, "absences", 902); err == nil {
			t.Error("absence 902 is still served after a complete walk without it")
		}
	})
}

// TestDeclaredCollectionKeepsUnheldReferences: a nested object whose target the warehouse does
// not hold (a sickness type) keeps its id in a column and its form in nested.
func TestDeclaredCollectionKeepsUnheldReferences(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		recs := sinktest.Records(t, v1.Sicknesses, sickness)
		sinktest.WalkRecords(t, s, v1.Sicknesses, recs, sink.MergeOptions{Complete: true})
		r, _, err := s.Record(ctx, "sicknesses", 5)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(v1.Sicknesses.AppendJSON(nil, &r)), string(v1.Sicknesses.AppendJSON(nil, &recs[0])); got != want {
			t.Errorf("served\n got %s\nwant %s", got, want)
		}
		var typeID int64
		if err := sinktest.DB(s).GetContext(ctx, &typeID, `SELECT company_sicknesstype_id FROM sicknesses WHERE id = 5`); err != nil || typeID != 8 {
			t.Errorf("company_sicknesstype_id %d (%v), want 8", typeID, err)
		}
	})
}

// TestUnlistedRowsKeepWhatNoReferenceCarries: an employee known only from references keeps the
// names one collection's form carries when another's carries only the id (a sickness's
// employee is {id}), and a later walk of both writes nothing.
func TestUnlistedRowsKeepWhatNoReferenceCarries(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		sinktest.WalkRecords(t, s, v1.Absences, sinktest.Records(t, v1.Absences, absenceB), sink.MergeOptions{Complete: true})
		sick := sinktest.Records(t, v1.Sicknesses, `{"id":6,"employee":{"id":77},"start_date":"2026-05-01"}`)
		sinktest.WalkRecords(t, s, v1.Sicknesses, sick, sink.MergeOptions{Complete: true})
		var first, last string
		if err := sinktest.DB(s).QueryRowxContext(ctx, `SELECT first_name, last_name FROM employees WHERE id = 77`).Scan(&first, &last); err != nil || first != "Gone" || last != "Person" {
			t.Errorf("employee 77 is %q %q (%v), want Gone Person kept", first, last, err)
		}
		before, _ := s.Version(ctx)
		sinktest.WalkRecords(t, s, v1.Sicknesses, sick, sink.MergeOptions{Complete: true})
		sinktest.WalkRecords(t, s, v1.Absences, sinktest.Records(t, v1.Absences, absenceB), sink.MergeOptions{Complete: true})
		if after, _ := s.Version(ctx); after != before {
			t.Errorf("walks of unchanged collections moved the version %d → %d", before, after)
		}
	})
}

// TestReferenceDataIsWalked: departments (like holiday allowances, divisions and locations) are a
// collection a walk lists: ids employees name before any walk are kept unlisted and not served;
// a walk lists them with every field it sends, served back exactly; employees' references no
// longer touch a listed row; a complete walk retires what it no longer lists, behind the guard.
func TestReferenceDataIsWalked(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		es := people(9) // departments 1, 2 and 3, nested as {id, name: "Dept N"}
		sinktest.WalkEmployees(t, s, es, 5, sink.MergeOptions{Complete: true})
		deps, err := s.ListRecords(ctx, "departments", v1.Page{Number: 1, Size: 25})
		if err != nil || deps.Total != 0 {
			t.Fatalf("departments served %d (%v) before any walk of them, want 0", deps.Total, err)
		}

		walked := sinktest.Records(t, v1.Departments, `{"id":1,"name":"Dept 1","budget":{"eur":100,"note":"a & b"}}`,
			`{"id":2,"name":"Engineering","head":null}`, `{"id":4,"name":"Legal","code":"L"}`)
		if res := sinktest.WalkRecords(t, s, v1.Departments, walked, sink.MergeOptions{Complete: true}); res.Inserted != 3 || res.Deleted != 0 {
			t.Errorf("first walk %+v, want 3 listed (two of them known from references) and none deleted", res)
		}
		deps, err = s.ListRecords(ctx, "departments", v1.Page{Number: 1, Size: 25})
		if err != nil || deps.Total != 3 || len(deps.Items) != 3 {
			t.Fatalf("departments served %d of %d (%v), want 3", len(deps.Items), deps.Total, err)
		}
		for i := range walked {
			if got, want := string(v1.Departments.AppendJSON(nil, &deps.Items[i])), string(v1.Departments.AppendJSON(nil, &walked[i])); got != want {
				t.Errorf("served\n got %s\nwant %s", got, want)
			}
		}
		var unlisted int
		if err := sinktest.DB(s).GetContext(ctx, &unlisted, `SELECT count(*) FROM departments WHERE id = 3 AND NOT listed`); err != nil || unlisted != 1 {
			t.Errorf("department 3 (only referenced): %d unlisted rows (%v), want 1", unlisted, err)
		}

		// The employees name department 2 "Dept 2"; the walk listed it as "Engineering": the
		// listed row keeps its own fields, and the unchanged employees write nothing.
		before, _ := s.Version(ctx)
		sinktest.WalkEmployees(t, s, es, 5, sink.MergeOptions{Complete: true})
		if after, _ := s.Version(ctx); after != before {
			t.Errorf("an unchanged walk of employees moved the version %d → %d", before, after)
		}
		if r, _, err := s.Record(ctx, "departments", 2); err != nil || v1.Departments.Get(&r, "name").Text != "Engineering" {
			t.Errorf("department 2 after the employees' walk: %+v (%v), want Engineering", r, err)
		}

		// Two of three gone: refused by the guard, then allowed.
		res := sinktest.WalkRecords(t, s, v1.Departments, walked[:1], sink.MergeOptions{Complete: true, Guards: sink.GuardSettings{MaxShrink: 0.5, MinRecords: 1}})
		if res.Deleted != 0 || res.DeletionsRefused != 2 || !res.Held() {
			t.Errorf("walk without two of three %+v, want them refused by the guard", res)
		}
		res = sinktest.WalkRecords(t, s, v1.Departments, walked[:1], sink.MergeOptions{Complete: true, AllowMassDelete: true})
		if res.Deleted != 2 {
			t.Errorf("allowed walk without two of three %+v, want 2 deleted", res)
		}
		if deps, _ = s.ListRecords(ctx, "departments", v1.Page{Number: 1, Size: 25}); deps.Total != 1 {
			t.Errorf("departments served %d after the deletions, want 1", deps.Total)
		}
	})
}

// TestLoadOrder pins the order a sync loads the collections in (sink.Loadable is sync.Known):
// the reference data, which points at nothing; working patterns, so that employees' patterns are
// listed ones; employees, whose references are the reference data; then the events, which point
// at employees and reference data, the financial module last. Each is merged after what it
// points at has been listed.
func TestLoadOrder(t *testing.T) {
	t.Parallel()
	want := []sink.Resource{
		"departments", "divisions", "locations", "holiday_allowances", "other_leave_reasons",
		"statutory_holiday_countries", "company_training_types",
		sink.WorkingPatterns, sink.Employees,
		"absences", "sicknesses", "leave_requests", "employee_training_courses",
		"salaries", "bonuses", "benefits",
	}
	if got := sink.Loadable(); !slices.Equal(got, want) {
		t.Errorf("load order\n got %v\nwant %v", got, want)
	}
}
