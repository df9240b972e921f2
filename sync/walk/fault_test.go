package walk_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/walk"
)

// proxiedWarehouse is a migrated Postgres warehouse reached through a fault-injection proxy
// (store), and the same warehouse reached directly (direct), to look at it whatever the proxy
// does.
func proxiedWarehouse(t *testing.T, opts sink.Options) (proxy *sinktest.Proxy, store, direct *sink.Store) {
	t.Helper()
	ctx := context.Background()
	pgURL, schema := sinktest.Postgres(t)
	opts.Schema = schema
	if _, err := sink.Migrate(ctx, pgURL, sink.Options{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	proxy, proxied := sinktest.ProxyURL(t, pgURL)
	var err error
	if store, err = sink.Open(ctx, proxied, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if direct, err = sink.Open(ctx, pgURL, sink.Options{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = direct.Close() })
	t.Cleanup(proxy.Close) // first: whatever still waits on it ends
	return proxy, store, direct
}

// runWithin runs a sync and fails the test when it has not returned within limit.
func runWithin(t *testing.T, ctx context.Context, limit time.Duration, syncer *walk.Syncer) ([]walk.Result, error) {
	t.Helper()
	type out struct {
		rs  []walk.Result
		err error
	}
	limit = slowness.Bound(limit) // a bound on a hang, written for the reference machine
	done := make(chan out, 1)
	go func() {
		rs, err := syncer.Run(ctx, seeds)
		done <- out{rs, err}
	}()
	select {
	case o := <-done:
		return o.rs, o.err
	case <-time.After(limit):
		t.Fatalf("the sync was still waiting on the warehouse after %s", limit)
		return nil, nil
	}
}

func countEmployees(t *testing.T, s *sink.Store) int {
	t.Helper()
	var n int
	if err := sinktest.DB(s).QueryRowContext(context.Background(), `SELECT count(*) FROM employees`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The warehouse host goes silent mid-merge (connections open, no byte back): the sync ends with
// an error naming the timeout, nothing of the merge is committed, and once the host is back the
// next sync goes ahead.
func TestSyncThroughASilentWarehouse(t *testing.T) {
	t.Parallel()
	proxy, store, direct := proxiedWarehouse(t, sink.Options{StatementTimeout: 2 * time.Second, ConnectTimeout: 2 * time.Second})
	const n = 250
	up := newUpstream(t, n, fakeupstream.Options{})
	c := fastClient(t, up, client.Options{})

	proxy.SilenceOn("UPDATE employees SET")
	rs, err := runWithin(t, context.Background(), 3*time.Minute, walk.New(c, store, walk.Options{}))
	if !errors.Is(err, sink.ErrNoAnswer) || !strings.Contains(err.Error(), "statement_timeout 2s") {
		t.Fatalf("err = %v, want the warehouse's silence named, with the statement timeout", err)
	}
	select {
	case <-proxy.Silenced():
	default:
		t.Fatal("the proxy never went silent: the merge did not run through it")
	}
	if r := result(t, rs, sink.Employees); r.Status != sink.RunFailed || !errors.Is(r.Err, sink.ErrNoAnswer) {
		t.Fatalf("employees: status %s, err %v; want failed with the silence", r.Status, r.Err)
	}
	proxy.Resume()
	if got := countEmployees(t, direct); got != 0 {
		t.Fatalf("%d employees committed by the merge that never finished, want 0", got)
	}
	runs, err := direct.Runs(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Resource == sink.Employees && r.Status == sink.RunOK {
			t.Fatalf("the ledger says the interrupted employees run was ok: %+v", r)
		}
	}

	rs, err = runWithin(t, context.Background(), 3*time.Minute, walk.New(c, store, walk.Options{}))
	if err != nil {
		t.Fatalf("the sync after the warehouse came back: %v", err)
	}
	if r := result(t, rs, sink.Employees); r.Status != sink.RunOK || r.Inserted != n {
		t.Fatalf("employees after the warehouse came back: %+v", r.Run)
	}
	if got := countEmployees(t, direct); got < n {
		t.Fatalf("%d employees after the sync, want at least %d", got, n)
	}
}

// Asked to stop while the warehouse is silent (with the default, long statement timeout), a
// sync returns at once: it does not wait for the host or for the timeout.
func TestSyncStopsWhileTheWarehouseIsSilent(t *testing.T) {
	t.Parallel()
	proxy, store, _ := proxiedWarehouse(t, sink.Options{})
	up := newUpstream(t, 250, fakeupstream.Options{})
	c := fastClient(t, up, client.Options{})
	proxy.SilenceOn("UPDATE employees SET")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	canceled := make(chan time.Time, 1)
	go func() {
		<-proxy.Silenced()
		canceled <- time.Now()
		cancel() // SIGTERM
	}()
	// Reaching the merge is the sync's usual work, which a loaded machine makes slow (once over
	// 30 s): the bound on the whole run is one on a hang. What the test is about is from the
	// cancellation on: well inside the 5-minute statement timeout it must not wait for.
	_, err := runWithin(t, ctx, 3*time.Minute, walk.New(c, store, walk.Options{}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the cancellation", err)
	}
	if waited := time.Since(<-canceled); waited > time.Minute {
		t.Errorf("the sync returned %s after it was asked to stop, want at once", waited.Round(time.Millisecond))
	}
	proxy.Resume()
}

// dedicatedDatabase creates a database of its own for a test (dropped at the end), on the test
// server, and returns its URL: what sessions there do is this test's alone.
func dedicatedDatabase(t *testing.T) string {
	t.Helper()
	base, _ := sinktest.Postgres(t)
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "hrsync_t_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// pageOf is the page a list request asks for, 0 for other requests.
func pageOf(r *http.Request, collection string) int {
	if !strings.HasSuffix(r.URL.Path, "/"+collection) {
		return 0
	}
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return n
}

// holdFrom makes every request for a page of employees from `from` on wait until its client
// gives up (or 30 s): fetches are in flight when the staging fails.
func holdFrom(r *http.Request, from int) {
	if p := pageOf(r, "employees"); p >= from {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}
}

// A staging write the server stops at its statement timeout is reported as that, not as the
// "context canceled" of the page fetches its failure stopped. Several runs: the cancellations
// race the cause.
func TestStagingStatementTimeoutIsTheCause(t *testing.T) {
	t.Parallel()
	dbURL := dedicatedDatabase(t)
	ctx := context.Background()
	if _, err := sink.Migrate(ctx, dbURL, sink.Options{}); err != nil {
		t.Fatal(err)
	}
	store, err := sink.Open(ctx, dbURL, sink.Options{StatementTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	locker, err := sql.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()

	up := newUpstream(t, 2000, fakeupstream.Options{})
	c := fastClient(t, up, client.Options{})
	for i := range 5 {
		var mu sync.Mutex
		var lockTx *sql.Tx
		up.setHook(func(_ *fakeupstream.Service, _ int, r *http.Request) {
			if pageOf(r, "employees") == 3 {
				// Another session takes the staging table: the next page's COPY waits for it
				// until the server's statement timeout stops it. (This database is the test's
				// own: its staging tables are the sync's; the newest is this walk's, an older one
				// is left on another connection by a run whose cleanup met the lock.)
				mu.Lock()
				defer mu.Unlock()
				tx, err := locker.BeginTx(context.Background(), nil)
				if err != nil {
					t.Error(err)
					return
				}
				lockTx = tx
				var table string
				if err := tx.QueryRow(`SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'stage_employees' AND c.relpersistence = 't'
ORDER BY c.oid DESC LIMIT 1`).Scan(&table); err != nil {
					t.Errorf("find the staging table: %v", err)
					return
				}
				if _, err := tx.Exec(`LOCK TABLE ` + table + ` IN ACCESS EXCLUSIVE MODE`); err != nil {
					t.Errorf("lock the staging table: %v", err)
				}
				return
			}
			holdFrom(r, 10)
		})
		rs, err := runWithin(t, ctx, 3*time.Minute, walk.New(c, store, walk.Options{Concurrency: 4}))
		mu.Lock()
		if lockTx != nil {
			_ = lockTx.Rollback()
		}
		mu.Unlock()
		r := result(t, rs, sink.Employees)
		var pqErr *pq.Error
		if !errors.As(r.Err, &pqErr) || pqErr.Code != "57014" || errors.Is(err, context.Canceled) ||
			strings.Contains(r.Error, "context canceled") || !strings.Contains(r.Error, "statement timeout") {
			t.Fatalf("run %d: reported %q (ledger %q), want the statement timeout as the cause", i+1, r.Err, r.Error)
		}
	}
}

// A staging write that fails on SQLite (the file-size limit reached: a full disk) is reported
// as itself, not as the cancellations it caused. Not parallel: the limit is the process's, and
// the other tests' SQLite writes meeting it failed with "disk I/O error".
func TestStagingDiskFullIsTheCause(t *testing.T) {
	up := newUpstream(t, 3000, fakeupstream.Options{})
	c := fastClient(t, up, client.Options{})
	up.setHook(func(_ *fakeupstream.Service, _ int, r *http.Request) { holdFrom(r, 25) })
	for i := range 5 {
		path := filepath.Join(t.TempDir(), "hrsync.db")
		store, err := sink.Open(context.Background(), path, sink.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// ulimit -f: writes 256 KiB past the biggest file the migrated warehouse has (the
		// database or its WAL) fail with EFBIG (Go ignores SIGXFSZ). The staged pages pass it
		// well before page 25. The limit is the process's: this test is not parallel.
		var biggest int64
		for _, f := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(f); err == nil {
				biggest = max(biggest, fi.Size())
			}
		}
		var old syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Fatal(err)
		}
		limit := old
		limit.Cur = uint64(biggest) + 256<<10
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			t.Fatal(err)
		}
		rs, err := runWithin(t, context.Background(), 3*time.Minute, walk.New(c, store, walk.Options{Concurrency: 4}))
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Fatal(err)
		}
		_ = store.Close()
		r := result(t, rs, sink.Employees)
		if r.Err == nil || errors.Is(err, context.Canceled) || strings.Contains(r.Error, "context canceled") ||
			!strings.Contains(r.Error, "stage employees") {
			t.Fatalf("run %d: reported %v (ledger %q), want the failed staging write as the cause", i+1, r.Err, r.Error)
		}
	}
}
