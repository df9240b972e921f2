package sink_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestModelVersionsFollowHistory: model_employee_versions is a table kept by triggers on
// employees_history (migration 0021), so whatever writes history — the employees' own history
// triggers on a sync's update, a deletion, an edit of a version — leaves it as the view of 0020
// would have computed it, in the same transaction, on both backends.
func TestModelVersionsFollowHistory(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadModelsFixture(t, s)
		db := sinktest.DB(s)
		exec := func(q string) {
			t.Helper()
			if _, err := db.ExecContext(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		versions := func(id int) []string {
			t.Helper()
			return modelRows(t, s, `SELECT valid_from, valid_to, department_id, division_id, location_id, working_pattern_id
FROM model_employee_versions WHERE employee_id = ? ORDER BY valid_from`, id)
		}
		checkRows(t, "7 as loaded", versions(7), []string{
			"0001-01-01|2023-09-01|20|200|2000|50",
			"2023-09-01|2024-06-10|30|100|2000|50",
			"2024-06-10|9999-12-31|10|100|1000|50",
		})

		// A sync moves 1 to Support: the employees' trigger closes the version and writes one
		// from now; the versions follow.
		today := time.Now().UTC().Format(time.DateOnly)
		exec(`UPDATE employees SET department_id = 30, division_id = 100, location_id = 2000 WHERE id = 1`)
		checkRows(t, "1 moved to Support today", versions(1), []string{
			"0001-01-01|" + today + "|10|100|1000|50",
			today + "|9999-12-31|30|100|2000|50",
		})
		// A change of something else (a job title) is a history version but not a period.
		exec(`UPDATE employees SET job_title = 'Lead' WHERE id = 2`)
		checkRows(t, "2 with a new job title", versions(2), []string{"0001-01-01|9999-12-31|10|100|1000|50"})
		// Closing a version alone (valid_to) changes nothing; editing a version's department does.
		exec(`UPDATE employees_history SET valid_to = NULL WHERE id = 6 AND department_id = 10`)
		checkRows(t, "6 with a version's end cleared", versions(6), []string{
			"0001-01-01|2024-02-15|10|100|1000|50",
			"2024-02-15|9999-12-31|20|200|2000|50",
		})
		exec(`UPDATE employees_history SET department_id = 30, division_id = 100, location_id = 2000 WHERE id = 6 AND department_id = 10`)
		checkRows(t, "6 with its first version edited", versions(6), []string{
			"0001-01-01|2024-02-15|30|100|2000|50",
			"2024-02-15|9999-12-31|20|200|2000|50",
		})
		// A version deleted: the periods on either side of it join where they are alike.
		exec(`DELETE FROM employees_history WHERE id = 7 AND department_id = 30`)
		checkRows(t, "7 without its Support version", versions(7), []string{
			"0001-01-01|2024-06-10|20|200|2000|50",
			"2024-06-10|9999-12-31|10|100|1000|50",
		})
		exec(`DELETE FROM employees_history WHERE id = 6`)
		checkRows(t, "6 without history", versions(6), nil)
		// On Postgres, a writer whose search_path is not the warehouse's (an operator's psql, naming
		// the schema) goes through the same triggers, and reads the derived view, alike.
		if s.Dialect() == "postgres" {
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var schema string
			if err := conn.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{`SET search_path = pg_catalog`,
				`UPDATE "` + schema + `".employees SET department_id = 20, division_id = 200, location_id = 2000 WHERE id = 5`,
				`SELECT count(*) FROM "` + schema + `".model_employee_versions_derived`,
				`RESET search_path`} {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Errorf("%s: %v", q, err)
				}
			}
			conn.Close()
			checkRows(t, "5 moved with another search_path", versions(5), []string{
				"0001-01-01|" + today + "|30|100|2000|52",
				today + "|9999-12-31|20|200|2000|52",
			})
		}
		// The others are as they were, and the table is, row for row, what the history gives.
		checkRows(t, "3 untouched", versions(3), []string{"0001-01-01|9999-12-31|20|200|2000|50"})
		periods := "23" // on SQLite; on Postgres 5 moved above: one more
		if s.Dialect() == "postgres" {
			periods = "24"
		}
		checkRows(t, "the table against the history", modelRows(t, s, `SELECT
  (SELECT count(*) FROM (SELECT * FROM model_employee_versions EXCEPT SELECT * FROM model_employee_versions_derived) a),
  (SELECT count(*) FROM (SELECT * FROM model_employee_versions_derived EXCEPT SELECT * FROM model_employee_versions) b),
  (SELECT count(*) FROM model_employee_versions)`), []string{"0|0|" + periods})
	})
}

// TestModelVersionsDerivedReadsOneEmployee: SQLite's triggers keep model_employee_versions by
// reading model_employee_versions_derived for one employee a row at a time; that is cheap only
// while SQLite pushes the employee's id down through the view's window functions to a search of
// the history's primary key. Were it to scan the history instead, a load would read all of it for
// every row it writes.
func TestModelVersionsDerivedReadsOneEmployee(t *testing.T) {
	t.Parallel()
	s := sinktest.Store(t, "sqlite", sink.Options{})
	var plan []struct {
		ID, Parent, NotUsed int
		Detail              string
	}
	if err := sinktest.DB(s).Select(&plan, `EXPLAIN QUERY PLAN SELECT * FROM model_employee_versions_derived WHERE employee_id = 5`); err != nil {
		t.Fatal(err)
	}
	var details []string
	searched := false
	for _, p := range plan {
		details = append(details, p.Detail)
		if strings.HasPrefix(p.Detail, "SEARCH h USING") && strings.Contains(p.Detail, "(id=?)") {
			searched = true
		}
		if strings.HasPrefix(p.Detail, "SCAN h") || strings.HasPrefix(p.Detail, "SCAN employees_history") {
			t.Errorf("the history is scanned: %s", p.Detail)
		}
	}
	if !searched {
		t.Errorf("the history is not searched by the employee's id:\n%s", strings.Join(details, "\n"))
	}
}
