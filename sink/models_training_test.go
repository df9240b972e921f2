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

// The training and line-management models (schema 0022, docs/models.md) are checked against a
// second small account made by hand, every figure below worked out by hand in the comments.
// The certificates expiring are counted from today (UTC): their expiry dates are written as
// today plus so many days (T+n), the rest of the account on fixed dates.
//
// Departments 10 Sales, 20 Engineering. Training types 1 Fire safety, 2 First aid, 3
// Leadership, 4 Data protection. Everyone joined on 2020-01-01 and is a current employee, listed,
// unless said; their one version was written at 2023-03-01T06:00Z (held since always).
//
//	id  dept   line manager  note
//	 1  Sales  none          the top of the tree
//	 2  Eng    1
//	 3  Eng    2
//	 4  Eng    2
//	 5  Sales  1
//	 6  Sales  5             Engineering from 2024-06-15T08:00Z
//	 7  Sales  1             left: leaving_date 2024-01-31 (Ex-employee); still line manager of 8 and 9
//	 8  Sales  7
//	 9  Sales  7
//	10  Sales  9
//	11  Eng    12            a cycle: 11 and 12 manage each other
//	12  Eng    11
//	13  Eng    11
//	14  Sales  14            their own line manager: taken as none
//	15  Sales  20
//	16  Eng    3             the third level below 1
//	20  none   none          a reference only (not listed, no join date): does not count
//
// Courses (hours 3.75 unless said; completion day end_on, else start_on):
//
//	id   who  name / type          done        status     outcome   expires  note
//	101   3   Fire safety / 1      2024-03-04  Completed  Passed    2025-03-04
//	102   4   Fire safety / 1      2024-03-11  Completed  Passed             no end_on, 7.5 h
//	103   6   First aid / 2        2024-06-12  Completed  Attended           06-10 to 06-12, 22.5 h, in Sales then
//	104   6   Leadership / 3       2024-07-02  Completed  none               no hours, in Engineering then
//	105   5   Leadership / 3       2024-07-09  Completed  Failed             not completed
//	106   2   Leadership / 3       2024-07-16  Booked                        not completed
//	107   7   Fire safety / 1      2024-01-15  Completed  Passed             before 7 left
//	108  20   Fire safety / 1      2024-01-15  Completed  Passed             20 does not count
//	109   1   Fire safety / 1      T+5         Completed  Passed             to come: not yet
//	110   3   Fire safety / 1      2024-03-20  completed  passed             (lower case)
//	217   2   Fire safety / 1      2024-02-01  Completed  Passed    T+5      renewed by 202
//	201   1   First aid / 2        2025-02-03  Completed  Passed    T+10
//	202   2   Fire safety / 1      2025-02-03  Completed  Passed    T+45
//	203   3   Data protection / 4  2025-02-03  Completed  Passed    T+80
//	204   4   First aid / 2        2025-02-03  Completed  Passed    T+120
//	205   5   Fire safety / 1      2025-02-03  Completed  Passed    T+20     renewed by 206
//	206   5   Fire safety / 1      2025-10-01  Completed  Passed    T+385
//	207   8   Fire safety / 1      2025-02-03  Completed  Passed    T+30
//	208   7   First aid / 2        2023-11-01  Completed  Passed    T+15     7 left; 7.5 h
//	209   9   First aid / 2        2025-02-03  Completed  Passed    T
//	210  10   First aid / 2        2025-02-03  Completed  Passed    T-1      expired
//	211   6   First aid / 2        2025-02-03  Completed  Failed    T+50     not completed
//	212  11   Data protection / 4  2025-02-03  Completed  Passed    T+60
//	213  12   Data protection / 4  2025-02-03  Completed  Passed    T+61
//	214  13   Data protection / 4  2025-02-03  Completed  Passed    T+90
//	215  16   Data protection / 4  2025-02-03  Completed  Passed    T+91
func trainingFixture(today time.Time) string {
	t := func(days int) string { return "'" + today.AddDate(0, 0, days).Format(time.DateOnly) + "'" }
	type person struct {
		id, dept, manager int
		status, leaving   string
	}
	people := []person{
		{1, 10, 0, "", ""}, {2, 20, 1, "", ""}, {3, 20, 2, "", ""}, {4, 20, 2, "", ""}, {5, 10, 1, "", ""},
		{6, 20, 5, "", ""}, {7, 10, 1, "Ex-employee", "'2024-01-31'"}, {8, 10, 7, "", ""}, {9, 10, 7, "", ""},
		{10, 10, 9, "", ""}, {11, 20, 12, "", ""}, {12, 20, 11, "", ""}, {13, 20, 11, "", ""}, {14, 10, 14, "", ""},
		{15, 10, 20, "", ""}, {16, 20, 3, "", ""},
	}
	var emp, hist []string
	for _, p := range people {
		status, leaving, manager := "Current employee", "NULL", "NULL"
		if p.status != "" {
			status, leaving = p.status, p.leaving
		}
		if p.manager != 0 {
			manager = fmt.Sprint(p.manager)
		}
		emp = append(emp, fmt.Sprintf("(%d, '%s', '2020-01-01', %s, %d, %s, TRUE, 'source')", p.id, status, leaving, p.dept, manager))
		dept, to := p.dept, "NULL"
		if p.id == 6 { // Sales until 2024-06-15
			dept, to = 10, "'2024-06-15T08:00:00.000Z'"
			hist = append(hist, fmt.Sprintf("(6, '2024-06-15T08:00:00.000Z', NULL, '%s', 20, %s, TRUE, 'source')", status, manager))
		}
		hist = append(hist, fmt.Sprintf("(%d, '2023-03-01T06:00:00.000Z', %s, '%s', %d, %s, TRUE, 'source')", p.id, to, status, dept, manager))
	}
	emp = append(emp, "(20, 'Current employee', NULL, NULL, NULL, NULL, FALSE, 'source')")
	course := func(id, who int, name string, typ int, start, end, expires, status, outcome, hours string) string {
		return fmt.Sprintf("(%d, %d, '%s', %d, %s, %s, %s, %s, %s, %s, TRUE, 'source')", id, who, name, typ, start, end, expires, status, outcome, hours)
	}
	const c, p, h = "'Completed'", "'Passed'", "'3.75'"
	courses := []string{
		course(101, 3, "Fire safety", 1, "'2024-03-04'", "'2024-03-04'", "'2025-03-04'", c, p, h),
		course(102, 4, "Fire safety", 1, "'2024-03-11'", "NULL", "NULL", c, p, "'7.5'"),
		course(103, 6, "First aid", 2, "'2024-06-10'", "'2024-06-12'", "NULL", c, "'Attended'", "'22.5'"),
		course(104, 6, "Leadership", 3, "'2024-07-01'", "'2024-07-02'", "NULL", c, "NULL", "NULL"),
		course(105, 5, "Leadership", 3, "'2024-07-08'", "'2024-07-09'", "NULL", c, "'Failed'", h),
		course(106, 2, "Leadership", 3, "'2024-07-15'", "'2024-07-16'", "NULL", "'Booked'", "NULL", h),
		course(107, 7, "Fire safety", 1, "'2024-01-15'", "'2024-01-15'", "NULL", c, p, h),
		course(108, 20, "Fire safety", 1, "'2024-01-15'", "'2024-01-15'", "NULL", c, p, h),
		course(109, 1, "Fire safety", 1, t(5), t(5), "NULL", c, p, h),
		course(110, 3, "Fire safety", 1, "'2024-03-20'", "'2024-03-20'", "NULL", "'completed'", "'passed'", h),
		course(217, 2, "Fire safety", 1, "'2024-02-01'", "'2024-02-01'", t(5), c, p, h),
		course(201, 1, "First aid", 2, "'2025-02-03'", "'2025-02-03'", t(10), c, p, h),
		course(202, 2, "Fire safety", 1, "'2025-02-03'", "'2025-02-03'", t(45), c, p, h),
		course(203, 3, "Data protection", 4, "'2025-02-03'", "'2025-02-03'", t(80), c, p, h),
		course(204, 4, "First aid", 2, "'2025-02-03'", "'2025-02-03'", t(120), c, p, h),
		course(205, 5, "Fire safety", 1, "'2025-02-03'", "'2025-02-03'", t(20), c, p, h),
		course(206, 5, "Fire safety", 1, "'2025-10-01'", "'2025-10-01'", t(385), c, p, h),
		course(207, 8, "Fire safety", 1, "'2025-02-03'", "'2025-02-03'", t(30), c, p, h),
		course(208, 7, "First aid", 2, "'2023-11-01'", "'2023-11-01'", t(15), c, p, "'7.5'"),
		course(209, 9, "First aid", 2, "'2025-02-03'", "'2025-02-03'", t(0), c, p, h),
		course(210, 10, "First aid", 2, "'2025-02-03'", "'2025-02-03'", t(-1), c, p, h),
		course(211, 6, "First aid", 2, "'2025-02-03'", "'2025-02-03'", t(50), c, "'Failed'", h),
		course(212, 11, "Data protection", 4, "'2025-02-03'", "'2025-02-03'", t(60), c, p, h),
		course(213, 12, "Data protection", 4, "'2025-02-03'", "'2025-02-03'", t(61), c, p, h),
		course(214, 13, "Data protection", 4, "'2025-02-03'", "'2025-02-03'", t(90), c, p, h),
		course(215, 16, "Data protection", 4, "'2025-02-03'", "'2025-02-03'", t(91), c, p, h),
	}
	return `INSERT INTO departments (id, name) VALUES (10, 'Sales'), (20, 'Engineering');
INSERT INTO company_training_types (id, name) VALUES (1, 'Fire safety'), (2, 'First aid'), (3, 'Leadership'), (4, 'Data protection');
INSERT INTO employees (id, status, company_join_date, leaving_date, department_id, line_manager_id, listed, origin) VALUES
  ` + strings.Join(emp, ",\n  ") + `;
DELETE FROM employees_history;
INSERT INTO employees_history (id, valid_from, valid_to, status, department_id, line_manager_id, listed, origin) VALUES
  ` + strings.Join(hist, ",\n  ") + `;
INSERT INTO employee_training_courses (id, employee_id, name, company_training_type_id, start_on, end_on, expires_on, status, outcome, hours, listed, origin) VALUES
  ` + strings.Join(courses, ",\n  ")
}

// loadTrainingFixture writes the account above into s, with today's date (UTC), which it returns.
func loadTrainingFixture(t *testing.T, s *sink.Store) time.Time {
	t.Helper()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	db := sinktest.DB(s)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(trainingFixture(today), ";\n") {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return today
}

// trainingRows are modelRows with booleans as SQLite gives them, 1 and 0, on both backends.
func trainingRows(t *testing.T, s *sink.Store, query string, args ...any) []string {
	t.Helper()
	rows := modelRows(t, s, query, args...)
	for i, r := range rows {
		f := strings.Split(r, "|")
		for j, v := range f {
			switch v {
			case "true":
				f[j] = "1"
			case "false":
				f[j] = "0"
			}
		}
		rows[i] = strings.Join(f, "|")
	}
	return rows
}

// TestTrainingModels: the training models' figures on the hand-made account, on both backends.
func TestTrainingModels(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		today := loadTrainingFixture(t, s)
		day := func(n int) string { return today.AddDate(0, 0, n).Format(time.DateOnly) }

		// Completed: by month of the completion day, the department then and the type.
		//   2023-11 208 (7, Sales, First aid, 7.5 h; 7 left later: still counted)
		//   2024-01 107 (7, Sales, Fire safety); 108 is 20's, who does not count
		//   2024-02 217 (2, Engineering, Fire safety)
		//   2024-03 101 102 110 (3, 4, 3: Engineering, Fire safety): 3.75+7.5+3.75 = 15 h
		//   2024-06 103 (6, still in Sales on 06-12, First aid, 22.5 h)
		//   2024-07 104 (6, Engineering since 06-15, Leadership, no hours: 0); 105 failed, 106 booked
		//   2025-02 Sales: Fire safety 205 207 = 2, 7.5 h; First aid 201 209 210 = 3, 11.25 h
		//           (211 failed); Engineering: Fire safety 202; First aid 204; Data protection
		//           203 212 213 214 215 = 5, 18.75 h
		//   2025-10 206 (5, Sales, Fire safety)
		//   109 is to come: not there.
		checkRows(t, "model_training_completed_monthly", trainingRows(t, s, `SELECT month, department_id, department, training_type_id, training_type, courses_completed, hours
FROM model_training_completed_monthly ORDER BY month, department_id, training_type_id`), []string{
			"2023-11-01|10|Sales|2|First aid|1|7.5",
			"2024-01-01|10|Sales|1|Fire safety|1|3.75",
			"2024-02-01|20|Engineering|1|Fire safety|1|3.75",
			"2024-03-01|20|Engineering|1|Fire safety|3|15",
			"2024-06-01|10|Sales|2|First aid|1|22.5",
			"2024-07-01|20|Engineering|3|Leadership|1|0",
			"2025-02-01|10|Sales|1|Fire safety|2|7.5",
			"2025-02-01|10|Sales|2|First aid|3|11.25",
			"2025-02-01|20|Engineering|1|Fire safety|1|3.75",
			"2025-02-01|20|Engineering|2|First aid|1|3.75",
			"2025-02-01|20|Engineering|4|Data protection|5|18.75",
			"2025-10-01|10|Sales|1|Fire safety|1|3.75",
		})

		// Expiring from today to T+90, the smallest window of 30, 60, 90 days each falls in:
		// 209 (today, 0), 201 (10), 207 (30: the 30 window's last day), 202 (45; renews 217, T+5,
		// which is not listed), 212 (60), 213 (61: 90), 203 (80), 214 (90: the last day listed).
		// Not: 204 (T+120), 215 (T+91), 205 (renewed by 206, T+385), 208 (7 left), 210
		// (expired yesterday), 211 (failed), 101 (expired in 2025).
		checkRows(t, "model_certificates_expiring", trainingRows(t, s, `SELECT employee_id, course_id, name, training_type_id, training_type, expires_on, days_left, window_days
FROM model_certificates_expiring ORDER BY days_left, employee_id`), []string{
			"9|209|First aid|2|First aid|" + day(0) + "|0|30",
			"1|201|First aid|2|First aid|" + day(10) + "|10|30",
			"8|207|Fire safety|1|Fire safety|" + day(30) + "|30|30",
			"2|202|Fire safety|1|Fire safety|" + day(45) + "|45|60",
			"11|212|Data protection|4|Data protection|" + day(60) + "|60|60",
			"12|213|Data protection|4|Data protection|" + day(61) + "|61|90",
			"3|203|Data protection|4|Data protection|" + day(80) + "|80|90",
			"13|214|Data protection|4|Data protection|" + day(90) + "|90|90",
		})
	})
}

// TestManagementModels: the reporting lines and the management tree on the hand-made account,
// cycle included, on both backends.
func TestManagementModels(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadTrainingFixture(t, s)

		// Every manager above each of the current staff (7 left: no line of theirs), up through
		// managers who are current staff: 7 (left) and 20 (not counted) end their lines. 11's
		// line meets 11 again after 12 and stops there; 12's after 11; 13's after 11 and 12.
		// 14 is their own manager: no line.
		checkRows(t, "model_reporting_lines", trainingRows(t, s, `SELECT employee_id, manager_id, levels, path
FROM model_reporting_lines ORDER BY employee_id, levels`), []string{
			"2|1|1|1/2",
			"3|2|1|2/3",
			"3|1|2|1/2/3",
			"4|2|1|2/4",
			"4|1|2|1/2/4",
			"5|1|1|1/5",
			"6|5|1|5/6",
			"6|1|2|1/5/6",
			"8|7|1|7/8",
			"9|7|1|7/9",
			"10|9|1|9/10",
			"10|7|2|7/9/10",
			"11|12|1|12/11",
			"12|11|1|11/12",
			"13|11|1|11/13",
			"13|12|2|12/11/13",
			"15|20|1|20/15",
			"16|3|1|3/16",
			"16|2|2|2/3/16",
			"16|1|3|1/2/3/16",
		})

		// Per manager: direct reports, all below, depth (managers above), left, in a cycle.
		//   1: 2 5; 2 3 4 5 6 16 = 6; top.      2: 3 4; 3 4 16; under 1.
		//   3: 16; under 2 and 1: depth 2.       5: 6; under 1.
		//   7: 8 9; 8 9 10; left: the top of theirs.  9: 10; under 7.
		//   11: 12 13; 12 13 (not 11 again); under 12; a cycle.  12: 11; 11 13; under 11; a cycle.
		//   20: 15; not counted (listed as no one): left.
		checkRows(t, "model_management_tree", trainingRows(t, s, `SELECT manager_id, direct_reports, total_reports, depth, manager_left, in_cycle
FROM model_management_tree ORDER BY manager_id`), []string{
			"1|2|6|0|0|0",
			"2|2|3|1|0|0",
			"3|1|1|2|0|0",
			"5|1|1|1|0|0",
			"7|2|3|0|1|0",
			"9|1|1|1|0|0",
			"11|2|2|1|0|1",
			"12|1|2|1|0|1",
			"20|1|1|0|1|0",
		})
	})
}

// TestTrainingModelsDocQueries runs docs/models.md's example queries of the training and
// line-management models as the page prints them on the hand-made account above, on both
// backends.
func TestTrainingModelsDocQueries(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadTrainingFixture(t, s)

		// 2024, from TestTrainingModels: Engineering Fire safety 217 (02) 101 102 110 (03) = 4,
		// 3.75+15 = 18.75 h; Leadership 104, no hours; Sales Fire safety 107; First aid 103.
		checkRows(t, "training", trainingRows(t, s, modelsDocQuery(t, "training")), []string{
			"Engineering|Fire safety|4|18.75",
			"Engineering|Leadership|1|0",
			"Sales|Fire safety|1|3.75",
			"Sales|First aid|1|22.5",
		})
		// 30: 209 201 207; 60: 202 212; 90: 213 203 214.
		checkRows(t, "expiring", trainingRows(t, s, modelsDocQuery(t, "expiring")), []string{"30|3", "60|2", "90|3"})
		// Below 2: 3 and 4, and 16 under 3.
		checkRows(t, "below a manager", trainingRows(t, s, modelsDocQuery(t, "below-a-manager")), []string{
			"3|1|2/3",
			"16|2|2/3/16",
			"4|1|2/4",
		})
		// 7 left (8 9, and 10 under 9); 20 was never listed (15).
		checkRows(t, "managers who left", trainingRows(t, s, modelsDocQuery(t, "managers-who-left")), []string{"7|2|3", "20|1|1"})
	})
}
