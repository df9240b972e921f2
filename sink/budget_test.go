package sink_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/budget"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// Reservations back to back get slots one interval apart, on the database's clock, whoever
// reserves; another account's budget is its own.
func TestReserveRequestSpacesSlots(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := sinktest.Store(t, backend, sink.Options{})
			ctx := context.Background()
			const interval = 50 * time.Millisecond
			const n = 10
			// Each slot starts at the database's now plus the wait it answers; that now lies
			// between the local clock read before the call and the one read after it (one host,
			// one clock). So every gap between two slots is known within those bounds, however
			// slow the round trips of a loaded machine: no slack is guessed.
			type reading struct{ before, after time.Time }
			slots := make([]reading, n)
			for i := range n {
				before := time.Now()
				d, err := s.ReserveRequest(ctx, "acme", interval)
				if err != nil {
					t.Fatal(err)
				}
				slots[i] = reading{before.Add(d), time.Now().Add(d)}
			}
			const clock = time.Millisecond // the timestamps' rounding
			for i := 1; i < n; i++ {
				lo, hi := slots[i].before.Sub(slots[i-1].after), slots[i].after.Sub(slots[i-1].before)
				if interval < lo-clock || interval > hi+clock {
					t.Errorf("slot %d starts %v to %v after slot %d, want %v", i, lo, hi, i-1, interval)
				}
			}
			if d, err := s.ReserveRequest(ctx, "other", interval); err != nil || d > clock {
				t.Errorf("another account's first slot in %v (%v), want now", d, err)
			}
			// An idle budget does not bank slots: after a pause the next slot is now, the one
			// after an interval after it.
			time.Sleep(time.Until(slots[n-1].after) + 2*interval)
			before := time.Now()
			d1, err1 := s.ReserveRequest(ctx, "acme", interval)
			d2, err2 := s.ReserveRequest(ctx, "acme", interval)
			after := time.Now()
			if err1 != nil || err2 != nil || d1 > clock || d2 > interval+clock || d2 < interval-after.Sub(before)-clock {
				t.Errorf("after a pause: slots in %v and %v (%v, %v), want now and %v later", d1, d2, err1, err2, interval)
			}
		})
	}
}

// budgetLimit and budgetWindow are the fake upstream's limit in the tests below: short, so that
// a test takes seconds. budgetRate paces at 19 of the 20 a window (570 a minute, 107 ms apart
// with the pacer's 2% headroom): a window then holds at most 19 slot starts, one request of
// slack for a scheduling hiccup of the test machine, and still over 90% of the budget is used.
const (
	budgetLimit  = 20
	budgetWindow = 2 * time.Second
	budgetRate   = 570
)

// budgetUpstream is a fake upstream enforcing budgetLimit requests in any budgetWindow.
func budgetUpstream(t *testing.T) (*fakeupstream.Service, *httptest.Server) {
	t.Helper()
	up := fakeupstream.New(fakeupstream.Options{RateLimit: budgetLimit, Window: budgetWindow})
	srv := httptest.NewServer(up)
	t.Cleanup(func() { up.Close(); srv.Close() })
	return up, srv
}

func budgetClient(t *testing.T, srv *httptest.Server, b budget.Budget, kind budget.Kind) *client.Client {
	t.Helper()
	c, err := client.New(srv.URL, fakeupstream.DefaultAPIKey, client.Options{
		HTTPClient: srv.Client(), RateLimit: budgetRate, Budget: b, CreateKind: kind, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Two processes of one account (each its Store, Budget and Client, on one warehouse) walking as
// fast as they may: the upstream answers no 429, and they use over 90% of its budget between
// them, each a fair part.
func TestSharedBudgetHoldsTwoProcessesUnderTheLimit(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			url, sopts := budgetWarehouse(t, backend)
			up, srv := budgetUpstream(t)

			// Both processes are open (a SQLite file is migrated by its first open) before the
			// clock starts.
			var clients [2]*client.Client
			var budgets [2]*sink.Budget
			for p := range 2 {
				budgets[p] = openBudget(t, url, sopts, sink.BudgetOptions{PerMinute: budgetRate})
				clients[p] = budgetClient(t, srv, budgets[p], "")
			}
			const run = 4 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), run)
			defer cancel()
			var served [2]atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for p, c := range clients {
				for range 4 { // sync.concurrency
					wg.Go(func() {
						for ctx.Err() == nil {
							if _, _, err := c.ListEmployees(ctx, 1); err == nil {
								served[p].Add(1)
							}
						}
					})
				}
			}
			wg.Wait()
			elapsed := time.Since(start)
			if n := up.Count("/v1/employees", 429); n != 0 {
				t.Errorf("%d requests answered 429", n)
			}
			if m := up.MaxInWindow(); m > budgetLimit {
				t.Errorf("%d requests in one window, the limit is %d", m, budgetLimit)
			}
			total := served[0].Load() + served[1].Load()
			// The most the upstream lets through in elapsed: the limit every window, and one
			// window's worth at once at the start.
			capacity := float64(budgetLimit) * elapsed.Seconds() / budgetWindow.Seconds()
			// Here 95% (the log line below; docs/benchmarks.md). The bound is lower so that a
			// machine stalled for a moment does not fail it: what it guards against is a budget
			// that halves the account's rate (each process at its share) or serializes worse.
			if float64(total) < 0.7*capacity {
				t.Errorf("served %d requests in %v, under 70%% of the %.0f the upstream allows", total, elapsed.Round(time.Millisecond), capacity)
			}
			for p := range 2 {
				if n := served[p].Load(); float64(n) < 0.3*float64(total) {
					t.Errorf("process %d was served %d of %d requests", p+1, n, total)
				}
			}
			for p, b := range budgets {
				if !b.Shared() || b.Waits()[budget.KindWalk].Granted < served[p].Load() {
					t.Errorf("process %d: shared %v, slots %+v, served %d", p+1, b.Shared(), b.Waits(), served[p].Load())
				}
			}
			t.Logf("%d requests in %v (%.0f%% of the upstream's budget), max %d in a window", total, elapsed.Round(time.Millisecond), 100*float64(total)/capacity, up.MaxInWindow())
		})
	}
}

// A create sent while another process walks gets one of the next slots: it waits behind the
// walk's reserved slots (its concurrency), not behind the walk.
func TestSharedBudgetCreateDuringWalk(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			url, sopts := budgetWarehouse(t, backend)
			up, srv := budgetUpstream(t)

			// A bound, not a measure: a create queued behind the walk would wait all of it.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			walkCtx, stopWalk := context.WithCancel(ctx)
			const concurrency = 6
			wb := openBudget(t, url, sopts, sink.BudgetOptions{PerMinute: budgetRate})
			walker := budgetClient(t, srv, wb, "")
			var wg sync.WaitGroup
			for range concurrency {
				wg.Go(func() {
					for walkCtx.Err() == nil {
						_, _, _ = walker.ListEmployees(walkCtx, 1)
					}
				})
			}
			time.Sleep(time.Second) // the walk is in full swing: every walker holds a slot
			fb := openBudget(t, url, sopts, sink.BudgetOptions{PerMinute: budgetRate})
			forwarder := budgetClient(t, srv, fb, budget.KindForward)
			began, walked := time.Now(), wb.Waits()[budget.KindWalk].Granted
			_, err := forwarder.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"})
			took, ahead := time.Since(began), wb.Waits()[budget.KindWalk].Granted-walked
			stopWalk()
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("the create waited %v behind %d walkers: %d walk slots began meanwhile", took.Round(time.Millisecond), concurrency, ahead)
			// Counted in slots, not seconds (a loaded machine stretches every slot): the walk's
			// slots reserved ahead of it (its concurrency), and as many again and four for those
			// that begin while the create's answer travels back. A create queued behind the walk
			// itself would see the walk's slots begin until the walk ends (here, never before
			// the create does).
			if limit := int64(2*concurrency + 4); ahead > limit {
				t.Errorf("%d walk slots began while the create waited, want at most %d", ahead, limit)
			}
			if w := fb.Waits()[budget.KindForward]; w.Granted != 1 {
				t.Errorf("forward slots %+v, want 1", w)
			}
			if n := up.Count("/v1/employees", 429); n != 0 {
				t.Errorf("%d requests answered 429", n)
			}
		})
	}
}

// A process whose warehouse stops answering paces itself at its share and says so once, then
// paces on the warehouse again when it answers.
func TestSharedBudgetFallsBackToItsShare(t *testing.T) {
	tests := []struct {
		backend string
		// cut makes the warehouse unreachable for the budget; the func it returns mends it.
		cut func(t *testing.T, url string) func()
	}{
		{"postgres", nil}, // through a proxy that goes silent
		{"sqlite", func(t *testing.T, url string) func() {
			// Another process holds the file's write lock.
			db, err := sql.Open("sqlite", "file:"+url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
				t.Fatal(err)
			}
			return func() {
				if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
					t.Error(err)
				}
				_ = conn.Close()
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.backend, func(t *testing.T) {
			url, sopts := budgetWarehouse(t, tt.backend)
			cut := tt.cut
			if tt.backend == "postgres" {
				var proxy *sinktest.Proxy
				proxy, url = sinktest.ProxyURL(t, url)
				cut = func(*testing.T, string) func() { proxy.Silence(); return proxy.Resume }
			}
			var logs bytes.Buffer
			var mu sync.Mutex
			log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
			const perMinute, share = 600, 3 // 102 ms apart shared, 306 ms alone
			// A reservation times out after a second (a loaded machine answers well within it);
			// the warehouse is asked again after 4 s, after the n requests below are paced alone.
			const timeout, retry = time.Second, 4 * time.Second
			b := openBudget(t, url, sopts, sink.BudgetOptions{PerMinute: perMinute, Share: share,
				Timeout: timeout, Retry: retry, Logger: log})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := b.Wait(ctx, budget.KindWalk); err != nil || !b.Shared() {
				t.Fatalf("reachable: %v, shared %v", err, b.Shared())
			}

			mend := cut(t, url)
			const n = 6
			start := time.Now()
			for range n {
				if _, err := b.Wait(ctx, budget.KindWalk); err != nil {
					t.Fatal(err)
				}
			}
			took := time.Since(start)
			if b.Shared() {
				t.Error("still pacing on the warehouse it cannot reach")
			}
			// n requests at the share: the first after the timeout, n-1 intervals of the share
			// after it (and one more probe of the warehouse, timed out, on the way).
			alone := budget.PacingInterval(perMinute / share)
			if min := time.Duration(n-1) * alone; took < min {
				t.Errorf("%d requests in %v at the share, want at least %v", n, took.Round(time.Millisecond), min)
			}
			if max := 2*timeout + time.Duration(n)*alone + 2*time.Second; took > max {
				t.Errorf("%d requests in %v at the share, want at most %v", n, took.Round(time.Millisecond), max)
			}

			mend()
			time.Sleep(retry + 100*time.Millisecond) // past Retry: the next request asks the warehouse
			for range 3 {
				if _, err := b.Wait(ctx, budget.KindWalk); err != nil {
					t.Fatal(err)
				}
			}
			if !b.Shared() {
				t.Error("the warehouse answers again, but the process still paces alone")
			}
			mu.Lock()
			out := logs.String()
			mu.Unlock()
			if c := strings.Count(out, "out of reach"); c != 1 {
				t.Errorf("%d warnings of the fallback, want 1:\n%s", c, out)
			}
			if !strings.Contains(out, "requests_per_minute=200") || strings.Count(out, "answers again") != 1 {
				t.Errorf("the log does not say at which pace, or that the warehouse is back:\n%s", out)
			}
		})
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// budgetWarehouse returns the URL of a migrated warehouse that several Stores can open, as the
// processes of one account do, and the options to open it with.
func budgetWarehouse(t testing.TB, backend string) (string, sink.Options) {
	t.Helper()
	if backend == "sqlite" {
		return filepath.Join(t.TempDir(), "hrsync.db"), sink.Options{}
	}
	url, schema := sinktest.Postgres(t)
	opts := sink.Options{Schema: schema}
	if _, err := sink.Migrate(context.Background(), url, opts); err != nil {
		t.Fatal(err)
	}
	return url, opts
}

// openBudget opens a Store of its own on the warehouse, as another process would, and its
// Budget.
func openBudget(t testing.TB, url string, sopts sink.Options, opts sink.BudgetOptions) *sink.Budget {
	t.Helper()
	s, err := sink.Open(context.Background(), url, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	b, err := s.NewBudget(opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
