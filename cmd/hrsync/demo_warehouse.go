package main

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/sink"
)

// The demo's warehouse: a scratch warehouse it makes, throws away and makes again on every run,
// and the example query it shows and answers. Both are the demo's alone; the warehouse they work
// on is sink's.

// demoMark marks the warehouses the demo makes, and it only ever removes one that carries it: a
// SQLite file whose application_id is "hrsd", a Postgres schema with this comment.
var demoMark = scratchMark{
	AppID:   0x68727364,
	Comment: "made by hrsync demo, which drops and remakes it on every run",
}

// openDemoWarehouse removes the demo's previous warehouse, if it made one there, and opens a new
// one, migrated and marked as the demo's. Anything else in its place is left alone, and said so.
func openDemoWarehouse(ctx context.Context, wh demoWarehouseSpec, schema string, log *slog.Logger) (*sink.Store, error) {
	opts := sink.Options{Schema: schema, Logger: log}
	err := resetScratch(ctx, wh.url, opts, demoMark)
	switch {
	case errors.Is(err, errNotScratch) && wh.postgres:
		return nil, fmt.Errorf("demo: schema %s exists in %s and hrsync demo did not make it; the demo drops only its own: drop or rename it yourself", schema, sink.RedactURL(wh.url))
	case errors.Is(err, errNotScratch):
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

// A scratch warehouse is one a tool makes, throws away and makes again on every run (the demo's
// is one). The tool marks what it makes, and only a warehouse carrying its mark is ever removed:
// a real warehouse, or anything else found in the scratch warehouse's place, is left as it is.

// scratchMark is how a tool marks the scratch warehouses it owns. Both fields are required, and
// each should be the tool's alone.
type scratchMark struct {
	// AppID marks a SQLite file: its PRAGMA application_id. Not 0, which every SQLite file has
	// unless told otherwise (hrsync's own warehouse included).
	AppID int32
	// Comment marks a Postgres schema: its COMMENT ON SCHEMA. Not empty, which is what a schema
	// without a comment has.
	Comment string
}

// errNotScratch is wrapped by resetScratch's error when something without the owner's mark is
// where the scratch warehouse goes. Nothing was touched.
var errNotScratch = errors.New("not a scratch warehouse of this owner")

// resetScratch makes an empty scratch warehouse at rawURL, marked with mark, in place of the
// previous one: the SQLite file rawURL names, or for Postgres the schema opts.Schema (default
// "hr", as for sink.Open) of that database.
//
// When one is there already and carries mark, it is removed (for SQLite with its -wal, -shm and
// -journal files; for Postgres DROP SCHEMA … CASCADE). When something is there without the mark
// (any other file, a SQLite file with another application_id, a schema with another comment or
// none), the error wraps errNotScratch, names what was found without credentials, and nothing is
// touched. Then an empty one is created and marked; sink.Migrate makes it a warehouse. A SQLite
// file's mark is read from its header, so a file that is not the owner's is never opened as a
// database; on Postgres the check, the drop, the creation and the mark are one transaction.
func resetScratch(ctx context.Context, rawURL string, opts sink.Options, mark scratchMark) error {
	if mark.AppID == 0 || mark.Comment == "" {
		return errors.New("reset scratch warehouse: the mark needs an AppID and a Comment")
	}
	if sink.IsPostgresURL(rawURL) {
		return resetScratchPostgres(ctx, rawURL, opts, mark.Comment)
	}
	return resetScratchSQLite(ctx, rawURL, mark.AppID)
}

func resetScratchSQLite(ctx context.Context, rawURL string, appID int32) error {
	path, err := sink.SQLitePath(rawURL)
	if err != nil {
		return fmt.Errorf("reset scratch warehouse: %w", err)
	}
	if _, err := os.Lstat(path); err == nil {
		found, err := sqliteAppID(path)
		switch {
		case err != nil:
			return fmt.Errorf("reset scratch warehouse %s: it exists and %v: %w", path, err, errNotScratch)
		case found != appID:
			return fmt.Errorf("reset scratch warehouse %s: it exists with application_id %d, not %d: %w", path, found, appID, errNotScratch)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("reset scratch warehouse %s: %w", path, err)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reset scratch warehouse %s: %w", path, err)
	}
	// The driver is the one sink registers ("sqlite", pure Go). Not sink.Open: it would turn the
	// file to WAL and migrate it before the mark is set. The file is made private first.
	if err := sink.CreateSQLiteFile(path); err != nil {
		return fmt.Errorf("reset scratch warehouse: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return fmt.Errorf("reset scratch warehouse %s: create: %w", path, err)
	}
	defer db.Close()
	// Setting application_id writes the file's header: the file is made here.
	if _, err := db.ExecContext(ctx, `PRAGMA application_id = `+strconv.FormatInt(int64(appID), 10)); err != nil {
		return fmt.Errorf("reset scratch warehouse %s: create: %w", path, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("reset scratch warehouse %s: create: %w", path, err)
	}
	return nil
}

// sqliteAppID reads the application_id of the SQLite database file at path from its header
// (https://sqlite.org/fileformat2.html#the_database_header: the magic string, and the id
// big-endian at offset 68). Reading the file itself, not opening it as a database, leaves no -wal
// or -shm beside a file that is not the caller's. resetScratch sets the id before the file has
// a WAL, so it is in the file's own header from the start.
func sqliteAppID(path string) (int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("cannot be read: %w", err)
	}
	defer f.Close()
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:16]) != "SQLite format 3\x00" {
		return 0, errors.New("is not a SQLite database")
	}
	return int32(binary.BigEndian.Uint32(h[68:72])), nil
}

func resetScratchPostgres(ctx context.Context, rawURL string, opts sink.Options, comment string) error {
	if opts.Schema == "" {
		opts.Schema = "hr" // sink.Open's default
	}
	opts.SkipSchemaCheck = true // the schema may not exist: only the catalogue is read here
	opts.MaxOpenConns = 1
	s, err := sink.Open(ctx, rawURL, opts) // checks the schema's name: letters, digits and _
	if err != nil {
		return fmt.Errorf("reset scratch warehouse: %w", err)
	}
	defer s.Close()
	name := opts.Schema
	fail := func(step string, err error) error {
		return fmt.Errorf("reset scratch warehouse %s, schema %s: %s: %w", s.Location(), name, step, err)
	}
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		return fail("begin", err)
	}
	defer func() { _ = tx.Rollback() }()
	var found sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, name).Scan(&found)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fail("look for it", err)
	case !found.Valid:
		return fmt.Errorf("reset scratch warehouse %s: schema %s exists without a comment: %w", s.Location(), name, errNotScratch)
	case found.String != comment:
		return fmt.Errorf("reset scratch warehouse %s: schema %s exists with another comment: %w", s.Location(), name, errNotScratch)
	default:
		if _, err := tx.ExecContext(ctx, `DROP SCHEMA `+name+` CASCADE`); err != nil {
			return fail("drop", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE SCHEMA `+name); err != nil {
		return fail("create", err)
	}
	if _, err := tx.ExecContext(ctx, `COMMENT ON SCHEMA `+name+` IS `+pq.QuoteLiteral(comment)); err != nil {
		return fail("mark", err)
	}
	if err := tx.Commit(); err != nil {
		return fail("commit", err)
	}
	return nil
}

// headcountByDepartmentQuery is the demo's example query, which it shows for a person to paste
// and answers with headcountByDepartment: the served employees counted by department, largest
// first (ties by name), those in no department last as "(none)". It is one line, the same on
// both backends and without parameters, so it can be pasted as it is into sqlite3 or into psql
// (with search_path set to the warehouse's schema) and give the same answer.
const headcountByDepartmentQuery = `SELECT coalesce(d.name, '(none)') AS department, count(*) AS employees ` +
	`FROM employees e LEFT JOIN departments d ON d.id = e.department_id ` +
	`WHERE e.listed AND e.deleted_at IS NULL GROUP BY d.name ORDER BY d.name IS NULL, employees DESC, department`

// departmentCount is one line of headcountByDepartment.
type departmentCount struct {
	// Department is the department's name; "(none)" for the employees in no department.
	Department string
	Employees  int64
}

// headcountByDepartment counts the served employees (listed, not deleted) by department, in the
// order of headcountByDepartmentQuery, which it runs on the warehouse's own connections (on
// Postgres they are in the warehouse's schema, as the query's tables are unqualified).
func headcountByDepartment(ctx context.Context, store *sink.Store) ([]departmentCount, error) {
	rows, err := store.DB().QueryContext(ctx, headcountByDepartmentQuery)
	if err != nil {
		return nil, fmt.Errorf("headcount by department: %w", err)
	}
	defer rows.Close()
	counts := []departmentCount{}
	for rows.Next() {
		var c departmentCount
		if err := rows.Scan(&c.Department, &c.Employees); err != nil {
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
	rows, err := store.DB().QueryContext(ctx, absenceDaysQuery(year))
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
