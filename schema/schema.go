// Package schema holds the warehouse's migrations: numbered .sql files per dialect, embedded in
// the binary. Package sink applies them (sink.Migrate), each in one transaction, recorded in
// schema_migrations.
package schema

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Dialect names a database the warehouse runs on, and the folder of its migrations.
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

// ErrAhead: the warehouse was migrated by a newer build than this one. Errors of that kind are
// *AheadError, which says by how much; errors.Is(err, ErrAhead) holds for them.
var ErrAhead = errors.New("warehouse schema is newer than this build: upgrade hrsync")

// AheadError says the warehouse records migrations this build does not have: a newer build
// migrated it. Migrations are forward-only, so this build refuses it rather than guess what the
// newer ones changed.
type AheadError struct {
	Current, Latest int
}

func (e *AheadError) Error() string {
	return fmt.Sprintf("warehouse schema is newer than this build (version %d, this build knows %d): "+
		"a newer hrsync migrated it; run that release or a later one, or restore the backup taken before the migration", e.Current, e.Latest)
}

// Is makes errors.Is(err, ErrAhead) hold.
func (e *AheadError) Is(target error) bool { return target == ErrAhead }
