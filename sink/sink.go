// Package sink is the warehouse: Postgres or an embedded SQLite file, opened by URL. All SQL
// lives here.
package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // SQLite driver, pure Go

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink/internal/storedb"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// Options configures a Store.
type Options struct {
	// Schema is the Postgres schema the warehouse lives in (default DefaultSchema); ignored for SQLite.
	Schema string
	// Account names the account whose data this warehouse (schema, or SQLite file) holds, as
	// the configuration calls it; the ledger records it with every run (default "default").
	Account string
	// AccountID is given to employees created locally; 0 takes the account of the records
	// already there (1 in an empty warehouse).
	AccountID int64
	// SkipSchemaCheck opens a warehouse whose schema is behind (for migrate).
	SkipSchemaCheck bool
	// MaxOpenConns bounds the pool (default DefaultMaxOpenConns for Postgres).
	MaxOpenConns int
	// ConnMaxIdleTime is how long a Postgres connection stays open unused before the pool
	// closes it (default DefaultConnMaxIdleTime), so an idle warehouse holds no session.
	ConnMaxIdleTime time.Duration
	// LockTTL is how long a Postgres lock's lease lasts unless its holder renews it (default
	// DefaultLockTTL; see TryLock): the longest a holder may stall before it loses the lock,
	// and how long the lock of a process that died stays taken.
	LockTTL time.Duration
	// StatementTimeout bounds every statement (default DefaultStatementTimeout). On Postgres the
	// server enforces it (statement_timeout and idle_in_transaction_session_timeout on every
	// connection), and the client closes a connection whose server sends nothing for that long
	// plus a grace period (ErrNoAnswer). A statement also ends when its context does: its
	// connection is closed, whatever the host does. SQLite interrupts a statement whose context
	// ends.
	StatementTimeout time.Duration
	// ConnectTimeout bounds connecting to Postgres, handshake included (default
	// DefaultConnectTimeout; a connect_timeout in the URL wins).
	ConnectTimeout time.Duration
	// BusyTimeout is how long a SQLite write waits for another process's write lock before it
	// fails with ErrBusy (default 10 s).
	BusyTimeout time.Duration
	Logger      *slog.Logger
	// Declarations are what erasure and retention take members out of records' JSON (extra,
	// nested, sent) by: the code's declarations and the members of records the configuration
	// classes (personal_data.members); the zero value is the code's alone, where every member no
	// declaration names is identifying.
	Declarations v1.Declarations
	// Events are the settings of the joiner, mover and leaver events loads derive (zero
	// fields: the defaults).
	Events EventSettings
	// Now is the clock (default time.Now).
	Now func() time.Time
	// ErasureJournal is the file every erasure and lift is also written to, outside the
	// warehouse, so that a restored backup can be brought up to date (journal.go); "" for a
	// SQLite warehouse is the file beside it (hrsync.db.erasures.jsonl), for Postgres none.
	ErasureJournal string
}

// Store is an open warehouse. It is safe for concurrent use.
type Store struct {
	db   *sqlx.DB
	d    dialect
	opts Options
	log  *slog.Logger
	// where the warehouse is, without credentials, for messages
	location string
	// pg opens the Postgres connections (nil for SQLite)
	pg *pgConnector
	// held are the locks this store holds (TryLock), whose work stops when the warehouse is
	// found silent; silences counts how often it was (see silenced).
	heldMu   sync.Mutex
	held     map[*heldLock]struct{}
	silences atomic.Int64

	// reads are the read paths of the declared tables, by name, made at the first read
	// (readsOf): their statements' text is about 20 KB a warehouse, and only serve reads; a
	// worker holds a warehouse open for each of its accounts and never does.
	readsMu sync.Mutex
	reads   map[string]*tableReads

	// statsWarned: an erase has said once that it could not reclaim the planner statistics'
	// old rows (scrubStatistics).
	statsWarned atomic.Bool
	// erasureKey is the fingerprints' secret once ErasedEmail has read it (erased.go).
	erasureKey atomic.Pointer[[]byte]
	// migratedOnOpen are the migrations opening a SQLite file applied (it is migrated on open),
	// for Migrate to report.
	migratedOnOpen []int
}

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ErrBadURL is wrapped by Open's errors for a warehouse URL it cannot use.
var ErrBadURL = errors.New("bad warehouse URL")

func init() {
	// sqlx knows "sqlite3"; the pure-Go driver registers as "sqlite".
	sqlx.BindDriver("sqlite", sqlx.QUESTION)
}

// Open opens the warehouse at rawURL: postgres://… or postgresql://… for Postgres; a file path,
// file:… or sqlite:… for SQLite. It refuses a schema that is behind (see schema.BehindError),
// except that an embedded SQLite file is migrated on open: it belongs to hrsync alone.
func Open(ctx context.Context, rawURL string, opts Options) (_ *Store, err error) {
	// The driver's errors may quote the URL: none carries its passwords.
	defer func() { err = scrubbed(err, rawURL) }()
	if opts.Schema == "" {
		opts.Schema = DefaultSchema
	}
	if opts.Account == "" {
		opts.Account = DefaultBudgetAccount
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StatementTimeout <= 0 {
		opts.StatementTimeout = DefaultStatementTimeout
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.ConnMaxIdleTime <= 0 {
		opts.ConnMaxIdleTime = DefaultConnMaxIdleTime
	}
	if opts.LockTTL <= 0 {
		opts.LockTTL = DefaultLockTTL
	}
	if _, err := Classify(rawURL); err != nil {
		return nil, err
	}
	s := &Store{opts: opts, log: opts.Logger}
	if err := backendOf(rawURL).open(ctx, s, rawURL); err != nil {
		return nil, err
	}
	if err := s.db.PingContext(ctx); err != nil {
		_ = s.db.Close()
		return nil, fmt.Errorf("open warehouse %s: %w", s.location, err)
	}
	if !opts.SkipSchemaCheck {
		if err := checkSchema(ctx, s.db.DB, s.d); err != nil {
			err = s.behindOnStandby(ctx, err)
			_ = s.db.Close()
			return nil, fmt.Errorf("open warehouse %s: %w", s.location, err)
		}
	}
	return s, nil
}

// readsOf is the read path of the declared table name; every table's are built at the first
// call (their statements are prepared at their first use).
func (s *Store) readsOf(name string) *tableReads {
	s.readsMu.Lock()
	defer s.readsMu.Unlock()
	if s.reads == nil {
		s.reads = make(map[string]*tableReads, len(tables))
		for _, t := range tables {
			s.reads[t.name] = newTableReads(s, t)
		}
	}
	return s.reads[name]
}

// SQLitePath is the file a SQLite warehouse URL names: a path, file:… or sqlite:…, without any
// query. It is the file Open opens. Anything Classify refuses, or a Postgres URL, is an error
// wrapping ErrBadURL.
func SQLitePath(rawURL string) (string, error) {
	d, err := Classify(rawURL)
	if err != nil {
		return "", err
	}
	if d != schema.SQLite {
		return "", fmt.Errorf("%w: a Postgres URL, not a SQLite file path", ErrBadURL)
	}
	return sqlitePath(rawURL)
}

// Migrate brings the warehouse schema up to date and returns the versions it applied.
func Migrate(ctx context.Context, rawURL string, opts Options) ([]int, error) {
	opts.SkipSchemaCheck = true
	s, err := Open(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	// A standby would fail at the first statement that writes ("cannot execute CREATE SCHEMA in
	// a read-only transaction"), or, at this build's version, do nothing and say all is well:
	// neither tells the operator that the primary is the one to migrate.
	if err := s.Writable(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w; the standby follows once it has replayed the migration", err)
	}
	if err := s.d.createSchema(ctx, s.db.DB, s.opts.Schema); err != nil {
		return nil, fmt.Errorf("migrate %s: create schema %s: %w", s.location, s.opts.Schema, err)
	}
	applied, err := migrate(ctx, s.db.DB, s.d)
	// A SQLite file was migrated when Open opened it: those versions were applied here too.
	applied = append(slices.Clip(s.migratedOnOpen), applied...)
	if err != nil {
		return applied, fmt.Errorf("migrate %s: %w", s.location, err)
	}
	// Runs a killed process left "running" are closed, when no sync is running (see
	// CloseAbandonedRuns).
	if _, err := s.CloseAbandonedRuns(ctx); err != nil {
		return applied, fmt.Errorf("migrate %s: %w", s.location, err)
	}
	return applied, nil
}

// behindOnStandby adds to a schema that is behind, on a read-only warehouse, where migrating
// happens: `hrsync migrate` on the standby itself cannot write.
func (s *Store) behindOnStandby(ctx context.Context, err error) error {
	var behind *schema.BehindError
	if !errors.As(err, &behind) {
		return err
	}
	var ro *ReadOnlyError
	if !errors.As(s.Writable(ctx), &ro) {
		return err
	}
	what := "a read-only replica (hot standby)"
	if !ro.Standby {
		what = "read-only (default_transaction_read_only)"
	}
	return fmt.Errorf("%w against the primary: this warehouse is %s, and follows once it has replayed the migration", err, what)
}

// Dialect says which database the warehouse is.
func (s *Store) Dialect() schema.Dialect { return s.d.name() }

// Location is where the warehouse is, without credentials.
func (s *Store) Location() string { return s.location }

// Query runs a read-only query of the caller's on the warehouse's own connections: on Postgres
// in the warehouse's schema, so that its tables are named unqualified, as on SQLite. For reports
// written the same for both databases (the demo's example queries); the caller closes the rows.
func (s *Store) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(ctx, query, args...)
}

func init() { storedb.Of = func(s any) *sqlx.DB { return s.(*Store).db } }

// Close closes the database.
func (s *Store) Close() error {
	s.readsMu.Lock()
	for _, r := range s.reads {
		r.close()
	}
	s.readsMu.Unlock()
	return s.db.Close()
}

// CloseIdle closes the Postgres connections the pool holds unused, now rather than after
// Options.ConnMaxIdleTime: for a worker that has just opened an account it will not use until
// its schedule comes (opening a thousand accounts one after another would otherwise hold a
// session for every one opened in the last few seconds). The pool opens new ones when next
// asked. SQLite's connections are files, not a server's sessions: kept.
func (s *Store) CloseIdle() {
	if s.pg == nil {
		return
	}
	n := s.opts.MaxOpenConns
	if n <= 0 {
		n = DefaultMaxOpenConns
	}
	s.db.SetMaxIdleConns(0) // closes every idle connection
	s.db.SetMaxIdleConns(n)
}

// ErrInterrupted is wrapped by the errors of the statements Interrupt ended.
var ErrInterrupted = errors.New("warehouse connection closed: hrsync is stopping")

// Interrupt ends every warehouse statement in flight at once, whatever the host does: a
// Postgres connection's socket is closed, and the server rolls its transaction back when it
// notices. It is for a process that must stop now; the Store stays usable (new statements open
// new connections). SQLite's statements end with their contexts instead; there it does nothing.
func (s *Store) Interrupt() {
	if s.pg != nil {
		s.pg.interrupt(ErrInterrupted)
	}
}

// Ready reports whether the warehouse answers and its schema is current.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("warehouse %s: %w", s.location, err)
	}
	if err := checkSchema(ctx, s.db.DB, s.d); err != nil {
		return s.behindOnStandby(ctx, err)
	}
	return nil
}

// Version identifies the warehouse's contents: triggers bump it with every change to a served
// table. One primary-key read; it is what a conditional GET costs.
func (s *Store) Version(ctx context.Context) (int64, error) {
	var v int64
	if err := s.db.QueryRowContext(ctx, `SELECT version FROM meta`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read version: %w", err)
	}
	return v, nil
}
