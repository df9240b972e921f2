package sink_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// Working days as payroll counts them and the Bradford factor as HR applies it (schema 0028,
// docs/models.md "Working days"), on an account of their own, every figure worked by hand below.
//
// Easter 2024: Good Friday is Friday 29 March, Easter Monday Monday 1 April, both bank holidays in
// England and Wales; in Scotland Good Friday only. Wednesday 27 March 2024 is a company closure
// day (models.closure_days). March 2024 (the 1st a Friday) has 21 weekdays, April 22.
//
// Working patterns: 50 Full time, 37.5 h, Monday to Friday; 53 Zero hours: total_hours 0 and no
// hours on any day (though it marks Monday to Friday): no working day. Statutory holiday
// countries (the synced table): 1 England and Wales, 2 Scotland, 4 Portugal. Everyone joined long
// before 2023 and is employed throughout, one version since 2023-03-01.
//
//	id  dept  receives  country sent              calendar (from)
//	41  10    true      {id 1, England and Wales}  england-and-wales (country)
//	42  20    true      {id 2} (name by the table) scotland (country)
//	43  30    false     —                          none (no statutory holidays)
//	44  10    true      —                          the default (default)
//	45  40    true      —, pattern 53 zero hours   the default (default)
//	46  10    true      —                          the default (default)
//	47  20    true      {id 4, Portugal}           the default (unknown country)
//
// Records, and their working days with England and Wales the default:
//
//	41 sickness Thu 28 Mar…Tue 2 Apr: Thu 28 (Fri 29, Mon 1 holidays) Tue 2: March 1, April 1
//	42 sickness Thu 28 Mar…Tue 2 Apr: Thu 28 (Fri 29 a holiday) Mon 1, Tue 2: March 1, April 2
//	43 sickness Wed 27 Mar…Tue 2 Apr: (Wed 27 closed) Thu 28, Fri 29, Mon 1, Tue 2 (no bank
//	   holidays for 43): March 2, April 2
//	44 holiday Thu 28 Mar (half_start)…Tue 2 Apr: Thu 0.5, Tue 1: March 0.5, April 1
//	45 sickness Mon 11…Wed 13 Mar: no working day; apart, 3 calendar days of zero-hours sickness
//	46 sicknesses (one record each): a Tue 9 Jan, type "Pregnancy Related" (1 day);
//	   b Fri 8 Mar (1); c Mon 11 Mar (1); d Sat 16…Sun 17 Mar (0); e Wed 20 Mar (1);
//	   f Thu 28 Mar (1); g Tue 2 Apr (1): March b, c, e, f = 4, April g = 1
//	47 holiday Fri 29 Mar (half_start)…Wed 3 Apr: Fri 29 a holiday (its half day counts
//	   nothing), Mon 1 a holiday, Tue 2, Wed 3: March 0, April 2
const workdaysFixture = `
INSERT INTO departments (id, name) VALUES (10, 'Sales'), (20, 'Engineering'), (30, 'Support'), (40, 'Warehouse');
INSERT INTO statutory_holiday_countries (id, name, listed, origin) VALUES
  (1, 'England and Wales', TRUE, 'source'), (2, 'Scotland', TRUE, 'source'), (4, 'Portugal', TRUE, 'source');
UPDATE working_patterns SET deleted_at = '2023-03-01T06:00:00.000Z' WHERE id = 1;
INSERT INTO working_patterns (id, name, is_default, total_hours, mon, tue, wed, thu, fri, sat, sun) VALUES
  (50, 'Full time', TRUE, '37.5', TRUE, TRUE, TRUE, TRUE, TRUE, FALSE, FALSE),
  (53, 'Zero hours', FALSE, '0', TRUE, TRUE, TRUE, TRUE, TRUE, FALSE, FALSE);
INSERT INTO employees (id, status, company_join_date, department_id, working_pattern_id, receives_statutory_holidays, extra, listed, origin) VALUES
  (41, 'Current employee', '2020-01-06', 10, 50, TRUE, '{"statutory_holiday_country":{"id":1,"name":"England and Wales"}}', TRUE, 'source'),
  (42, 'Current employee', '2020-01-06', 20, 50, TRUE, '{"statutory_holiday_country":{"id":2}}', TRUE, 'source'),
  (43, 'Current employee', '2020-01-06', 30, 50, FALSE, NULL, TRUE, 'source'),
  (44, 'Current employee', '2020-01-06', 10, 50, TRUE, NULL, TRUE, 'source'),
  (45, 'Current employee', '2020-01-06', 40, 53, TRUE, NULL, TRUE, 'source'),
  (46, 'Current employee', '2020-01-06', 10, 50, TRUE, '{}', TRUE, 'source'),
  (47, 'Current employee', '2020-01-06', 20, 50, TRUE, '{"statutory_holiday_country":{"id":4,"name":"Portugal"}}', TRUE, 'source');
DELETE FROM employees_history;
INSERT INTO employees_history (id, valid_from, valid_to, status, department_id, working_pattern_id, listed, origin) VALUES
  (41, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 50, TRUE, 'source'),
  (42, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 20, 50, TRUE, 'source'),
  (43, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 30, 50, TRUE, 'source'),
  (44, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 50, TRUE, 'source'),
  (45, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 40, 53, TRUE, 'source'),
  (46, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 10, 50, TRUE, 'source'),
  (47, '2023-03-01T06:00:00.000Z', NULL, 'Current employee', 20, 50, TRUE, 'source');
INSERT INTO absences (id, employee_id, start_date, end_date, half_start, half_end, cancelled, type, listed, origin) VALUES
  (21, 44, '2024-03-28', '2024-04-02', TRUE, FALSE, FALSE, 'Holiday', TRUE, 'source'),
  (22, 47, '2024-03-29', '2024-04-03', TRUE, FALSE, FALSE, 'Holiday', TRUE, 'source');
INSERT INTO sicknesses (id, employee_id, start_date, end_date, half_start, half_end, status, nested, listed, origin) VALUES
  (21, 41, '2024-03-28', '2024-04-02', FALSE, FALSE, 'returned', NULL, TRUE, 'source'),
  (22, 42, '2024-03-28', '2024-04-02', FALSE, FALSE, 'returned', NULL, TRUE, 'source'),
  (23, 43, '2024-03-27', '2024-04-02', FALSE, FALSE, 'returned', NULL, TRUE, 'source'),
  (24, 45, '2024-03-11', '2024-03-13', FALSE, FALSE, 'returned', NULL, TRUE, 'source'),
  (31, 46, '2024-01-09', '2024-01-09', FALSE, FALSE, 'returned', '{"company_sicknesstype":{"id":70,"name":"Pregnancy Related"}}', TRUE, 'source'),
  (32, 46, '2024-03-08', '2024-03-08', FALSE, FALSE, 'returned', '{"company_sicknesstype":{"id":61,"name":"Cold / flu"}}', TRUE, 'source'),
  (33, 46, '2024-03-11', '2024-03-11', FALSE, FALSE, 'returned', NULL, TRUE, 'source'),
  (34, 46, '2024-03-16', '2024-03-17', FALSE, FALSE, 'returned', NULL, TRUE, 'source'),
  (35, 46, '2024-03-20', '2024-03-20', FALSE, FALSE, 'returned', NULL, TRUE, 'source'),
  (36, 46, '2024-03-28', '2024-03-28', FALSE, FALSE, 'returned', NULL, TRUE, 'source'),
  (37, 46, '2024-04-02', '2024-04-02', FALSE, FALSE, 'returned', NULL, TRUE, 'source');
`

// workdaysSettings are the fixture's settings: the defaults, the closure day, and pregnancy-
// related sickness left out of the Bradford factor (named in another case than the data's).
func workdaysSettings() sink.ModelSettings {
	m := sink.DefaultModelSettings()
	m.ClosureDays = []time.Time{time.Date(2024, 3, 27, 0, 0, 0, 0, time.UTC)}
	m.Bradford.ExcludeSicknessTypes = []string{"pregnancy related"}
	return m
}

func loadWorkdaysFixture(t *testing.T, s *sink.Store) {
	t.Helper()
	ctx := context.Background()
	tx, err := sinktest.DB(s).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range strings.Split(strings.TrimSpace(workdaysFixture), ";\n") {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if wrote, err := s.ApplyModelSettings(ctx, workdaysSettings()); err != nil || !wrote {
		t.Fatalf("ApplyModelSettings: wrote %v, %v; want written", wrote, err)
	}
	if _, err := s.RefreshModels(ctx, false); err != nil {
		t.Fatal(err)
	}
}

// TestWorkdayModels: public holidays, closure days, statutory holiday countries, zero hours and
// the Bradford rules on the fixture above, on both backends.
func TestWorkdayModels(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		loadWorkdaysFixture(t, s)

		checkRows(t, "model_employee_calendars", modelRows(t, s, `SELECT employee_id, calendar, calendar_from, coalesce(holiday_country, '-')
FROM model_employee_calendars WHERE employee_id BETWEEN 41 AND 47 ORDER BY employee_id`), []string{
			"41|england-and-wales|country|England and Wales",
			"42|scotland|country|Scotland",
			"43|none|no statutory holidays|-",
			"44|england-and-wales|default|-",
			"45|england-and-wales|default|-",
			"46|england-and-wales|default|-",
			"47|england-and-wales|unknown country|Portugal",
		})
		// The holidays written from the library, and the days off the models read: England and
		// Wales's Easter, Scotland's Good Friday alone, Ireland's St Patrick's Day kept on its
		// Sunday and its Easter Monday, Poland's Easter Monday, and the closure day in every
		// calendar.
		checkRows(t, "model_holidays", modelRows(t, s, `SELECT calendar, day, name FROM model_holidays
WHERE day >= '2024-03-01' AND day <= '2024-04-30' ORDER BY calendar, day`), []string{
			"england-and-wales|2024-03-29|Good Friday",
			"england-and-wales|2024-04-01|Easter Monday",
			"ireland|2024-03-17|Saint Patrick's Day",
			"ireland|2024-04-01|Easter Monday",
			"northern-ireland|2024-03-18|St Patrick's Day",
			"northern-ireland|2024-03-29|Good Friday",
			"northern-ireland|2024-04-01|Easter Monday",
			"poland|2024-04-01|drugi dzień Wielkiej Nocy",
			"scotland|2024-03-29|Good Friday",
		})
		checkRows(t, "model_days_off", modelRows(t, s, `SELECT calendar, day, dn, month, dow FROM model_days_off
WHERE day >= '2024-03-20' AND day <= '2024-04-05' ORDER BY calendar, day`), []string{
			// 2024-03-27 is day 45,376 since 1900-01-01 (a Wednesday: 45,376 mod 7 = 2)
			"england-and-wales|2024-03-27|45376|2024-03-01|2",
			"england-and-wales|2024-03-29|45378|2024-03-01|4",
			"england-and-wales|2024-04-01|45381|2024-04-01|0",
			"ireland|2024-03-27|45376|2024-03-01|2",
			"ireland|2024-04-01|45381|2024-04-01|0",
			"none|2024-03-27|45376|2024-03-01|2",
			"northern-ireland|2024-03-27|45376|2024-03-01|2",
			"northern-ireland|2024-03-29|45378|2024-03-01|4",
			"northern-ireland|2024-04-01|45381|2024-04-01|0",
			"poland|2024-03-27|45376|2024-03-01|2",
			"poland|2024-04-01|45381|2024-04-01|0",
			"scotland|2024-03-27|45376|2024-03-01|2",
			"scotland|2024-03-29|45378|2024-03-01|4",
		})

		// Day by day: Easter both sides of the weekend; 43's closure day; 44's half day; 47's half
		// day on Good Friday is no day; 45 (zero hours) has no working day.
		checkRows(t, "model_absence_days", modelRows(t, s, `SELECT employee_id, day, kind, days FROM model_absence_days
WHERE employee_id IN (41, 42, 43, 44, 45, 47) AND day >= '2024-03-01' AND day <= '2024-04-30' ORDER BY employee_id, day`), []string{
			"41|2024-03-28|sickness|1",
			"41|2024-04-02|sickness|1",
			"42|2024-03-28|sickness|1",
			"42|2024-04-01|sickness|1",
			"42|2024-04-02|sickness|1",
			"43|2024-03-28|sickness|1",
			"43|2024-03-29|sickness|1",
			"43|2024-04-01|sickness|1",
			"43|2024-04-02|sickness|1",
			"44|2024-03-28|holiday|0.5",
			"44|2024-04-02|holiday|1",
			"47|2024-04-02|holiday|1",
			"47|2024-04-03|holiday|1",
		})

		// Days due, March: 21 weekdays, less the closure day (everyone) and Good Friday (England
		// and Wales, Scotland): 41, 44, 46, 47 and 42: 19; 43: 20; 45: none.
		//   Sales (41, 44, 46): due 57; sick 41 (1) + 46 (b, c, e, f: 4) = 5; holiday 44 0.5;
		//   5 / 57 = 0.0877.
		//   Engineering (42, 47): due 38; sick 42 (1); holiday 47 (0); 1 / 38 = 0.0263.
		//   Support (43): due 20; sick 2; 2 / 20 = 0.1.
		//   Warehouse (45): due 0, no rate; 3 calendar days of zero-hours sickness apart.
		// April: 22 weekdays, less Easter Monday for England and Wales: 41, 44, 46, 47: 21; 42
		// (Scotland): 22; 43: 22.
		//   Sales: due 63; sick 41 (1) + 46 (g: 1) = 2; holiday 44 (1); 2 / 63 = 0.0317.
		//   Engineering: due 43; sick 42 (2); holiday 47 (2); 2 / 43 = 0.0465.
		//   Support: due 22; sick 2; 2 / 22 = 0.0909.
		monthly := `SELECT month, department_id, sick_days, other_leave_days, holiday_days, days_lost, days_due,
coalesce(sickness_rate, -1), zero_hours_sick_days, zero_hours_leave_days
FROM model_absence_monthly WHERE month IN ('2024-03-01', '2024-04-01') ORDER BY month, department_id`
		checkRows(t, "model_absence_monthly", modelRows(t, s, monthly), []string{
			"2024-03-01|10|5|0|0.5|5|57|0.0877|0|0",
			"2024-03-01|20|1|0|0|1|38|0.0263|0|0",
			"2024-03-01|30|2|0|0|2|20|0.1|0|0",
			"2024-03-01|40|0|0|0|0|0|-1|3|0",
			"2024-04-01|10|2|0|1|2|63|0.0317|0|0",
			"2024-04-01|20|2|0|2|2|43|0.0465|0|0",
			"2024-04-01|30|2|0|0|2|22|0.0909|0|0",
			"2024-04-01|40|0|0|0|0|0|-1|0|0",
		})

		// Bradford on 2024-04-30, the 52 weeks from 2023-05-03:
		//   41: one spell, 2 days: 2. 42: 1, 3: 3. 43: 1, 4: 4. 45: a sickness with no working
		//   day: no spell, 0; raw 1 record, 0 days: 0.
		//   46: a is excluded (pregnancy related); b (Fri) and c (the Monday after) are one
		//   spell; d has no working day: no spell, and does not join c to e (Tue 12…Tue 19 are
		//   working days); e a spell; f (Thu 28) and g (Tue 2) one spell across Good Friday, the
		//   weekend and Easter Monday: 3 spells, 5 days, 45, band 0 (below 51). Raw: 7 records,
		//   6 days (a…g: 1+1+1+0+1+1+1), 49 × 6 = 294.
		bradford := `SELECT employee_id, spells, days, bradford, band, window_start, spells_raw, days_raw, bradford_raw
FROM model_bradford WHERE as_of = '2024-04-30' ORDER BY employee_id`
		checkRows(t, "model_bradford", modelRows(t, s, bradford), []string{
			"41|1|2|2|0|2023-05-03|1|2|2",
			"42|1|3|3|0|2023-05-03|1|3|3",
			"43|1|4|4|0|2023-05-03|1|4|4",
			"45|0|0|0|0|2023-05-03|1|0|0",
			"46|3|5|45|0|2023-05-03|7|6|294",
		})

		// The same settings again: nothing written (one query), the table still fresh.
		if wrote, err := s.ApplyModelSettings(ctx, workdaysSettings()); err != nil || wrote {
			t.Fatalf("ApplyModelSettings unchanged: wrote %v, %v; want nothing written", wrote, err)
		}
		if r, err := s.RefreshModels(ctx, false); err != nil || len(r.Models) != 0 {
			t.Fatalf("RefreshModels after unchanged settings: %v, %v; want nothing refreshed", r.Models, err)
		}

		// Other settings: Scotland the default, no closure day, nothing excluded, an 8-week
		// window, bands at 10, 40 and 100. The refreshed table is stale until refreshed.
		m := sink.DefaultModelSettings()
		m.HolidayCalendar = sink.CalendarScotland
		m.Bradford.WindowWeeks = 8
		m.Bradford.Bands = []float64{10, 40, 100}
		if wrote, err := s.ApplyModelSettings(ctx, m); err != nil || !wrote {
			t.Fatalf("ApplyModelSettings changed: wrote %v, %v; want written", wrote, err)
		}
		if r, err := s.RefreshModels(ctx, false); err != nil || len(r.Models) != 1 {
			t.Fatalf("RefreshModels after changed settings: %v, %v; want the table refreshed", r.Models, err)
		}
		// March: no closure day. Sales: 41 (England and Wales by country, Good Friday) 20, 44 and
		// 46 (Scotland now, Good Friday) 20 each: 60. Support: 43 21, sick Wed 27, Thu 28, Fri
		// 29: 3; 3 / 21 = 0.1429. April: Sales 41 21, 44 and 46 22 each (Easter Monday a working
		// day in Scotland): 65; 44's holiday now Mon 1 and Tue 2: 2; 46's sickness g 1 and 41's 1.
		checkRows(t, "model_absence_monthly, other settings", modelRows(t, s, `SELECT month, department_id, sick_days, holiday_days, days_due, sickness_rate
FROM model_absence_monthly WHERE month IN ('2024-03-01', '2024-04-01') AND department_id IN (10, 30) ORDER BY month, department_id`), []string{
			"2024-03-01|10|5|0.5|60|0.0833",
			"2024-03-01|30|3|0|21|0.1429",
			"2024-04-01|10|2|2|65|0.0308",
			"2024-04-01|30|2|0|22|0.0909",
		})
		// Bradford on 2024-04-30, the 8 weeks from 2024-03-06: 46's a is out of the window; f
		// (Thu 28) and g (Tue 2) are two spells now, Easter Monday a working day in Scotland: b+c,
		// e, f, g: 4 spells, 5 days, 80, band 2 (at least 40, below 100); raw 6 records, 5 days,
		// 180. 43: Wed 27 a working day again: 1 spell, 5 days, 5.
		checkRows(t, "model_bradford, other settings", modelRows(t, s, `SELECT employee_id, spells, days, bradford, band, window_start, spells_raw, days_raw, bradford_raw
FROM model_bradford WHERE as_of = '2024-04-30' AND employee_id IN (43, 46) ORDER BY employee_id`), []string{
			"43|1|5|5|0|2024-03-06|1|5|5",
			"46|4|5|80|2|2024-03-06|6|5|180",
		})
	})
}

// TestModelSettingsValidate: what ApplyModelSettings (and the configuration) refuses, one line
// each, naming the key.
func TestModelSettingsValidate(t *testing.T) {
	t.Parallel()
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name string
		edit func(*sink.ModelSettings)
		want string // "" valid
	}{
		{"defaults", func(*sink.ModelSettings) {}, ""},
		{"scotland", func(m *sink.ModelSettings) { m.HolidayCalendar = "scotland" }, ""},
		{"none", func(m *sink.ModelSettings) { m.HolidayCalendar = "none" }, ""},
		{"unknown calendar", func(m *sink.ModelSettings) { m.HolidayCalendar = "england" }, `models.holiday_calendar "england": want one of england-and-wales, ireland, northern-ireland, poland, scotland, or none`},
		{"closure day out of range", func(m *sink.ModelSettings) { m.ClosureDays = []time.Time{day(2070, 1, 1)} }, "models.closure_days 2070-01-01: want a day in 1990 to 2059"},
		{"window", func(m *sink.ModelSettings) { m.Bradford.WindowWeeks = 0 }, "models.bradford.window_weeks 0: want 1 to 520"},
		{"no bands", func(m *sink.ModelSettings) { m.Bradford.Bands = nil }, "models.bradford.bands: want at least one threshold"},
		{"bands not rising", func(m *sink.ModelSettings) { m.Bradford.Bands = []float64{51, 201, 201, 601} }, "models.bradford.bands 51, 201, 201, 601: want thresholds above 0, each above the one before"},
		{"empty type", func(m *sink.ModelSettings) { m.Bradford.ExcludeSicknessTypes = []string{" "} }, "models.bradford.exclude_sickness_types: an empty name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := sink.DefaultModelSettings()
			tc.edit(&m)
			err := m.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v, want valid", err)
			case tc.want != "" && (err == nil || !errors.Is(err, sink.ErrModelSettings) || !strings.HasSuffix(err.Error(), tc.want)):
				t.Fatalf("Validate: %v, want …%s", err, tc.want)
			}
		})
	}
}

// TestWorkdayReport: the people report carries the settings the absence models counted by and
// each Bradford factor's raw score and band, read from the warehouse (settings written by the
// report itself, PeopleReportOptions.Models), and its sickness absence rate is sick days over
// days due, other leave apart.
func TestWorkdayReport(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		loadWorkdaysFixture(t, s)
		m := workdaysSettings()
		r, err := s.PeopleReport(context.Background(), sink.PeopleReportOptions{
			AsOf: time.Date(2024, 4, 30, 0, 0, 0, 0, time.UTC), Months: 2, BradfordTop: 10, Models: &m})
		if err != nil {
			t.Fatal(err)
		}
		// March and April 2024: the closure day of 27 March is within them.
		if r.HolidayCalendar != "england-and-wales" || r.ClosureDays != 1 || r.BradfordWindowWeeks != 52 ||
			!slices.Equal(r.BradfordBands, []float64{51, 201, 401, 601}) || !slices.Equal(r.BradfordExcludedTypes, []string{"pregnancy related"}) {
			t.Errorf("settings: calendar %q, closure days %d, window %d, bands %v, excluded %q",
				r.HolidayCalendar, r.ClosureDays, r.BradfordWindowWeeks, r.BradfordBands, r.BradfordExcludedTypes)
		}
		// 47, employed on 30 April 2024, has Portugal, a country with no calendar.
		if want := []sink.CountryCount{{Country: "Portugal", People: 1}}; !slices.Equal(r.UnknownHolidayCountries, want) {
			t.Errorf("unknown holiday countries %+v, want %+v", r.UnknownHolidayCountries, want)
		}
		// 46 (TestWorkdayModels): 45, raw 294, below the first band.
		var got []string
		for _, b := range r.Bradford {
			got = append(got, fmt.Sprintf("%d|%v|%v|%q", b.EmployeeID, b.Bradford, b.Raw.Float64, b.Band))
		}
		if len(got) == 0 || got[0] != `46|45|294|""` {
			t.Errorf("Bradford list %q, want 46 first: 45, raw 294, no band", got)
		}
		// Sales over March and April: sick 5 + 2 = 7 of 57 + 63 = 120 days due.
		for _, a := range r.Absence {
			if a.Department == "Sales" && (a.SickDays != 7 || a.DaysDue != 120 || !a.SicknessRate.Valid || math.Abs(a.SicknessRate.Float64-7.0/120) > 1e-9) {
				t.Errorf("Sales: sick %v, due %v, rate %v; want 7, 120, 7/120", a.SickDays, a.DaysDue, a.SicknessRate)
			}
		}
	})
}
