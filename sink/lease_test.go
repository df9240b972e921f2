package sink_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// The work under a lease stops as soon as its holder can no longer be sure it holds it: when no
// renewal is answered (the warehouse silent) before the lease ends, or when a renewal finds it
// taken over. The context TryLock returned ends at once, its cause the lock lost, while the
// database still has the lease, and nothing is written under it after: no statement, no ledger
// row, no renewal or release of the lease, even once the warehouse answers again.
func TestLostLeaseStopsTheWorkUnderIt(t *testing.T) {
	const ttl = 3 * time.Second // renewed every second
	tests := []struct {
		name string
		lose func(t *testing.T, proxy *sinktest.Proxy, other *sink.Store, url, schema string)
		// within is how long after lose the work must have stopped.
		within time.Duration
		why    string // in the cause's message
	}{
		{"renewals unanswered", func(t *testing.T, proxy *sinktest.Proxy, _ *sink.Store, _, _ string) {
			proxy.Silence() // the statement timeout (5 min) is far: the lease ends first
		}, ttl, "no renewal of its lease was confirmed"},
		{"taken over", func(t *testing.T, _ *sinktest.Proxy, other *sink.Store, url, schema string) {
			if n := sinktest.ExpireLock(t, url, schema, sink.SyncLock); n != 1 {
				t.Fatalf("expired %d leases, want 1", n)
			}
			_, release, ok, err := other.TryLock(context.Background(), sink.SyncLock)
			if err != nil || !ok {
				t.Fatalf("another process could not take the expired lease: %v %v", ok, err)
			}
			t.Cleanup(release)
		}, ttl/3 + 2*time.Second, "taken over"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			url, schema := sinktest.Postgres(t)
			if _, err := sink.Migrate(ctx, url, sink.Options{Schema: schema}); err != nil {
				t.Fatal(err)
			}
			proxy, purl := sinktest.ProxyURL(t, url)
			s, err := sink.Open(ctx, purl, sink.Options{Schema: schema, LockTTL: ttl})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			t.Cleanup(proxy.Close) // first: whatever still waits on it ends
			direct, err := sink.Open(ctx, url, sink.Options{Schema: schema, LockTTL: ttl})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = direct.Close() })
			// The lease's row as the database has it: expiry, token, and whether it is live.
			type lease struct {
				expires string
				token   int64
				live    bool
			}
			leaseNow := func() (l lease) {
				if err := sinktest.DB(direct).QueryRowContext(ctx, `SELECT expires_at::text, token, expires_at > clock_timestamp()
FROM locks WHERE name = $1 ORDER BY token DESC LIMIT 1`, sink.SyncLock).Scan(&l.expires, &l.token, &l.live); err != nil {
					t.Error(err)
				}
				return l
			}

			held, release, ok, err := s.TryLock(ctx, sink.SyncLock)
			if err != nil || !ok {
				t.Fatalf("lock: %v %v", ok, err)
			}
			t.Cleanup(release)
			l, err := s.BeginLoad(held, sink.Employees)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if err := l.AddEmployees(held, people(10)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(ttl / 2) // a renewal or so: the lease is renewed, the work goes on
			if err := held.Err(); err != nil {
				t.Fatalf("the work under a renewed lease stopped: %v", context.Cause(held))
			}

			ours := leaseNow().token
			stoppedAt := make(chan lease, 1) // the lease when the work stopped
			context.AfterFunc(held, func() { stoppedAt <- leaseNow() })
			lost := time.Now()
			tt.lose(t, proxy, direct, url, schema)
			var atStop lease
			select {
			case atStop = <-stoppedAt:
			case <-time.After(tt.within + 5*time.Second):
				t.Fatalf("the work under the lock went on %s after it was lost", time.Since(lost).Round(time.Millisecond))
			}
			if d := time.Since(lost); d > tt.within+time.Second {
				t.Errorf("the work stopped %s after the lease was lost, want within %s", d.Round(time.Millisecond), tt.within)
			}
			cause := context.Cause(held)
			if !errors.Is(cause, sink.ErrLockLost) || !strings.Contains(cause.Error(), tt.why) {
				t.Errorf("cause = %v, want the lock lost (%q)", cause, tt.why)
			}
			if tt.name == "renewals unanswered" && !atStop.live {
				t.Errorf("the work stopped after its lease had ended (%s), want before", atStop.expires)
			}

			// Nothing is written under it any more, and none of it waits on the warehouse.
			start := time.Now()
			if _, err := l.Merge(held, sink.MergeOptions{Complete: true}); !errors.Is(err, sink.ErrLockLost) {
				t.Errorf("merge after the lease was lost: %v, want ErrLockLost", err)
			}
			if _, err := s.StartRun(held, "late", sink.Employees, time.Now()); !errors.Is(err, sink.ErrLockLost) {
				t.Errorf("start run after the lease was lost: %v, want ErrLockLost", err)
			}
			if _, err := s.BeginLoad(held, sink.WorkingPatterns); !errors.Is(err, sink.ErrLockLost) {
				t.Errorf("begin load after the lease was lost: %v, want ErrLockLost", err)
			}
			release()
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the work and the release under a lost lease took %s, want at once", d.Round(time.Millisecond))
			}
			proxy.Resume()
			time.Sleep(ttl / 2) // what the proxy held back reaches the server; a renewal would be due
			if got := served(t, direct); len(got) != 0 {
				t.Errorf("%d employees written under the lost lease", len(got))
			}
			if runs, err := direct.Runs(ctx, 10); err != nil || len(runs) != 0 {
				t.Errorf("ledger rows written under the lost lease: %+v %v", runs, err)
			}
			// Nor is the lease renewed or released by its lost holder (another holder's token
			// is another's to renew).
			if after := leaseNow(); after.token == ours && after.expires != atStop.expires {
				t.Errorf("the lost lease was written after the work stopped: expiry %s, then %s", atStop.expires, after.expires)
			}
		})
	}
}

// A merge that proved the lease holds its row, so no other process can take the lease while it
// runs: it is not stopped for the lease, however long it runs (here, waiting for another
// session's lock on the table for two TTLs), and it commits; the lease its seal extended goes
// on, and so does the work under it.
func TestMergeLongerThanTheLeaseCommits(t *testing.T) {
	ctx := context.Background()
	// Long enough that renewals on a loaded two-core machine answer within it (a 1.5 s lease
	// was lost there after the merge, to a renewal that took longer than its tick).
	const ttl = 4 * time.Second
	a, _, held, _, db, schema := heldWithDB(t, sink.Options{LockTTL: ttl})
	l, err := a.BeginLoad(held, sink.Employees)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AddEmployees(held, people(5)); err != nil {
		t.Fatal(err)
	}
	blocker, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback()
	if _, err := blocker.ExecContext(ctx, `LOCK TABLE `+schema+`.employees IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(2*ttl, func() { _ = blocker.Rollback() })
	start := time.Now()
	if _, err := l.Merge(held, sink.MergeOptions{Complete: true}); err != nil {
		t.Fatalf("merge of %s under a lease of %s: %v", time.Since(start).Round(time.Millisecond), ttl, err)
	}
	if d := time.Since(start); d < 2*ttl {
		t.Fatalf("the merge took %s: it did not wait for the table, the test proves nothing", d)
	}
	if err := held.Err(); err != nil {
		t.Fatalf("the work under the lease was stopped by a merge that held it: %v", context.Cause(held))
	}
	time.Sleep(ttl) // a renewal or two after the merge: the lease is still this holder's
	if err := held.Err(); err != nil {
		t.Fatalf("the work under the lease stopped after the merge: %v", context.Cause(held))
	}
	if got := served(t, a); len(got) != 5 {
		t.Errorf("served %d employees after the merge, want 5", len(got))
	}
}
