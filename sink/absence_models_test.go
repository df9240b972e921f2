package sink_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// The absence models (schema 0023, docs/models.md) are checked against an account of their own,
// made by hand, whose every figure below is worked out by hand in the comments.
//
// Reference data as in the people models' account: departments 10 Sales (division 100, location
// 1000), 20 Engineering (200, 2000), 30 Support (100, 2000). Working patterns: the seed's retired;
// 50 Full time, 37.5 h, Monday to Friday (default: FTE 1); 52 Mon–Wed, 22.5 h, Monday, Tuesday and
// Wednesday (FTE 0.6). Everyone joined long before 2023 and is employed throughout; their first
// version was written at 2023-03-01T06:00Z (held since always).
//
//	id  dept                           pattern  absences and sicknesses
//	31  Sales                          50       holiday Mon 2024-03-04…Fri 03-08, half_start: 0.5 + 4 = 4.5
//	                                            holiday 2024-03-11…03-15, cancelled: 0
//	                                            other leave Wed 2024-03-20, one day, half_start and half_end: 0.5
//	                                            sickness Thu 2024-03-28…Wed 04-03, over a month end: March
//	                                            Thu 28, Fri 29 = 2 (30, 31 a weekend), April Mon 1…Wed 3 = 3
//	32  Engineering                    52       sickness Thu 2024-03-14…Fri 03-15: no day of the pattern, 0 (no spell)
//	                                            sickness Mon 2024-03-18…Thu 03-21: Mon, Tue, Wed = 3
//	33  Sales, Engineering from        50       sickness Mon 2024-03-11…Fri 03-15: Mon 11, Tue 12 in Sales (2),
//	    2024-03-13T09:00Z                       Wed 13…Fri 15 in Engineering (3)
//	34  Engineering                    50       sicknesses Fri 2023-06-30 (1), Mon 2024-01-08…Tue 01-09 (2),
//	                                            Mon 2024-02-05…Wed 02-07 (3), Fri 2024-05-10 (1)
//	35  Sales                          50       a sickness the source no longer lists (deleted_at), one never
//	                                            listed, and an approved leave request (leave requests are not
//	                                            read): nothing
//	36  Support                        50       sickness from Mon 2024-03-25, still open (no end_date)
//
// Working days: March 2024 (the 1st a Friday) has 21 weekdays and 12 Mondays, Tuesdays and
// Wednesdays; April 2024 (the 1st a Monday) 22 weekdays and 14 Mondays, Tuesdays and Wednesdays.
const absenceFixture = `
INSERT INTO departments (id, name) VALUES (10, 'Sales'), (20, 'Engineering'), (30, 'Support');
INSERT INTO divisions (id, name) VALUES (100, 'Commercial'), (200, 'Product');
INSERT INTO locations (id, name) VALUES (1000, 'London'), (2000, 'Leeds');
UPDATE working_patterns SET deleted_at = '2023-03-01T06:00:00.000Z' WHERE id = 1;
INSERT INTO working_patterns (id, name, is_default, total_hours, mon, tue, wed, thu, fri, sat, sun) VALUES
  (50, 'Full time', TRUE, '37.5', TRUE, TRUE, TRUE, TRUE, TRUE, FALSE, FALSE),
  (52, 'Mon-Wed', FALSE, '22.5', TRUE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE);
INSERT INTO employees (id, status, company_join_date, department_id, division_id, location_id, working_pattern_id, listed, origin) VALUES
  (31, 'Current employee', '2020-01-06', 10, 100, 1000, 50, TRUE, 'source'),
  (32, 'Current employee', '2020-01-06', 20, 200, 2000, 52, TRUE, 'source'),
  (33, 'Current employee', '2020-01-06', 20, 200, 2000, 50, TRUE, 'source'),
  (34, 'Current employee', '2020-01-06', 20, 200, 2000, 50, TRUE, 'source'),
  (35, 'Current employee', '2020-01-06', 10, 100, 1000, 50, TRUE, 'source'),
  (36, 'Current employee', '2020-01-06', 30, 100, 2000, 50, TRUE, 'source');
DELETE FROM employees_history;
INSERT INTO employees_history (id, valid_from, valid_to, status, department_id, division_id, location_id, working_pattern_id, listed, origin) VALUES
  (31, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 100, 1000, 50, TRUE, 'source'),
  (32, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 20, 200, 2000, 52, TRUE, 'source'),
  (33, '2023-03-01T06:00:00.000Z', '2024-03-13T09:00:00.000Z', 'Current employee', 10, 100, 1000, 50, TRUE, 'source'),
  (33, '2024-03-13T09:00:00.000Z', NULL, 'Current employee', 20, 200, 2000, 50, TRUE, 'source'),
  (34, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 20, 200, 2000, 50, TRUE, 'source'),
  (35, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 100, 1000, 50, TRUE, 'source'),
  (36, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 30, 100, 2000, 50, TRUE, 'source');
INSERT INTO absences (id, employee_id, start_date, end_date, half_start, half_end, cancelled, type, listed, origin) VALUES
  (1, 31, '2024-03-04', '2024-03-08', TRUE, FALSE, FALSE, 'Holiday', TRUE, 'source'),
  (2, 31, '2024-03-11', '2024-03-15', FALSE, FALSE, TRUE, 'Holiday', TRUE, 'source'),
  (3, 31, '2024-03-20', '2024-03-20', TRUE, TRUE, FALSE, 'OtherLeave', TRUE, 'source');
INSERT INTO sicknesses (id, employee_id, start_date, end_date, half_start, half_end, status, listed, origin, deleted_at) VALUES
  (1, 31, '2024-03-28', '2024-04-03', FALSE, FALSE, 'returned', TRUE, 'source', NULL),
  (2, 32, '2024-03-14', '2024-03-15', FALSE, FALSE, 'returned', TRUE, 'source', NULL),
  (3, 32, '2024-03-18', '2024-03-21', FALSE, FALSE, 'returned', TRUE, 'source', NULL),
  (4, 33, '2024-03-11', '2024-03-15', FALSE, FALSE, 'returned', TRUE, 'source', NULL),
  (5, 34, '2023-06-30', '2023-06-30', FALSE, FALSE, 'returned', TRUE, 'source', NULL),
  (6, 34, '2024-01-08', '2024-01-09', FALSE, FALSE, 'returned', TRUE, 'source', NULL),
  (7, 34, '2024-02-05', '2024-02-07', FALSE, FALSE, 'returned', TRUE, 'source', NULL),
  (8, 34, '2024-05-10', '2024-05-10', FALSE, FALSE, 'returned', TRUE, 'source', NULL),
  (9, 35, '2024-03-05', '2024-03-05', FALSE, FALSE, 'returned', TRUE, 'source', '2024-04-01T06:00:00.000Z'),
  (10, 35, '2024-03-07', '2024-03-07', FALSE, FALSE, 'returned', FALSE, 'source', NULL),
  (11, 36, '2024-03-25', NULL, FALSE, FALSE, 'ongoing', TRUE, 'source', NULL);
INSERT INTO leave_requests (id, employee_id, start_date, end_date, half_start, half_end, status, type, listed, origin) VALUES
  (1, 35, '2024-03-06', '2024-03-06', FALSE, FALSE, 'approved', 'Holiday', TRUE, 'source');
`

// loadAbsenceFixture writes the account above into s.
func loadAbsenceFixture(t *testing.T, s *sink.Store) {
	t.Helper()
	db := sinktest.DB(s)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(strings.TrimSpace(absenceFixture), ";\n") {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// The settings and holidays the models read (nothing configured: England and Wales); no one
	// here receives statutory holidays (receives_statutory_holidays unknown), so bank holidays
	// are working days for all of them. Then model_absence_monthly is a table, written by a
	// refresh (a sync's, at its end).
	if _, err := s.ApplyModelSettings(ctx, sink.DefaultModelSettings()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshModels(ctx, false); err != nil {
		t.Fatal(err)
	}
}

// TestAbsenceModels: every absence model's figures on the hand-made account, on both backends.
func TestAbsenceModels(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadAbsenceFixture(t, s)

		// A row a working day: 31's half day first, the cancelled holiday left out, the one-day
		// other leave with both halves 0.5, the sickness on both sides of the month end but not
		// on its weekend; 32's Thursday and Friday are not in the Mon–Wed pattern; 33's sickness
		// in Sales to the 12th and in Engineering from the 13th.
		checkRows(t, "model_absence_days", modelRows(t, s, `SELECT employee_id, day, kind, days, department_id, division_id, location_id
FROM model_absence_days WHERE employee_id IN (31, 32, 33, 35) ORDER BY employee_id, day, kind`), []string{
			"31|2024-03-04|holiday|0.5|10|100|1000",
			"31|2024-03-05|holiday|1|10|100|1000",
			"31|2024-03-06|holiday|1|10|100|1000",
			"31|2024-03-07|holiday|1|10|100|1000",
			"31|2024-03-08|holiday|1|10|100|1000",
			"31|2024-03-20|other|0.5|10|100|1000",
			"31|2024-03-28|sickness|1|10|100|1000",
			"31|2024-03-29|sickness|1|10|100|1000",
			"31|2024-04-01|sickness|1|10|100|1000",
			"31|2024-04-02|sickness|1|10|100|1000",
			"31|2024-04-03|sickness|1|10|100|1000",
			"32|2024-03-18|sickness|1|20|200|2000",
			"32|2024-03-19|sickness|1|20|200|2000",
			"32|2024-03-20|sickness|1|20|200|2000",
			"33|2024-03-11|sickness|1|10|100|1000",
			"33|2024-03-12|sickness|1|10|100|1000",
			"33|2024-03-13|sickness|1|20|200|2000",
			"33|2024-03-14|sickness|1|20|200|2000",
			"33|2024-03-15|sickness|1|20|200|2000",
		})
		// 36's open sickness runs on to today: every weekday from 2024-03-25, 5 in March.
		checkRows(t, "an open sickness", modelRows(t, s, `SELECT count(*), min(day) FROM model_absence_days
WHERE employee_id = 36 AND day <= '2024-03-31'`), []string{"5|2024-03-25"})

		// March 2024. Due: Sales 31 (21) + 35 (21) + 33 to the 12th (Fri 1, 4…8, 11, 12: 8) = 50;
		// Engineering 32 (12) + 34 (21) + 33 from the 13th (21 - 8 = 13) = 46; Support 36 (21).
		//   Sales: sick 31 (2) + 33 (2) = 4, other 0.5, holiday 4.5; lost 4.5. FTE on 03-31: 31,
		//   35 = 2; per FTE 4.5 / 2 = 2.25; sickness rate 4 / 50 = 0.08.
		//   Engineering: sick 32 (0 + 3) + 33 (3) = 6; lost 6; FTE 0.6 + 1 + 1 = 2.6; 6 / 2.6 =
		//   2.3077 → 2.31; 6 / 46 = 0.1304.
		//   Support: sick 5 (25…29); FTE 1; 5; 5 / 21 = 0.2381.
		// April 2024. Due: Sales 31, 35: 44; Engineering 32 (14) + 33 (22) + 34 (22) = 58; Support 22.
		//   Sales: sick 31 (3); per FTE 3 / 2 = 1.5; 3 / 44 = 0.0682. Engineering: nothing lost, 0.
		//   Support: 36 sick every weekday, 22; 22 / 1 = 22; rate 1.
		checkRows(t, "model_absence_monthly", modelRows(t, s, `SELECT month, department_id, department, sick_days, other_leave_days, holiday_days,
days_lost, days_due, fte, days_lost_per_fte, sickness_rate
FROM model_absence_monthly WHERE month IN ('2024-03-01', '2024-04-01') ORDER BY month, department_id`), []string{
			"2024-03-01|10|Sales|4|0.5|4.5|4.5|50|2|2.25|0.08",
			"2024-03-01|20|Engineering|6|0|0|6|46|2.6|2.31|0.1304",
			"2024-03-01|30|Support|5|0|0|5|21|1|5|0.2381",
			"2024-04-01|10|Sales|3|0|0|3|44|2|1.5|0.0682",
			"2024-04-01|20|Engineering|0|0|0|0|58|2.6|0|0",
			"2024-04-01|30|Support|22|0|0|22|22|1|22|1",
		})

		// The table is its derived view, row for row.
		checkRows(t, "model_absence_monthly against its derived view", modelRows(t, s, `SELECT
  (SELECT count(*) FROM (SELECT * FROM model_absence_monthly EXCEPT SELECT * FROM model_absence_monthly_derived) a),
  (SELECT count(*) FROM (SELECT * FROM model_absence_monthly_derived EXCEPT SELECT * FROM model_absence_monthly) b),
  CASE WHEN (SELECT count(*) FROM model_absence_monthly) >= 6 THEN 'some' ELSE 'too few' END`), []string{"0|0|some"})

		// The Bradford factor. 34: the 52 weeks ending 2024-06-30 begin 2023-07-03, so the
		// sickness of 2023-06-30 has fallen out: 3 spells (01-08, 02-05, 05-10), 2 + 3 + 1 = 6
		// days, 3 × 3 × 6 = 54; on 2024-05-31 (from 2023-06-03) it is in: 4 spells, 7 days, 112;
		// on 2024-01-31 (from 2023-02-02): 2 spells, 3 days, 12; on 2023-06-30 one, 1. Nothing
		// before. 32 on 2024-03-31: the Thursday-Friday sickness has no working day of the
		// Mon–Wed pattern: no spell (schema 0028; 0023 counted it, 2 spells, 12); 1 spell
		// (Mon 18…Wed 20), 3 days, 3. 33: one spell of 5 days, in Engineering on 2024-03-31, 5.
		checkRows(t, "model_bradford", modelRows(t, s, `SELECT as_of, employee_id, department_id, department, spells, days, bradford FROM model_bradford
WHERE (employee_id = 34 AND as_of IN ('2023-05-31', '2023-06-30', '2024-01-31', '2024-05-31', '2024-06-30'))
   OR (employee_id IN (32, 33) AND as_of = '2024-03-31') ORDER BY as_of, employee_id`), []string{
			"2023-06-30|34|20|Engineering|1|1|1",
			"2024-01-31|34|20|Engineering|2|3|12",
			"2024-03-31|32|20|Engineering|1|3|3",
			"2024-03-31|33|20|Engineering|1|5|5",
			"2024-05-31|34|20|Engineering|4|7|112",
			"2024-06-30|34|20|Engineering|3|6|54",
		})
		// 35's sicknesses are not listed or deleted: no row, ever.
		checkRows(t, "unlisted and deleted sicknesses", modelRows(t, s, `SELECT count(*) FROM model_bradford WHERE employee_id = 35`), []string{"0"})
	})
}

// TestAbsenceModelsDocQueries runs docs/models.md's example queries of the absence models as the
// page prints them on the hand-made account above and checks their answers, on both backends.
func TestAbsenceModelsDocQueries(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadAbsenceFixture(t, s)

		// March 2024 as TestAbsenceModels works it out, by name: 6 / 46 = 13.04 %, 4 / 50 = 8 %,
		// 5 / 21 = 23.81 %.
		checkRows(t, "sickness-rate", modelRows(t, s, modelsDocQuery(t, "sickness-rate")), []string{
			"Engineering|6|46|13.04|2.31",
			"Sales|4|50|8|2.25",
			"Support|5|21|23.81|5",
		})

		// The 52 weeks ending 2024-03-31 begin 2023-04-03. 34: 2023-06-30 (1), 2024-01-08 (2),
		// 2024-02-05 (3): 3 spells, 6 days, 54. 32: 1 spell (the Thursday-Friday one has no
		// working day), 3 days, 3. 33: 1, 5, 5. 36: the
		// open sickness's weekdays from 03-25 to 03-29 inside the window: 1, 5, 5. 31: the
		// sickness from 03-28, its 2 March working days: 1, 2, 2. 35: nothing.
		checkRows(t, "bradford", modelRows(t, s, modelsDocQuery(t, "bradford")), []string{
			"34|Engineering|3|6|54",
			"33|Engineering|1|5|5",
			"36|Support|1|5|5",
			"32|Engineering|1|3|3",
			"31|Sales|1|2|2",
		})
	})
}
