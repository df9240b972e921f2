package sinktest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
)

// With HRSYNC_TEST_THROWAWAY=1 every test of this package runs against a
// throwaway cluster, even when a local server answers, and TestMain checks
// afterwards that the cluster was stopped and its files removed.
func TestMain(m *testing.M) {
	forceThrowaway = os.Getenv("HRSYNC_TEST_THROWAWAY") == "1"
	code := run(m)
	if code == 0 && cluster != nil {
		if err := checkStopped(cluster); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: after the tests: %v\n", err)
			code = 1
		} else {
			fmt.Fprintf(os.Stderr, "sinktest: throwaway cluster on port %d stopped and %s removed\n", cluster.port, cluster.dir)
		}
	}
	os.Exit(code)
}

func checkStopped(c *throwaway) error {
	if !c.stopped {
		return fmt.Errorf("throwaway cluster in %s not stopped", c.dir)
	}
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		return fmt.Errorf("throwaway cluster dir %s still there (%v)", c.dir, err)
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)), time.Second); err == nil {
		conn.Close()
		return fmt.Errorf("something still listens on port %d", c.port)
	}
	return nil
}

func open(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func schemaExists(t *testing.T, db *sql.DB, schema string) bool {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

var schemaRE = regexp.MustCompile(`^t_[0-9a-f]{16}$`)

func TestPostgresGivesDistinctSchemas(t *testing.T) {
	url1, schema1 := Postgres(t)
	url2, schema2 := Postgres(t)
	if schema1 == schema2 {
		t.Fatalf("two calls gave the same schema %q", schema1)
	}
	if url1 != url2 {
		t.Errorf("two calls gave different URLs %q and %q", url1, url2)
	}
	for _, s := range []string{schema1, schema2} {
		if !schemaRE.MatchString(s) {
			t.Errorf("schema %q does not match %v", s, schemaRE)
		}
	}
	if !strings.HasPrefix(url1, "postgres://") || !strings.Contains(url1, "sslmode=disable") {
		t.Errorf("URL %q is not of the form postgres://...?sslmode=disable", url1)
	}
	db := open(t, url1)
	var dbName string
	if err := db.QueryRow("SELECT current_database()").Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	if dbName != Database {
		t.Errorf("connected to database %q, want %q", dbName, Database)
	}
	if schemaExists(t, db, schema1) {
		t.Errorf("schema %s exists before the code under test created it", schema1)
	}
	t.Logf("server: %s; url: %s", theServer.source, url1)
}

func TestSchemaDroppedAtCleanup(t *testing.T) {
	var url, schema string
	t.Run("user", func(t *testing.T) {
		url, schema = Postgres(t)
		db := open(t, url)
		q := pq.QuoteIdentifier(schema)
		for _, stmt := range []string{
			"CREATE SCHEMA " + q,
			"CREATE TABLE " + q + ".rows (id int PRIMARY KEY, name text)",
			"INSERT INTO " + q + ".rows VALUES (1, 'one')",
			"CREATE VIEW " + q + ".v AS SELECT name FROM " + q + ".rows",
		} {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		if !schemaExists(t, db, schema) {
			t.Fatalf("schema %s not created", schema)
		}
	})
	if t.Failed() {
		return
	}
	if schemaExists(t, open(t, url), schema) {
		t.Errorf("schema %s still exists after the test that got it ended", schema)
	}
}

// The migrated databases of tests that ended are dropped by the dropper, many at once, while a
// connection to each is still open (the test's pool, left to the drop's FORCE).
func TestMigratedDatabasesDroppedAfterTheTests(t *testing.T) {
	var (
		mu    sync.Mutex
		names []string
	)
	t.Run("group", func(t *testing.T) {
		for i := range 6 {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				u, schema := MigratedPostgres(t)
				db, err := sql.Open("postgres", u)
				if err != nil {
					t.Fatal(err)
				}
				// Not closed: the drop closes the sessions a test leaves.
				var n int
				if err := db.QueryRow("SELECT count(*) FROM " + pq.QuoteIdentifier(schema) + ".schema_migrations").Scan(&n); err != nil {
					t.Fatalf("the copy is not migrated: %v", err)
				}
				p, err := neturl.Parse(u)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				names = append(names, strings.TrimPrefix(p.Path, "/"))
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	drops.mu.Lock()
	d := drops.d
	drops.mu.Unlock()
	if d == nil {
		t.Fatal("no dropper started: the databases were not queued")
	}
	if err := d.flush(); err != nil {
		t.Fatal(err)
	}
	admin := open(t, withParam(theServer.adminURL, "connect_timeout", connectTimeout))
	var left int
	if err := admin.QueryRow("SELECT count(*) FROM pg_database WHERE datname = ANY($1)", pq.Array(names)).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if len(names) != 6 || left != 0 {
		t.Errorf("%d of the %d databases %v still there after the dropper's flush", left, len(names), names)
	}
}

func TestParallelUse(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	for i := range 8 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			url, schema := Postgres(t)
			mu.Lock()
			dup := seen[schema]
			seen[schema] = true
			mu.Unlock()
			if dup {
				t.Errorf("schema %s handed out twice", schema)
			}
			db := open(t, url)
			q := pq.QuoteIdentifier(schema)
			if _, err := db.Exec("CREATE SCHEMA " + q); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("CREATE TABLE " + q + ".t (x int)"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Test processes of several packages create the database at the same time.
// Seen from the server, goroutines on their own connections race the same
// way; a scratch database keeps this away from Database.
func TestEnsureDatabaseConcurrently(t *testing.T) {
	Postgres(t) // discovery
	name := "hrsync_sinktest_" + newSchemaName()[2:]
	admin := open(t, withParam(theServer.adminURL, "connect_timeout", connectTimeout))
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + pq.QuoteIdentifier(name)); err != nil {
			t.Errorf("dropping scratch database: %v", err)
		}
	})
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() { errs[i] = ensureDatabase(theServer.adminURL, name) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("ensureDatabase #%d: %v", i, err)
		}
	}
	var n int
	if err := admin.QueryRow("SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d databases named %s", n, name)
	}
}

func TestDiscoverUsesEnvURL(t *testing.T) {
	Postgres(t) // discovery
	s, err := discover(discoverOptions{envURL: theServer.adminURL, localURLs: []string{"postgres://x@127.0.0.1:1/x"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.source != EnvURL || s.adminURL != withParam(theServer.adminURL, "sslmode", "disable") {
		t.Errorf("got source %q, URL %q; want %s as given", s.source, s.adminURL, EnvURL)
	}
}

func TestDiscoverSaysWhatWasTried(t *testing.T) {
	port, err := freePort() // nothing listens there (very likely)
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("postgres://postgres:s3cret@127.0.0.1:%d/postgres?sslmode=disable", port)

	_, err = discover(discoverOptions{envURL: dead, localURLs: localURLs, throwaway: true})
	checkMessage(t, err, EnvURL+"=", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil && strings.Contains(err.Error(), "throwaway") {
		t.Errorf("a broken %s must not fall back to anything else: %v", EnvURL, err)
	}

	_, err = discover(discoverOptions{envURL: "host=localhost dbname=x"})
	checkMessage(t, err, EnvURL+"=", "not a postgres:// URL")

	t.Setenv("PATH", t.TempDir())
	saved := pgLibDir
	pgLibDir = t.TempDir()
	defer func() { pgLibDir = saved }()
	_, err = discover(discoverOptions{localURLs: []string{dead}, throwaway: true})
	checkMessage(t, err, EnvURL+" not set", "127.0.0.1:"+strconv.Itoa(port), "throwaway cluster: initdb and pg_ctl not found")
}

// checkMessage checks that err is one line, does not show the password and
// mentions every want.
func checkMessage(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("discover succeeded")
	}
	msg := err.Error()
	t.Logf("message: %s", msg)
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line")
	}
	if strings.Contains(msg, "s3cret") {
		t.Errorf("message shows the password")
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message does not mention %q", w)
		}
	}
}

func TestFindBinariesPicksHighestVersion(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := pgLibDir
	pgLibDir = t.TempDir()
	defer func() { pgLibDir = saved }()
	for _, v := range []string{"9.6", "16", "10", "17"} {
		bin := filepath.Join(pgLibDir, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"initdb", "pg_ctl"} {
			if v == "17" && name == "pg_ctl" {
				continue // incomplete installation: skipped
			}
			if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	initdb, pgCtl, err := findBinaries()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(pgLibDir, "16", "bin", "initdb"); initdb != want {
		t.Errorf("initdb = %s, want %s", initdb, want)
	}
	if want := filepath.Join(pgLibDir, "16", "bin", "pg_ctl"); pgCtl != want {
		t.Errorf("pg_ctl = %s, want %s", pgCtl, want)
	}
}

// TestThrowawayCluster checks the throwaway-cluster path when it is used
// (force it with HRSYNC_TEST_THROWAWAY=1); TestMain then also checks that
// the cluster was stopped and removed.
func TestThrowawayCluster(t *testing.T) {
	if s, err := get(); !forceThrowaway && (err != nil || s.source != "throwaway cluster") {
		t.Skip("set HRSYNC_TEST_THROWAWAY=1 to test the throwaway cluster")
	}
	url, schema := Postgres(t)
	if theServer.source != "throwaway cluster" || cluster == nil {
		t.Fatalf("server is %s, not a throwaway cluster", theServer.source)
	}
	if cluster.port == 5432 {
		t.Errorf("throwaway cluster on the default port")
	}
	if err := ping(localURLs[0]); err == nil {
		t.Logf("a local server answers at %s; the throwaway cluster was used anyway", redact(localURLs[0]))
	}
	db := open(t, url)
	for setting, want := range map[string]string{
		"data_directory":          cluster.data,
		"fsync":                   "off",
		"listen_addresses":        "127.0.0.1",
		"port":                    strconv.Itoa(cluster.port),
		"unix_socket_directories": cluster.dir,
	} {
		var got string
		if err := db.QueryRow("SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
	if _, err := db.Exec("CREATE SCHEMA " + pq.QuoteIdentifier(schema)); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		fi, err := os.Stat(cluster.data)
		if err != nil {
			t.Fatal(err)
		}
		u, err := lookupUser("postgres")
		if err != nil {
			t.Fatal(err)
		}
		if uid, ok := fileOwner(fi); !ok || uid != u.uid {
			t.Errorf("data dir %s not owned by the postgres OS user", cluster.data)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var dbName string
	if err := db.QueryRowContext(ctx, "SELECT current_database()").Scan(&dbName); err != nil || dbName != Database {
		t.Errorf("current_database() = %q, %v; want %q", dbName, err, Database)
	}
}

// The unix-socket candidate is only reached when 127.0.0.1:5432 does not
// answer; check it works by putting a dead TCP URL first.
func TestDiscoverFallsBackToUnixSocket(t *testing.T) {
	unix := localURLs[1]
	if _, err := os.Stat("/var/run/postgresql/.s.PGSQL.5432"); err != nil {
		t.Skipf("no server socket in /var/run/postgresql: %v", err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	s, err := discover(discoverOptions{localURLs: []string{dead, unix}})
	if err != nil {
		t.Skipf("the socket does not let user postgres in: %v", err)
	}
	if s.adminURL != unix {
		t.Fatalf("discover chose %s, want %s", s.adminURL, unix)
	}
	if err := ensureDatabase(s.adminURL, Database); err != nil {
		t.Fatal(err)
	}
	u, err := withDatabase(s.adminURL, Database)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("unix socket URL: %s", u)
	var dbName, addr string
	if err := open(t, u).QueryRow("SELECT current_database(), coalesce(inet_server_addr()::text, 'unix')").Scan(&dbName, &addr); err != nil {
		t.Fatal(err)
	}
	if dbName != Database || addr != "unix" {
		t.Errorf("connected to %s over %s, want %s over the unix socket", dbName, addr, Database)
	}
}

func TestThrowawayNeedsMain(t *testing.T) {
	mainRunning.Store(false)
	defer mainRunning.Store(true)
	_, err := discover(discoverOptions{throwaway: true})
	checkMessage(t, err, "throwaway cluster: not started", "sinktest.Main")
}

// A dropper that cannot make its pool says so; it does not start on a nil pool and panic in
// the background.
func TestDropperRefusesABadURL(t *testing.T) {
	t.Parallel()
	d, err := newDropper(&server{url: "postgres://u@host/db?sslmode=sometimes", source: "a test URL"})
	if err == nil {
		d.db.Close()
		t.Fatal("newDropper accepted sslmode=sometimes")
	}
	if !strings.Contains(err.Error(), "the dropper's pool on a test URL") {
		t.Errorf("error %q does not say whose pool", err)
	}
}
