// Package sinktest is the Postgres test harness shared by the tests of
// several packages. Tests always talk to a real Postgres server.
//
// Use it like this:
//
//	func TestMain(m *testing.M) { sinktest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		url, schema := sinktest.Postgres(t)
//		// ... code under test creates schema in the database at url ...
//	}
//
// The server is found once per test process, in this order:
//
//  1. the postgres:// URL in $HRSYNC_TEST_DATABASE_URL, used as given (an
//     admin URL; sslmode=disable is added if it has no sslmode; there is no
//     fallback if it does not work);
//  2. a local server: postgres://postgres@127.0.0.1:5432, then the unix
//     socket in /var/run/postgresql, both as user postgres;
//  3. a throwaway cluster started from the installed initdb/pg_ctl (on
//     PATH or under /usr/lib/postgresql/*/bin), run as the postgres OS user
//     when the tests run as root. [Main] stops it and removes its files.
//
// When no server answers, scripts/test.sh starts one throwaway cluster for the whole run
// instead ([StartCluster], held by the command sink/sinktest/cmd/testpg) and hands its URL to
// every test process in $HRSYNC_TEST_DATABASE_URL.
//
// The database [Database] is created on that server if it does not exist.
// Every call to [Postgres] gets a fresh schema name; the schema is dropped
// when the test ends.
//
// It also holds the small helpers the tests of several packages share:
// [TwoStores], [ConfigFile], [Buffer] and, on unix, [WithUmask].
package sinktest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/internal/storedb"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// Database is the database every test schema lives in.
const Database = "hrsync_test"

// EnvURL names the environment variable that points the tests at a
// specific server. Its value is a libpq URL of a user allowed to create
// the database [Database] (unless it already exists).
const EnvURL = "HRSYNC_TEST_DATABASE_URL"

// Local servers tried, in order, when EnvURL is not set.
var localURLs = []string{
	"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
	"postgres://postgres@/postgres?host=/var/run/postgresql&sslmode=disable",
}

const (
	connectTimeout = "3" // seconds, for probes and admin work
	setupTimeout   = 60 * time.Second
	dropTimeout    = 30 * time.Second
)

// forceThrowaway skips the environment and the local servers and always
// starts a throwaway cluster. Tests of this package set it (from
// HRSYNC_TEST_THROWAWAY=1) before [Main] runs the tests.
var forceThrowaway bool

// mainRunning is set by Main; without it a throwaway cluster would never
// be stopped, so none is started.
var mainRunning atomic.Bool

// server is the result of discovery.
type server struct {
	source   string  // what was used, for messages: EnvURL, the URL, "throwaway cluster"
	adminURL string  // URL used to create the database
	url      string  // URL of Database, handed to tests
	db       *sql.DB // pool on url, used to drop schemas
}

var (
	once      sync.Once
	theServer *server
	theErr    error
)

// Main runs the tests of a package and stops any throwaway Postgres cluster
// this process started, then runs after (the package's own shared fixtures'
// cleanups), in order. Use it from TestMain:
//
//	func TestMain(m *testing.M) { sinktest.Main(m) }
func Main(m *testing.M, after ...func()) {
	code := run(m)
	for _, f := range after {
		f()
	}
	os.Exit(code)
}

// run is Main without the exit, so this package's own TestMain can look at
// the state after the tests.
func run(m *testing.M) int {
	mainRunning.Store(true)
	code := m.Run()
	if err := shutdown(); err != nil {
		fmt.Fprintf(os.Stderr, "sinktest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Postgres returns a libpq URL (postgres://...?sslmode=disable, database
// [Database]) and a fresh schema name unique to this test ("t_" and 16
// lower-case hex digits). The schema is not created; a cleanup registered
// on t drops it (CASCADE) if it exists. Postgres fails the test when no
// server can be had, saying what was tried.
func Postgres(t testing.TB) (url, schema string) {
	t.Helper()
	s, err := get()
	if err != nil {
		t.Fatalf("sinktest: %v", err)
	}
	schema = newSchemaName()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		if _, err := s.db.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+pq.QuoteIdentifier(schema)+" CASCADE"); err != nil {
			t.Errorf("sinktest: dropping schema %s on %s: %v", schema, s.source, err)
		}
	})
	return s.url, schema
}

func get() (*server, error) {
	if !mainRunning.Load() {
		// Main drops the databases the tests make (and the template) once they end; without it
		// they are left on the server, run after run.
		return nil, errors.New("the package's tests do not run through sinktest.Main (add func TestMain(m *testing.M) { sinktest.Main(m) }), so the databases they make would never be dropped")
	}
	once.Do(func() {
		theServer, theErr = setup()
	})
	return theServer, theErr
}

func setup() (*server, error) {
	opts := discoverOptions{envURL: os.Getenv(EnvURL), localURLs: localURLs, throwaway: true}
	if forceThrowaway {
		opts.envURL, opts.localURLs = "", nil
	}
	s, err := discover(opts)
	if err != nil {
		return nil, err
	}
	if err := ensureDatabase(s.adminURL, Database); err != nil {
		return nil, fmt.Errorf("using %s: %w", s.source, err)
	}
	s.url, err = withDatabase(s.adminURL, Database)
	if err != nil {
		return nil, err
	}
	s.db, err = sql.Open("postgres", withParam(s.url, "connect_timeout", connectTimeout))
	if err != nil {
		return nil, fmt.Errorf("using %s: %w", s.source, err)
	}
	s.db.SetMaxOpenConns(4)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := s.db.PingContext(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("using %s: connecting to database %s: %w", s.source, Database, err)
	}
	return s, nil
}

type discoverOptions struct {
	envURL    string   // tried alone when set
	localURLs []string // tried in order
	throwaway bool     // start a throwaway cluster as a last resort
}

// discover finds a server that answers, or says in one line all it tried.
func discover(opts discoverOptions) (*server, error) {
	if opts.envURL != "" {
		u := withParam(opts.envURL, "sslmode", "disable")
		err := checkURL(u)
		if err == nil {
			err = ping(u)
		}
		if err != nil {
			return nil, fmt.Errorf("no Postgres server: %s=%s: %v", EnvURL, redact(opts.envURL), oneLine(err))
		}
		return &server{source: EnvURL, adminURL: u}, nil
	}
	tried := []string{EnvURL + " not set"}
	for _, u := range opts.localURLs {
		err := ping(u)
		if err == nil {
			return &server{source: redact(u), adminURL: u}, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v", redact(u), oneLine(err)))
	}
	if opts.throwaway {
		u, err := startThrowaway()
		if err == nil {
			return &server{source: "throwaway cluster", adminURL: u}, nil
		}
		tried = append(tried, "throwaway cluster: "+oneLine(err))
	}
	return nil, errors.New("no Postgres server: " + strings.Join(tried, "; "))
}

// ping connects to u (adding a short connect timeout) and runs a query.
func ping(u string) error {
	db, err := sql.Open("postgres", withParam(u, "connect_timeout", connectTimeout))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var one int
	return db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// ensureDatabase creates database name on the server at adminURL unless it
// exists. Test processes of several packages race to do this; an advisory
// lock serialises them, and the errors a concurrent creator causes are
// tolerated anyway.
func ensureDatabase(adminURL, name string) error {
	db, err := sql.Open("postgres", withParam(adminURL, "connect_timeout", connectTimeout))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Advisory locks are per database; every process uses the same admin
	// URL, so they take the same lock. The session ends with conn.
	const lockKey = 0x6872_7379_6e63 // "hrsync"
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return fmt.Errorf("locking to create database %s: %w", name, err)
	}
	defer func() {
		// Closing conn ends the session (and the lock) anyway.
		_, _ = conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", lockKey)
	}()
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("looking for database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	// template0 never has sessions, so CREATE DATABASE cannot fail with
	// "source database is being accessed by other users".
	_, err = conn.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)+" TEMPLATE template0")
	if err != nil && pq.As(err, pqerror.DuplicateDatabase, pqerror.UniqueViolation) == nil {
		return fmt.Errorf("creating database %s: %w", name, err)
	}
	return nil
}

func newSchemaName() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand.Read does not fail on supported platforms
	}
	return "t_" + hex.EncodeToString(b[:])
}

// checkURL accepts postgres:// and postgresql:// URLs (the harness edits
// them; it does not handle key=value connection strings).
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a valid URL") // url's error would show the password
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return errors.New("not a postgres:// URL")
	}
	return nil
}

// withDatabase returns the URL u pointing at database name, as a
// postgres:// URL with sslmode=disable unless u says otherwise.
func withDatabase(u, name string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	p.Scheme = "postgres"
	p.Path = "/" + name
	p.RawPath = ""
	return withParam(p.String(), "sslmode", "disable"), nil
}

// withParam returns u with query parameter k=v unless u already has k.
func withParam(u, k, v string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	if p.Query().Has(k) {
		return u
	}
	// Append rather than re-encode, to keep the rest as given.
	if p.RawQuery != "" {
		p.RawQuery += "&"
	}
	p.RawQuery += url.QueryEscape(k) + "=" + url.QueryEscape(v)
	return p.String()
}

// redact hides the password of a URL, and all of anything else (a
// key=value connection string may hold a password too).
func redact(u string) string {
	if checkURL(u) != nil {
		return "(value not shown)"
	}
	p, _ := url.Parse(u)
	return p.Redacted()
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// DB is the store's own connections, for a test that looks at or alters its tables from
// outside (sink exports no handle).
func DB(s *sink.Store) *sqlx.DB { return storedb.Of(s) }
