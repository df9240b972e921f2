package sink_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// A sync whose lock is taken from it mid-load (Postgres: its lease expires, because its process
// stalled past the TTL, or as the database finds it expired; SQLite: someone removes the lock
// file) must not commit: another process takes the lock and merges, and the first one's merge
// then fails with ErrLockLost, writing nothing; nor does its release free the new holder's lock.
func TestLostLockCannotCommit(t *testing.T) {
	tests := []struct {
		name, backend string
		opts          sink.Options
		lose          func(t *testing.T, held context.Context, url, schema string)
	}{
		{"postgres expired", "postgres", sink.Options{}, func(t *testing.T, _ context.Context, url, schema string) {
			if n := sinktest.ExpireLock(t, url, schema, sink.SyncLock); n != 1 {
				t.Fatalf("expired %d leases of the lock, want 1", n)
			}
		}},
		{"postgres stalled", "postgres", sink.Options{LockTTL: time.Second}, func(t *testing.T, held context.Context, _, _ string) {
			// The holder stops renewing, as a paused process does; a renewal that comes late
			// finds the lease expired. The TTL passes.
			sink.StopRenewing(held)
			time.Sleep(1500 * time.Millisecond)
		}},
		{"sqlite", "sqlite", sink.Options{}, func(t *testing.T, _ context.Context, url, _ string) {
			if err := os.Remove(url + "." + sink.SyncLock + ".lock"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			a, b, url, schema := sinktest.TwoStores(t, tt.backend, tt.opts)
			first, second := people(30), people(20)
			for i := range second {
				second[i].JobTitle = "Second sync"
			}

			heldA, releaseA, ok, err := a.TryLock(ctx, sink.SyncLock)
			if err != nil || !ok {
				t.Fatalf("first lock: %v %v", ok, err)
			}
			defer releaseA()
			la, err := a.BeginLoad(heldA, sink.Employees)
			if err != nil {
				t.Fatal(err)
			}
			defer la.Close()
			if err := la.AddEmployees(heldA, first[:15]); err != nil {
				t.Fatal(err)
			}

			tt.lose(t, heldA, url, schema)

			// A second process takes the lock now and syncs.
			heldB, releaseB, ok, err := b.TryLock(ctx, sink.SyncLock)
			if err != nil || !ok {
				t.Fatalf("the lock was not free once lost: %v %v", ok, err)
			}
			runB, err := b.StartRun(heldB, "second", sink.Employees, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			lb, err := b.BeginLoad(heldB, sink.Employees)
			if err != nil {
				t.Fatal(err)
			}
			if err := lb.AddEmployees(heldB, second); err != nil {
				t.Fatal(err)
			}
			if _, err := lb.Merge(heldB, sink.MergeOptions{Complete: true}); err != nil {
				t.Fatalf("second sync: %v", err)
			}
			if err := lb.Close(); err != nil {
				t.Fatal(err)
			}

			// The first one carries on, and must not commit. Where it stalled, its work was
			// stopped before its lease ended (its context's cause: the lock lost), and staging
			// fails too.
			if err := la.AddEmployees(heldA, first[15:]); err != nil && !errors.Is(err, sink.ErrLockLost) {
				t.Fatal(err)
			}
			_, err = la.Merge(heldA, sink.MergeOptions{Complete: true})
			if !errors.Is(err, sink.ErrLockLost) || !strings.Contains(err.Error(), "lost the sync lock") {
				t.Fatalf("merge after the lock was lost: %v, want ErrLockLost", err)
			}
			// Nor may it begin another load, or take the second sync's run for an abandoned one.
			if _, err := a.BeginLoad(heldA, sink.WorkingPatterns); !errors.Is(err, sink.ErrLockLost) {
				t.Errorf("begin load after the lock was lost: %v, want ErrLockLost", err)
			}
			if _, err := a.StartRun(heldA, "first", sink.WorkingPatterns, time.Now()); !errors.Is(err, sink.ErrLockLost) {
				t.Errorf("start run after the lock was lost: %v, want ErrLockLost", err)
			}
			if runs, err := b.Runs(ctx, 10); err != nil || len(runs) != 1 || runs[0].ID != runB || runs[0].Status != sink.RunRunning {
				t.Errorf("ledger after the first sync lost its lock: %+v %v", runs, err)
			}
			// The first one gives back what it no longer holds: the second keeps the lock.
			releaseA()
			if _, rel, ok, err := a.TryLock(ctx, sink.SyncLock); ok || err != nil {
				t.Errorf("the lock was free after the holder that lost it released it: %v %v", ok, err)
				if ok {
					rel()
				}
			}
			releaseB()

			got := served(t, b)
			if len(got) != len(second) {
				t.Errorf("served %d employees, want the second sync's %d", len(got), len(second))
			}
			for _, e := range second {
				if want := string(e.AppendJSON(nil)); got[e.ID] != want {
					t.Errorf("employee %d\n served %s\n want   %s", e.ID, got[e.ID], want)
				}
			}
		})
	}
}

// A holder whose lease expired may be committing a merge it began while it held it: the lock
// is not taken over until that merge's transaction ends (it holds the lease's row), and the
// taker does not wait for it: it is told the lock is taken.
func TestLockWaitsForTheLastHoldersMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, url, schema := sinktest.TwoStores(t, "postgres", sink.Options{LockTTL: time.Second})
	heldA, releaseA, ok, err := a.TryLock(ctx, sink.SyncLock)
	if err != nil || !ok {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	defer releaseA()
	sink.StopRenewing(heldA)
	// The holder's merge proved the lease (locking its row) and runs on past the TTL.
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT token FROM `+schema+`.locks WHERE name = $1 FOR UPDATE`, sink.SyncLock); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	start := time.Now()
	if _, _, ok, err := b.TryLock(ctx, sink.SyncLock); ok || err != nil {
		t.Fatalf("took the lock while a merge under it was committing: %v %v", ok, err)
	}
	// TryLock does not wait for the row (NOWAIT): were it to, it would wait for good, the
	// merge's transaction being this test's. The bound is on latency, scaled to the machine.
	if d := time.Since(start); d > slowness.Bound(time.Second) {
		t.Errorf("TryLock waited %s for the merge", d)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	_, release, ok, err := b.TryLock(ctx, sink.SyncLock)
	if !ok || err != nil {
		t.Fatalf("lock once the merge ended: %v %v", ok, err)
	}
	release()
}

// CloseIdle closes the pool's unused Postgres connections at once, not after the idle time, and
// the store goes on working (SQLite keeps its files open).
func TestCloseIdle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, backend := range []string{"postgres", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			a, _, _, _ := sinktest.TwoStores(t, backend, sink.Options{ConnMaxIdleTime: time.Hour})
			for range 3 {
				if _, err := a.Version(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if n := sinktest.DB(a).Stats().OpenConnections; n == 0 {
				t.Fatal("no connection open after reading: nothing to close")
			}
			a.CloseIdle()
			n := sinktest.DB(a).Stats().OpenConnections
			if backend == "postgres" && n != 0 {
				t.Errorf("%d connections open after CloseIdle, want 0", n)
			}
			if backend == "sqlite" && n == 0 {
				t.Errorf("SQLite's connections closed by CloseIdle, want them kept")
			}
			if _, err := a.Version(ctx); err != nil {
				t.Fatalf("read after CloseIdle: %v", err)
			}
		})
	}
}

// A lease is renewed while it is held: another process never takes it, however many TTLs the
// work lasts, and the holder's merges commit; holding it keeps no connection open.
//
// Not parallel: it asserts that renewals come in time. Beside the package's other tests on a
// loaded machine, with a TTL of 4.5 s, a renewal once came more than 3 s late (most likely a
// commit waiting on the WAL's fsync while a checkpoint wrote; not confirmed).
func TestLeaseIsRenewedAndPinsNoSession(t *testing.T) {
	ctx := context.Background()
	// Renewed every TTL/3 = 2.5 s; the pool's cleaner looks every second (database/sql's
	// least), so it looks between two renewals at least every other time. With renewals at a
	// multiple of its second (a TTL of 1.5, 3 or 9 s), its looks could fall just after renewal
	// after renewal and never find the connection idle for long enough.
	opts := sink.Options{LockTTL: 7500 * time.Millisecond, ConnMaxIdleTime: 100 * time.Millisecond}
	a, b, _, _ := sinktest.TwoStores(t, "postgres", opts)
	held, release, ok, err := a.TryLock(ctx, sink.SyncLock)
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	defer release()
	open := 0
	work := 2*opts.LockTTL + time.Second // over two TTLs
	for deadline := time.Now().Add(work); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, rel, ok, err := b.TryLock(ctx, sink.SyncLock); ok || err != nil {
			if ok {
				rel()
			}
			t.Fatalf("another process took a lease its holder renews: %v %v", ok, err)
		}
		open = max(open, sinktest.DB(a).Stats().OpenConnections)
	}
	// Renewals use a connection for a moment every TTL/3; the pool closes it between them, so
	// none stays open. A bound, not a measure.
	var idle bool
	for deadline := time.Now().Add(30 * time.Second); !idle && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		idle = sinktest.DB(a).Stats().OpenConnections == 0
	}
	if !idle {
		t.Errorf("the holder kept %d connections open while it held the lock and did nothing", sinktest.DB(a).Stats().OpenConnections)
	}
	l, err := a.BeginLoad(held, sink.Employees)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AddEmployees(held, people(12)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Merge(held, sink.MergeOptions{Complete: true}); err != nil {
		t.Fatalf("merge after %s under a lease of %s: %v", work, opts.LockTTL, err)
	}
	t.Logf("most connections open while holding: %d", open)
}

// A Load begun under the lock, in the process that holds it, merges as any other.
func TestLoadUnderTheLock(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		held, release, ok, err := s.TryLock(ctx, sink.SyncLock)
		if err != nil || !ok {
			t.Fatalf("lock: %v %v", ok, err)
		}
		defer release()
		for range 2 {
			l, err := s.BeginLoad(held, sink.Employees)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.AddEmployees(held, people(10)); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Merge(held, sink.MergeOptions{Complete: true}); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if got := served(t, s); len(got) != 10 {
			t.Errorf("served %d, want 10", len(got))
		}
	})
}

// Runs a killed process left "running" are closed (abandoned, AbandonedError, finished when it
// was noticed) by the next run under the sync lock, and by migrate; a run whose process holds
// the lock, so may be running, is not.
func TestAbandonedRunsAreClosed(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			noticed := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
			opts := sink.Options{Now: func() time.Time { return noticed }}
			a, b, url, schema := sinktest.TwoStores(t, backend, opts)
			opts.Schema = schema
			started := noticed.Add(-time.Hour)
			status := func(id int64) sink.Run {
				t.Helper()
				runs, err := b.Runs(ctx, 100)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range runs {
					if r.ID == id {
						return r
					}
				}
				t.Fatalf("no run %d", id)
				return sink.Run{}
			}

			// A process started a run and was killed: its row says running, and no lock is held.
			dead, err := a.StartRun(ctx, "killed", sink.Employees, started)
			if err != nil {
				t.Fatal(err)
			}
			// The next sync takes the lock and starts its run.
			held, release, ok, err := b.TryLock(ctx, sink.SyncLock)
			if err != nil || !ok {
				t.Fatalf("lock: %v %v", ok, err)
			}
			live, err := b.StartRun(held, "next", sink.WorkingPatterns, noticed)
			if err != nil {
				t.Fatal(err)
			}
			if r := status(dead); r.Status != sink.RunAbandoned || r.Error != sink.AbandonedError || !r.FinishedAt.Equal(noticed) {
				t.Errorf("killed run after the next one started: %+v", r)
			}
			// The next run is live (its process holds the lock): another process's check and
			// migrate leave it alone.
			if n, err := a.CloseAbandonedRuns(ctx); n != 0 || err != nil {
				t.Errorf("closed %d runs while a sync holds the lock (%v)", n, err)
			}
			if _, err := sink.Migrate(ctx, url, opts); err != nil {
				t.Fatal(err)
			}
			if r := status(live); r.Status != sink.RunRunning || !r.FinishedAt.IsZero() {
				t.Errorf("a live run was closed: %+v", r)
			}
			// Its process dies (the lock goes with it): migrate closes its run.
			release()
			if _, err := sink.Migrate(ctx, url, opts); err != nil {
				t.Fatal(err)
			}
			if r := status(live); r.Status != sink.RunAbandoned || r.Error != sink.AbandonedError || !r.FinishedAt.Equal(noticed) {
				t.Errorf("run of a dead process after migrate: %+v", r)
			}
			// So does the worker's check at start.
			again, err := a.StartRun(ctx, "killed again", sink.Employees, started)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := a.CloseAbandonedRuns(ctx); n != 1 || err != nil {
				t.Errorf("CloseAbandonedRuns: %d %v, want 1", n, err)
			}
			if r := status(again); r.Status != sink.RunAbandoned || r.Error != sink.AbandonedError {
				t.Errorf("run after CloseAbandonedRuns: %+v", r)
			}
		})
	}
}

// A second process opens a SQLite warehouse while another holds its write lock (a sync
// merging): it opens at once and reads; a write it cannot make in time fails with ErrBusy.
func TestSQLiteSecondProcessWhileWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := t.TempDir() + "/w.db"
	writer, err := sink.Open(ctx, path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	sinktest.WalkEmployees(t, writer, people(5), 5, sink.MergeOptions{Complete: true})
	tx, err := sinktest.DB(writer).BeginTx(ctx, nil) // IMMEDIATE: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE employees SET job_title = 'Merging' WHERE id = 1`); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	reader, err := sink.Open(ctx, path, sink.Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("open beside a writer: %v", err)
	}
	defer reader.Close()
	if got := served(t, reader); len(got) != 5 || !strings.Contains(got[1], `"Engineer"`) {
		t.Errorf("read beside a writer: %d employees, employee 1: %s", len(got), got[1])
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("opening and reading beside a writer took %s", d)
	}
	_, err = reader.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Bo", LastName: "Ek", Email: "bo@example.com", JoinDate: "2025-01-31"})
	if !errors.Is(err, sink.ErrBusy) {
		t.Errorf("write beside a writer: %v, want ErrBusy", err)
	}

	// WAL is the file's own setting, so every later open (and any other tool) finds it.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode %q (%v), want wal", mode, err)
	}
}

// During a rolling upgrade a process of the version before the leases may still hold a lock as
// a session advisory lock: the lock is taken for a newer process, and a newer holder's merge
// fails while the older one holds it.
func TestLockHeldByAnOlderVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, held, release, db, schema := heldWithDB(t, sink.Options{})
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	key := `hashtextextended('hrsync:' || $1 || ':sync', 0)`
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(`+key+`)`, schema); err != nil {
		t.Fatal(err)
	}
	if err := mergeFive(t, a, held); !errors.Is(err, sink.ErrLockLost) {
		t.Errorf("merge while an older hrsync holds the lock: %v, want ErrLockLost", err)
	}
	release()
	if _, _, ok, err := b.TryLock(ctx, sink.SyncLock); ok || err != nil {
		t.Errorf("took the lock an older hrsync holds: %v %v", ok, err)
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock(`+key+`)`, schema); err != nil {
		t.Fatal(err)
	}
	_, rel, ok, err := b.TryLock(ctx, sink.SyncLock)
	if err != nil || !ok {
		t.Fatalf("lock once the older hrsync let go: %v %v", ok, err)
	}
	rel()
}

// A newer hrsync's attempt to take a lock (which its lease then refuses) at the moment of the
// holder's merge does not fail that merge: what they take of the older version's advisory lock
// (see TestLockHeldByAnOlderVersion) they take shared. Two workers with --now over many accounts
// lost merges this way ("an hrsync of an older version holds it").
func TestLockTakeAttemptDoesNotFailTheHoldersMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _, held, _, db, schema := heldWithDB(t, sink.Options{})
	// Another newer process, in its take transaction, as it holds it there.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var got bool
	if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock_shared(hashtextextended('hrsync:' || $1 || ':sync', 0))`, schema).Scan(&got); err != nil || !got {
		t.Fatalf("the other's take: %v %v", got, err)
	}
	if err := mergeFive(t, a, held); err != nil {
		t.Errorf("merge while another newer hrsync tries to take the lock: %v", err)
	}
}

// heldWithDB is two stores of one Postgres warehouse (opened with opts), the sync lock held by
// a (released when the test ends), and a plain connection pool to the warehouse's database with
// its schema.
func heldWithDB(t *testing.T, opts sink.Options) (a, b *sink.Store, held context.Context, release func(), db *sql.DB, schema string) {
	t.Helper()
	a, b, url, schema := sinktest.TwoStores(t, "postgres", opts)
	held, release, ok, err := a.TryLock(context.Background(), sink.SyncLock)
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	t.Cleanup(release)
	db, err = sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return a, b, held, release, db, schema
}

// mergeFive loads five employees into s under held and merges them: the merge's error.
func mergeFive(t *testing.T, s *sink.Store, held context.Context) error {
	t.Helper()
	l, err := s.BeginLoad(held, sink.Employees)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AddEmployees(held, people(5)); err != nil {
		t.Fatal(err)
	}
	_, err = l.Merge(held, sink.MergeOptions{Complete: true})
	return err
}
