package hrdata_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/sink/sinktest/hrdata"
)

func TestMain(m *testing.M) { sinktest.Main(m) }

// The firm the tests generate: small, and four years of events (SQLite runs slowly under -race).
const (
	testEmployees = 200
	testYears     = 4
)

var testOptions = hrdata.Options{Employees: testEmployees, Years: testYears}

// TestLoad generates a small firm on both backends and checks what it wrote is a consistent
// warehouse: each employee's versions tile time from their join date without gaps or overlaps
// and end current, leavers end as Ex-employee, the foreign keys hold, meta's totals are the
// tables', the counts are about the rates', and a second load of the same options writes the same
// rows (and one of another seed does not), and Generate is the firm Load wrote.
func TestLoad(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s := sinktest.Store(t, backend, sink.Options{})
			st, err := hrdata.Load(ctx, s, testOptions)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d people, rows %v, in %v", st.People, st.Rows, st.Took.Round(time.Millisecond))
			db := sinktest.DB(s)
			q := func(query string) int64 {
				t.Helper()
				var n int64
				if err := db.QueryRowContext(ctx, query).Scan(&n); err != nil {
					t.Fatalf("%s: %v", query, err)
				}
				return n
			}
			check := func(what string, query string, want int64) {
				t.Helper()
				if got := q(query); got != want {
					t.Errorf("%s: %d, want %d (%s)", what, got, want, query)
				}
			}
			within := func(what string, got int64, lo, hi float64) {
				t.Helper()
				if float64(got) < lo || float64(got) > hi {
					t.Errorf("%s: %d, want within [%.0f, %.0f]", what, got, lo, hi)
				}
			}
			check("current employees", `SELECT count(*) FROM employees WHERE status = 'Current employee'`, testEmployees)
			people := q(`SELECT count(*) FROM employees`)
			if people != int64(st.People) {
				t.Errorf("employees: %d rows, Load says %d people", people, st.People)
			}
			// 0.8 N four years ago, 15% leaving a year, growing to N: about 1.55 N people.
			within("people", people, 1.3*testEmployees, 1.9*testEmployees)
			// Versions tile time: the first from the join date, each ending where the next
			// begins, the last current; the current row is the last version.
			check("employees without a current version", `SELECT count(*) FROM employees e
WHERE (SELECT count(*) FROM employees_history h WHERE h.id = e.id AND h.valid_to IS NULL) <> 1`, 0)
			check("versions without a following version where they end", `SELECT count(*) FROM employees_history h
WHERE h.valid_to IS NOT NULL AND NOT EXISTS (SELECT 1 FROM employees_history n WHERE n.id = h.id AND n.valid_from = h.valid_to)`, 0)
			check("versions that end before they begin", `SELECT count(*) FROM employees_history WHERE valid_to <= valid_from`, 0)
			check("versions begun before another ends (overlap)", `SELECT count(*) FROM employees_history a
JOIN employees_history b ON b.id = a.id AND b.valid_from > a.valid_from AND (a.valid_to IS NULL OR b.valid_from < a.valid_to)`, 0)
			check("first versions not from the join date", `SELECT count(*) FROM employees_history h
WHERE h.valid_from = (SELECT min(valid_from) FROM employees_history x WHERE x.id = h.id)
  AND substr(CAST(h.valid_from AS text), 1, 10) <> CAST(h.company_join_date AS text)`, 0)
			check("current rows unlike their current version", `SELECT count(*) FROM employees e
JOIN employees_history h ON h.id = e.id AND h.valid_to IS NULL
WHERE h.status <> e.status OR h.department_id <> e.department_id OR h.working_pattern_id <> e.working_pattern_id
   OR coalesce(h.line_manager_id, 0) <> coalesce(e.line_manager_id, 0)`, 0)
			leavers := q(`SELECT count(*) FROM employees WHERE status = 'Ex-employee'`)
			check("leavers", `SELECT count(*) FROM employees`, testEmployees+leavers)
			check("Ex-employee versions but the last", `SELECT count(*) FROM employees_history WHERE status = 'Ex-employee' AND valid_to IS NOT NULL`, 0)
			check("leavers' last versions", `SELECT count(*) FROM employees_history WHERE status = 'Ex-employee' AND valid_to IS NULL`, leavers)
			within("leavers with a leaving date", q(`SELECT count(*) FROM employees WHERE leaving_date IS NOT NULL`), 0.5*float64(leavers), 0.9*float64(leavers))
			check("leaving dates on current employees", `SELECT count(*) FROM employees WHERE leaving_date IS NOT NULL AND status <> 'Ex-employee'`, 0)
			within("transfers", q(`SELECT count(*) FROM employees_history h JOIN employees_history p ON p.id = h.id AND p.valid_to = h.valid_from
WHERE p.department_id <> h.department_id`), 0.2*float64(people), 4*float64(people))
			within("part-timers today", q(`SELECT count(*) FROM employees WHERE status = 'Current employee' AND working_pattern_id <> 1`), 0.15*testEmployees, 0.5*testEmployees)
			// Line managers: a tree, the head of the firm its one root, reporting only to
			// people employed.
			check("current employees without a manager", `SELECT count(*) FROM employees WHERE status = 'Current employee' AND line_manager_id IS NULL`, 1)
			check("current employees reporting to a leaver", `SELECT count(*) FROM employees e JOIN employees m ON m.id = e.line_manager_id
WHERE e.status = 'Current employee' AND m.status <> 'Current employee'`, 0)
			depth := q(`WITH RECURSIVE tree (id, depth) AS (
  SELECT id, 1 FROM employees WHERE status = 'Current employee' AND line_manager_id IS NULL
  UNION ALL SELECT e.id, t.depth + 1 FROM employees e JOIN tree t ON e.line_manager_id = t.id WHERE e.status = 'Current employee')
SELECT max(depth) FROM tree`)
			within("the tree's depth", depth, 3, 4) // 6 at 20,000
			check("current employees outside the tree", `WITH RECURSIVE tree (id) AS (
  SELECT id FROM employees WHERE status = 'Current employee' AND line_manager_id IS NULL
  UNION ALL SELECT e.id FROM employees e JOIN tree t ON e.line_manager_id = t.id WHERE e.status = 'Current employee')
SELECT count(*) FROM employees WHERE status = 'Current employee' AND id NOT IN (SELECT id FROM tree)`, 0)
			// Foreign keys (SQLite checks them at commit only when enabled, so check them here).
			for _, fk := range []struct{ table, col, target string }{
				{"employees", "department_id", "departments"}, {"employees", "division_id", "divisions"},
				{"employees", "location_id", "locations"}, {"employees", "working_pattern_id", "working_patterns"},
				{"employees", "holiday_allowance_id", "holiday_allowances"}, {"employees", "line_manager_id", "employees"},
				{"employees", "holiday_approver_id", "employees"}, {"employees_history", "line_manager_id", "employees"},
				{"employees_history", "department_id", "departments"},
				{"absences", "employee_id", "employees"}, {"absences", "approved_by_id", "employees"},
				{"absences", "leave_reason_id", "other_leave_reasons"}, {"leave_requests", "employee_id", "employees"},
				{"leave_requests", "approved_by_id", "employees"}, {"sicknesses", "employee_id", "employees"},
				{"employee_training_courses", "employee_id", "employees"},
				{"employee_training_courses", "company_training_type_id", "company_training_types"},
			} {
				check(fk.table+"."+fk.col+" → "+fk.target, fmt.Sprintf(`SELECT count(*) FROM %s x WHERE x.%s IS NOT NULL
AND NOT EXISTS (SELECT 1 FROM %s t WHERE t.id = x.%s)`, fk.table, fk.col, fk.target, fk.col), 0)
			}
			check("references", `SELECT (SELECT count(*) FROM departments) * 1000000 + (SELECT count(*) FROM divisions) * 10000
+ (SELECT count(*) FROM locations) * 100 + (SELECT count(*) FROM working_patterns)`, 8_04_06_04)
			// Events: about their rates for testYears of a headcount between 0.8 N and N, each by
			// someone employed on its first day.
			rates := []struct {
				table string
				rate  float64
			}{{"absences", hrdata.AbsenceRate}, {"sicknesses", hrdata.SicknessRate}, {"leave_requests", hrdata.LeaveRate}, {"employee_training_courses", hrdata.TrainingRate}}
			for _, r := range rates {
				n := q(`SELECT count(*) FROM ` + r.table)
				// testYears of a headcount between 0.8 N and N.
				within(r.table, n, 0.7*r.rate*testYears*0.8*testEmployees, 1.3*r.rate*testYears*testEmployees)
			}
			for _, t := range []string{"absences", "sicknesses", "leave_requests"} {
				check(t+" outside their employee's employment", `SELECT count(*) FROM `+t+` x JOIN employees e ON e.id = x.employee_id
WHERE x.start_date < e.company_join_date OR (e.status = 'Ex-employee' AND x.start_date > `+leftSQL(backend)+`)`, 0)
				check(t+" ending before they start", `SELECT count(*) FROM `+t+` WHERE end_date < start_date`, 0)
			}
			positive := func(what, query string) {
				t.Helper()
				if q(query) == 0 {
					t.Errorf("no %s (%s)", what, query)
				}
			}
			positive("half-day absences", `SELECT count(*) FROM absences WHERE half_start OR half_end`)
			positive("cancelled absences", `SELECT count(*) FROM absences WHERE cancelled`)
			positive("rejected leave requests", `SELECT count(*) FROM leave_requests WHERE status = 'rejected'`)
			positive("sicknesses over a month end", `SELECT count(*) FROM sicknesses WHERE substr(CAST(start_date AS text), 1, 7) <> substr(CAST(end_date AS text), 1, 7)`)
			positive("courses that expire", `SELECT count(*) FROM employee_training_courses WHERE expires_on IS NOT NULL`)
			// History: every row of a table with history has one current version.
			for _, t := range []string{"absences", "sicknesses", "leave_requests", "employee_training_courses", "departments", "company_training_types"} {
				check(t+"_history current versions", `SELECT count(*) FROM `+t+`_history WHERE valid_to IS NULL`, q(`SELECT count(*) FROM `+t))
				check(t+"_history other versions", `SELECT count(*) FROM `+t+`_history WHERE valid_to IS NOT NULL`, 0)
			}
			// meta's totals, as the triggers keep them; the triggers are back.
			for _, t := range []string{"employees", "departments", "absences", "employee_training_courses"} {
				check("meta."+t+"_total", `SELECT `+t+`_total FROM meta`, q(`SELECT count(*) FROM `+t+` WHERE listed AND deleted_at IS NULL`))
			}
			before := q(`SELECT count(*) FROM employees_history WHERE id = 1`)
			if _, err := db.ExecContext(ctx, `UPDATE employees SET job_title = 'Changed' WHERE id = 1`); err != nil {
				t.Fatal(err)
			}
			check("versions of employee 1 after an update (the history trigger is on again)", `SELECT count(*) FROM employees_history WHERE id = 1`, before+1)
			if _, err := db.ExecContext(ctx, `UPDATE employees SET job_title = (SELECT job_title FROM employees_history WHERE id = 1 AND valid_to IS NOT NULL ORDER BY valid_from DESC LIMIT 1) WHERE id = 1`); err != nil {
				t.Fatal(err)
			}

			generated(t, s, backend)
			// Deterministic: the same options write the same rows (on Postgres, where a
			// second load is quick under -race; the rows are made the same for both).
			if backend == "postgres" {
				again := sinktest.Store(t, backend, sink.Options{})
				if _, err := hrdata.Load(ctx, again, testOptions); err != nil {
					t.Fatal(err)
				}
				if digest(t, again) != digest(t, s) {
					t.Errorf("a second load of the same options wrote other rows")
				}
			}
			if _, err := hrdata.Load(ctx, s, testOptions); err == nil || !strings.Contains(err.Error(), "already holds") {
				t.Errorf("a load into a warehouse with employees: %v, want it refused", err)
			}
		})
	}
}

func leftSQL(backend string) string {
	if backend == "postgres" {
		return `(SELECT max(h.valid_from)::date FROM employees_history h WHERE h.id = e.id)`
	}
	return `(SELECT substr(max(h.valid_from), 1, 10) FROM employees_history h WHERE h.id = e.id)`
}

// digest hashes every row Load writes but employee 1's history (the test changed it) and
// synced_at, table by table, in id order.
func digest(t *testing.T, s *sink.Store) string {
	t.Helper()
	h := sha256.New()
	for _, table := range []string{"employees", "employees_history", "absences", "sicknesses", "leave_requests",
		"employee_training_courses", "absences_history", "departments", "working_patterns"} {
		cols := `id, status, department_id, line_manager_id, valid_from, valid_to`
		switch table {
		case "employees":
			cols = `id, first_name, last_name, email, job_title, status, department_id, working_pattern_id, line_manager_id, leaving_date`
		case "absences", "absences_history":
			cols = `id, employee_id, start_date, end_date, deducted, cancelled, approved_by_id`
		case "sicknesses":
			cols = `id, employee_id, start_date, end_date, deducted, status`
		case "leave_requests":
			cols = `id, employee_id, start_date, end_date, status`
		case "employee_training_courses":
			cols = `id, employee_id, start_on, end_on, expires_on, outcome`
		case "departments", "working_patterns":
			cols = `id, name`
		}
		if strings.HasSuffix(table, "_history") && table != "employees_history" {
			cols += `, valid_from, valid_to`
		}
		rows, err := sinktest.DB(s).QueryContext(context.Background(), `SELECT `+cols+` FROM `+table+where(table)+` ORDER BY id`+orderFrom(table))
		if err != nil {
			t.Fatal(err)
		}
		n := len(strings.Split(cols, ","))
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%s %v\n", table, vals)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func orderFrom(table string) string {
	if strings.HasSuffix(table, "_history") {
		return ", valid_from"
	}
	return ""
}

func where(table string) string {
	if strings.HasPrefix(table, "employees") && table != "employee_training_courses" {
		return " WHERE id <> 1"
	}
	return ""
}

// TestGenerateSeeds: Generate gives the same firm for the same options and another for
// another seed.
func TestGenerateSeeds(t *testing.T) {
	a, b := hrdata.Generate(testOptions), hrdata.Generate(testOptions)
	o := testOptions
	o.Seed = 2
	c := hrdata.Generate(o)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("two firms of the same options differ")
	}
	if fmt.Sprint(a.People) == fmt.Sprint(c.People) {
		t.Errorf("the firms of seeds 1 and 2 are the same")
	}
}

// generated checks that the in-memory firm a models' test reckons from (Generate) is the
// warehouse Load wrote: headcount by department on a day two years ago, from employees_history,
// and the number of versions.
func generated(t *testing.T, s *sink.Store, backend string) {
	t.Helper()
	ctx := context.Background()
	f := hrdata.Generate(testOptions)
	d := f.Today.AddDate(-2, 0, 0)
	want := map[int64]int{}
	versions := 0
	for _, p := range f.People {
		versions += len(p.Versions)
		if v, ok := p.At(d); ok && v.Status == "Current employee" {
			want[v.DepartmentID]++
		}
	}
	var at any = d
	q := `SELECT department_id, count(*) FROM employees_history
WHERE valid_from <= $1 AND (valid_to IS NULL OR valid_to > $1) AND status = 'Current employee' GROUP BY 1`
	if backend == "sqlite" {
		at = d.Format("2006-01-02T15:04:05.000Z") // as the history triggers write it
		q = strings.ReplaceAll(q, "$1", "?1")
	}
	rows, err := sinktest.DB(s).QueryContext(ctx, q, at)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int{}
	for rows.Next() {
		var dep int64
		var n int
		if err := rows.Scan(&dep, &n); err != nil {
			t.Fatal(err)
		}
		got[dep] = n
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
		t.Errorf("headcount by department on %s: warehouse %v, Generate %v", d.Format(time.DateOnly), got, want)
	}
	var n int
	if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT count(*) FROM employees_history WHERE id <> 1`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != versions-len(f.People[0].Versions) {
		t.Errorf("employees_history has %d versions but employee 1's, Generate %d", n, versions-len(f.People[0].Versions))
	}
}
