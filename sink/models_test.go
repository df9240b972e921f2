package sink_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// The people models (schema 0020, docs/models.md) are checked against a small account made by
// hand for the purpose, whose every figure below is worked out by hand in the comments.
//
// Reference data: departments 10 Sales, 20 Engineering, 30 Support; divisions 100 Commercial,
// 200 Product; locations 1000 London, 2000 Leeds. A person's department goes with a division and
// a location: Sales (10, 100, 1000), Engineering (20, 200, 2000), Support (30, 100, 2000).
// Working patterns: the seed's Standard (1, 37.5 h, default) retired; 50 Full time 37.5 h
// (default), 51 Half 18.75 h (FTE 0.5), 52 Three days 22.5 h (0.6), 53 Long 45 h (capped at 1).
// Full-time hours: 37.5, the default's.
//
// The warehouse's first sync wrote everyone's first version at 2023-03-01T06:00Z (the models
// take it to have held since always), unless said otherwise.
//
//	id  joined      dept     pattern  left                                  history
//	 1  2020-05-10  Sales    50
//	 2  2021-02-01  Sales    50
//	 3  2022-07-01  Eng      50
//	 4  2019-11-15  Eng      51 (0.5)
//	 5  2023-01-01  Support  52 (0.6)
//	 6  2022-01-10  Sales    50                                              Eng from 2024-02-15T10:00Z
//	 7  2021-06-01  Eng      50                                              Support from 2023-09-01T08:00Z, Sales from 2024-06-10T08:00Z
//	 8  2020-03-01  Sales    50       leaving_date 2024-03-31 (Ex-employee)  Ex-employee from 2024-04-02
//	 9  2022-04-04  Support  52 (0.6) status: Ex-employee from 2024-05-20T07:30Z
//	10  2021-09-01  Eng      50       unlisted: deleted_at 2024-08-05T06:00Z
//	11  2024-02-01  Sales    50       leaving_date 2024-02-29 (joins on a 1st, leaves on a month's last day, a leap day)
//	                                                                         first seen 2024-01-20, Ex-employee from 2024-03-05
//	12  2023-06-15  Support  53 (1)   leaving_date 2099-01-31, still current: employed
//	13  2018-01-08  Sales    none (1) leaving_date 2022-12-31, still current (a returner): employed
//	14  2024-09-02  Eng      51 (0.5)                                        first seen 2024-08-20
//	15  2015-01-01  Sales    50       unlisted (a reference only): not counted
//	16  no join date                  not counted
//	17  2019-04-01  Sales    50       Ex-employee, no leaving_date, never seen employed (first seen
//	                                  2023-03-01 already Ex): leaving day unknown, left out (model_left_out)
//	19  2023-11-20  Sales    52 (0.6)                                        Support 2024-04-10T08:00Z, Eng 2024-04-10T15:00Z (the day's last: Eng from 2024-04-10)
//	20  2022-10-03  Support  50                                              a second version 2023-07-01 changing the job title only (one period)
//	21  2012-02-29  Support  50       (tenure 10y+ from 2022-03-01)
//	22  2020-01-01  Sales    50       origin seed: not counted
//
// Employed (start through end, inclusive): 1 2 3 4 5 6 7 12 13 19 20 21 throughout 2024 (19
// from 2023-11-20, 12 from 2023-06-15), 8 to 2024-03-31, 9 to 2024-05-20, 10 to 2024-08-05, 11
// in February 2024, 14 from 2024-09-02; 17 never (left out: when they left is not known, so
// they are in no count on any day, migration 0027).

const modelsFixture = `
INSERT INTO departments (id, name) VALUES (10, 'Sales'), (20, 'Engineering'), (30, 'Support');
INSERT INTO divisions (id, name) VALUES (100, 'Commercial'), (200, 'Product');
INSERT INTO locations (id, name) VALUES (1000, 'London'), (2000, 'Leeds');
UPDATE working_patterns SET deleted_at = '2023-03-01T06:00:00.000Z' WHERE id = 1;
INSERT INTO working_patterns (id, name, is_default, total_hours) VALUES
  (50, 'Full time', TRUE, '37.5'), (51, 'Half', FALSE, '18.75'), (52, 'Three days', FALSE, '22.5'), (53, 'Long', FALSE, '45');
INSERT INTO employees (id, status, company_join_date, leaving_date, department_id, division_id, location_id, working_pattern_id, listed, origin, deleted_at) VALUES
  (1, 'Current employee', '2020-05-10', NULL, 10, 100, 1000, 50, TRUE, 'source', NULL),
  (2, 'Current employee', '2021-02-01', NULL, 10, 100, 1000, 50, TRUE, 'source', NULL),
  (3, 'Current employee', '2022-07-01', NULL, 20, 200, 2000, 50, TRUE, 'source', NULL),
  (4, 'Current employee', '2019-11-15', NULL, 20, 200, 2000, 51, TRUE, 'source', NULL),
  (5, 'Current employee', '2023-01-01', NULL, 30, 100, 2000, 52, TRUE, 'source', NULL),
  (6, 'Current employee', '2022-01-10', NULL, 20, 200, 2000, 50, TRUE, 'source', NULL),
  (7, 'Current employee', '2021-06-01', NULL, 10, 100, 1000, 50, TRUE, 'source', NULL),
  (8, 'Ex-employee', '2020-03-01', '2024-03-31', 10, 100, 1000, 50, TRUE, 'source', NULL),
  (9, 'Ex-employee', '2022-04-04', NULL, 30, 100, 2000, 52, TRUE, 'source', NULL),
  (10, 'Current employee', '2021-09-01', NULL, 20, 200, 2000, 50, TRUE, 'source', '2024-08-05T06:00:00.000Z'),
  (11, 'Ex-employee', '2024-02-01', '2024-02-29', 10, 100, 1000, 50, TRUE, 'source', NULL),
  (12, 'Current employee', '2023-06-15', '2099-01-31', 30, 100, 2000, 53, TRUE, 'source', NULL),
  (13, 'Current employee', '2018-01-08', '2022-12-31', 10, 100, 1000, NULL, TRUE, 'source', NULL),
  (14, 'Current employee', '2024-09-02', NULL, 20, 200, 2000, 51, TRUE, 'source', NULL),
  (15, 'Current employee', '2015-01-01', NULL, 10, 100, 1000, 50, FALSE, 'source', NULL),
  (16, 'Current employee', NULL, NULL, 10, 100, 1000, 50, TRUE, 'source', NULL),
  (17, 'Ex-employee', '2019-04-01', NULL, 10, 100, 1000, 50, TRUE, 'source', NULL),
  (19, 'Current employee', '2023-11-20', NULL, 20, 200, 2000, 52, TRUE, 'source', NULL),
  (20, 'Current employee', '2022-10-03', NULL, 30, 100, 2000, 50, TRUE, 'source', NULL),
  (21, 'Current employee', '2012-02-29', NULL, 30, 100, 2000, 50, TRUE, 'source', NULL),
  (22, 'Current employee', '2020-01-01', NULL, 10, 100, 1000, 50, TRUE, 'seed', NULL);
DELETE FROM employees_history;
INSERT INTO employees_history (id, valid_from, valid_to, status, department_id, division_id, location_id, working_pattern_id, job_title, listed, origin, deleted_at) VALUES
  (1, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (2, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (3, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 20, 200, 2000, 50, NULL, TRUE, 'source', NULL),
  (4, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 20, 200, 2000, 51, NULL, TRUE, 'source', NULL),
  (5, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 30, 100, 2000, 52, NULL, TRUE, 'source', NULL),
  (6, '2023-03-01T06:00:00.000Z', '2024-02-15T10:00:00.000Z', 'Current employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (6, '2024-02-15T10:00:00.000Z', NULL, 'Current employee', 20, 200, 2000, 50, NULL, TRUE, 'source', NULL),
  (7, '2023-03-01T06:00:00.000Z', '2023-09-01T08:00:00.000Z', 'Current employee', 20, 200, 2000, 50, NULL, TRUE, 'source', NULL),
  (7, '2023-09-01T08:00:00.000Z', '2024-06-10T08:00:00.000Z', 'Current employee', 30, 100, 2000, 50, NULL, TRUE, 'source', NULL),
  (7, '2024-06-10T08:00:00.000Z', NULL, 'Current employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (8, '2023-03-01T06:00:00.000Z', '2024-04-02T06:00:00.000Z', 'Current employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (8, '2024-04-02T06:00:00.000Z', NULL, 'Ex-employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (9, '2023-03-01T06:00:00.000Z', '2024-05-20T07:30:00.000Z', 'Current employee', 30, 100, 2000, 52, NULL, TRUE, 'source', NULL),
  (9, '2024-05-20T07:30:00.000Z', NULL, 'Ex-employee', 30, 100, 2000, 52, NULL, TRUE, 'source', NULL),
  (10, '2023-03-01T06:00:00.000Z', '2024-08-05T06:00:00.000Z', 'Current employee', 20, 200, 2000, 50, NULL, TRUE, 'source', NULL),
  (10, '2024-08-05T06:00:00.000Z', NULL, 'Current employee', 20, 200, 2000, 50, NULL, TRUE, 'source', '2024-08-05T06:00:00.000Z'),
  (11, '2024-01-20T06:00:00.000Z', '2024-03-05T06:00:00.000Z', 'Current employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (11, '2024-03-05T06:00:00.000Z', NULL, 'Ex-employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (12, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 30, 100, 2000, 53, NULL, TRUE, 'source', NULL),
  (13, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 100, 1000, NULL, NULL, TRUE, 'source', NULL),
  (14, '2024-08-20T06:00:00.000Z', NULL, 'Current employee', 20, 200, 2000, 51, NULL, TRUE, 'source', NULL),
  (15, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 100, 1000, 50, NULL, FALSE, 'source', NULL),
  (16, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (17, '2023-03-01T06:00:00.000Z', NULL, 'Ex-employee', 10, 100, 1000, 50, NULL, TRUE, 'source', NULL),
  (19, '2023-03-01T06:00:00.000Z', '2024-04-10T08:00:00.000Z', 'Current employee', 10, 100, 1000, 52, NULL, TRUE, 'source', NULL),
  (19, '2024-04-10T08:00:00.000Z', '2024-04-10T15:00:00.000Z', 'Current employee', 30, 100, 2000, 52, NULL, TRUE, 'source', NULL),
  (19, '2024-04-10T15:00:00.000Z', NULL, 'Current employee', 20, 200, 2000, 52, NULL, TRUE, 'source', NULL),
  (20, '2023-03-01T06:00:00.000Z', '2023-07-01T06:00:00.000Z', 'Current employee', 30, 100, 2000, 50, 'Agent', TRUE, 'source', NULL),
  (20, '2023-07-01T06:00:00.000Z', NULL, 'Current employee', 30, 100, 2000, 50, 'Senior agent', TRUE, 'source', NULL),
  (21, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 30, 100, 2000, 50, NULL, TRUE, 'source', NULL),
  (22, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 100, 1000, 50, NULL, TRUE, 'seed', NULL);
`

// loadModelsFixture writes the account above into s.
func loadModelsFixture(t *testing.T, s *sink.Store) {
	t.Helper()
	db := sinktest.DB(s)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(strings.TrimSpace(modelsFixture), ";\n") {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// modelRows runs query on s and gives each row as its values joined by |, the same text on
// both backends: dates as YYYY-MM-DD, numbers in their shortest form, NULL as NULL.
func modelRows(t *testing.T, s *sink.Store, query string, args ...any) []string {
	t.Helper()
	return queryRows(t, s, modelValue, query, args...)
}

// queryRows runs query on s and gives each row as its values, each written by value, joined by |.
func queryRows(t *testing.T, s *sink.Store, value func(any) string, query string, args ...any) []string {
	t.Helper()
	db := sinktest.DB(s)
	rows, err := db.QueryContext(context.Background(), db.Rebind(query), args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fields := make([]string, len(vals))
		for i, v := range vals {
			fields[i] = value(v)
		}
		out = append(out, strings.Join(fields, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

func modelValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return v.UTC().Format(time.DateOnly)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []byte:
		return modelValue(string(v))
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return v
	default:
		return fmt.Sprint(v)
	}
}

func checkRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestModels: every model's figures on the hand-made account, on both backends.
func TestModels(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadModelsFixture(t, s)

		// Employment: 15 (unlisted), 16 (no join date), 22 (seed) and 17 (Ex-employee, never
		// seen employed, no leaving_date: the day they left is not known) are not there. 8 and
		// 11 left on their leaving_date; 9 the day the sync first saw Ex-employee (the version
		// that was current ended 2024-05-20T07:30Z); 10 the day deleted_at says. 12's leaving
		// date is to come and 13 is current again: employed.
		checkRows(t, "model_employment", modelRows(t, s, `SELECT employee_id, start_date, end_date, left_by FROM model_employment ORDER BY employee_id`), []string{
			"1|2020-05-10|NULL|NULL",
			"2|2021-02-01|NULL|NULL",
			"3|2022-07-01|NULL|NULL",
			"4|2019-11-15|NULL|NULL",
			"5|2023-01-01|NULL|NULL",
			"6|2022-01-10|NULL|NULL",
			"7|2021-06-01|NULL|NULL",
			"8|2020-03-01|2024-03-31|leaving_date",
			"9|2022-04-04|2024-05-20|status",
			"10|2021-09-01|2024-08-05|unlisted",
			"11|2024-02-01|2024-02-29|leaving_date",
			"12|2023-06-15|NULL|NULL",
			"13|2018-01-08|NULL|NULL",
			"14|2024-09-02|NULL|NULL",
			"19|2023-11-20|NULL|NULL",
			"20|2022-10-03|NULL|NULL",
			"21|2012-02-29|NULL|NULL",
		})
		// Left out, and why: 16 has no join date; 17 left on a day hrsync cannot know. 15 (a
		// reference only) and 22 (seed) are no people of the account: not there either.
		checkRows(t, "model_left_out", modelRows(t, s, `SELECT employee_id, reason, status, start_date, end_date, first_seen FROM model_left_out ORDER BY employee_id`), []string{
			"16|no_join_date|Current employee|NULL|NULL|2023-03-01",
			"17|no_leaving_date|Ex-employee|2019-04-01|NULL|2023-03-01",
		})

		// Versions: the first reaches back to 0001-01-01, the current on to 9999-12-31; 19's
		// two versions of 2024-04-10 leave the day's last; 20's and 9's, 10's, 11's second
		// versions change nothing the models read, so theirs are one period.
		checkRows(t, "model_employee_versions", modelRows(t, s, `SELECT employee_id, valid_from, valid_to, department_id, division_id, location_id, working_pattern_id
FROM model_employee_versions WHERE employee_id IN (6, 7, 9, 19, 20) ORDER BY employee_id, valid_from`), []string{
			"6|0001-01-01|2024-02-15|10|100|1000|50",
			"6|2024-02-15|9999-12-31|20|200|2000|50",
			"7|0001-01-01|2023-09-01|20|200|2000|50",
			"7|2023-09-01|2024-06-10|30|100|2000|50",
			"7|2024-06-10|9999-12-31|10|100|1000|50",
			"9|0001-01-01|9999-12-31|30|100|2000|52",
			"19|0001-01-01|2024-04-10|10|100|1000|52",
			"19|2024-04-10|9999-12-31|20|200|2000|52",
			"20|0001-01-01|9999-12-31|30|100|2000|50",
		})

		// 2024-02-29, the leap day 11 leaves on (employed that day):
		//   Sales 1 2 8 11 13 19 = 6, FTE 1+1+1+1+1 (13: no pattern)+0.6 = 5.6
		//   Engineering 3 4 6 (moved 02-15) 10 = 4, FTE 1+0.5+1+1 = 3.5
		//   Support 5 7 9 12 20 21 = 6, FTE 0.6+1+0.6+1 (45 h, capped)+1+1 = 5.2
		// 2024-03-01: 11 gone: Sales 5, FTE 4.6.
		// 2023-03-01 (the first sync; 17, first seen then already Ex-employee, is in no count):
		// Sales 1 2 6 8 13 = 5, 5.0; Engineering 3 4 7 10 = 4, 3.5; Support 5 9 20 21 = 4,
		// 0.6+0.6+1+1 = 3.2.
		daily := `SELECT day, department_id, department, division_id, division, location_id, location, headcount, fte
FROM model_headcount_daily WHERE day = ? ORDER BY department_id`
		checkRows(t, "headcount on 2024-02-29", modelRows(t, s, daily, "2024-02-29"), []string{
			"2024-02-29|10|Sales|100|Commercial|1000|London|6|5.6",
			"2024-02-29|20|Engineering|200|Product|2000|Leeds|4|3.5",
			"2024-02-29|30|Support|100|Commercial|2000|Leeds|6|5.2",
		})
		checkRows(t, "headcount on 2024-03-01", modelRows(t, s, daily, "2024-03-01"), []string{
			"2024-03-01|10|Sales|100|Commercial|1000|London|5|4.6",
			"2024-03-01|20|Engineering|200|Product|2000|Leeds|4|3.5",
			"2024-03-01|30|Support|100|Commercial|2000|Leeds|6|5.2",
		})
		checkRows(t, "headcount on 2023-03-01", modelRows(t, s, daily, "2023-03-01"), []string{
			"2023-03-01|10|Sales|100|Commercial|1000|London|5|5",
			"2023-03-01|20|Engineering|200|Product|2000|Leeds|4|3.5",
			"2023-03-01|30|Support|100|Commercial|2000|Leeds|4|3.2",
		})

		// Month ends: 2023-03-31 as 2023-03-01 (Sales 5, 5.0).
		// 2024-02 is the leap day above; 2024-03-31 is 8's last day: as 2024-03-01.
		// 2024-04-30: 8 gone, 19 in Engineering since 04-10: Sales 1 2 13 = 3, 3.0;
		//   Engineering 3 4 6 10 19 = 5, 1+0.5+1+1+0.6 = 4.1; Support 5 7 9 12 20 21 = 6, 5.2.
		// 2024-05-31: 9 gone (05-20): Support 5 7 12 20 21 = 5, 4.6.
		// 2024-06-30: 7 in Sales since 06-10: Sales 4, 4.0; Support 5 12 20 21 = 4, 3.6.
		checkRows(t, "model_headcount_monthly", modelRows(t, s, `SELECT month, department, headcount, fte FROM model_headcount_monthly
WHERE month = '2023-03-01' OR (month >= '2024-02-01' AND month <= '2024-06-01') ORDER BY month, department_id`), []string{
			"2023-03-01|Sales|5|5",
			"2023-03-01|Engineering|4|3.5",
			"2023-03-01|Support|4|3.2",
			"2024-02-01|Sales|6|5.6",
			"2024-02-01|Engineering|4|3.5",
			"2024-02-01|Support|6|5.2",
			"2024-03-01|Sales|5|4.6",
			"2024-03-01|Engineering|4|3.5",
			"2024-03-01|Support|6|5.2",
			"2024-04-01|Sales|3|3",
			"2024-04-01|Engineering|5|4.1",
			"2024-04-01|Support|6|5.2",
			"2024-05-01|Sales|3|3",
			"2024-05-01|Engineering|5|4.1",
			"2024-05-01|Support|5|4.6",
			"2024-06-01|Sales|4|4",
			"2024-06-01|Engineering|5|4.1",
			"2024-06-01|Support|4|3.6",
		})

		// Starters by the department on their first day, leavers by the one on their last:
		// 5 (2023-01, Support), 12 (2023-06, Support), 19 (2023-11, Sales), 11 joined and left
		// (2024-02, Sales), 8 left (2024-03, Sales), 9 left (2024-05, Support), 10 left (2024-08,
		// Engineering), 14 (2024-09, Engineering). 17, left out, neither started nor left.
		checkRows(t, "model_starters_leavers_monthly", modelRows(t, s, `SELECT month, department_id, department, starters, leavers
FROM model_starters_leavers_monthly WHERE month >= '2023-01-01' ORDER BY month, department_id`), []string{
			"2023-01-01|30|Support|1|0",
			"2023-06-01|30|Support|1|0",
			"2023-11-01|10|Sales|1|0",
			"2024-02-01|10|Sales|1|1",
			"2024-03-01|10|Sales|0|1",
			"2024-05-01|30|Support|0|1",
			"2024-08-01|20|Engineering|0|1",
			"2024-09-01|20|Engineering|1|0",
		})

		// Turnover. Headcount on the first and the last day of each month, their sum (twice the
		// average), and leavers (none before 2024-02; 17, left out, is in none of them):
		//   2022-04 9 10 (9 joins 04-04) 19; 2022-05, 2022-06 10 10 20; 2022-07…09 11 11 22 (3 joins
		//   on 07-01); 2022-10 11 12 23 (20); 2022-11, 2022-12 12 12 24; 2023-01, 2023-02 13 13 26
		//   (5 joins on 01-01); 2023-03 13 13 26, no leaver;
		//   2023-04, 2023-05 13 13 26; 2023-06 13 14 27 (12); 2023-07…10 14 14 28; 2023-11 14 15 29
		//   (19); 2023-12, 2024-01 15 15 30; 2024-02 16 16 32, 1 (11); 2024-03 15 15 30, 1 (8);
		//   2024-04 14 14 28; 2024-05 14 13 27, 1 (9); 2024-06, 2024-07 13 13 26; 2024-08 13 12 25,
		//   1 (10); 2024-09 12 13 25 (14 joins 09-02); 2024-10…12 13 13 26.
		// A month's turnover: leavers / (sum / 2): 2023-03 0/13 = 0; 2024-02 1/16 = 0.0625;
		// 2024-03 1/15 = 0.0667; 2024-05 1/13.5 = 0.0741; 2024-08 1/12.5 = 0.08.
		// 12 months: leavers over the window, over (the window's sums / 24):
		//   to 2023-03 (2022-04…): 19+20+20+22+22+22+23+24+24+26+26+26 = 274, 11.4167; 0: 0
		//   to 2024-02 (2023-03…): 26+26+26+27+28+28+28+28+29+30+30+32 = 338, 14.0833; 1 (11): 24/338 = 0.071
		//   to 2024-03: 338-26+30 = 342, 14.25; 2 (11, 8): 48/342 = 0.1404
		//   to 2024-04: 342-26+28 = 344, 14.3333; 2: 48/344 = 0.1395
		//   to 2024-05: 344-26+27 = 345, 14.375; 3: 72/345 = 0.2087
		//   to 2024-06: 345-27+26 = 344, 14.3333; 3: 72/344 = 0.2093
		//   to 2024-08: 344-28+26 (07) -28+25 (08) = 339, 14.125; 4: 96/339 = 0.2832
		//   to 2024-09: 339-28+25 = 336, 14; 4: 96/336 = 0.2857
		//   to 2024-12: 30+32+30+28+27+26+26+25+25+26+26+26 = 327, 13.625; 4: 96/327 = 0.2936
		// The first month is 21's, who joined first: 2012-02.
		turnover := `SELECT month, leavers, headcount_start, headcount_end, average_headcount, turnover, leavers_12m, average_headcount_12m, turnover_12m
FROM model_turnover_monthly WHERE month IN ('2023-03-01', '2024-02-01', '2024-03-01', '2024-04-01', '2024-05-01', '2024-06-01', '2024-08-01', '2024-09-01', '2024-12-01') ORDER BY month`
		checkRows(t, "model_turnover_monthly", modelRows(t, s, turnover), []string{
			"2023-03-01|0|13|13|13|0|0|11.4167|0",
			"2024-02-01|1|16|16|16|0.0625|1|14.0833|0.071",
			"2024-03-01|1|15|15|15|0.0667|2|14.25|0.1404",
			"2024-04-01|0|14|14|14|0|2|14.3333|0.1395",
			"2024-05-01|1|14|13|13.5|0.0741|3|14.375|0.2087",
			"2024-06-01|0|13|13|13|0|3|14.3333|0.2093",
			"2024-08-01|1|13|12|12.5|0.08|4|14.125|0.2832",
			"2024-09-01|0|12|13|12.5|0|4|14|0.2857",
			"2024-12-01|0|13|13|13|0|4|13.625|0.2936",
		})
		checkRows(t, "the first month of turnover", modelRows(t, s, `SELECT min(month) FROM model_turnover_monthly`), []string{"2012-02-01"})

		// Tenure on 2024-02-29: <1y 11 12 19; 1-2y 3 5 9 20; 2-5y 1 2 4 6 7 8 10 (2: 2021-02-01,
		// 3 years on 02-01); 5-10y 13; 10y+ 21. 21 started on 2012-02-29: ten years on
		// 2022-03-01, not 2022-02-28.
		checkRows(t, "tenure on 2024-02-29", modelRows(t, s, `SELECT day, band, headcount FROM model_tenure_daily WHERE day = '2024-02-29'
ORDER BY CASE band WHEN '<1y' THEN 1 WHEN '1-2y' THEN 2 WHEN '2-5y' THEN 3 WHEN '5-10y' THEN 4 ELSE 5 END`), []string{
			"2024-02-29|<1y|3",
			"2024-02-29|1-2y|4",
			"2024-02-29|2-5y|7",
			"2024-02-29|5-10y|1",
			"2024-02-29|10y+|1",
		})
		checkRows(t, "10y+ around 21's leap-day anniversary", modelRows(t, s, `SELECT day, headcount FROM model_tenure_daily
WHERE day IN ('2022-02-28', '2022-03-01') AND band = '10y+' ORDER BY day`), []string{"2022-03-01|1"})

		// Without a default pattern (the retired seed's does not count), full time is the
		// largest pattern's hours, 45 (53): on 2024-02-29 pattern 50 is 37.5/45 = 0.8333, 51
		// 18.75/45 = 0.4167, 52 22.5/45 = 0.5, 53 1.
		//   Sales 1 2 8 11 (50) 13 (none: 1) 19 (52): 4×0.8333+1+0.5 = 4.8333 → 4.83
		//   Engineering 3 6 10 (50) 4 (51): 3×0.8333+0.4167 = 2.9167 → 2.92
		//   Support 5 9 (52) 7 20 21 (50) 12 (53): 0.5+0.5+3×0.8333+1 = 4.5
		if _, err := sinktest.DB(s).ExecContext(context.Background(), `UPDATE working_patterns SET is_default = FALSE WHERE id = 50`); err != nil {
			t.Fatal(err)
		}
		checkRows(t, "FTE without a default pattern", modelRows(t, s, `SELECT department, headcount, fte FROM model_headcount_daily
WHERE day = '2024-02-29' ORDER BY department_id`), []string{
			"Sales|6|4.83",
			"Engineering|4|2.92",
			"Support|6|4.5",
		})
	})
}

// modelRelations are the models migrations 0020, 0021 and 0027 make: the calendar and versions
// tables and the views.
var modelRelations = []string{"model_calendar", "model_employment", "model_employee_versions", "model_employed_spans", "model_headcount_daily",
	"model_headcount_monthly", "model_starters_leavers_monthly", "model_turnover_monthly", "model_tenure_daily",
	"model_people", "model_left_out", "model_starting_soon"}

// TestModelsOnEveryWarehouse: a migrated warehouse of either backend has every model, the
// calendar filled from 1990-01-01 to 2059-12-31, and on Postgres a daily model asked for one day
// reads the calendar by its index, that day's row alone, not every day the calendar holds. (The
// monthly headcount is a running sum over all months since 0021: asked for one month it counts
// them all, about a second at 20,000 employees, docs/benchmarks.md.)
func TestModelsOnEveryWarehouse(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		for _, name := range modelRelations {
			if got := modelRows(t, s, `SELECT count(*) FROM (SELECT * FROM `+name+` LIMIT 1) x`); len(got) != 1 {
				t.Errorf("%s: %q", name, got)
			}
		}
		checkRows(t, "the calendar", modelRows(t, s, `SELECT count(*), min(day), max(day) FROM model_calendar`),
			[]string{"25567|1990-01-01|2059-12-31"})
		checkRows(t, "a leap day in the calendar", modelRows(t, s, `SELECT day, month, month_end, year, month_day FROM model_calendar WHERE day = '2024-02-29'`),
			[]string{"2024-02-29|2024-02-01|2024-02-29|2024|02-29"})
		if s.Dialect() != "postgres" {
			return
		}
		loadModelsFixture(t, s)
		for _, tc := range []struct{ query, index, cond string }{
			{`SELECT * FROM model_headcount_daily WHERE day = '2024-03-31'`, "model_calendar_pkey", "(day = '2024-03-31'::date)"},
			{`SELECT * FROM model_tenure_daily WHERE day = '2024-03-31'`, "model_calendar_pkey", "(day = '2024-03-31'::date)"},
		} {
			var plan []string
			if err := sinktest.DB(s).Select(&plan, `EXPLAIN `+tc.query); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			if strings.Contains(text, "Seq Scan on model_calendar") || !strings.Contains(text, "using "+tc.index+" on model_calendar") ||
				!strings.Contains(text, tc.cond) {
				t.Errorf("%s: the calendar is not read by %s for %s:\n%s", tc.query, tc.index, tc.cond, text)
			}
		}
	})
}

// modelsDocQuery is the SQL of docs/models.md's fenced block between "<!-- query: name -->" and
// "<!-- end query -->", as a reader pastes it, with the schema's "hr." left out: the store's
// connection finds the warehouse's tables (Postgres: its search_path; SQLite: no schema).
func modelsDocQuery(t *testing.T, name string) string {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "docs", "models.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "<!-- query: "+name+" -->\n")
	block, _, closed := strings.Cut(rest, "<!-- end query -->")
	if !ok || !closed {
		t.Fatalf("docs/models.md has no query %q between its markers", name)
	}
	sql, ok := strings.CutPrefix(strings.TrimSpace(block), "```sql\n")
	if !ok || !strings.HasSuffix(sql, "\n```") {
		t.Fatalf("docs/models.md's query %q is not one ```sql block", name)
	}
	return strings.ReplaceAll(strings.TrimSuffix(sql, "\n```"), "hr.", "")
}

// TestModelsDocQueries runs docs/models.md's example queries as the page prints them on the
// hand-made account (TestModels) and checks their answers, on both backends.
func TestModelsDocQueries(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadModelsFixture(t, s)

		// Nothing changes after 2024-09-02: every month since January 2025 has the groups of
		// December 2024. Sales 1 2 7 13 = 4, FTE 4; Engineering 3 4 6 14 19 = 5, FTE
		// 1+0.5+1+0.5+0.6 = 3.6; Support 5 12 20 21 = 4, FTE 0.6+1+1+1 = 3.6. No one is on a
		// pattern without hours: zero_hours 0.
		got := modelRows(t, s, modelsDocQuery(t, "monthly"))
		if len(got) < 3*23 || len(got)%3 != 0 { // 2025-01 to at least 2026-11, three groups each
			t.Fatalf("monthly since 2025: %d rows: %q", len(got), got)
		}
		month := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < len(got); i += 3 {
			m := month.Format(time.DateOnly)
			checkRows(t, "monthly "+m, got[i:i+3], []string{
				m + "|10|Sales|100|Commercial|1000|London|4|4|0",
				m + "|20|Engineering|200|Product|2000|Leeds|5|3.6|0",
				m + "|30|Support|100|Commercial|2000|Leeds|4|3.6|0",
			})
			month = month.AddDate(0, 1, 0)
		}

		// 2024-03-31, 8's last day: as model_headcount_monthly's March 2024 in TestModels.
		checkRows(t, "on a day", modelRows(t, s, modelsDocQuery(t, "on-a-day")), []string{
			"Engineering|4|3.5",
			"Sales|5|4.6",
			"Support|6|5.2",
		})

		// TestModels works out February…June, August, September and December 2024; the rest
		// from the monthly sums of headcount at start and end there:
		//   to 2024-01 (2023-02…): 26+26+26+26+27+28+28+28+28+29+30+30 = 332, 13.8333; 0 (17 is left out): 0
		//   to 2024-07: 344-28+26 = 342, 14.25; 3: 72/342 = 0.2105
		//   to 2024-10: 336-28+26 = 334, 13.9167; 4: 96/334 = 0.2874
		//   to 2024-11: 334-29+26 = 331, 13.7917; 4: 96/331 = 0.2900
		checkRows(t, "turnover", modelRows(t, s, modelsDocQuery(t, "turnover")), []string{
			"2024-01-01|0|13.8333|0",
			"2024-02-01|1|14.0833|7.1",
			"2024-03-01|2|14.25|14.04",
			"2024-04-01|2|14.3333|13.95",
			"2024-05-01|3|14.375|20.87",
			"2024-06-01|3|14.3333|20.93",
			"2024-07-01|3|14.25|21.05",
			"2024-08-01|4|14.125|28.32",
			"2024-09-01|4|14|28.57",
			"2024-10-01|4|13.9167|28.74",
			"2024-11-01|4|13.7917|29",
			"2024-12-01|4|13.625|29.36",
		})

		checkRows(t, "leavers", modelRows(t, s, modelsDocQuery(t, "leavers")), []string{
			"11|2024-02-29|leaving_date|Sales",
			"8|2024-03-31|leaving_date|Sales",
			"9|2024-05-20|status|Support",
			"10|2024-08-05|unlisted|Engineering",
		})

		// Left out: 16 (no join date) and 17 (left, never seen employed, no leaving date).
		checkRows(t, "left out", modelRows(t, s, modelsDocQuery(t, "left-out")), []string{
			"no_join_date|1",
			"no_leaving_date|1",
		})
	})
}

// TestModelEmploymentIsTheLeaversRule: model_employment's leaving days are those of
// Store.Leavers, the rule retention counts from, leaver for leaver, on the hand-made account —
// except a leaver hrsync never saw employed and given no leaving_date (17): retention counts
// from the day first seen (the latest they can have left: their data is kept at least as long
// as the law asks), the models cannot place the day and leave them out (model_left_out).
func TestModelEmploymentIsTheLeaversRule(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadModelsFixture(t, s)
		leavers, err := s.Leavers(context.Background(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		leftOut := map[string]bool{}
		for _, r := range modelRows(t, s, `SELECT employee_id FROM model_left_out WHERE reason = 'no_leaving_date'`) {
			leftOut[r] = true
		}
		var want, wantOut []string
		for _, l := range leavers {
			id := strconv.FormatInt(l.EmployeeID, 10)
			if leftOut[id] {
				wantOut = append(wantOut, id)
				continue
			}
			want = append(want, fmt.Sprintf("%s|%s|%s", id, l.Left.UTC().Format(time.DateOnly), l.From))
		}
		if len(want) != 4 || !slices.Equal(wantOut, []string{"17"}) || len(leftOut) != 1 {
			t.Fatalf("%d leavers (%q), %q left out (of %v), want the fixture's 4 and 17", len(want), want, wantOut, leftOut)
		}
		checkRows(t, "leavers", modelRows(t, s, `SELECT employee_id, end_date, left_by FROM model_employment WHERE end_date IS NOT NULL ORDER BY employee_id`), want)
	})
}
