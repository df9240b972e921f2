package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	stdsync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sink"

	"github.com/hrsync/hrsync/source"
	"github.com/hrsync/hrsync/source/serve"
	hrsync "github.com/hrsync/hrsync/sync"
	"github.com/hrsync/hrsync/sync/onboard"
)

// runCommand is hrsync run, the worker.
type runCommand struct {
	serve bool
	now   bool
}

func (c *runCommand) flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.serve, "serve", false, "also serve the /v1 replica on serve.addr")
	fs.BoolVar(&c.now, "now", false, "sync once at start, then on the schedule")
}

// stopTimeout bounds how long run waits, when asked to stop, for a job's run to end (a sync to
// roll back).
const stopTimeout = 30 * time.Second

// run is the long-running worker: for every account, syncs on its schedule and watches its
// onboarding folder, both jobs of the account's hrsync.Runner (one run of each across workers,
// by the account's warehouse locks); the metrics and health endpoints when metrics.addr is set,
// and with --serve the /v1 replica of every account. Accounts run side by side, each on its own
// schedule, lock and budget: one failing never stops the others. It runs until SIGTERM or
// SIGINT, with or without servers. On SIGTERM or SIGINT it stops fetching (open transactions
// roll back, or commit if they were committing), stops the runners, then the servers, then
// closes the warehouses, and exits 0.
func (c *runCommand) run(ctx context.Context, cfg settings, _, stderr io.Writer) error {
	log := cfg.logger(stderr)
	if !slices.ContainsFunc(cfg.accounts, func(a *account) bool { return a.Schedule != "" || a.Onboarding.Dir != "" }) {
		what := "set schedule (HRSYNC_SCHEDULE), e.g. @daily, \"0 2 * * *\" or @every 1h, and/or onboarding.dir (HRSYNC_ONBOARDING_DIR)"
		if cfg.accounts[0].listed {
			what = "give an account a schedule (e.g. @daily, \"0 2 * * *\" or @every 1h) or an onboarding.dir"
		}
		return errors.New("run: nothing to do: " + what)
	}
	reg := newRegistry()
	slots := hrsync.NewSlots(cfg.Worker.MaxSyncs) // shared by every account's sync
	var workers []*worker
	defer func() {
		for _, w := range workers {
			_ = w.store.Close() // last: after the runners and the servers
		}
	}()
	for _, a := range cfg.accounts {
		w, err := c.newWorker(ctx, a, reg, slots, log)
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		workers = append(workers, w)
	}

	stores := make([]accountStore, len(workers))
	for i, w := range workers {
		stores[i] = accountStore{acct: w.acct, store: w.store}
		if cfg.writes == serve.WritesForward {
			stores[i].upstream = w.client // one budget for the account
		}
	}
	servers := []server{{name: "metrics", addr: cfg.Metrics.Addr, handler: metricsMux(reg, readyAll(stores), log)}}
	if c.serve {
		mux, err := apiMux(cfg, stores, newServeMetrics(reg), log)
		if err != nil {
			return err
		}
		servers = append(servers, server{name: "serve", addr: cfg.Serve.Addr, handler: mux})
	}
	srvCtx, stopServers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServers()
	served := make(chan error, 1)
	go func() { served <- serveAll(srvCtx, log, servers) }()

	for _, w := range workers {
		w.runner.Start()
		if dir := w.acct.Onboarding.Dir; dir != "" {
			w.log.Info("onboarding folder watched", "dir", filepath.Clean(dir), "poll", w.acct.pollInterval)
		}
	}
	stopAll := func(ctx context.Context) error {
		errs := make([]error, len(workers))
		var wg stdsync.WaitGroup
		for i, w := range workers {
			wg.Go(func() { errs[i] = w.acct.wrap(w.runner.Stop(ctx)) })
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	select {
	case <-ctx.Done():
	case err := <-served: // a server could not start or failed
		stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = stopAll(stopCtx)
		return err
	}
	log.Info("stopping: the jobs first, then the servers")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	// A sync rolls back; an onboarding's row being sent is answered or left "sending" for the
	// next run.
	if err := stopAll(stopCtx); err != nil {
		log.Error("stop", "err", err)
	}
	stopServers()
	if err := <-served; err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// worker is one account's part of hrsync run: its warehouse, its client (its budget), and the
// runner of its jobs.
type worker struct {
	acct   *account
	store  *sink.Store
	client *source.Client
	runner *hrsync.Runner
	log    *slog.Logger
}

// newWorker opens the account's warehouse and builds its jobs, their metrics labelled with the
// account. An account with neither a schedule nor a folder gets a worker with no jobs (serve
// still answers for it).
func (c *runCommand) newWorker(ctx context.Context, a *account, reg prometheus.Registerer, slots *hrsync.Slots, log *slog.Logger) (*worker, error) {
	log = a.logger(log)
	areg := prometheus.WrapRegistererWith(prometheus.Labels{"account": a.name}, reg)
	syncMetrics := hrsync.NewMetrics(areg)
	if err := checkSource(a); err != nil {
		return nil, err
	}
	store, err := a.openStore(ctx, log)
	if err != nil {
		return nil, err
	}
	w := &worker{acct: a, store: store, log: log}
	fail := func(err error) (*worker, error) {
		_ = store.Close()
		return nil, a.wrap(err)
	}
	if w.client, err = newClient(a, log, store, areg, source.ClientOptions{Observe: syncMetrics.ObserveRequest}); err != nil {
		return fail(err)
	}
	// One runner runs the sync and the onboarding alike: each on its trigger, under its own
	// warehouse lock, never overlapping itself, a panic recovered and counted, the same metrics.
	var jobs []hrsync.Job
	if a.Schedule != "" {
		syncMetrics.Configure(a.resources)
		// Ledger rows a killed process left "running" are closed now, unless a replica is syncing.
		if _, err := store.CloseAbandonedRuns(ctx); err != nil {
			log.Warn("close abandoned sync runs", "err", err)
		}
		syncer := hrsync.New(w.client, store, hrsync.Options{Concurrency: a.Sync.Concurrency, MaxWalks: a.Sync.MaxWalks,
			MaxDeleteShare: a.Sync.MaxDeleteShare, Window: a.window, Metrics: syncMetrics, Logger: log})
		trigger, err := hrsync.Cron(a.Schedule, a.location)
		if err != nil {
			return fail(err)
		}
		job := syncer.Job(trigger, a.resources)
		job.RunAtStart = c.now || a.Sync.RunAtStart
		job.Slots = slots
		jobs = append(jobs, job)
	} else if a.Onboarding.Dir != "" {
		log.Info("no schedule: the worker only watches the onboarding folder")
	} else {
		log.Info("neither a schedule nor an onboarding folder: the account is only served")
	}
	if a.Onboarding.Dir != "" {
		o := newOnboarder(a, w.client, store, onboard.NewMetrics(areg), false, log)
		jobs = append(jobs, o.Job(a.pollInterval, onboard.PassOptions{Dir: a.Onboarding.Dir, Settle: a.settle}))
	}
	if w.runner, err = hrsync.NewRunner(ctx, hrsync.RunnerOptions{Lock: store, Metrics: syncMetrics, Logger: log}, jobs...); err != nil {
		return fail(err)
	}
	return w, nil
}
