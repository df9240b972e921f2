package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	stdsync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
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
// schedule, lock and budget: one failing never stops the others, not even at start (see
// fleet). It runs until SIGTERM or SIGINT, with or without servers. On SIGTERM or SIGINT it
// stops fetching (open transactions roll back, or commit if they were committing), stops the
// runners, then the servers, then closes the warehouses, and exits 0.
func (c *runCommand) run(ctx context.Context, cfg config.Settings, _, stderr io.Writer) error {
	log := cfg.Logger(stderr)
	if !slices.ContainsFunc(cfg.Accounts, func(a *config.Account) bool { return a.Schedule != "" || a.Onboarding.Dir != "" }) {
		what := "set schedule (HRSYNC_SCHEDULE), e.g. @daily, \"0 2 * * *\" or @every 1h, and/or onboarding.dir (HRSYNC_ONBOARDING_DIR)"
		if cfg.Accounts[0].Listed {
			what = "give an account a schedule (e.g. @daily, \"0 2 * * *\" or @every 1h) or an onboarding.dir"
		}
		return errors.New("run: nothing to do: " + what)
	}
	reg := newRegistry()
	f := &fleet{cmd: c, slots: hrsync.NewSlots(cfg.Worker.MaxSyncs), waiting: map[string]error{}, log: log}
	defer f.close() // last: after the runners and the servers
	var failed []*accountSetup
	for _, a := range cfg.Accounts {
		as := newAccountSetup(a, reg)
		if _, err := f.open(ctx, as); err != nil {
			failed = append(failed, as)
			f.waiting[a.Name] = err
		}
	}
	switch {
	case len(failed) == len(cfg.Accounts):
		// Nothing would run: the operator hears why at once (a warehouse out of reach, a
		// schema behind) rather than from a worker idling on retries.
		return fmt.Errorf("run: %w", f.waiting[failed[0].acct.Name])
	case len(failed) > 0 && c.serve:
		// The replica answers the accounts it was built with: all of them, or none.
		return fmt.Errorf("run: %w", f.waiting[failed[0].acct.Name])
	}

	var stores []accountStore
	for _, w := range f.workers {
		s := accountStore{acct: w.acct, store: w.store}
		if w.acct.Writes == serve.WritesForward {
			s.upstream = w.client // one budget for the account
		}
		stores = append(stores, s)
	}
	servers := []server{{name: "metrics", addr: cfg.Metrics.Addr, handler: metricsMux(reg, f, log)}}
	if c.serve {
		mux, err := apiMux(cfg, stores, newServeMetrics(reg), log)
		if err != nil {
			return err
		}
		api, err := apiServer(cfg, mux, reg, log)
		if err != nil {
			return err
		}
		servers = append(servers, api)
	}
	srvCtx, stopServers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServers()
	served := make(chan error, 1)
	go func() { served <- serveAll(srvCtx, log, servers) }()

	for _, w := range f.workers {
		w.start()
	}
	for _, as := range failed {
		f.retry(ctx, as)
	}
	select {
	case <-ctx.Done():
	case err := <-served: // a server could not start or failed
		stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = f.stop(stopCtx)
		return err
	}
	log.Info("stopping: the jobs first, then the servers")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	// A sync rolls back; an onboarding's row being sent is answered or left "sending" for the
	// next run.
	if err := f.stop(stopCtx); err != nil {
		log.Error("stop", "err", err)
	}
	stopServers()
	if err := <-served; err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// accountSetup is what one account's worker is built from, made once per process: its metrics
// are registered once, whether its warehouse opens at the first try or a later one.
type accountSetup struct {
	acct        *config.Account
	reg         prometheus.Registerer // labelled with the account
	syncMetrics *hrsync.Metrics
	onboard     *onboard.Metrics
}

func newAccountSetup(a *config.Account, reg prometheus.Registerer) *accountSetup {
	as := &accountSetup{acct: a, reg: prometheus.WrapRegistererWith(prometheus.Labels{"account": a.Name}, reg)}
	as.syncMetrics = hrsync.NewMetrics(as.reg)
	if a.Schedule != "" {
		// Said before the warehouse opens: an account whose warehouse never does is stale.
		as.syncMetrics.Configure(a.Resources)
	}
	if a.Onboarding.Dir != "" {
		as.onboard = onboard.NewMetrics(as.reg)
	}
	return as
}

// fleet is the accounts of one worker. An account whose warehouse does not open at start (its
// schema not migrated yet, the server out of connections) is retried in the background, with
// the others running meanwhile, and starts once it opens; /readyz says which are waiting.
type fleet struct {
	cmd   *runCommand
	slots *hrsync.Slots // shared by every account's sync
	log   *slog.Logger

	mu       stdsync.Mutex
	workers  []*worker
	waiting  map[string]error // accounts not open yet, and why
	stopping bool
	retries  stdsync.WaitGroup
	quit     chan struct{} // closed by stop: retries end
	quitOnce stdsync.Once
}

// retryOpen bounds the waits between tries to open an account's warehouse.
var retryOpen = struct{ first, most time.Duration }{10 * time.Second, 5 * time.Minute}

// open builds the account's worker; on success it joins the fleet (not started).
func (f *fleet) open(ctx context.Context, as *accountSetup) (*worker, error) {
	w, err := f.cmd.newWorker(ctx, as, f.slots, f.log)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopping {
		_ = w.store.Close()
		return nil, errors.New("stopping")
	}
	f.workers = append(f.workers, w)
	delete(f.waiting, as.acct.Name)
	return w, nil
}

// retry tries to open the account again and again, waits growing from retryOpen.first to
// retryOpen.most, and starts it once it opens, until the worker stops.
func (f *fleet) retry(ctx context.Context, as *accountSetup) {
	f.mu.Lock()
	if f.quit == nil {
		f.quit = make(chan struct{})
	}
	quit := f.quit
	f.mu.Unlock()
	log := as.acct.Logger(f.log)
	log.Error("account not started: its warehouse did not open; the other accounts run, and this one is tried again",
		"err", f.reason(as.acct.Name), "retry_in", retryOpen.first)
	f.retries.Go(func() {
		wait := retryOpen.first
		for {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-quit:
				t.Stop()
				return
			case <-t.C:
			}
			w, err := f.open(ctx, as)
			if err == nil {
				log.Info("account started: its warehouse opened")
				w.start()
				return
			}
			if f.isStopping() {
				return
			}
			wait = min(2*wait, retryOpen.most)
			f.mu.Lock()
			f.waiting[as.acct.Name] = err
			f.mu.Unlock()
			log.Warn("account still not started: its warehouse did not open", "err", err, "retry_in", wait)
		}
	})
}

func (f *fleet) reason(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting[name]
}

func (f *fleet) isStopping() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stopping
}

// Ready is /readyz: every account's warehouse answers and is current, and none is waiting to
// open; otherwise the reasons, each naming its account.
func (f *fleet) Ready(ctx context.Context) error {
	f.mu.Lock()
	workers := slices.Clone(f.workers)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(f.waiting)) {
		errs = append(errs, fmt.Errorf("account %s: not started: %w", name, f.waiting[name]))
	}
	f.mu.Unlock()
	for _, w := range workers {
		errs = append(errs, w.acct.Wrap(w.store.Ready(ctx)))
	}
	return errors.Join(errs...)
}

// stop ends the retries and stops every account's runner at once, within ctx.
func (f *fleet) stop(ctx context.Context) error {
	f.mu.Lock()
	f.stopping = true
	if f.quit != nil {
		f.quitOnce.Do(func() { close(f.quit) })
	}
	f.mu.Unlock()
	f.retries.Wait() // a retry either ended, or added its worker before stopping was set
	f.mu.Lock()
	workers := slices.Clone(f.workers)
	f.mu.Unlock()
	errs := make([]error, len(workers))
	var wg stdsync.WaitGroup
	for i, w := range workers {
		wg.Go(func() { errs[i] = w.acct.Wrap(w.runner.Stop(ctx)) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// close closes every account's warehouse.
func (f *fleet) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.workers {
		_ = w.store.Close()
	}
}

// worker is one account's part of hrsync run: its warehouse, its client (its budget), and the
// runner of its jobs.
type worker struct {
	acct   *config.Account
	store  *sink.Store
	client *source.Client
	runner *hrsync.Runner
	log    *slog.Logger
}

// start starts the account's jobs.
func (w *worker) start() {
	w.runner.Start()
	if dir := w.acct.Onboarding.Dir; dir != "" {
		w.log.Info("onboarding folder watched", "dir", filepath.Clean(dir), "poll", w.acct.PollInterval)
	}
}

// newWorker opens the account's warehouse and builds its jobs, their metrics labelled with the
// account. An account with neither a schedule nor a folder gets a worker with no jobs (serve
// still answers for it).
func (c *runCommand) newWorker(ctx context.Context, as *accountSetup, slots *hrsync.Slots, log *slog.Logger) (*worker, error) {
	a := as.acct
	log = a.Logger(log)
	if err := checkSource(a); err != nil {
		return nil, err
	}
	store, err := openStore(ctx, a, log)
	if err != nil {
		return nil, err
	}
	w := &worker{acct: a, store: store, log: log}
	fail := func(err error) (*worker, error) { // err names the account (a.wrap) already
		_ = store.Close()
		return nil, err
	}
	var trigger hrsync.Trigger
	if a.Schedule != "" {
		if trigger, err = hrsync.Cron(a.Schedule, a.Location); err != nil {
			return fail(a.Wrap(err))
		}
	}
	if w.client, err = newClient(a, log, store, as.reg, source.ClientOptions{Observe: as.syncMetrics.ObserveRequest}); err != nil {
		return fail(err)
	}
	// One runner runs the sync and the onboarding alike: each on its trigger, under its own
	// warehouse lock, never overlapping itself, a panic recovered and counted, the same metrics.
	var jobs []hrsync.Job
	if a.Schedule != "" {
		// Ledger rows a killed process left "running" are closed now, unless a replica is syncing.
		if _, err := store.CloseAbandonedRuns(ctx); err != nil {
			log.Warn("close abandoned sync runs", "err", err)
		}
		syncer := hrsync.New(w.client, store, hrsync.Options{Concurrency: a.Sync.Concurrency, MaxWalks: a.Sync.MaxWalks,
			MaxDeleteShare: a.Sync.MaxDeleteShare, Window: a.Window, Metrics: as.syncMetrics, Logger: log})
		job := syncer.Job(trigger, a.Resources)
		job.RunAtStart = c.now || a.Sync.RunAtStart
		job.Slots = slots
		jobs = append(jobs, job)
	} else if a.Onboarding.Dir != "" {
		log.Info("no schedule: the worker only watches the onboarding folder")
	} else {
		log.Info("neither a schedule nor an onboarding folder: the account is only served")
	}
	if a.Onboarding.Dir != "" {
		o := newOnboarder(a, w.client, store, as.onboard, false, log)
		jobs = append(jobs, o.Job(a.PollInterval, onboard.PassOptions{Dir: a.Onboarding.Dir, Settle: a.Settle}))
	}
	if w.runner, err = hrsync.NewRunner(ctx, hrsync.RunnerOptions{Lock: store, Metrics: as.syncMetrics, Logger: log}, jobs...); err != nil {
		return fail(a.Wrap(err))
	}
	return w, nil
}
