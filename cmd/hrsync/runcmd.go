package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/sink"

	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/sync/fleet"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/retention"
	"github.com/hrsync/hrsync/sync/runner"
	"github.com/hrsync/hrsync/sync/walk"
)

// runCommand is hrsync run, the worker.
type runCommand struct {
	serve bool
	now   bool

	probes probeGroups // the accounts' warehouses as /readyz asks them
	// source is the HTTP client of every account's source client: one transport, so accounts
	// of one source share its idle connections instead of each keeping its own after a run.
	source *http.Client
}

func (c *runCommand) flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.serve, "serve", false, "also serve the /v1 replica on serve.addr")
	fs.BoolVar(&c.now, "now", false, "sync once at start, then on the schedule")
}

// stopTimeout bounds how long run waits, when asked to stop, for a job's run to end (a sync to
// roll back).
const stopTimeout = 30 * time.Second

// run is the long-running worker: for every account, syncs on its schedule and watches its
// onboarding folder, both jobs of the account's runner.Runner (one run of each across workers,
// by the account's warehouse locks); the metrics and health endpoints when metrics.addr is set,
// and with --serve the /v1 replica of every account. Accounts run side by side, each on its own
// schedule, lock and budget: one failing never stops the others, not even at start (see
// fleet). It runs until SIGTERM or SIGINT, with or without servers. On SIGTERM or SIGINT it
// stops fetching (open transactions roll back, or commit if they were committing), stops the
// runners, then the servers, then closes the warehouses, and exits 0.
func (c *runCommand) run(ctx context.Context, cfg config.Settings, _, stderr io.Writer) error {
	log := cfg.Logger(stderr)
	if !slices.ContainsFunc(cfg.Accounts, func(a *config.Account) bool {
		return a.Schedule != "" || a.Onboarding.Dir != "" || a.Retention.Any()
	}) {
		what := "set schedule (HRSYNC_SCHEDULE), e.g. @daily, \"0 2 * * *\" or @every 1h, and/or onboarding.dir (HRSYNC_ONBOARDING_DIR)"
		if cfg.Accounts[0].Listed {
			what = "give an account a schedule (e.g. @daily, \"0 2 * * *\" or @every 1h) or an onboarding.dir"
		}
		return errors.New("run: nothing to do: " + what)
	}
	reg := newRegistry()
	c.source = client.NewHTTPClient()
	var api httpserve.Server
	if c.serve {
		var err error
		if api, err = apiServer(cfg, reg, log); err != nil {
			return err
		}
	}
	f := fleet.New[*worker](fleet.Options{RetryFirst: retryOpen.first, RetryMost: retryOpen.most, Logger: log})
	defer f.Close() // last: after the runners and the servers
	// One set of sync slots, shared by every account's sync.
	slots := runner.NewSlots(cfg.Worker.MaxSyncs)
	var failed []fleet.Account[*worker]
	for _, a := range cfg.Accounts {
		as := newAccountSetup(a, reg)
		fa := fleet.Account[*worker]{Name: a.Name, Logger: a.Logger(log),
			Open: func(ctx context.Context) (*worker, error) { return c.newWorker(ctx, as, slots, log) }}
		if _, err := f.Open(ctx, fa); err != nil {
			failed = append(failed, fa)
		}
	}
	switch {
	case len(failed) == len(cfg.Accounts):
		// Nothing would run: the operator hears why at once (a warehouse out of reach, a
		// schema behind) rather than from a worker idling on retries.
		return fmt.Errorf("run: %w", f.Reason(failed[0].Name))
	case len(failed) > 0 && c.serve:
		// The replica answers the accounts it was built with: all of them, or none.
		return fmt.Errorf("run: %w", f.Reason(failed[0].Name))
	}

	var stores []accountStore
	for _, w := range f.Members() {
		s := accountStore{acct: w.acct, store: w.store}
		if w.acct.Writes == server.WritesForward {
			s.upstream = w.client // one budget for the account
		}
		stores = append(stores, s)
	}
	servers := []httpserve.Server{{Name: "metrics", Addr: cfg.Metrics.Addr, Handler: prom.Mux(reg, f, log)}}
	if c.serve {
		mux, err := apiMux(cfg, stores, prom.NewServe(reg), log)
		if err != nil {
			return err
		}
		api.Handler = mux
		servers = append(servers, api)
	}
	srvCtx, stopServers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServers()
	served := make(chan error, 1)
	go func() { served <- httpserve.ServeAll(srvCtx, log, servers) }()

	for _, w := range f.Members() {
		w.Start()
	}
	for _, fa := range failed {
		f.Retry(ctx, fa)
	}
	select {
	case <-ctx.Done():
	case err := <-served: // a server could not start or failed
		stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = f.Stop(stopCtx)
		return err
	}
	log.Info("stopping: the jobs first, then the servers")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	// A sync rolls back; an onboarding's row being sent is answered or left "sending" for the
	// next run.
	if err := f.Stop(stopCtx); err != nil {
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
	syncMetrics *walk.Metrics
	jobMetrics  *runner.Metrics
	onboard     *onboard.Metrics
	retention   *retention.Metrics
}

func newAccountSetup(a *config.Account, reg prometheus.Registerer) *accountSetup {
	as := &accountSetup{acct: a, reg: prometheus.WrapRegistererWith(prometheus.Labels{"account": a.Name}, reg)}
	as.syncMetrics = walk.NewMetrics(as.reg)
	as.jobMetrics = runner.NewMetrics(as.reg)
	if a.Schedule != "" {
		// Said before the warehouse opens: an account whose warehouse never does is stale.
		as.syncMetrics.Configure(a.Resources)
	}
	if a.Onboarding.Dir != "" {
		as.onboard = onboard.NewMetrics(as.reg)
	}
	if a.Retention.Any() {
		as.retention = retention.NewMetrics(as.reg)
	}
	return as
}

// retryOpen bounds the waits between tries to open an account's warehouse (fleet.Options).
var retryOpen = struct{ first, most time.Duration }{fleet.DefaultRetryFirst, fleet.DefaultRetryMost}

// worker is one account's part of hrsync run: its warehouse, its client (its budget), and the
// runner of its jobs.
type worker struct {
	acct   *config.Account
	store  *sink.Store
	client *client.Client
	runner *runner.Runner
	log    *slog.Logger
	probe  *probeGroup // how /readyz asks its warehouse
}

// Start starts the account's jobs.
func (w *worker) Start() {
	w.runner.Start()
	if dir := w.acct.Onboarding.Dir; dir != "" {
		w.log.Info("onboarding folder watched", "dir", filepath.Clean(dir), "poll", w.acct.PollInterval)
	}
}

// Stop stops the account's jobs within ctx.
func (w *worker) Stop(ctx context.Context) error { return w.acct.Wrap(w.runner.Stop(ctx)) }

// Ready is nil when the account's warehouse answers and is current, as its probe group last
// found it (see probeGroup).
func (w *worker) Ready(ctx context.Context) error { return w.acct.Wrap(w.probe.ready(ctx, w)) }

// Close closes the account's warehouse.
func (w *worker) Close() error { return w.store.Close() }

// newWorker opens the account's warehouse and builds its jobs, their metrics labelled with the
// account. An account with neither a schedule nor a folder gets a worker with no jobs (serve
// still answers for it).
func (c *runCommand) newWorker(ctx context.Context, as *accountSetup, slots *runner.Slots, log *slog.Logger) (*worker, error) {
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
	// Every job writes (a sync, the onboarding ledger, retention's erasures): a worker with any
	// is refused on a standby now, not at its first run. One with none is only served.
	if a.Schedule != "" || a.Onboarding.Dir != "" || a.Retention.Any() {
		if err := store.Writable(ctx); err != nil {
			return fail(a.Wrap(err))
		}
	}
	var trigger runner.Trigger
	if a.Schedule != "" {
		if trigger, err = runner.Cron(a.Schedule, a.Location); err != nil {
			return fail(a.Wrap(err))
		}
		// Spread: many accounts on one schedule start each at its own place in the window.
		trigger = trigger.Delayed(a.Offset())
	}
	if w.client, err = newClient(a, log, store, as.reg, client.Options{HTTPClient: c.source, Observe: as.syncMetrics.ObserveRequest}); err != nil {
		return fail(err)
	}
	// One runner runs the sync and the onboarding alike: each on its trigger, under its own
	// warehouse lock, never overlapping itself, a panic recovered and counted, the same metrics.
	var jobs []runner.Job
	if a.Schedule != "" {
		// Ledger rows a killed process left "running" are closed now, unless a replica is syncing.
		if _, err := store.CloseAbandonedRuns(ctx); err != nil {
			log.Warn("close abandoned sync runs", "err", err)
		}
		syncer := walk.New(w.client, store, walk.Options{Concurrency: a.Sync.Concurrency, MaxWalks: a.Sync.MaxWalks,
			MaxDeleteShare: a.Sync.MaxDeleteShare, Window: a.Window, Metrics: as.syncMetrics, Logger: log})
		job := syncer.Job(trigger, a.Resources)
		job.RunAtStart = c.now || a.Sync.RunAtStart
		job.Slots = slots
		jobs = append(jobs, job)
	} else if a.Onboarding.Dir != "" {
		log.Info("no schedule: the worker only watches the onboarding folder")
	} else if !a.Retention.Any() {
		log.Info("neither a schedule nor an onboarding folder: the account is only served")
	}
	if a.Onboarding.Dir != "" {
		o := newOnboarder(a, w.client, store, as.onboard, false, log)
		jobs = append(jobs, o.Job(a.PollInterval, onboard.PassOptions{Dir: a.Onboarding.Dir, Settle: a.Settle}))
	}
	if a.Retention.Any() {
		// Checked every hour, run once a day, under the sync's lock: see retention.Job.
		log.Info("retention rules set: erased once a day", "rules", a.Retention.Describe())
		// Its hourly checks are spread too: they take the sync's lock, and 1,000 accounts'
		// checks at the same moment would each hold a warehouse session at once.
		job := retention.Job(store, a.Retention, as.retention, log)
		job.Trigger = job.Trigger.Delayed(a.Offset() % retention.Every)
		jobs = append(jobs, job)
	}
	if w.runner, err = runner.NewRunner(ctx, runner.RunnerOptions{Lock: restingLocker{store}, Metrics: as.jobMetrics, Logger: log}, jobs...); err != nil {
		return fail(a.Wrap(err))
	}
	// Nothing runs before its trigger: the sessions opening it took are not kept until then.
	store.CloseIdle()
	c.probes.join(w)
	return w, nil
}

// restingLocker is the account's warehouse as its runner's lock: once a run is over (its lock
// given back) or not begun (another process holds it), the sessions it used are closed at once
// rather than after the pool's idle time, so a worker's sessions follow the runs going on, not
// the accounts it went through in the last few seconds (with --now, or a schedule shared by
// many accounts, it tries one after another).
type restingLocker struct{ store *sink.Store }

func (l restingLocker) TryLock(ctx context.Context, name string) (context.Context, func(), bool, error) {
	held, release, ok, err := l.store.TryLock(ctx, name)
	if !ok {
		l.store.CloseIdle()
		return held, release, ok, err
	}
	return held, func() {
		release()
		l.store.CloseIdle()
	}, true, nil
}
