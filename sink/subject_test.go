package sink_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// subjectSection is the export's table of that name, or nil.
func subjectSection(x sink.SubjectExport, name string) *sink.SubjectTable {
	for i := range x.Tables {
		if x.Tables[i].Name == name {
			return &x.Tables[i]
		}
	}
	return nil
}

// employeeRefTables are the tables of the warehouse that hold a reference to an employee, from
// the inventory: a column employee_id, or a foreign key to a row of employees. For each, the
// columns that hold one.
func employeeRefTables() map[string][]string {
	out := map[string][]string{}
	for _, it := range sink.Inventory() {
		if it.Column == "employee_id" || strings.HasSuffix(it.Holds, "(a row of employees)") || ownSubject(it.Table, it.Column) {
			out[it.Table] = append(out[it.Table], it.Column)
		}
	}
	return out
}

// ownSubject: the column naming the person a row of a model is about where it is not
// employee_id (a manager's row of the management tree, schema 0022).
func ownSubject(table, column string) bool {
	return table == "model_management_tree" && column == "manager_id"
}

// TestSubjectAccessCoversEveryEmployeeReference: every table holding a reference to an employee
// (the inventory's, derived from the declarations) is searched: a table of people's own records
// under its name, another reference in named_in_<table>. A table added with a reference to
// employees that the subject access does not search fails here.
func TestSubjectAccessCoversEveryEmployeeReference(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	sinktest.LoadSubject(t, s)
	x, err := s.SubjectAccess(context.Background(), sinktest.SubjectMarkers.P)
	if err != nil {
		t.Fatal(err)
	}
	refs := employeeRefTables()
	if len(refs) < 10 {
		t.Fatalf("only %d tables reference employees: %v", len(refs), refs)
	}
	for table, cols := range refs {
		for _, c := range cols {
			name := "named_in_" + table
			if c == "employee_id" || ownSubject(table, c) {
				name = table
			}
			if subjectSection(x, name) == nil {
				t.Errorf("%s.%s references an employee, but a subject access has no %s", table, c, name)
			}
		}
	}
	for _, table := range []string{"employees", "employees_history", "named_in_employees"} {
		if subjectSection(x, table) == nil {
			t.Errorf("no %s", table)
		}
	}
	for _, sec := range x.Tables {
		if _, ok := refs[sec.Table]; !ok && sec.Table != "employees" && sec.Table != "employees_history" {
			t.Errorf("%s: searched, but holds no reference to employees", sec.Name)
		}
	}
}

// TestSubjectAccess: the export of a person holds every row the warehouse holds about them
// (counted by SQL, table by table), every version of their history, the records of others that
// name them reduced to that, and nothing of the other people's own names, emails or records.
func TestSubjectAccess(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		m := sinktest.LoadSubject(t, s)
		x, err := s.SubjectAccess(ctx, m.P)
		if err != nil {
			t.Fatal(err)
		}
		db := sinktest.DB(s)
		count := func(query string, args ...any) int {
			t.Helper()
			var n int
			if err := db.QueryRowContext(ctx, db.Rebind(query), args...).Scan(&n); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			return n
		}
		inv := map[string][]string{}
		for _, it := range sink.Inventory() {
			inv[it.Table] = append(inv[it.Table], it.Column)
		}
		want := map[string]int{}
		for table, cols := range employeeRefTables() {
			for _, c := range cols {
				switch {
				case c == "employee_id" && table == "onboarding_rows":
					want[table] = count(`SELECT count(*) FROM onboarding_rows WHERE employee_id = ? OR lower(email) IN
(SELECT lower(email) FROM employees WHERE id = ? UNION SELECT lower(email) FROM employees_history WHERE id = ?)`, m.P, m.P, m.P)
				case c == "employee_id" || ownSubject(table, c):
					want[table] = count(`SELECT count(*) FROM `+table+` WHERE `+c+` = ?`, m.P)
				default:
					owner := "employee_id"
					if strings.HasPrefix(table, "employees") {
						owner = "id"
					}
					want["named_in_"+table] += count(`SELECT count(*) FROM `+table+` WHERE `+c+` = ? AND `+owner+` <> ?`, m.P, m.P)
				}
			}
		}
		want["employees"] = count(`SELECT count(*) FROM employees WHERE id = ?`, m.P)
		want["employees_history"] = count(`SELECT count(*) FROM employees_history WHERE id = ?`, m.P)
		// What the warehouse holds of P, by the fixture: none of these is empty.
		for _, name := range []string{"employees", "employees_history", "named_in_employees", "named_in_employees_history",
			"absences", "absences_history", "sicknesses", "sicknesses_history", "leave_requests", "leave_requests_history",
			"named_in_leave_requests", "named_in_leave_requests_history", "onboarding_rows", "idempotency_keys"} {
			if want[name] == 0 {
				t.Errorf("the fixture holds no row of %s", name)
			}
		}
		if want["employees_history"] < len(m.Versions) || want["onboarding_rows"] != 1 || want["idempotency_keys"] != 1 {
			t.Errorf("fixture: %v", want)
		}
		for _, sec := range x.Tables {
			if len(sec.Rows) != want[sec.Name] {
				t.Errorf("%s: %d rows, the warehouse holds %d", sec.Name, len(sec.Rows), want[sec.Name])
			}
			for _, r := range sec.Rows {
				if len(r) != len(sec.Columns) {
					t.Fatalf("%s: a row of %d values, %d columns", sec.Name, len(r), len(sec.Columns))
				}
				for i, v := range r {
					if v.Column != sec.Columns[i] {
						t.Fatalf("%s: value %d is %s, column %s", sec.Name, i, v.Column, sec.Columns[i])
					}
				}
			}
			if !strings.HasPrefix(sec.Name, "named_in_") && !slices.Equal(sec.Columns, inv[sec.Table]) {
				t.Errorf("%s: columns %v, the inventory's %v", sec.Name, sec.Columns, inv[sec.Table])
			}
		}
		for name, n := range want {
			if sec := subjectSection(x, name); sec == nil && n > 0 {
				t.Errorf("%s: %d rows in the warehouse, none in the export", name, n)
			}
		}

		doc, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(doc) {
			t.Fatalf("not JSON: %s", doc)
		}
		text := string(doc)
		for _, v := range append(append([]string{}, m.Versions...), m.PEmails...) {
			if !strings.Contains(text, v) {
				t.Errorf("the export lacks %q (a version of P's history)", v)
			}
		}
		versions := map[string]bool{}
		for _, r := range subjectSection(x, "employees_history").Rows {
			versions[value(r, "first_name")] = true
		}
		for _, v := range m.Versions {
			if !versions[v] {
				t.Errorf("employees_history: no version named %s: %v", v, versions)
			}
		}
		statuses := map[string]bool{}
		for _, r := range subjectSection(x, "leave_requests_history").Rows {
			statuses[value(r, "status")] = true
		}
		if !statuses["pending"] || !statuses["approved"] {
			t.Errorf("leave_requests_history: statuses %v, want pending and approved", statuses)
		}
		for _, other := range m.Others {
			if strings.Contains(strings.ToLower(text), strings.ToLower(other)) {
				t.Errorf("the export holds %q, another person's", other)
			}
		}
		// P's own records keep who approved them, by id.
		for _, r := range subjectSection(x, "leave_requests").Rows {
			if value(r, "approved_by_id") != "200" || !strings.Contains(value(r, "nested"), `"approved_by":{"id":200}`) ||
				!strings.Contains(value(r, "sent"), `"approved_by":{"id":200}`) {
				t.Errorf("leave_requests: the approver is not kept by id: %v", r)
			}
		}
		// Records naming P: the field and P's object, nothing else.
		got := map[string]bool{}
		for _, name := range []string{"named_in_employees", "named_in_leave_requests"} {
			for _, r := range subjectSection(x, name).Rows {
				got[name+" "+value(r, "id")+" "+value(r, "field")] = true
				if n := value(r, "nested"); !strings.Contains(n, `"id":100`) || !strings.Contains(n, "Pversion") {
					t.Errorf("%s: %s", name, n)
				}
			}
		}
		for _, k := range []string{"named_in_employees 300 line_manager", "named_in_leave_requests 702 approved_by"} {
			if !got[k] {
				t.Errorf("no %s in %v", k, got)
			}
		}
		if onb := subjectSection(x, "onboarding_rows").Rows[0]; value(onb, "email") != "p.one@example.com" {
			t.Errorf("onboarding_rows: %v", onb)
		}
		idem := subjectSection(x, "idempotency_keys").Rows[0]
		if b := value(idem, "body"); !strings.Contains(b, "Pversionone") || !strings.Contains(b, `"line_manager":{"id":200}`) {
			t.Errorf("idempotency_keys.body: %s", b)
		}
	})
}

func value(r sink.SubjectRow, column string) string {
	for _, v := range r {
		if v.Column == column {
			return v.Text
		}
	}
	return "(no column " + column + ")"
}

// TestSubjectAccessValuesAreTheSameOnBothBackends: both warehouses give one export, but for
// when the rows were written.
func TestSubjectAccessValuesAreTheSameOnBothBackends(t *testing.T) {
	t.Parallel()
	var docs []string
	for _, backend := range sinktest.Backends {
		s := sinktest.Store(t, backend, sink.Options{})
		sinktest.LoadSubject(t, s)
		x, err := s.SubjectAccess(context.Background(), sinktest.SubjectMarkers.P)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range x.Tables {
			for _, r := range sec.Rows {
				for i, v := range r {
					switch v.Column {
					case "valid_from", "valid_to", "synced_at", "created_at", "updated_at", "deleted_at":
						if v.Kind == sink.KindTimestamp || sec.Table == "onboarding_rows" || sec.Table == "idempotency_keys" {
							r[i].Text = "(time)"
						}
					}
				}
			}
		}
		doc, err := json.MarshalIndent(x, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(doc))
	}
	if docs[0] != docs[1] {
		t.Errorf("the backends differ: %s", firstLineDiff(docs[0], docs[1]))
	}
}

func firstLineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return al[i] + " | " + bl[i]
		}
	}
	return "lengths differ"
}

// TestSubjectAccessUnknownEmployee: an id no row holds or names is an error saying so.
func TestSubjectAccessUnknownEmployee(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		sinktest.LoadSubject(t, s)
		_, err := s.SubjectAccess(context.Background(), 42)
		var nf *sink.SubjectNotFoundError
		if !errors.As(err, &nf) || !errors.Is(err, v1.ErrNotFound) || err.Error() != "no employee 42 in the warehouse" {
			t.Fatalf("err = %v, want no employee 42 in the warehouse", err)
		}
	})
}
