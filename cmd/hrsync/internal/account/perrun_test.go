package account

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/internal/buildinfo"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/budget"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/sync/runner"
)

// TestAccountRunsOpenPerRun: a worker's account has its warehouse open only while a run uses it
// (two runs at once share one; the last to end closes it), and its shared budget's metrics count
// on across the runs, each of which opens a budget of its own.
func TestAccountRunsOpenPerRun(t *testing.T) {
	t.Parallel()
	path := sinktest.ConfigFile(t, fmt.Sprintf(`warehouse: {url: %q}
schedule: '0 0 1 1 *'
source: {url: "http://127.0.0.1:1", api_key: k, rate_limit: 6000, shared_budget: true}
`, filepath.Join(t.TempDir(), "hrsync.db")))
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Migrate(context.Background(), cfg.Accounts[0].Warehouse.URL, cfg.Accounts[0].SinkOptions()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	ctx := t.Context()
	reg := prom.NewRegistry(buildinfo.Get())
	as := NewSetup(cfg.Accounts[0], NewMetricSets(reg))
	source, sched := client.NewHTTPClient(), runner.NewScheduler()
	w, err := NewWorker(ctx, as, WorkerOptions{Source: source, Scheduler: sched, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.runs.cur != nil {
		t.Fatal("the warehouse is open before any run")
	}
	granted := func() float64 {
		return gathered(t, reg, "hrsync_source_budget_granted_total", "kind="+string(budget.KindWalk))
	}
	for i := range 2 {
		first, err := w.runs.acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		second, err := w.runs.acquire(ctx) // another job of the account, at the same time
		if err != nil {
			t.Fatal(err)
		}
		if first != second {
			t.Error("two runs at once opened the warehouse twice")
		}
		if _, err := first.budget.Wait(ctx, budget.KindWalk); err != nil {
			t.Fatal(err)
		}
		w.runs.release()
		if err := first.store.Ready(ctx); err != nil {
			t.Errorf("the warehouse closed while a run still uses it: %v", err)
		}
		w.runs.release()
		if err := first.store.Ready(ctx); err == nil {
			t.Error("the warehouse is still open once its runs are over")
		}
		if got := granted(); got != float64(i+1) {
			t.Errorf("after run %d, %v slots granted counted, want %d", i+1, got, i+1)
		}
	}
	if err := w.Ready(ctx); err != nil {
		t.Errorf("ready between runs: %v", err)
	}
}
