package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hrsync/hrsync/sink"
)

// The demo's warehouse: a scratch warehouse it makes, throws away and makes again on every run,
// and the example query it shows and answers. Both are the demo's alone; the warehouse they work
// on is sink's.

// demoMark marks the warehouses the demo makes, and it only ever removes one that carries it: a
// SQLite file whose application_id is "hrsd", a Postgres schema with this comment.
var demoMark = sink.ScratchMark{
	AppID:   0x68727364,
	Comment: "made by hrsync demo, which drops and remakes it on every run",
}

// openDemoWarehouse removes the demo's previous warehouse, if it made one there, and opens a new
// one, migrated and marked as the demo's. Anything else in its place is left alone, and said so.
func openDemoWarehouse(ctx context.Context, wh demoWarehouseSpec, schema string, log *slog.Logger) (*sink.Store, error) {
	opts := sink.Options{Schema: schema, Logger: log}
	err := sink.ResetScratch(ctx, wh.url, opts, demoMark)
	switch {
	case errors.Is(err, sink.ErrNotScratch) && wh.schemas:
		return nil, fmt.Errorf("demo: schema %s exists in %s and hrsync demo did not make it; the demo drops only its own: drop or rename it yourself", schema, sink.RedactURL(wh.url))
	case errors.Is(err, sink.ErrNotScratch):
		return nil, fmt.Errorf("demo: %s exists and is not a warehouse hrsync demo made; the demo removes only its own: remove it yourself, or give --warehouse another file", wh.url)
	case err != nil:
		return nil, fmt.Errorf("demo: %w", err)
	}
	if _, err := sink.Migrate(ctx, wh.url, opts); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	store, err := sink.Open(ctx, wh.url, opts)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return store, nil
}

// headcountByDepartmentQuery is the demo's example query for the day given (YYYY-MM-DD), which
// it shows for a person to paste and answers with headcountByDepartment: the headcount on that
// day — the people the models count as employed on it (model_employment: joined on or before
// it, not left before it; docs/models.md), so not the leavers the source still lists — by the
// department they are in now, largest first (ties by name), those in no department last as
// "(none)". It is one line, the same on both backends, so it can be pasted as it is into sqlite3
// or into psql (with search_path set to the warehouse's schema) and give the same answer.
func headcountByDepartmentQuery(day string) string {
	return `SELECT coalesce(d.name, '(none)') AS department, count(*) AS headcount ` +
		`FROM model_employment m JOIN employees e ON e.id = m.employee_id LEFT JOIN departments d ON d.id = e.department_id ` +
		`WHERE m.start_date <= '` + day + `' AND (m.end_date IS NULL OR m.end_date >= '` + day + `') ` +
		`GROUP BY d.name ORDER BY d.name IS NULL, headcount DESC, department`
}

// departmentCount is one line of headcountByDepartment.
type departmentCount struct {
	// Department is the department's name; "(none)" for the employees in no department.
	Department string
	Headcount  int64
}

// headcountByDepartment runs headcountByDepartmentQuery for day on the warehouse's own
// connections (on Postgres they are in the warehouse's schema, as the query's tables are
// unqualified).
func headcountByDepartment(ctx context.Context, store *sink.Store, day time.Time) ([]departmentCount, error) {
	rows, err := store.Query(ctx, headcountByDepartmentQuery(day.Format(time.DateOnly)))
	if err != nil {
		return nil, fmt.Errorf("headcount by department: %w", err)
	}
	defer rows.Close()
	counts := []departmentCount{}
	for rows.Next() {
		var c departmentCount
		if err := rows.Scan(&c.Department, &c.Headcount); err != nil {
			return nil, fmt.Errorf("headcount by department: %w", err)
		}
		counts = append(counts, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("headcount by department: %w", err)
	}
	return counts, nil
}

// absenceDaysQuery is the demo's second example query, for the year given: the served absences
// that start in that year and were not cancelled, counted and their days (deducted: the working
// days the source charged, half days as 0.5) summed by the department the employee is in now
// (for a leaver, was last in), most days first (ties by name), those of no department (or of
// someone the source never listed) last as "(none)". Like headcountByDepartmentQuery it is one line, the same on both backends, to paste
// as it is; an absence is counted in the year it starts, whole.
func absenceDaysQuery(year int) string {
	return fmt.Sprintf(`SELECT coalesce(d.name, '(none)') AS department, count(*) AS absences, sum(CAST(a.deducted AS DOUBLE PRECISION)) AS days `+
		`FROM absences a LEFT JOIN employees e ON e.id = a.employee_id LEFT JOIN departments d ON d.id = e.department_id `+
		`WHERE a.listed AND a.deleted_at IS NULL AND a.cancelled IS NOT TRUE AND a.start_date >= '%04d-01-01' AND a.start_date < '%04d-01-01' `+
		`GROUP BY d.name ORDER BY d.name IS NULL, days DESC, department`, year, year+1)
}

// departmentAbsence is one line of absenceDaysByDepartment.
type departmentAbsence struct {
	// Department is the department's name; "(none)" for the absences of no department.
	Department string
	Absences   int64
	Days       float64
}

// absenceDaysByDepartment runs absenceDaysQuery for year on the warehouse's own connections.
func absenceDaysByDepartment(ctx context.Context, store *sink.Store, year int) ([]departmentAbsence, error) {
	rows, err := store.Query(ctx, absenceDaysQuery(year))
	if err != nil {
		return nil, fmt.Errorf("absence days by department: %w", err)
	}
	defer rows.Close()
	out := []departmentAbsence{}
	for rows.Next() {
		var a departmentAbsence
		var days sql.NullFloat64 // NULL when every deducted of the group is
		if err := rows.Scan(&a.Department, &a.Absences, &days); err != nil {
			return nil, fmt.Errorf("absence days by department: %w", err)
		}
		a.Days = days.Float64
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("absence days by department: %w", err)
	}
	return out, nil
}
