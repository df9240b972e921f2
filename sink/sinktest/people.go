package sinktest

import (
	"context"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
)

// PeopleAsOf is the day the people account (People) is reported on.
const PeopleAsOf = "2025-06-15"

// peopleAccount is a small account for the people report: three departments, nine people who
// joined from 2019 to 2025, two leavers, a move, a part-timer, and one person whose identifying
// data is erased (an erasure not lifted; their names left in place to show the report checks
// the erasure itself). Everyone's first version was written at the first sync, 2023-01-02.
const peopleAccount = `
INSERT INTO departments (id, name) VALUES (10, 'Sales'), (20, 'Engineering'), (30, 'Support');
UPDATE working_patterns SET deleted_at = '2023-01-02T06:00:00.000Z' WHERE id = 1;
INSERT INTO working_patterns (id, name, is_default, total_hours) VALUES (50, 'Full time', TRUE, '37.5'), (51, 'Half', FALSE, '18.75');
INSERT INTO employees (id, first_name, last_name, status, company_join_date, leaving_date, department_id, working_pattern_id, listed, origin) VALUES
  (101, 'Ada', 'Lovelace', 'Current employee', '2019-03-04', NULL, 20, 50, TRUE, 'source'),
  (102, 'Grace', 'Hopper', 'Current employee', '2020-09-01', NULL, 20, 51, TRUE, 'source'),
  (103, 'Alan', 'Turing', 'Current employee', '2021-01-11', NULL, 10, 50, TRUE, 'source'),
  (104, 'Erased', 'Person', 'Current employee', '2022-05-16', NULL, 10, 50, TRUE, 'source'),
  (105, 'Edsger', 'Dijkstra', 'Ex-employee', '2021-07-01', '2024-10-31', 30, 50, TRUE, 'source'),
  (106, 'Barbara', 'Liskov', 'Current employee', '2024-02-05', NULL, 30, 50, TRUE, 'source'),
  (107, 'Ken', 'Thompson', 'Ex-employee', '2023-04-03', '2025-03-14', 20, 50, TRUE, 'source'),
  (108, 'Frances', 'Allen', 'Current employee', '2024-11-04', NULL, 30, 51, TRUE, 'source'),
  (109, 'Donald', 'Knuth', 'Current employee', '2025-04-01', NULL, 10, 50, TRUE, 'source');
DELETE FROM employees_history;
INSERT INTO employees_history (id, valid_from, valid_to, status, department_id, working_pattern_id, listed, origin) VALUES
  (101, '2023-01-02T06:00:00.000Z', NULL, 'Current employee', 20, 50, TRUE, 'source'),
  (102, '2023-01-02T06:00:00.000Z', NULL, 'Current employee', 20, 51, TRUE, 'source'),
  (103, '2023-01-02T06:00:00.000Z', '2024-06-03T06:00:00.000Z', 'Current employee', 30, 50, TRUE, 'source'),
  (103, '2024-06-03T06:00:00.000Z', NULL, 'Current employee', 10, 50, TRUE, 'source'),
  (104, '2023-01-02T06:00:00.000Z', NULL, 'Current employee', 10, 50, TRUE, 'source'),
  (105, '2023-01-02T06:00:00.000Z', NULL, 'Current employee', 30, 50, TRUE, 'source'),
  (106, '2024-02-05T06:00:00.000Z', NULL, 'Current employee', 30, 50, TRUE, 'source'),
  (107, '2023-04-03T06:00:00.000Z', NULL, 'Current employee', 20, 50, TRUE, 'source'),
  (108, '2024-11-04T06:00:00.000Z', NULL, 'Current employee', 30, 51, TRUE, 'source'),
  (109, '2025-04-01T06:00:00.000Z', NULL, 'Current employee', 10, 50, TRUE, 'source');
INSERT INTO sicknesses (id, employee_id, start_date, end_date) VALUES
  (1, 106, '2025-01-06', '2025-01-06'), (2, 106, '2025-02-03', '2025-02-03'), (3, 106, '2025-03-03', '2025-03-04'), (4, 106, '2025-05-12', '2025-05-13'),
  (5, 103, '2025-02-10', '2025-02-10'), (6, 103, '2025-04-07', '2025-04-08'), (7, 103, '2025-06-02', '2025-06-03'),
  (8, 104, '2025-03-10', '2025-03-10'), (9, 104, '2025-05-19', '2025-05-20');
INSERT INTO absences (id, employee_id, type, start_date, end_date, cancelled) VALUES
  (1, 101, 'Holiday', '2025-05-05', '2025-05-09', FALSE), (2, 108, 'OtherLeave', '2025-06-09', '2025-06-09', FALSE);
INSERT INTO erasures (kind, collection, subject_id, classes, cause, reason, erased_at) VALUES
  ('employee', 'employees', 104, 'identifying,free_text', 'request', 'test', '2025-01-10T09:00:00.000Z')`

// People writes the people account above into s (a migrated, empty warehouse).
func People(t testing.TB, s *sink.Store) {
	t.Helper()
	execAll(t, s, peopleAccount)
}

// absenceContract stands in for the absence models of migration 0023 where the warehouse has
// none yet: tables of the views' columns (model_absence_monthly, model_bradford), with a few
// rows of the people account.
const absenceContract = `
CREATE TABLE model_absence_monthly (month DATE, department_id BIGINT, department TEXT, sick_days NUMERIC,
  other_leave_days NUMERIC, holiday_days NUMERIC, days_lost NUMERIC, days_due NUMERIC, fte NUMERIC,
  days_lost_per_fte NUMERIC, sickness_rate NUMERIC);
CREATE TABLE model_bradford (as_of DATE, employee_id BIGINT, department_id BIGINT, department TEXT,
  spells BIGINT, days NUMERIC, bradford NUMERIC);
INSERT INTO model_absence_monthly VALUES
  ('2025-05-01', 10, 'Sales', 3, 1, 5, 4, 63, 3, 1.33, 0.0476),
  ('2025-06-01', 10, 'Sales', 2, 0, 1, 2, 33, 3, 0.67, 0.0606),
  ('2025-06-01', 20, 'Engineering', 0.5, 0, 2, 0.5, 16.5, 1.5, 0.33, 0.0303),
  ('2025-06-01', 30, 'Support', 6, 2, 0, 8, 33, 1.5, 5.33, 0.1818),
  ('2024-01-01', 30, 'Support', 40, 0, 0, 40, 44, 2, 20, 0.9);
INSERT INTO model_bradford VALUES
  ('2025-05-31', 103, 10, 'Sales', 1, 2, 2),
  ('2025-06-15', 103, 10, 'Sales', 3, 5, 45),
  ('2025-06-15', 104, 10, 'Sales', 2, 3, 12),
  ('2025-06-15', 106, 30, 'Support', 4, 6, 96),
  ('2025-06-15', 101, 20, 'Engineering', 0, 0, 0)`

// AbsenceContract makes the stand-ins of the absence models (absenceContract) when the
// warehouse has no model_bradford, and reports whether it did.
func AbsenceContract(t testing.TB, s *sink.Store) bool {
	t.Helper()
	var n int
	q := `SELECT count(*) FROM sqlite_master WHERE name = 'model_bradford'`
	if DB(s).DriverName() == "postgres" {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'model_bradford'`
	}
	if err := DB(s).QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		return false
	}
	execAll(t, s, absenceContract)
	return true
}

// execAll runs the statements of script (separated by ";\n") in one transaction.
func execAll(t testing.TB, s *sink.Store, script string) {
	t.Helper()
	ctx := context.Background()
	tx, err := DB(s).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(strings.TrimSpace(script), ";\n") {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
