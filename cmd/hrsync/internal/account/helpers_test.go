package account

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/internal/buildinfo"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/sync/runner"
)

// countingWorker is a worker of one account that counts the times it opens the account's
// warehouse: what the tests of idle jobs assert.
type countingWorker struct {
	w     *Worker
	reg   *prometheus.Registry
	opens atomic.Int64
}

// startCountingWorker starts the worker of the configuration yaml's one account (its warehouse
// migrated first; edit, when not nil, changes the account before the worker is built), stopped
// and closed when the test ends.
func startCountingWorker(t *testing.T, yaml string, edit func(*config.Account), opts WorkerOptions) *countingWorker {
	t.Helper()
	cfg, err := config.Load(sinktest.ConfigFile(t, yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	acct := cfg.Accounts[0]
	if _, err := sink.Migrate(context.Background(), acct.Warehouse.URL, acct.SinkOptions()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if edit != nil {
		edit(acct)
	}
	c := &countingWorker{reg: prom.NewRegistry(buildinfo.Get())}
	opts.Source, opts.Scheduler, opts.Logger = client.NewHTTPClient(), runner.NewScheduler(), slog.New(slog.DiscardHandler)
	if c.w, err = NewWorker(t.Context(), NewSetup(acct, NewMetricSets(c.reg)), opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.w.Close() })
	saw := c.w.runs.seen
	c.w.runs.seen = func(err error) { c.opens.Add(1); saw(err) }
	c.w.Start()
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.w.Stop(stopCtx); err != nil {
			t.Error(err)
		}
	})
	return c
}

// okRuns is how many runs of the job task ended ok (an idle firing counts).
func (c *countingWorker) okRuns(t *testing.T, task string) float64 {
	return gathered(t, c.reg, "hrsync_job_runs_total", "task="+task, "outcome=ok")
}

// closed says no run of the account holds its warehouse open.
func (c *countingWorker) closed() bool {
	c.w.runs.mu.Lock()
	defer c.w.runs.mu.Unlock()
	return c.w.runs.cur == nil
}

// gathered is the value of the series of name in reg whose labels include every one of labels
// (name=value pairs), 0 when there is none: a counter's or a gauge's.
func gathered(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			has := map[string]bool{}
			for _, l := range m.GetLabel() {
				has[l.GetName()+"="+l.GetValue()] = true
			}
			for _, l := range labels {
				if !has[l] {
					continue series
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}
