package sink_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// The employment rules of migration 0027 (docs/models.md: model_employment, model_left_out,
// FTE, current staff, model_starting_soon), held on an account made by hand for them, whose
// every figure below is worked out in the comments, on both backends.
//
// Departments 10 Sales, 20 Engineering. Working patterns: the seed's Standard (1) retired; 50
// Full time 37.5 h (default: full time is 37.5 h); 60 Zero hours (no total_hours, no hours on any
// day: FTE 0); 61 Days only (total_hours 0 but 8 h on Monday and Tuesday: it has contracted hours,
// so it is no zero-hours pattern, and as no total_hours > 0 is known its FTE stays 1); 99 is no
// pattern in working_patterns (FTE 1): a version in history names it (13's; the employees row,
// held by its foreign key, names none, also FTE 1).
//
// The warehouse synced on S1 2024-03-01T06:00Z (its first sync), S2 2024-03-08T06:00Z, S3
// 2024-03-15T06:00Z and S4 2024-05-02T06:00Z. "Today" is the real today (after all of them);
// dates from 2099 are still to come.
//
//	id  status            joined      left (leaving_date)  dept  pattern    line mgr  history
//	 1  Current employee  2020-01-01                       Sales 50                   Current from S1
//	 2  Ex-employee       2021-05-01  2024-04-30           Sales 50                   Current S1, Ex from S4
//	 3  Ex-employee       2022-02-01                       Eng   50                   Current S1, Ex from S2
//	 4  Ex-employee       2019-06-01                       Eng   50                   Ex from S1: never seen employed
//	 6  Current employee  2023-01-01                       Eng   50                   Current S1, unlisted (deleted_at) from S3
//	 7  Pending leaver    2023-06-01  2099-06-30           Sales 50         1         Pending leaver from S1
//	 8  Pending leaver    2022-09-01  2024-03-10           Sales 50                   Pending leaver from S1
//	 9  Current employee  2099-01-04                       Eng   50         1         Current from S1: a future starter
//	10  Current employee  2023-03-01                       Sales 60, 50 from S3   1   pattern 60 S1, 50 from S3
//	11  Current employee  2023-03-01                       Eng   61                   Current from S1
//	12  Current employee  (none)                           Sales 50                   Current from S1
//	13  On leave          2021-01-01                       Eng   99         9         On leave from S1 (another status)
//	14  Ex-employee       2021-03-01  2099-12-31           Eng   50         1         Current S1, Ex from S3
//	15  a reference only (listed FALSE): no person of the account
//	16  a seed row (origin seed): no person of the account
//
// What the rules make of them (model_employment, model_left_out):
//   - 2 left on their leaving_date, 2024-04-30 (first rule), though hrsync saw Ex only on S4.
//   - 3 has no leaving_date and was seen employed (Current on S1): left the day first seen as
//     Ex, S2, 2024-03-08 (status).
//   - 4 has no leaving_date and was never seen employed: the day they left is not known, so they
//     are left out (no_leaving_date): in no headcount, FTE, starters, leavers or turnover on
//     any day. (Before 0027 they left on S1, the day first seen, and counted in every headcount
//     from 2019-06-01 to then.)
//   - 6 was seen employed, then no longer listed: left on S3, 2024-03-15 (unlisted).
//   - 7 is a pending leaver whose date is to come: employed, current staff.
//   - 8 is a pending leaver whose date has passed: left on it, 2024-03-10 (leaving_date): a status
//     other than Current employee and Ex-employee goes by its dates.
//   - 9 starts in 2099: in model_employment with no end, but not current staff: in
//     model_starting_soon, in no count, no reporting line, no management tree.
//   - 10 was on the zero-hours pattern until S3: FTE 0 and zero_hours 1 until 2024-03-14, then 1.
//   - 12 has no join date: left out (no_join_date).
//   - 13's status is another text: employed by their dates.
//   - 14 is Ex-employee with a leaving_date to come: the sent date wins, employed until then.
//     (Retention, Store.Leavers, counts 14 as left since S3, and 4 since S1: see
//     TestEmploymentRulesAndRetention.)
//
// Employed spans (start through end, inclusive) and FTE:
//
//	1 Sales 1 from 2020-01-01; 2 Sales 1 2021-05-01..2024-04-30; 3 Eng 1 2022-02-01..2024-03-08;
//	6 Eng 1 2023-01-01..2024-03-15; 7 Sales 1 from 2023-06-01; 8 Sales 1 2022-09-01..2024-03-10;
//	10 Sales 0 (zero-hours) 2023-03-01..2024-03-14, 1 from 2024-03-15; 11 Eng 1 from 2023-03-01;
//	13 Eng 1 from 2021-01-01; 14 Eng 1 from 2021-03-01.
const employmentFixture = `
INSERT INTO departments (id, name) VALUES (10, 'Sales'), (20, 'Engineering');
INSERT INTO company_training_types (id, name) VALUES (1, 'Fire safety');
UPDATE working_patterns SET deleted_at = '2024-03-01T06:00:00.000Z' WHERE id = 1;
INSERT INTO working_patterns (id, name, is_default, total_hours, mon_hr, tue_hr) VALUES
  (50, 'Full time', TRUE, '37.5', '7.5', '7.5'), (60, 'Zero hours', FALSE, NULL, NULL, NULL), (61, 'Days only', FALSE, '0', '8', '8');
INSERT INTO employees (id, status, company_join_date, leaving_date, department_id, working_pattern_id, line_manager_id, listed, origin, deleted_at) VALUES
  (1, 'Current employee', '2020-01-01', NULL, 10, 50, NULL, TRUE, 'source', NULL),
  (2, 'Ex-employee', '2021-05-01', '2024-04-30', 10, 50, NULL, TRUE, 'source', NULL),
  (3, 'Ex-employee', '2022-02-01', NULL, 20, 50, NULL, TRUE, 'source', NULL),
  (4, 'Ex-employee', '2019-06-01', NULL, 20, 50, NULL, TRUE, 'source', NULL),
  (6, 'Current employee', '2023-01-01', NULL, 20, 50, NULL, TRUE, 'source', '2024-03-15T06:00:00.000Z'),
  (7, 'Pending leaver', '2023-06-01', '2099-06-30', 10, 50, 1, TRUE, 'source', NULL),
  (8, 'Pending leaver', '2022-09-01', '2024-03-10', 10, 50, NULL, TRUE, 'source', NULL),
  (9, 'Current employee', '2099-01-04', NULL, 20, 50, 1, TRUE, 'source', NULL),
  (10, 'Current employee', '2023-03-01', NULL, 10, 50, 1, TRUE, 'source', NULL),
  (11, 'Current employee', '2023-03-01', NULL, 20, 61, NULL, TRUE, 'source', NULL),
  (12, 'Current employee', NULL, NULL, 10, 50, NULL, TRUE, 'source', NULL),
  (13, 'On leave', '2021-01-01', NULL, 20, NULL, 9, TRUE, 'source', NULL),
  (14, 'Ex-employee', '2021-03-01', '2099-12-31', 20, 50, 1, TRUE, 'source', NULL),
  (15, 'Current employee', '2015-01-01', NULL, 10, 50, NULL, FALSE, 'source', NULL),
  (16, 'Ex-employee', '2015-01-01', NULL, 10, 50, NULL, TRUE, 'seed', NULL);
DELETE FROM employees_history;
INSERT INTO employees_history (id, valid_from, valid_to, status, department_id, working_pattern_id, line_manager_id, listed, origin, deleted_at) VALUES
  (1, '2024-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 50, NULL, TRUE, 'source', NULL),
  (2, '2024-03-01T06:00:00.000Z', '2024-05-02T06:00:00.000Z', 'Current employee', 10, 50, NULL, TRUE, 'source', NULL),
  (2, '2024-05-02T06:00:00.000Z', NULL, 'Ex-employee', 10, 50, NULL, TRUE, 'source', NULL),
  (3, '2024-03-01T06:00:00.000Z', '2024-03-08T06:00:00.000Z', 'Current employee', 20, 50, NULL, TRUE, 'source', NULL),
  (3, '2024-03-08T06:00:00.000Z', NULL, 'Ex-employee', 20, 50, NULL, TRUE, 'source', NULL),
  (4, '2024-03-01T06:00:00.000Z', NULL, 'Ex-employee', 20, 50, NULL, TRUE, 'source', NULL),
  (6, '2024-03-01T06:00:00.000Z', '2024-03-15T06:00:00.000Z', 'Current employee', 20, 50, NULL, TRUE, 'source', NULL),
  (6, '2024-03-15T06:00:00.000Z', NULL, 'Current employee', 20, 50, NULL, TRUE, 'source', '2024-03-15T06:00:00.000Z'),
  (7, '2024-03-01T06:00:00.000Z', NULL, 'Pending leaver', 10, 50, 1, TRUE, 'source', NULL),
  (8, '2024-03-01T06:00:00.000Z', NULL, 'Pending leaver', 10, 50, NULL, TRUE, 'source', NULL),
  (9, '2024-03-01T06:00:00.000Z', NULL, 'Current employee', 20, 50, 1, TRUE, 'source', NULL),
  (10, '2024-03-01T06:00:00.000Z', '2024-03-15T06:00:00.000Z', 'Current employee', 10, 60, 1, TRUE, 'source', NULL),
  (10, '2024-03-15T06:00:00.000Z', NULL, 'Current employee', 10, 50, 1, TRUE, 'source', NULL),
  (11, '2024-03-01T06:00:00.000Z', NULL, 'Current employee', 20, 61, NULL, TRUE, 'source', NULL),
  (12, '2024-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 50, NULL, TRUE, 'source', NULL),
  (13, '2024-03-01T06:00:00.000Z', NULL, 'On leave', 20, 99, 9, TRUE, 'source', NULL),
  (14, '2024-03-01T06:00:00.000Z', '2024-03-15T06:00:00.000Z', 'Current employee', 20, 50, 1, TRUE, 'source', NULL),
  (14, '2024-03-15T06:00:00.000Z', NULL, 'Ex-employee', 20, 50, 1, TRUE, 'source', NULL),
  (15, '2024-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 50, NULL, FALSE, 'source', NULL),
  (16, '2024-03-01T06:00:00.000Z', NULL, 'Ex-employee', 10, 50, NULL, TRUE, 'seed', NULL);
INSERT INTO employee_training_courses (id, employee_id, name, company_training_type_id, start_on, end_on, expires_on, status, outcome, listed, origin) VALUES
  (301, 1, 'Fire safety', 1, '2024-01-10', '2024-01-10', :in30, 'Completed', 'Passed', TRUE, 'source'),
  (302, 9, 'Fire safety', 1, '2024-01-10', '2024-01-10', :in30, 'Completed', 'Passed', TRUE, 'source')`

// loadEmploymentFixture writes the account above into s; the certificates expire 30 days from
// today (UTC).
func loadEmploymentFixture(t *testing.T, s *sink.Store) {
	t.Helper()
	in30 := "'" + time.Now().UTC().AddDate(0, 0, 30).Format(time.DateOnly) + "'"
	db := sinktest.DB(s)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(strings.TrimSpace(strings.ReplaceAll(employmentFixture, ":in30", in30)), ";\n") {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestEmploymentRules: the leaving days, who is left out and why, zero-hours FTE and current
// staff, as the comment above works them out, on both backends.
func TestEmploymentRules(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadEmploymentFixture(t, s)

		checkRows(t, "model_employment", modelRows(t, s, `SELECT employee_id, start_date, end_date, left_by FROM model_employment ORDER BY employee_id`), []string{
			"1|2020-01-01|NULL|NULL",
			"2|2021-05-01|2024-04-30|leaving_date",
			"3|2022-02-01|2024-03-08|status",
			"6|2023-01-01|2024-03-15|unlisted",
			"7|2023-06-01|NULL|NULL",
			"8|2022-09-01|2024-03-10|leaving_date",
			"9|2099-01-04|NULL|NULL",
			"10|2023-03-01|NULL|NULL",
			"11|2023-03-01|NULL|NULL",
			"13|2021-01-01|NULL|NULL",
			"14|2021-03-01|NULL|NULL",
		})
		// 4 and 12, with why; first seen on S1. 15 (a reference) and 16 (seed) are not people
		// of the account: not left out, not there.
		checkRows(t, "model_left_out", modelRows(t, s, `SELECT employee_id, reason, status, start_date, end_date, first_seen FROM model_left_out ORDER BY employee_id`), []string{
			"4|no_leaving_date|Ex-employee|2019-06-01|NULL|2024-03-01",
			"12|no_join_date|Current employee|NULL|NULL|2024-03-01",
		})
		checkRows(t, "model_people", modelRows(t, s, `SELECT employee_id, left_by FROM model_people WHERE left_by IS NOT NULL ORDER BY employee_id`), []string{
			"2|leaving_date", "3|status", "4|unknown", "6|unlisted", "8|leaving_date",
		})

		// Headcount, FTE and zero-hours on a day (division and location: none here).
		//   2024-02-29 (4 would be in Engineering, had their leaving day been known):
		//     Sales 1 2 7 8 10 = 5, FTE 1+1+1+1+0 = 4, zero_hours 1 (10)
		//     Engineering 3 6 11 13 14 = 5, FTE 5 (11: pattern 61, 1; 13: pattern 99, 1), 0
		//   2024-03-08, 3's last day: the same. 2024-03-09: Engineering 6 11 13 14 = 4, FTE 4.
		//   2024-03-15: 10 on pattern 50 from S3, 8 gone (03-10), 6's last day:
		//     Sales 1 2 7 10 = 4, FTE 4, 0; Engineering 6 11 13 14 = 4, FTE 4, 0.
		daily := `SELECT day, department, headcount, fte, zero_hours FROM model_headcount_daily WHERE day = ? ORDER BY department_id`
		for _, tc := range []struct {
			day  string
			want []string
		}{
			{"2024-02-29", []string{"2024-02-29|Sales|5|4|1", "2024-02-29|Engineering|5|5|0"}},
			{"2024-03-08", []string{"2024-03-08|Sales|5|4|1", "2024-03-08|Engineering|5|5|0"}},
			{"2024-03-09", []string{"2024-03-09|Sales|5|4|1", "2024-03-09|Engineering|4|4|0"}},
			{"2024-03-15", []string{"2024-03-15|Sales|4|4|0", "2024-03-15|Engineering|4|4|0"}},
			{"2019-12-31", nil}, // only 4 was there then (and 16, a seed row)
		} {
			checkRows(t, "headcount on "+tc.day, modelRows(t, s, daily, tc.day), tc.want)
		}
		// No day counts 9, who starts in 2099, nor 4: every day's headcount is at most the 10
		// people employed some day up to today.
		checkRows(t, "the most people on any day", modelRows(t, s, `SELECT max(n) FROM (SELECT day, sum(headcount) AS n FROM model_headcount_daily GROUP BY day) d`), []string{"10"})

		// Month ends: 2024-02-29 as above; 2024-03-31: Sales 1 2 7 10 = 4, FTE 4, 0 (10 full
		// time since the 15th); Engineering 11 13 14 = 3 (3 and 6 gone), 3, 0. 2024-04-30 is
		// 2's last day: as March. 2024-05-31: Sales 1 7 10 = 3.
		checkRows(t, "model_headcount_monthly", modelRows(t, s, `SELECT month, department, headcount, fte, zero_hours FROM model_headcount_monthly
WHERE month >= '2024-02-01' AND month <= '2024-05-01' ORDER BY month, department_id`), []string{
			"2024-02-01|Sales|5|4|1",
			"2024-02-01|Engineering|5|5|0",
			"2024-03-01|Sales|4|4|0",
			"2024-03-01|Engineering|3|3|0",
			"2024-04-01|Sales|4|4|0",
			"2024-04-01|Engineering|3|3|0",
			"2024-05-01|Sales|3|3|0",
			"2024-05-01|Engineering|3|3|0",
		})
		// From 2023-03 (10's start) to 2024-02, 10 is the one zero-hours person in Sales.
		checkRows(t, "zero-hours months", modelRows(t, s, `SELECT min(month), max(month), sum(zero_hours) FROM model_headcount_monthly WHERE zero_hours > 0`),
			[]string{"2023-03-01|2024-02-01|12"})

		// Starters and leavers: since 2024, 3 and 6 left Engineering in March, 8 Sales in March,
		// 2 Sales in April; 9's start is to come. The first month with a starter is 1's, 2020-01
		// (4's 2019-06 start is not counted: they are left out).
		checkRows(t, "model_starters_leavers_monthly", modelRows(t, s, `SELECT month, department, starters, leavers FROM model_starters_leavers_monthly
WHERE month >= '2024-01-01' ORDER BY month, department_id`), []string{
			"2024-03-01|Sales|0|1",
			"2024-03-01|Engineering|0|2",
			"2024-04-01|Sales|0|1",
		})
		checkRows(t, "the first starters' month", modelRows(t, s, `SELECT min(month), sum(starters) FROM model_starters_leavers_monthly`), []string{"2020-01-01|10"})

		// Turnover: 2024-03 starts with 1 2 3 6 7 8 10 11 13 14 = 10 and ends with 1 2 7 10 11
		// 13 14 = 7; leavers 3 6 8: 3 / 8.5 = 0.3529. 2024-04: 7 and 7 (2 is there on the 30th,
		// their last day), 1 leaver: 1/7 = 0.1429. 2024-05: 6 and 6, none. The first month is
		// 1's, 2020-01, not 4's.
		checkRows(t, "model_turnover_monthly", modelRows(t, s, `SELECT month, leavers, headcount_start, headcount_end, average_headcount, turnover
FROM model_turnover_monthly WHERE month >= '2024-03-01' AND month <= '2024-05-01' ORDER BY month`), []string{
			"2024-03-01|3|10|7|8.5|0.3529",
			"2024-04-01|1|7|7|7|0.1429",
			"2024-05-01|0|6|6|6|0",
		})
		checkRows(t, "the first month of turnover", modelRows(t, s, `SELECT min(month) FROM model_turnover_monthly`), []string{"2020-01-01"})

		// Current staff: 1 7 10 11 13 14 (started, not left). 9 starts in 2099: starting soon.
		checkRows(t, "model_starting_soon", modelRows(t, s, `SELECT employee_id, start_date, department_id, department, line_manager_id FROM model_starting_soon ORDER BY employee_id`),
			[]string{"9|2099-01-04|20|Engineering|1"})
		// Lines: 7, 10 and 14 under 1; 13 under 9, who has not started: 13's line stops there
		// (as at a manager who left), and 9 has no line of their own.
		checkRows(t, "model_reporting_lines", modelRows(t, s, `SELECT employee_id, manager_id, levels, path FROM model_reporting_lines ORDER BY employee_id, levels`), []string{
			"7|1|1|1/7",
			"10|1|1|1/10",
			"13|9|1|9/13",
			"14|1|1|1/14",
		})
		// 1 manages 7 10 14 (not 9): 3 direct, 3 in all. 9 is no current staff: at the top of
		// what they manage, manager_left.
		checkRows(t, "model_management_tree", trainingRows(t, s, `SELECT manager_id, direct_reports, total_reports, depth, manager_left, in_cycle
FROM model_management_tree ORDER BY manager_id`), []string{
			"1|3|3|0|0|0",
			"9|1|1|0|1|0",
		})
		// 1's and 9's certificates expire in 30 days: only 1's, current staff, is listed.
		checkRows(t, "model_certificates_expiring", modelRows(t, s, `SELECT employee_id, course_id, days_left, window_days FROM model_certificates_expiring ORDER BY employee_id`),
			[]string{"1|301|30|30"})
	})
}

// TestEmploymentRulesAndRetention: where model_employment and Store.Leavers (retention's rule,
// sink/leavers.go) part, on the account above: 4, never seen employed and given no leaving
// date, is a leaver since S1 for retention (the latest day they can have left: their records
// are kept at least as long as the law asks) and left out of the models; 14, Ex-employee with a
// leaving date to come, is a leaver since S3 for retention and employed until the date for the
// models. Every other leaver is the same leaver, on the same day, by the same rule.
func TestEmploymentRulesAndRetention(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadEmploymentFixture(t, s)
		leavers, err := s.Leavers(context.Background(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range leavers {
			got = append(got, fmt.Sprintf("%d|%s|%s", l.EmployeeID, l.Left.UTC().Format(time.DateOnly), l.From))
		}
		checkRows(t, "Store.Leavers", got, []string{
			"2|2024-04-30|leaving_date",
			"3|2024-03-08|status",
			"4|2024-03-01|status",
			"6|2024-03-15|unlisted",
			"8|2024-03-10|leaving_date",
			"14|2024-03-15|status",
			"16|2024-03-01|status", // retention keeps to the seed's rows too; the models leave them be
		})
		checkRows(t, "the models' leavers", modelRows(t, s, `SELECT employee_id, end_date, left_by FROM model_employment WHERE end_date IS NOT NULL ORDER BY employee_id`), []string{
			"2|2024-04-30|leaving_date",
			"3|2024-03-08|status",
			"6|2024-03-15|unlisted",
			"8|2024-03-10|leaving_date",
		})
	})
}
