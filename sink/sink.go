// Package sink is the warehouse: Postgres or an embedded SQLite file, opened by URL. All SQL
// lives here.
package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	stdsync "sync"
	"time"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // SQLite driver, pure Go

	"github.com/hrsync/hrsync/schema"
)

// Options configures a Store.
type Options struct {
	// Schema is the Postgres schema the warehouse lives in (default "hr"); ignored for SQLite.
	Schema string
	// AccountID is given to employees created locally; 0 takes the account of the records
	// already there (1 in an empty warehouse).
	AccountID int64
	// SkipSchemaCheck opens a warehouse whose schema is behind (for migrate).
	SkipSchemaCheck bool
	// MaxOpenConns bounds the pool (default 16 for Postgres).
	MaxOpenConns int
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
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Store is an open warehouse. It is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	dialect schema.Dialect
	opts    Options
	log     *slog.Logger
	// where the warehouse is, without credentials, for messages
	location string
	// pg opens the Postgres connections (nil for SQLite)
	pg *pgConnector

	q     queries
	stmts statements
	ids   idCache
	// loadMu makes one goroutine reload the id cache after a write while the others wait and
	// reuse what it read.
	loadMu stdsync.Mutex
}

// statements are the serve path's queries, prepared once: Postgres then plans them once per
// connection instead of on every request (planning cost more than running a page).
type statements struct {
	employeePage, employeeByID, totals *sqlx.Stmt
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
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	if opts.Schema == "" {
		opts.Schema = "hr"
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
	s := &Store{opts: opts, log: opts.Logger}
	var err error
	switch {
	case IsPostgresURL(rawURL):
		err = s.openPostgres(rawURL)
	case rawURL == "":
		return nil, fmt.Errorf("%w: empty", ErrBadURL)
	default:
		err = s.openSQLite(ctx, rawURL)
	}
	if err != nil {
		return nil, err
	}
	if err := s.db.PingContext(ctx); err != nil {
		_ = s.db.Close()
		return nil, fmt.Errorf("open warehouse %s: %w", s.location, err)
	}
	if s.dialect == schema.SQLite {
		if _, err := schema.Migrate(ctx, s.db.DB, s.dialect); err != nil {
			_ = s.db.Close()
			return nil, fmt.Errorf("open warehouse %s: %w", s.location, err)
		}
	}
	if !opts.SkipSchemaCheck {
		if err := schema.Check(ctx, s.db.DB, s.dialect); err != nil {
			_ = s.db.Close()
			return nil, fmt.Errorf("open warehouse %s: %w", s.location, err)
		}
	}
	s.q = buildQueries(s.dialect)
	if opts.SkipSchemaCheck {
		return s, nil // for migrate: the tables may not exist yet
	}
	if err := s.prepare(ctx); err != nil {
		_ = s.db.Close()
		return nil, fmt.Errorf("open warehouse %s: %w", s.location, err)
	}
	return s, nil
}

func (s *Store) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt **sqlx.Stmt
		q    string
	}{{&s.stmts.employeePage, s.q.employeePage}, {&s.stmts.employeeByID, s.q.employeeByID}, {&s.stmts.totals, s.q.totals}} {
		st, err := s.db.PreparexContext(ctx, p.q)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		*p.stmt = st
	}
	return nil
}

func (s *Store) openPostgres(rawURL string) error {
	if !schemaName.MatchString(s.opts.Schema) {
		return fmt.Errorf("%w: schema %q: want lower-case letters, digits and _", ErrBadURL, s.opts.Schema)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%w: not a URL", ErrBadURL)
	}
	s.location = "postgres://" + u.Host + u.Path
	q := u.Query()
	// Every statement names tables unqualified; the connection's search_path puts them in the
	// warehouse schema (and nothing else, so a same-named table elsewhere is never touched).
	q.Set("search_path", s.opts.Schema)
	if q.Get("sslmode") == "" && (u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1" || u.Hostname() == "") {
		q.Set("sslmode", "disable")
	}
	// The server bounds every statement, and a transaction left idle by a client that vanished
	// (it would hold its locks until the server's TCP keepalive noticed, hours later). Startup
	// parameters win over a role's or a database's settings.
	ms := strconv.FormatInt(max(s.opts.StatementTimeout.Milliseconds(), 1), 10)
	q.Set("statement_timeout", ms)
	q.Set("idle_in_transaction_session_timeout", ms)
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", strconv.FormatInt(int64(max(s.opts.ConnectTimeout.Round(time.Second), time.Second)/time.Second), 10))
	}
	u.RawQuery = q.Encode()
	connector, err := newPGConnector(u.String(), s.opts.StatementTimeout)
	if err != nil {
		return fmt.Errorf("open warehouse %s: %w: %s", s.location, ErrBadURL, redactPassword(err.Error(), u))
	}
	db := sqlx.NewDb(sql.OpenDB(connector), "postgres")
	s.pg = connector
	n := s.opts.MaxOpenConns
	if n <= 0 {
		n = 16
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s.db, s.dialect = db, schema.Postgres
	return nil
}

// redactPassword drops u's password from msg.
func redactPassword(msg string, u *url.URL) string {
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
		msg = strings.ReplaceAll(msg, url.QueryEscape(p), "xxxxx")
	}
	return msg
}

// IsPostgresURL reports whether rawURL names a Postgres warehouse; anything else is a SQLite file.
func IsPostgresURL(rawURL string) bool {
	return strings.HasPrefix(rawURL, "postgres://") || strings.HasPrefix(rawURL, "postgresql://")
}

// sqlitePath is the file a SQLite warehouse URL names: a path, file:… or sqlite:…, without any
// query.
func sqlitePath(rawURL string) (string, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite://"), "sqlite:")
	path = strings.TrimPrefix(path, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == "" || strings.Contains(path, "://") {
		return "", fmt.Errorf("%w: want postgres://… or a SQLite file path", ErrBadURL)
	}
	return path, nil
}

func (s *Store) openSQLite(ctx context.Context, rawURL string) error {
	path, err := sqlitePath(rawURL)
	if err != nil {
		return err
	}
	s.location = path
	busy := s.opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	// IMMEDIATE transactions take the write lock up front, so two writers queue on busy_timeout
	// instead of failing mid-transaction; one that still cannot have it fails with ErrBusy.
	// Read-only transactions begin DEFERRED and take no write lock.
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	db, err := sqlx.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("open warehouse %s: %w", s.location, err)
	}
	n := s.opts.MaxOpenConns
	if n <= 0 {
		n = 8
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	// WAL lets readers (serve) run beside the writer and never wait for it. The mode is stored in
	// the file, so it is set once, by the first open; later opens only read it (switching needs
	// the file to itself, which an open beside a running sync must not wait for).
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		_ = db.Close()
		return fmt.Errorf("open warehouse %s: journal mode: %w", s.location, busyErr(err))
	}
	if !strings.EqualFold(mode, "wal") {
		if err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
			_ = db.Close()
			return fmt.Errorf("open warehouse %s: set WAL journal mode: %w", s.location, busyErr(err))
		}
	}
	s.db, s.dialect = db, schema.SQLite
	return nil
}

// Migrate brings the warehouse schema up to date and returns the versions it applied.
func Migrate(ctx context.Context, rawURL string, opts Options) ([]int, error) {
	opts.SkipSchemaCheck = true
	s, err := Open(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if s.dialect == schema.Postgres {
		if _, err := s.db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+s.opts.Schema); err != nil {
			return nil, fmt.Errorf("migrate %s: create schema %s: %w", s.location, s.opts.Schema, err)
		}
	}
	applied, err := schema.Migrate(ctx, s.db.DB, s.dialect)
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

// Dialect says which database the warehouse is.
func (s *Store) Dialect() schema.Dialect { return s.dialect }

// Location is where the warehouse is, without credentials.
func (s *Store) Location() string { return s.location }

// DB exposes the handle for tests and tools in this module.
func (s *Store) DB() *sqlx.DB { return s.db }

// Close closes the database.
func (s *Store) Close() error {
	for _, st := range []*sqlx.Stmt{s.stmts.employeePage, s.stmts.employeeByID, s.stmts.totals} {
		if st != nil {
			_ = st.Close()
		}
	}
	return s.db.Close()
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
	return schema.Check(ctx, s.db.DB, s.dialect)
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

// idCache holds the ids of the served employees in order, for one version of the warehouse.
// Page N of any size is then a primary-key range (ids[off] … ids[off+size-1]): page 1,000 costs
// what page 1 costs, where OFFSET would walk 99,900 index entries first.
type idCache struct {
	mu      stdsync.Mutex
	version int64
	ids     []int64
	loaded  bool
}

func (c *idCache) get() (ids []int64, version int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ids, c.version, c.loaded
}

func (c *idCache) set(ids []int64, version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded || version >= c.version {
		c.ids, c.version, c.loaded = ids, version, true
	}
}
