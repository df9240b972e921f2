package sink

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
)

// PeopleReportOptions say what PeopleReport reads.
type PeopleReportOptions struct {
	// AsOf is a day (its date in UTC) of the report's last month: the report is of that
	// month's last day, or today in the current month (PeopleReport.AsOf); a day after today
	// is today.
	AsOf time.Time
	// Months is how many months the trends show, AsOf's the last (at least 1).
	Months int
	// BradfordTop is how many employees the Bradford list keeps, highest factor first.
	BradfordTop int
	// Names adds the Bradford list's names (identifying). Someone whose identifying data is
	// erased (an erasure not lifted) has none either way.
	Names bool
	// Models, when set, are the models section's settings, written into the warehouse
	// (ApplyModelSettings) before the refresh, on a warehouse that takes writes.
	Models *ModelSettings
}

// PeopleReport is what hrsync report draws, read from the people models (docs/models.md) in
// one snapshot. Dates are YYYY-MM-DD; a month is its first day. Everything is a count or an
// employee's id and department, unless Names was asked for.
type PeopleReport struct {
	// AsOf is the day every figure is of: the last day of the asked day's month, or today in
	// the current month (the monthly models' last day of a month), never after today.
	AsOf   string
	Months []string // the months shown, oldest first
	// Employees is how many rows model_employment has: 0 is a warehouse with nothing to show.
	Employees int64
	Headcount []DepartmentMonth
	Movements []Movement
	Turnover  []TurnoverMonth
	// AbsenceModels is false when the warehouse has no absence models (model_absence_monthly,
	// model_bradford): Absence and Bradford are then empty.
	AbsenceModels bool
	// Absence sums model_absence_monthly's months shown, by department.
	Absence []DepartmentAbsence
	// BradfordAsOf is the day of the Bradford factors listed: the last of AsOf's month, or
	// today in the current month; "" when nobody has one above 0.
	BradfordAsOf string
	Bradford     []BradfordEntry

	// What the report says about the figures beside them; each is shown only when set.

	// LeftOut are the people left out of every count (headcount, FTE, starters, leavers,
	// turnover), by why.
	LeftOut []LeftOutCount
	// StartingSoon is how many people start after AsOf: not counted yet.
	StartingSoon int64
	// ZeroHours is how many people on a pattern of no contracted hours count in headcount with
	// FTE 0 and no days due.
	ZeroHours int64
	// UnknownHolidayCountries are the statutory holiday countries the source names that hrsync
	// has no calendar for, with how many of the people counted on the report's day are in each:
	// they take HolidayCalendar (model_employee_calendars' 'unknown country').
	UnknownHolidayCountries []CountryCount
	// HolidayCalendar is the public holidays left out of days due for people who receive
	// statutory holidays ("england-and-wales", "scotland", "northern-ireland", "ireland", "poland"); "" for none.
	HolidayCalendar string
	// ClosureDays is how many company closure days are left out of days due.
	ClosureDays int
	// BradfordWindowWeeks is the Bradford factor's window (0: the models' 52 weeks).
	BradfordWindowWeeks int
	// BradfordBands are where the Bradford factor's bands start (e.g. 51, 201, 401, 601).
	BradfordBands []float64
	// BradfordExcludedTypes are the sickness types the Bradford factor leaves out.
	BradfordExcludedTypes []string
}

// CountryCount is how many people have a statutory holiday country.
type CountryCount struct {
	Country string
	People  int64
}

// LeftOutCount is how many people are left out of every count, and why.
type LeftOutCount struct {
	// Reason is a machine code: "no_leaving_date" (a leaver whose leaving day is unknown),
	// "no_join_date" (no company join date).
	Reason string
	People int64
}

// The reasons of LeftOutCount that the report words.
const (
	LeftOutNoLeavingDate = "no_leaving_date"
	LeftOutNoJoinDate    = "no_join_date"
)

// DepartmentMonth is a department's headcount and FTE at a month's end (today, in the
// current month).
type DepartmentMonth struct {
	Month        string
	DepartmentID sql.NullInt64
	Department   string // "" for none
	Headcount    int64
	FTE          float64
}

// Movement is a department's starters and leavers of a month.
type Movement struct {
	Month             string
	DepartmentID      sql.NullInt64
	Department        string
	Starters, Leavers int64
}

// TurnoverMonth is the account's turnover of the 12 months ending with Month.
type TurnoverMonth struct {
	Month      string
	Leavers12m int64
	// Turnover12m is a fraction (0.05 is 5 %); not Valid when nobody was employed.
	Turnover12m sql.NullFloat64
}

// DepartmentAbsence is a department's days of absence over the months shown.
type DepartmentAbsence struct {
	DepartmentID                                    sql.NullInt64
	Department                                      string
	SickDays, OtherLeaveDays, HolidayDays, DaysLost float64
	DaysDue                                         float64
	// SicknessRate is the sickness absence rate, SickDays over DaysDue (other leave is not
	// in it); not Valid when no days were due.
	SicknessRate sql.NullFloat64
}

// BradfordEntry is one employee of the Bradford list.
type BradfordEntry struct {
	EmployeeID   int64
	DepartmentID sql.NullInt64
	Department   string
	Spells       int64
	Days         float64
	Bradford     float64 // the factor, as adjusted (exclusions, spells joined)
	// Raw is the factor before adjustment, where the model gives it.
	Raw  sql.NullFloat64
	Band string // the band the factor falls in; "" for none
	Name string // only with PeopleReportOptions.Names, and never an erased person's
}

// The absence models, made by migration 0023 (model_absence_monthly a table since 0024): without
// them, the report leaves out absence.
const (
	absenceMonthlyView = "model_absence_monthly"
	bradfordView       = "model_bradford"
)

// PeopleReport reads the report's figures (PeopleReport) from the models.
func (s *Store) PeopleReport(ctx context.Context, o PeopleReportOptions) (PeopleReport, error) {
	if o.Months < 1 {
		return PeopleReport{}, fmt.Errorf("people report: months %d: want at least 1", o.Months)
	}
	var (
		r   PeopleReport
		err error
	)
	r.AbsenceModels, err = s.hasRelations(ctx, absenceMonthlyView, bradfordView)
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: %w", err)
	}
	// The models kept as tables are refreshed first when the warehouse changed since (a write:
	// a replica's are as its primary last wrote them).
	ro, err := s.ReadOnly(ctx)
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: %w", err)
	}
	if !ro {
		if o.Models != nil {
			if _, err := s.ApplyModelSettings(ctx, *o.Models); err != nil {
				return PeopleReport{}, fmt.Errorf("people report: %w", err)
			}
		}
		if _, err := s.RefreshModels(ctx, false); err != nil {
			return PeopleReport{}, fmt.Errorf("people report: %w", err)
		}
	}
	tx, err := s.db.BeginTxx(ctx, s.d.snapshot())
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: %w", err)
	}
	defer tx.Rollback()
	d := s.d
	month := d.read(KindDate, "month")

	// One day for every figure: the monthly models' last day of the asked day's month, i.e.
	// its last day, or today (the models' today, the database's date in UTC) in the current
	// month; a day after today is today.
	today, err := s.today(ctx, tx)
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: %w", err)
	}
	asOf := time.Date(o.AsOf.UTC().Year(), o.AsOf.UTC().Month(), o.AsOf.UTC().Day(), 0, 0, 0, 0, time.UTC)
	if asOf.After(today) {
		asOf = today
	}
	monthStart := time.Date(asOf.Year(), asOf.Month(), 1, 0, 0, 0, 0, time.UTC)
	first := monthStart.AddDate(0, -(o.Months - 1), 0)
	day := monthStart.AddDate(0, 1, -1)
	if day.After(today) {
		day = today
	}
	r.AsOf = day.Format(time.DateOnly)
	for m := first; !m.After(monthStart); m = m.AddDate(0, 1, 0) {
		r.Months = append(r.Months, m.Format(time.DateOnly))
	}
	from, to, end := first.Format(time.DateOnly), monthStart.Format(time.DateOnly), r.AsOf

	if err := tx.QueryRowxContext(ctx, `SELECT count(*) FROM model_employment`).Scan(&r.Employees); err != nil {
		return PeopleReport{}, fmt.Errorf("people report: employment: %w", err)
	}
	// Who the counts leave out, and why (model_left_out, migration 0027: a leaver whose leaving
	// day is unknown, someone with no join date), and who starts after today: counted from
	// their first day, so only a report of today says so.
	employment0027, err := s.hasRelations(ctx, "model_left_out", "model_starting_soon")
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: %w", err)
	}
	if err := leftOut(ctx, tx, &r, employment0027, day.Equal(today)); err != nil {
		return PeopleReport{}, fmt.Errorf("people report: %w", err)
	}
	zeroHours := `0`
	if employment0027 { // the column came with model_left_out
		zeroHours = `sum(zero_hours)`
	}
	err = scanRows(ctx, tx, `SELECT `+month+`, department_id, coalesce(department, ''), sum(headcount), sum(fte), `+zeroHours+`
FROM model_headcount_monthly WHERE month >= ? AND month <= ?
GROUP BY month, department_id, department ORDER BY month, department, department_id`, []any{from, to},
		func(rows *sqlx.Rows) error {
			var m DepartmentMonth
			var zero int64
			err := rows.Scan(&m.Month, &m.DepartmentID, &m.Department, &m.Headcount, &m.FTE, &zero)
			r.Headcount = append(r.Headcount, m)
			if m.Month[:min(len(m.Month), len(time.DateOnly))] == to {
				r.ZeroHours += zero
			}
			return err
		})
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: headcount: %w", err)
	}
	err = scanRows(ctx, tx, `SELECT `+month+`, department_id, coalesce(department, ''), starters, leavers
FROM model_starters_leavers_monthly WHERE month >= ? AND month <= ?
ORDER BY month, department, department_id`, []any{from, to},
		func(rows *sqlx.Rows) error {
			var m Movement
			err := rows.Scan(&m.Month, &m.DepartmentID, &m.Department, &m.Starters, &m.Leavers)
			r.Movements = append(r.Movements, m)
			return err
		})
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: starters and leavers: %w", err)
	}
	err = scanRows(ctx, tx, `SELECT `+month+`, leavers_12m, turnover_12m
FROM model_turnover_monthly WHERE month >= ? AND month <= ? ORDER BY month`, []any{from, to},
		func(rows *sqlx.Rows) error {
			var m TurnoverMonth
			err := rows.Scan(&m.Month, &m.Leavers12m, &m.Turnover12m)
			r.Turnover = append(r.Turnover, m)
			return err
		})
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: turnover: %w", err)
	}
	if !r.AbsenceModels {
		return r, nil
	}
	err = scanRows(ctx, tx, `SELECT department_id, coalesce(department, ''),
  coalesce(sum(sick_days), 0), coalesce(sum(other_leave_days), 0), coalesce(sum(holiday_days), 0),
  coalesce(sum(days_lost), 0), coalesce(sum(days_due), 0)
FROM model_absence_monthly WHERE month >= ? AND month <= ?
GROUP BY department_id, department ORDER BY department, department_id`, []any{from, to},
		func(rows *sqlx.Rows) error {
			var a DepartmentAbsence
			err := rows.Scan(&a.DepartmentID, &a.Department, &a.SickDays, &a.OtherLeaveDays, &a.HolidayDays,
				&a.DaysLost, &a.DaysDue)
			if a.DaysDue > 0 {
				a.SicknessRate = sql.NullFloat64{Float64: a.SickDays / a.DaysDue, Valid: true}
			}
			r.Absence = append(r.Absence, a)
			return err
		})
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: absence: %w", err)
	}
	// The Bradford factors of AsOf: model_bradford has one day of each month, its last (today's
	// in the current month), AsOf, so the month's rows are that day's; read in one pass (the
	// view is computed whole on each read).
	// A name only where asked for, and never one whose identifying data an erasure (not
	// lifted) took: the erasure nulls the names already; the check keeps it so should a name
	// come back another way.
	name := `''`
	if o.Names {
		name = `CASE WHEN EXISTS (SELECT 1 FROM erasures x WHERE x.kind = 'employee' AND x.subject_id = b.employee_id
    AND x.lifted_at IS NULL AND ',' || x.classes || ',' LIKE '%,identifying,%') THEN ''
  ELSE trim(coalesce(e.first_name, '') || ' ' || coalesce(e.last_name, '')) END`
	}
	// The settings the absence models read (schema 0028: holiday calendar, closure days, the
	// Bradford window, bands and exclusions), and each factor's raw score and band.
	settings, err := s.hasRelations(ctx, "model_settings", "model_closure_days", "model_bradford_bands", "model_bradford_excluded_types")
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: %w", err)
	}
	rawBand := `NULL, 0`
	if settings {
		if err := s.readModelSettings(ctx, tx, &r, from, end); err != nil {
			return PeopleReport{}, fmt.Errorf("people report: %w", err)
		}
		rawBand = `b.bradford_raw, b.band`
	}
	err = scanRows(ctx, tx, `SELECT `+d.read(KindDate, "b.as_of")+`, b.employee_id, b.department_id, coalesce(b.department, ''), b.spells, b.days, b.bradford, `+rawBand+`, `+name+`
FROM `+bradfordView+` b LEFT JOIN employees e ON e.id = b.employee_id
WHERE b.as_of >= ? AND b.as_of <= ? AND b.bradford > 0
ORDER BY b.as_of DESC, b.bradford DESC, b.employee_id LIMIT ?`, []any{to, end, o.BradfordTop},
		func(rows *sqlx.Rows) error {
			var b BradfordEntry
			var day string
			var band int64
			err := rows.Scan(&day, &b.EmployeeID, &b.DepartmentID, &b.Department, &b.Spells, &b.Days, &b.Bradford, &b.Raw, &band, &b.Name)
			if band > 0 {
				b.Band = strconv.FormatInt(band, 10)
			}
			day = day[:min(len(day), len(time.DateOnly))] // a date, whatever the driver made of it
			if r.BradfordAsOf == "" {
				r.BradfordAsOf = day
			}
			if day == r.BradfordAsOf { // one day's list, should the view ever hold more
				r.Bradford = append(r.Bradford, b)
			}
			return err
		})
	if err != nil {
		return PeopleReport{}, fmt.Errorf("people report: bradford: %w", err)
	}
	return r, nil
}

// readModelSettings reads the absence models' settings (ApplyModelSettings) into r: the
// default holiday calendar ("" for none), the closure days within the report's days from
// through end, and the Bradford window, bands and excluded types.
func (s *Store) readModelSettings(ctx context.Context, tx *sqlx.Tx, r *PeopleReport, from, end string) error {
	if err := tx.QueryRowxContext(ctx, `SELECT holiday_calendar, bradford_window_weeks FROM model_settings WHERE id = 1`).
		Scan(&r.HolidayCalendar, &r.BradfordWindowWeeks); err != nil {
		return fmt.Errorf("model settings: %w", err)
	}
	if r.HolidayCalendar == CalendarNone {
		r.HolidayCalendar = ""
	}
	if err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT count(*) FROM model_closure_days WHERE day >= ? AND day <= ?`), from, end).
		Scan(&r.ClosureDays); err != nil {
		return fmt.Errorf("model settings: closure days: %w", err)
	}
	// The people employed on the report's day whose country has no calendar, by country.
	r.UnknownHolidayCountries = nil
	if err := scanRows(ctx, tx, `SELECT c.holiday_country, count(*) FROM model_employee_calendars c
JOIN model_employment m ON m.employee_id = c.employee_id
WHERE c.calendar_from = 'unknown country' AND m.start_date <= ? AND (m.end_date IS NULL OR m.end_date >= ?)
GROUP BY c.holiday_country ORDER BY count(*) DESC, c.holiday_country`, []any{end, end}, func(rows *sqlx.Rows) error {
		var c CountryCount
		err := rows.Scan(&c.Country, &c.People)
		r.UnknownHolidayCountries = append(r.UnknownHolidayCountries, c)
		return err
	}); err != nil {
		return fmt.Errorf("model settings: holiday countries: %w", err)
	}
	r.BradfordBands, r.BradfordExcludedTypes = nil, nil
	if err := scanRows(ctx, tx, `SELECT threshold FROM model_bradford_bands ORDER BY band`, nil, func(rows *sqlx.Rows) error {
		var t float64
		err := rows.Scan(&t)
		r.BradfordBands = append(r.BradfordBands, t)
		return err
	}); err != nil {
		return fmt.Errorf("model settings: bands: %w", err)
	}
	if err := scanRows(ctx, tx, `SELECT name FROM model_bradford_excluded_types ORDER BY name`, nil, func(rows *sqlx.Rows) error {
		var n string
		err := rows.Scan(&n)
		r.BradfordExcludedTypes = append(r.BradfordExcludedTypes, n)
		return err
	}); err != nil {
		return fmt.Errorf("model settings: excluded types: %w", err)
	}
	return nil
}

// today is the models' today: the database's date, in UTC.
func (s *Store) today(ctx context.Context, tx *sqlx.Tx) (time.Time, error) {
	var day string
	if err := tx.QueryRowxContext(ctx, `SELECT `+s.d.read(KindDate, s.d.today())).Scan(&day); err != nil {
		return time.Time{}, fmt.Errorf("today: %w", err)
	}
	t, err := time.Parse(time.DateOnly, day[:min(len(day), len(time.DateOnly))])
	if err != nil {
		return time.Time{}, fmt.Errorf("today: %w", err)
	}
	return t, nil
}

// hasRelations reports whether the warehouse has every one of the tables or views named.
func (s *Store) hasRelations(ctx context.Context, names ...string) (bool, error) {
	for _, n := range names {
		ok, err := s.d.tableExists(ctx, s.db.DB, n)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// scanRows runs query (? placeholders) in tx and calls scan on each row.
func scanRows(ctx context.Context, tx *sqlx.Tx, query string, args []any, scan func(*sqlx.Rows) error) error {
	rows, err := tx.QueryxContext(ctx, tx.Rebind(query), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// leftOut fills r's LeftOut from model_left_out (grouped by reason, in the report's order), and
// its StartingSoon from model_starting_soon when the report is of today. A warehouse before
// migration 0027 (has0027 false) has neither view: its people with no join date are counted
// from employees.
func leftOut(ctx context.Context, tx *sqlx.Tx, r *PeopleReport, has0027, ofToday bool) error {
	if !has0027 {
		var n int64
		err := tx.QueryRowxContext(ctx, `SELECT count(*) FROM employees
WHERE listed AND origin <> 'seed' AND company_join_date IS NULL`).Scan(&n)
		if err != nil {
			return fmt.Errorf("join dates: %w", err)
		}
		if n > 0 {
			r.LeftOut = append(r.LeftOut, LeftOutCount{Reason: LeftOutNoJoinDate, People: n})
		}
		return nil
	}
	err := scanRows(ctx, tx, `SELECT reason, count(*) FROM model_left_out GROUP BY reason ORDER BY reason DESC`, nil,
		func(rows *sqlx.Rows) error {
			var c LeftOutCount
			err := rows.Scan(&c.Reason, &c.People)
			r.LeftOut = append(r.LeftOut, c)
			return err
		})
	if err != nil {
		return fmt.Errorf("left out: %w", err)
	}
	if ofToday {
		if err := tx.QueryRowxContext(ctx, `SELECT count(*) FROM model_starting_soon`).Scan(&r.StartingSoon); err != nil {
			return fmt.Errorf("starting soon: %w", err)
		}
	}
	return nil
}
