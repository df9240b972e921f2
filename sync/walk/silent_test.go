package walk_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/walk"
)

// The warehouse host goes silent (connections open, no byte back) while a sync of several
// collections, under the sync lock, walks its first collection. The run ends within about one
// statement timeout and its grace, whichever it notices first: the silence (a statement not
// answered) or the end of its lease (renewals not answered). It names that cause, attempts no
// further collection and writes nothing once its lease has ended. Once the host is back, the
// next run closes the interrupted run's ledger and syncs everything.
func TestSilentWarehouseEndsTheRunInBoundedTime(t *testing.T) {
	const stmt = 2 * time.Second
	// The client's silence bound is the statement timeout and its grace: 2 + 5 + 0.2 s. A run
	// that stops when it notices adds a cleanup of a second or two (the ledger and the lock,
	// each tried once, shortly): about 9.5 s. A run that went on to the next collections
	// waited for each (its connect timeout, 10 s), then for the ledger and the lock: 45 s. The
	// bound leaves a loaded machine room, not the run a second collection.
	const bound = 16 * time.Second
	resources := walk.Ordered([]sink.Resource{sink.Employees, "absences", "sicknesses", "leave_requests"})
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		want error // the cause named
	}{
		// The lease (30 s) outlasts the silence bound: the unanswered statement is the cause.
		{"silence noticed first", 30 * time.Second, sink.ErrNoAnswer},
		// A lease of 4 s ends before the statement's bound: the lease is the cause.
		{"lease ends first", 4 * time.Second, sink.ErrLockLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy, store, direct := proxiedWarehouse(t, sink.Options{StatementTimeout: stmt, LockTTL: tc.ttl})
			acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 300, Seed: 5})
			up := newUpstream(t, 0, acct.Options())
			c := fastClient(t, up, client.Options{})
			// Silent from the request for employees page 2 on: page 1 is staged, the rest are
			// walked with nowhere to go.
			up.setHook(func(_ *fakeupstream.Service, _ int, r *http.Request) {
				if pageOf(r, "employees") == 2 {
					proxy.Silence()
				}
			})

			var attempted []sink.Resource
			syncer := walk.New(c, store, walk.Options{Finished: func(r walk.Result) { attempted = append(attempted, r.Resource) }})
			// When the run's context under the lock ended, and whether the database still had
			// its lease then (asked directly, not through the silent proxy).
			type ended struct {
				at   time.Time
				live bool
			}
			heldEnded := make(chan ended, 1)
			start := time.Now()
			done := make(chan error, 1)
			go func() {
				done <- walk.WithLock(context.Background(), store, func(ctx context.Context) error {
					context.AfterFunc(ctx, func() {
						at := time.Now()
						heldEnded <- ended{at, leaseLive(t, direct)}
					})
					_, err := syncer.Run(ctx, resources)
					return err
				})
			}()
			var err error
			hang := slowness.Bound(90 * time.Second) // a bound on a hang, not the test's measure
			select {
			case err = <-done:
			case <-time.After(hang):
				t.Fatalf("the sync was still running %s after it began", hang)
			}
			took := time.Since(start)
			t.Logf("the run took %s: %v", took.Round(time.Millisecond), err)
			select {
			case <-proxy.Silenced():
			default:
				t.Fatal("the proxy never went silent")
			}
			live := leaseLive(t, direct) // asked while the proxy is still silent
			if took > bound {
				t.Errorf("the run took %s with the warehouse silent, want within %s (one statement timeout, %s, its grace and a cleanup)", took.Round(time.Millisecond), bound, stmt)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want the cause named (%v)", err, tc.want)
			}
			if !slices.Equal(attempted, []sink.Resource{sink.Employees}) {
				t.Errorf("collections attempted: %v, want only the first (employees)", attempted)
			}
			if errors.Is(tc.want, sink.ErrLockLost) {
				// The lock holder stops before its lease ends: the work under it ended while
				// the database still had the lease.
				select {
				case e := <-heldEnded:
					if !e.live {
						t.Errorf("the work under the lock ended %s after the run began, after its lease had", e.at.Sub(start).Round(time.Millisecond))
					}
				case <-time.After(10 * time.Second): // its look at the lease, not the run, may take a moment
					t.Error("the work under the lock went on past its lease: its context never ended")
				}
			} else if !live {
				t.Error("the run outlived its lease")
			}

			proxy.Resume()
			if errors.Is(tc.want, sink.ErrLockLost) {
				// Nothing was written once the lease was lost, not even the ledger's end: what
				// the proxy held back has reached the server now, and the row is as the run
				// left it when it began.
				time.Sleep(time.Second)
				runs, err := direct.Runs(context.Background(), 20)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range runs {
					if r.Status != sink.RunRunning {
						t.Errorf("the ledger row of %s was written after the lease was lost: %s %q", r.Resource, r.Status, r.Error)
					}
				}
			}
			runs, err := direct.Runs(context.Background(), 20)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				if r.Resource != sink.Employees {
					t.Errorf("the interrupted run wrote a ledger row for %s: %+v", r.Resource, r)
				}
				if r.Status == sink.RunOK {
					t.Errorf("the interrupted run's ledger says ok: %+v", r)
				}
			}
			if got := countEmployees(t, direct); got != 0 {
				t.Errorf("%d employees committed by the interrupted run, want 0", got)
			}

			// The next run, the host back: it closes the interrupted run's ledger and syncs all.
			// The lease the interrupted run could not give back ends first, as it does by
			// itself after its TTL.
			if _, err := sinktest.DB(direct).ExecContext(context.Background(),
				`UPDATE locks SET expires_at = clock_timestamp() WHERE name = $1`, walk.LockName); err != nil {
				t.Fatal(err)
			}
			up.setHook(nil)
			var rs []walk.Result
			err = walk.WithLock(context.Background(), store, func(ctx context.Context) error {
				var err error
				rs, err = walk.New(c, store, walk.Options{}).Run(ctx, resources)
				return err
			})
			if err != nil {
				t.Fatalf("the run after the warehouse came back: %v", err)
			}
			for _, r := range rs {
				if r.Status != sink.RunOK {
					t.Errorf("%s after the warehouse came back: %s %q", r.Resource, r.Status, r.Error)
				}
			}
			if len(rs) != len(resources) {
				t.Errorf("%d collections synced after the warehouse came back, want %d", len(rs), len(resources))
			}
			runs, err = direct.Runs(context.Background(), 20)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				if r.Status == sink.RunRunning {
					t.Errorf("a run is still marked running after the next run: %+v", r)
				}
			}
		})
	}
}

// leaseLive says whether the database has a live lease of the sync lock.
func leaseLive(t *testing.T, direct *sink.Store) bool {
	t.Helper()
	var live bool
	if err := sinktest.DB(direct).QueryRowContext(context.Background(),
		`SELECT coalesce(bool_or(expires_at > clock_timestamp()), false) FROM locks WHERE name = $1`, walk.LockName).Scan(&live); err != nil {
		t.Error(err)
	}
	return live
}
