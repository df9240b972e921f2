package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/sync/runner"
)

// idleAccountHeap bounds the heap a worker keeps for an account that is not running: its runner
// and its metric series, in the shape of BenchmarkFleet's accounts (a schedule, two
// collections); its warehouse and client are opened only for its runs. Measured: 6.9-7.0 KB since
// the accounts' series are plain numbers in one collector per family (metricSets); 26-27 KB
// while each account had client_golang vectors of its own, nearly all of it its metric series
// (a series object each, with its label pairs and creation time); 31 KB while every account
// kept its warehouse (a *sink.Store with no session, its sql.DB), its client and its budget open
// between runs; 109 KB while the sync's series started at zero for all 16 collections (176
// series an account), and 52 KB after that while a warehouse built its read paths at open rather
// than at its first read (a worker never reads). At 1,000 accounts that was most of a worker's
// memory.
const idleAccountHeap = 9 << 10

// idleGoroutines bounds the goroutines a worker keeps for its idle accounts: a few in all (the
// scheduler's), not some for every account. Measured: none beyond the first account's (the
// scheduler's goroutine); 1 an account while each runner had a goroutine for each job's
// trigger, 3 while each account also kept its warehouse's sql.DB open (its connection opener
// and its pool's cleaner).
func idleGoroutines(accounts int) int { return 4 + accounts/10 }

// TestIdleAccountsHoldLittleHeap builds the workers of many accounts as run does (newWorker)
// and starts them, none of them due for months, and bounds the heap they hold, per account,
// and their goroutines.
func TestIdleAccountsHoldLittleHeap(t *testing.T) {
	const n = 100
	url, schema := sinktest.Postgres(t)
	path := sinktest.ConfigFile(t, fmt.Sprintf(`warehouse: {url: %q}
schedule: '0 0 1 1 *'
sync: {resources: [working_patterns, employees]}
accounts:
  - {name: a000, source: {url: "http://127.0.0.1:1/a000", api_key: k}, warehouse: {schema: %s}}
`, url, schema))
	if err := run(context.Background(), []string{"--config", path, "migrate"}, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	source, sched := client.NewHTTPClient(), runner.NewScheduler()
	sets := account.NewMetricSets(newRegistry())
	slots := runner.NewSlots(10)
	log := slog.New(slog.DiscardHandler)
	// The accounts share one schema: configuration refuses that, and nothing here runs.
	accounts := make([]*config.Account, n)
	for i := range accounts {
		a := *cfg.Accounts[0]
		a.Name, a.Source.URL = fmt.Sprintf("a%03d", i), fmt.Sprintf("http://127.0.0.1:1/a%03d", i)
		accounts[i] = &a
	}
	open := func(a *config.Account) *account.Worker {
		w, err := account.NewWorker(ctx, account.NewSetup(a, sets), account.WorkerOptions{Source: source, Scheduler: sched, Slots: slots, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		w.Start() // its schedule's next time is months away
		return w
	}
	stop := func(w *account.Worker) {
		if err := w.Stop(ctx); err != nil {
			t.Error(err)
		}
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	}
	// One account first, so that what is made once a process (the driver's, the registry's)
	// is not counted.
	first := open(accounts[0])
	defer stop(first)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	goBefore := runtime.NumGoroutine()
	workers := make([]*account.Worker, 0, n-1)
	for _, a := range accounts[1:] {
		workers = append(workers, open(a))
	}
	after := heap()
	goAfter := runtime.NumGoroutine()
	for _, w := range workers {
		stop(w)
	}
	per := (int64(after) - int64(before)) / int64(len(workers))
	t.Logf("heap held per idle account: %d bytes (%d accounts); goroutines %d -> %d", per, len(workers), goBefore, goAfter)
	if per > idleAccountHeap {
		t.Errorf("an idle account holds %d KB of heap, want at most %d KB", per>>10, idleAccountHeap>>10)
	}
	if n := goAfter - goBefore; n > idleGoroutines(len(workers)) {
		t.Errorf("%d idle accounts hold %d goroutines, want at most %d", len(workers), n, idleGoroutines(len(workers)))
	}
}
