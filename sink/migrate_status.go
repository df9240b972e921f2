package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/schema"
)

// SchemaStatus is where a warehouse's schema stands against this build's migrations, as
// MigrationStatus read it: what `hrsync migrate` would do there, read without doing it.
type SchemaStatus struct {
	Dialect schema.Dialect
	// Location is where the warehouse is, without credentials.
	Location string
	// Applied is the highest version the warehouse's ledger (schema_migrations) records: 0 for
	// a warehouse never migrated.
	Applied int
	// Known is the newest version this build has (schema.Latest).
	Known int
	// Missing: the warehouse is not there yet (a SQLite file that does not exist, a Postgres
	// schema not created); migrate makes it.
	Missing bool
	// Setup is what migrate runs before the first pending migration, outside its transactions:
	// the ledger's table, when the warehouse has none. (A missing Postgres schema is created
	// first: Missing.)
	Setup []string
	// Pending are this build's migrations the ledger does not record, in the order migrate
	// applies them, each in its own transaction.
	Pending []Pending
	// History is what migrate runs when no migration is pending and the warehouse's history
	// triggers are not this build's (they are remade in one transaction); nil when they are.
	// With migrations pending, the last one's Statements end with them instead.
	History []string
	// HistoryMayDiffer: a pending migration changes triggers or drops or renames tables, so the
	// history trigger statements, worked out from the triggers the warehouse has now, may not be
	// the ones migrate runs once the migrations before them have.
	HistoryMayDiffer bool
	// Unknown are the migrations the ledger records that this build does not have: a newer
	// build migrated the warehouse, and this one refuses it (schema.ErrAhead).
	Unknown []AppliedMigration
}

// Pending is one migration migrate would apply.
type Pending struct {
	Version int
	Name    string
	// Statements are what its transaction runs, as it runs them: the migration's file as it is
	// (several statements in one string), and for the last one, the history triggers' statements
	// (see SchemaStatus.History). Its ledger row is written in the same transaction.
	Statements []string
}

// AppliedMigration is one row of the warehouse's ledger.
type AppliedMigration struct {
	Version   int
	Name      string
	AppliedAt string
}

// Ahead reports whether a newer build migrated the warehouse: this one refuses it.
func (s SchemaStatus) Ahead() bool { return s.Applied > s.Known }

// MigrationStatus reads where the warehouse at rawURL stands against this build's migrations,
// and what `hrsync migrate` would run there, without changing anything: on no path does it write,
// create the Postgres schema or the ledger's table, create a missing SQLite file, set its
// journal mode or its file mode (Open does all of those). A SQLite file is opened read-only; on
// Postgres every read is in a read-only transaction.
func MigrationStatus(ctx context.Context, rawURL string, opts Options) (_ SchemaStatus, err error) {
	defer func() { err = scrubbed(err, rawURL) }()
	d, err := Classify(rawURL)
	if err != nil {
		return SchemaStatus{}, err
	}
	if d == schema.SQLite {
		return sqliteStatus(ctx, rawURL)
	}
	opts.SkipSchemaCheck = true // only read below, whatever the schema's version
	opts.MaxOpenConns = 1
	s, err := Open(ctx, rawURL, opts) // Postgres: Open only connects and reads
	if err != nil {
		return SchemaStatus{}, err
	}
	defer s.Close()
	st := SchemaStatus{Location: s.location}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, s.opts.Schema).Scan(&n); err != nil {
		return st, fmt.Errorf("migration status of %s: %w", s.location, err)
	}
	st.Missing = n == 0
	if err := readStatus(ctx, s.db.DB, s.d, &st); err != nil {
		return st, fmt.Errorf("migration status of %s: %w", s.location, err)
	}
	return st, nil
}

// sqliteStatus is MigrationStatus of a SQLite file: opened read-only, and not at all when it does
// not exist (an empty database in memory stands for it, which is what migrate would start from).
func sqliteStatus(ctx context.Context, rawURL string) (SchemaStatus, error) {
	path, err := SQLitePath(rawURL)
	if err != nil {
		return SchemaStatus{}, err
	}
	st := SchemaStatus{Location: path}
	dsn := "file:" + path + "?mode=ro&_pragma=busy_timeout(10000)"
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		st.Missing = true
		dsn = "file::memory:?mode=memory"
	} else if err != nil {
		return st, fmt.Errorf("migration status of %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return st, fmt.Errorf("migration status of %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one memory database, not one per connection
	if err := readStatus(ctx, db, sqliteDialect{}, &st); err != nil {
		return st, fmt.Errorf("migration status of %s: %w", path, readOnlyFileErr(busyErr(err)))
	}
	return st, nil
}

// readStatus fills st from the warehouse db: its ledger, this build's migrations, and the
// statements migrate would run, each worked out as migrate works it out (the migrations' SQL,
// versionTable, staleHistory), in one read-only transaction.
func readStatus(ctx context.Context, db *sql.DB, d dialect, st *SchemaStatus) error {
	st.Dialect = d.name()
	ms, err := schema.Migrations(d.name())
	if err != nil {
		return err
	}
	st.Known = len(ms)
	ledger, err := d.tableExists(ctx, db, "schema_migrations")
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	applied := map[int]bool{}
	if ledger {
		rows, err := tx.QueryContext(ctx, `SELECT version, name, CAST(applied_at AS text) FROM schema_migrations ORDER BY version`)
		if err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		for rows.Next() {
			var a AppliedMigration
			if err := rows.Scan(&a.Version, &a.Name, &a.AppliedAt); err != nil {
				rows.Close()
				return fmt.Errorf("read schema version: %w", err)
			}
			applied[a.Version] = true
			st.Applied = max(st.Applied, a.Version)
			if a.Version > len(ms) {
				st.Unknown = append(st.Unknown, a)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
	}
	for _, m := range ms {
		if !applied[m.Version] { // as applyMigration: a version the ledger records is done
			st.Pending = append(st.Pending, Pending{Version: m.Version, Name: m.Name, Statements: []string{m.SQL}})
			st.HistoryMayDiffer = st.HistoryMayDiffer || reshapes(m.SQL)
		}
	}
	if st.Ahead() {
		// migrate refuses such a warehouse before touching its triggers: nothing to run.
		st.Pending, st.HistoryMayDiffer = nil, false
		return nil
	}
	// migrate runs its migrations only when the ledger is behind this build's newest; a gap
	// below it (a ledger edited by hand) is left as it is, as migrate leaves it.
	if st.Applied >= st.Known {
		st.Pending, st.HistoryMayDiffer = nil, false
	}
	history, err := staleHistory(ctx, tx, d, historyTriggers(d, tables))
	if err != nil {
		return err
	}
	if len(st.Pending) == 0 {
		st.History = history
		return nil
	}
	if !ledger {
		st.Setup = []string{versionTable}
	}
	last := &st.Pending[len(st.Pending)-1]
	last.Statements = append(last.Statements, history...)
	return nil
}

// reshapes reports whether a migration's SQL may change which history triggers the warehouse
// has: it names triggers, or drops or renames tables (a dropped table takes its triggers).
func reshapes(text string) bool {
	up := strings.ToUpper(text)
	return slices.ContainsFunc([]string{"TRIGGER", "DROP TABLE", "RENAME"}, func(w string) bool { return strings.Contains(up, w) })
}
