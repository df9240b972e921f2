package sink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/hrsync/hrsync/schema"
)

// backend is the kind of database a warehouse URL names: a Postgres database, whose warehouses
// are its schemas, or a SQLite file, a warehouse of its own. It holds what differs before a
// Store is open: how one is opened, checked to be there, reset as a scratch warehouse, and named
// for a person. backendOf is the one place that tells the two apart, by the URL's form; once a
// Store is open, what differs in SQL is its dialect's (dialect.go).
type backend interface {
	// kind is the backend's schema dialect (its migrations).
	kind() schema.Dialect
	// open opens s's pool and dialect on the warehouse at rawURL, which Classify accepted.
	open(ctx context.Context, s *Store, rawURL string) error
	// existing fails, wrapping ErrNoWarehouse, where the backend can tell without opening it
	// that there is no warehouse at rawURL (OpenExisting).
	existing(rawURL string) error
	// resetScratch is ResetScratch's work (scratch.go).
	resetScratch(ctx context.Context, rawURL string, opts Options, mark ScratchMark) error
	// hasSchemas, clientURL, describe, redactPlace, shellName and shellCommand are the exported
	// functions of the same names (place.go).
	hasSchemas() bool
	clientURL(rawURL string) string
	describe(rawURL, schema string) string
	redactPlace(rawURL, schema string) string
	shellName() string
	shellCommand(rawURL, schema, query string) string
}

// backendOf is the backend of the warehouse at rawURL: Postgres for a postgres:// or
// postgresql:// URL (lower case, as the driver takes them), else a SQLite file. It judges the
// form only; Classify says whether the URL is usable.
func backendOf(rawURL string) backend {
	if strings.HasPrefix(rawURL, "postgres://") || strings.HasPrefix(rawURL, "postgresql://") {
		return postgresBackend{}
	}
	return sqliteBackend{}
}

// postgresBackend is a schema of a Postgres database (postgres.go opens it).
type postgresBackend struct{}

func (postgresBackend) kind() schema.Dialect { return schema.Postgres }

// existing cannot tell without a connection: Open's schema check finds a schema never migrated.
func (postgresBackend) existing(string) error { return nil }

func (postgresBackend) hasSchemas() bool { return true }

func (postgresBackend) clientURL(rawURL string) string { return WithoutPassword(rawURL) }

func (postgresBackend) describe(rawURL, schema string) string {
	return fmt.Sprintf("Postgres %s, schema %s", RedactURL(rawURL), schema)
}

func (postgresBackend) redactPlace(rawURL, schema string) string {
	return RedactURL(rawURL) + " schema " + schema
}

func (postgresBackend) shellName() string { return "psql" }

func (b postgresBackend) shellCommand(rawURL, schema, query string) string {
	return fmt.Sprintf("psql %s -c 'SET search_path = %s' -c \"%s\"", ShellQuote(b.clientURL(rawURL)), schema, query)
}

// sqliteBackend is an embedded SQLite file (sqlite.go opens it).
type sqliteBackend struct{}

func (sqliteBackend) kind() schema.Dialect { return schema.SQLite }

// existing: Open would make a missing file, and an erasure recorded in a warehouse made for it
// would hold nobody's data and be lost from the real one.
func (sqliteBackend) existing(rawURL string) error {
	path, err := SQLitePath(rawURL)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w at %s: no such file (check warehouse.url; a sync or hrsync migrate makes the warehouse)", ErrNoWarehouse, absPath(path))
	case err != nil:
		return fmt.Errorf("open warehouse %s: %w", absPath(path), err)
	case fi.IsDir():
		return fmt.Errorf("%w at %s: it is a folder, not a SQLite file (check warehouse.url)", ErrNoWarehouse, absPath(path))
	case fi.Size() == 0:
		return fmt.Errorf("%w at %s: the file is empty (check warehouse.url; a sync or hrsync migrate makes the warehouse)", ErrNoWarehouse, absPath(path))
	}
	return nil
}

func (sqliteBackend) hasSchemas() bool { return false }

func (sqliteBackend) clientURL(rawURL string) string { return absPath(rawURL) }

func (b sqliteBackend) describe(rawURL, _ string) string { return "SQLite file " + b.clientURL(rawURL) }

func (sqliteBackend) redactPlace(rawURL, _ string) string { return RedactURL(rawURL) }

func (sqliteBackend) shellName() string { return "the sqlite3 shell" }

func (b sqliteBackend) shellCommand(rawURL, _, query string) string {
	return fmt.Sprintf("sqlite3 -header -column %s \"%s\"", ShellQuote(b.clientURL(rawURL)), query)
}
