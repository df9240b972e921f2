package sink

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/lib/pq"
)

// A scratch warehouse is one a tool makes, throws away and makes again on every run (the demo's
// is one). The tool marks what it makes, and only a warehouse carrying its mark is ever removed:
// a real warehouse, or anything else found in the scratch warehouse's place, is left as it is.

// ScratchMark is how a tool marks the scratch warehouses it owns. Both fields are required, and
// each should be the tool's alone.
type ScratchMark struct {
	// AppID marks a SQLite file: its PRAGMA application_id. Not 0, which every SQLite file has
	// unless told otherwise (hrsync's own warehouse included).
	AppID int32
	// Comment marks a Postgres schema: its COMMENT ON SCHEMA. Not empty, which is what a schema
	// without a comment has.
	Comment string
}

// ErrNotScratch is wrapped by ResetScratch's error when something without the owner's mark is
// where the scratch warehouse goes. Nothing was touched.
var ErrNotScratch = errors.New("not a scratch warehouse of this owner")

// ResetScratch makes an empty scratch warehouse at rawURL, marked with mark, in place of the
// previous one: the SQLite file rawURL names, or for Postgres the schema opts.Schema (default
// DefaultSchema, as for Open) of that database.
//
// When one is there already and carries mark, it is removed (for SQLite with its -wal, -shm and
// -journal files; for Postgres DROP SCHEMA … CASCADE). When something is there without the mark
// (any other file, a SQLite file with another application_id, a schema with another comment or
// none), the error wraps ErrNotScratch, names what was found without credentials, and nothing is
// touched. Then an empty one is created and marked; Migrate makes it a warehouse. A SQLite
// file's mark is read from its header, so a file that is not the owner's is never opened as a
// database; on Postgres the check, the drop, the creation and the mark are one transaction.
func ResetScratch(ctx context.Context, rawURL string, opts Options, mark ScratchMark) error {
	if mark.AppID == 0 || mark.Comment == "" {
		return errors.New("reset scratch warehouse: the mark needs an AppID and a Comment")
	}
	return backendOf(rawURL).resetScratch(ctx, rawURL, opts, mark)
}

func (sqliteBackend) resetScratch(ctx context.Context, rawURL string, _ Options, mark ScratchMark) error {
	appID := mark.AppID
	path, err := SQLitePath(rawURL)
	if err != nil {
		return fmt.Errorf("reset scratch warehouse: %w", err)
	}
	if _, err := os.Lstat(path); err == nil {
		found, err := sqliteAppID(path)
		switch {
		case err != nil:
			return fmt.Errorf("reset scratch warehouse %s: it exists and %v: %w", path, err, ErrNotScratch)
		case found != appID:
			return fmt.Errorf("reset scratch warehouse %s: it exists with application_id %d, not %d: %w", path, found, appID, ErrNotScratch)
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
	if err := CreateSQLiteFile(path); err != nil {
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

func (postgresBackend) resetScratch(ctx context.Context, rawURL string, opts Options, mark ScratchMark) error {
	comment := mark.Comment
	if opts.Schema == "" {
		opts.Schema = DefaultSchema
	}
	opts.SkipSchemaCheck = true // the schema may not exist: only the catalogue is read here
	opts.MaxOpenConns = 1
	s, err := Open(ctx, rawURL, opts) // checks the schema's name: letters, digits and _
	if err != nil {
		return fmt.Errorf("reset scratch warehouse: %w", err)
	}
	defer s.Close()
	name := opts.Schema
	fail := func(step string, err error) error {
		return fmt.Errorf("reset scratch warehouse %s, schema %s: %s: %w", s.Location(), name, step, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
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
		return fmt.Errorf("reset scratch warehouse %s: schema %s exists without a comment: %w", s.Location(), name, ErrNotScratch)
	case found.String != comment:
		return fmt.Errorf("reset scratch warehouse %s: schema %s exists with another comment: %w", s.Location(), name, ErrNotScratch)
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
