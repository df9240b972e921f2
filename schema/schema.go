// Package schema holds the warehouse's migrations: numbered .sql files per dialect, embedded in
// the binary, each applied in one transaction and recorded in schema_migrations.
package schema

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Dialect names a database the warehouse runs on.
type Dialect string

// The dialects.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// Migration is one numbered step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns a dialect's migrations in order.
func Migrations(d Dialect) ([]Migration, error) {
	entries, err := fs.ReadDir(files, string(d))
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", d, err)
	}
	var ms []Migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", e.Name())
		}
		body, err := fs.ReadFile(files, path.Join(string(d), e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migrations for %s: version %d missing", d, i+1)
		}
	}
	return ms, nil
}

// Latest is the version the code expects.
func Latest(d Dialect) int {
	ms, err := Migrations(d)
	if err != nil {
		return 0
	}
	return len(ms)
}

// BehindError says the warehouse has not been migrated to the version this build needs.
type BehindError struct {
	Current, Latest int
}

func (e *BehindError) Error() string {
	if e.Current == 0 {
		return fmt.Sprintf("warehouse schema is not set up (version 0, this build needs %d): run `hrsync migrate`", e.Latest)
	}
	return fmt.Sprintf("warehouse schema is behind (version %d, this build needs %d): run `hrsync migrate`", e.Current, e.Latest)
}

// ErrAhead: the warehouse was migrated by a newer build than this one.
var ErrAhead = errors.New("warehouse schema is newer than this build: upgrade hrsync")

const versionTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at text NOT NULL
)`

// Current reads the applied version (0 for a fresh database).
func Current(ctx context.Context, db *sql.DB, d Dialect) (int, error) {
	var exists bool
	var q string
	switch d {
	case Postgres:
		q = `SELECT to_regclass('schema_migrations') IS NOT NULL`
	case SQLite:
		q = `SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`
	default:
		return 0, fmt.Errorf("unknown dialect %q", d)
	}
	if err := db.QueryRowContext(ctx, q).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// Check refuses a warehouse whose schema is behind (*BehindError) or ahead (ErrAhead).
func Check(ctx context.Context, db *sql.DB, d Dialect) error {
	cur, err := Current(ctx, db, d)
	if err != nil {
		return err
	}
	latest := Latest(d)
	switch {
	case cur < latest:
		return &BehindError{Current: cur, Latest: latest}
	case cur > latest:
		return fmt.Errorf("%w (version %d, this build knows %d)", ErrAhead, cur, latest)
	}
	return nil
}

// Migrate applies the migrations not yet applied, each in its own transaction, and returns the
// versions it applied. Concurrent migrators are serialized (Postgres: an advisory lock; SQLite:
// the write lock), so each step runs once. On Postgres the connection's search_path must name
// the target schema, which must exist.
//
// A warehouse already at this build's version is only read: Migrate then takes no write lock,
// so opening a current SQLite file never waits for (or fails behind) another process's write.
func Migrate(ctx context.Context, db *sql.DB, d Dialect) ([]int, error) {
	ms, err := Migrations(d)
	if err != nil {
		return nil, err
	}
	cur, err := Current(ctx, db, d)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var applied []int
	if cur < len(ms) {
		if _, err := db.ExecContext(ctx, versionTable); err != nil {
			return nil, fmt.Errorf("migrate: create version table: %w", err)
		}
		for _, m := range ms {
			done, err := apply(ctx, db, d, m)
			if err != nil {
				return applied, fmt.Errorf("migrate: %04d_%s: %w", m.Version, m.Name, err)
			}
			if done {
				applied = append(applied, m.Version)
			}
		}
		// Read again: a newer build may have migrated further meanwhile.
		if cur, err = Current(ctx, db, d); err != nil {
			return applied, err
		}
	}
	if cur > len(ms) {
		return applied, fmt.Errorf("migrate: %w (version %d, this build knows %d)", ErrAhead, cur, len(ms))
	}
	return applied, nil
}

func apply(ctx context.Context, db *sql.DB, d Dialect, m Migration) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	if d == Postgres {
		// One migrator per schema at a time; released at commit.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('hrsync.migrate.' || current_schema()))`); err != nil {
			return false, err
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, rebind(d, `SELECT count(*) FROM schema_migrations WHERE version = ?`), m.Version).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return false, err
	}
	now := `strftime('%Y-%m-%dT%H:%M:%SZ', 'now')`
	if d == Postgres {
		now = `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`
	}
	if _, err := tx.ExecContext(ctx, rebind(d, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, `+now+`)`), m.Version, m.Name); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

func rebind(d Dialect, q string) string {
	if d != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}
