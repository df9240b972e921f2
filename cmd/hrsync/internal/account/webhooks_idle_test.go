package account

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/internal/buildinfo"
	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/sync/runner"
)

// TestIdleWebhooksOpenNoWarehouse: an account with a webhook subscriber and nothing to send
// opens its warehouse for the webhooks job's first pass, and not for the firings after it, which
// count as ok runs (events.Deliverer). Before, every firing (every 5 s) opened the warehouse:
// half a core for a worker of 100 idle SQLite accounts.
func TestIdleWebhooksOpenNoWarehouse(t *testing.T) {
	t.Parallel()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a delivery with nothing published: %s", r.URL)
	}))
	defer recv.Close()
	dir := t.TempDir()
	path := sinktest.ConfigFile(t, fmt.Sprintf(`warehouse: {url: %q}
source: {url: "http://127.0.0.1:1", api_key: k}
schedule: "0 3 * * *"
events:
  webhooks:
    - {name: idp, url: %q, secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}
`, filepath.Join(dir, "hrsync.db"), recv.URL+"/hook"))
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	acct := cfg.Accounts[0]
	if _, err := sink.Migrate(context.Background(), acct.Warehouse.URL, acct.SinkOptions()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	reg := prom.NewRegistry(buildinfo.Get())
	as := NewSetup(acct, NewMetricSets(reg))
	w, err := NewWorker(t.Context(), as, WorkerOptions{Source: client.NewHTTPClient(), Scheduler: runner.NewScheduler(),
		Logger: slog.New(slog.DiscardHandler), DeliverEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var opens atomic.Int64
	saw := w.runs.seen
	w.runs.seen = func(err error) { opens.Add(1); saw(err) }
	okRuns := func() float64 { return gathered(t, reg, "hrsync_job_runs_total", "task=webhooks", "outcome=ok") }
	idle := func() bool { // no run of the account holds its warehouse
		w.runs.mu.Lock()
		defer w.runs.mu.Unlock()
		return w.runs.cur == nil
	}
	wait := slowness.Wait{For: 30 * time.Second, Every: 5 * time.Millisecond}
	w.Start()
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := w.Stop(stopCtx); err != nil {
			t.Error(err)
		}
	}()

	// The first pass (and the events job's run at start) open it.
	wait.Until(t, "the webhooks job's first pass", func() bool { return okRuns() >= 1 && idle() })
	first := opens.Load()
	if first == 0 {
		t.Fatal("the first pass opened no warehouse")
	}
	seen := okRuns()
	wait.Until(t, "twenty firings after it", func() bool { return okRuns() >= seen+20 })
	if n := opens.Load() - first; n != 0 {
		t.Errorf("%d firings with nothing to send opened the warehouse %d times, want none", int(okRuns()-seen), n)
	}
}
