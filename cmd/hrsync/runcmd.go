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
	"syscall"
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
	// sched wakes every account's jobs: one goroutine and one timer for all their triggers,
	// not one for each job of each account.
	sched *runner.Scheduler
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
// fleet). An account's warehouse and client are open only while one of its runs goes on
// (accountRuns), and one scheduler wakes every account's jobs: an account waiting for its
// schedule holds its runner and its metric series, nothing else. It runs until SIGTERM or
// SIGINT, with or without servers. On SIGTERM or SIGINT it stops fetching (open transactions
// roll back, or commit if they were committing), stops the runners (each run closes its
// warehouse as it ends), then the servers, then closes the replica's warehouses, and exits 0.
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
	c.sched = runner.NewScheduler()
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
	setups := make(map[string]*accountSetup, len(cfg.Accounts))
	sets := newMetricSets(reg)
	for _, a := range cfg.Accounts {
		as := newAccountSetup(a, sets)
		setups[a.Name] = as
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

	// The replica reads each account's warehouse through a lazy store, as serve does: opened at
	// its account's first request, closed again when serve.open_accounts are open.
	open := &openStores{max: cfg.Serve.OpenAccounts}
	defer open.Close() // after the servers, before the fleet
	var stores []accountStore
	for _, w := range f.Members() {
		as := setups[w.acct.Name]
		copts := client.Options{HTTPClient: c.source, Observe: as.syncMetrics.ObserveRequest}
		l := &lazyStore{acct: w.acct, set: open, open: serveOpener(ctx, w.acct, log, as.waits, copts), readOnly: w.readOnly}
		s := accountStore{acct: w.acct, store: l, location: w.location}
		if w.acct.Writes == server.WritesForward {
			s.upstream = lazyCreator{l} // on the account's budget
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
		return runMetricsInUse(err)
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

// runMetricsInUse says what to change when the worker's metrics.addr is taken: most often by
// hrsync serve started first from the same configuration, which binds metrics.addr unless
// serve.metrics_addr is set. One line, as serve's (metricsInUse).
func runMetricsInUse(err error) error {
	var le *httpserve.ListenError
	if !errors.As(err, &le) || le.Name != "metrics" || !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	return fmt.Errorf("run: metrics address %s is in use (by hrsync serve?): set serve.metrics_addr (HRSYNC_SERVE_METRICS_ADDR) for serve, or metrics.addr (HRSYNC_METRICS_ADDR) to another address (%w)", le.Addr, syscall.EADDRINUSE)
}

// metricSets are the worker's metrics of all its accounts: one collector for each family, which
// keeps each account's series as plain numbers of its own and labels them with its name
// (account). An account's series cost a few hundred bytes of heap, not the 25 KB of a
// client_golang vector per family for each account (a series object each).
type metricSets struct {
	sync      *walk.MetricSet
	jobs      *runner.MetricSet
	onboard   *onboard.MetricSet
	retention *retention.MetricSet
	budgets   *prom.Budgets
}

// newMetricSets registers the worker's families on reg. A family none of the accounts has a
// series of (onboarding's, without a folder) is not in the exposition.
func newMetricSets(reg prometheus.Registerer) *metricSets {
	return &metricSets{
		sync:      walk.NewMetricSet(reg, "account"),
		jobs:      runner.NewMetricSet(reg, "account"),
		onboard:   onboard.NewMetricSet(reg, "account"),
		retention: retention.NewMetricSet(reg, "account"),
		budgets:   prom.NewBudgets(reg),
	}
}

// accountSetup is what one account's worker is built from, made once per process: its metrics
// are added once, whether its warehouse opens at the first try or a later one.
type accountSetup struct {
	acct        *config.Account
	syncMetrics *walk.Metrics
	jobMetrics  *runner.Metrics
	onboard     *onboard.Metrics
	retention   *retention.Metrics
	// waits are the account's shared budget's, across the runs (and the replica's forwarded
	// creates) that each open one; nil without a shared budget.
	waits *budgetWaits
}

func newAccountSetup(a *config.Account, sets *metricSets) *accountSetup {
	as := &accountSetup{acct: a}
	as.syncMetrics = sets.sync.Account(a.Name)
	as.jobMetrics = sets.jobs.Account(a.Name)
	if a.Schedule != "" {
		// Said before the warehouse opens: an account whose warehouse never does is stale.
		as.syncMetrics.Configure(a.Resources)
	}
	if a.Onboarding.Dir != "" {
		as.onboard = sets.onboard.Account(a.Name)
	}
	if a.Retention.Any() {
		as.retention = sets.retention.Account(a.Name)
	}
	if sharesBudget(a) {
		as.waits = &budgetWaits{}
		sets.budgets.Add(a.Name, as.waits)
	}
	return as
}

// retryOpen bounds the waits between tries to open an account's warehouse (fleet.Options).
var retryOpen = struct{ first, most time.Duration }{fleet.DefaultRetryFirst, fleet.DefaultRetryMost}

// worker is one account's part of hrsync run: the runner of its jobs, and what opens its
// warehouse and client for each run (accountRuns); between runs it holds neither.
type worker struct {
	acct   *config.Account
	runs   *accountRuns
	runner *runner.Runner
	log    *slog.Logger
	probe  *probeGroup // how /readyz asks its warehouse
	// notifier tells onboarding.notify's webhook of the files filed; nil without one.
	notifier *onboard.Notifier
	// location and readOnly are what the warehouse said at start (serve's lazy stores start
	// from them).
	location string
	readOnly bool
}

// Start starts the account's jobs.
func (w *worker) Start() {
	w.runner.Start()
	if dir := w.acct.Onboarding.Dir; dir != "" {
		w.log.Info("onboarding folder watched", "dir", filepath.Clean(dir), "poll", w.acct.PollInterval)
	}
}

// Stop stops the account's jobs within ctx, then sends the notifications they queued, within
// ctx and notifyDrain.
func (w *worker) Stop(ctx context.Context) error {
	err := w.runner.Stop(ctx)
	if w.notifier != nil {
		nctx, cancel := context.WithTimeout(ctx, notifyDrain)
		defer cancel()
		err = errors.Join(err, w.notifier.Close(nctx))
	}
	return w.acct.Wrap(err)
}

// Ready is nil when the account's warehouse answers and is current, as its probe group last
// found it (see probeGroup).
func (w *worker) Ready(ctx context.Context) error { return w.acct.Wrap(w.probe.ready(ctx, w)) }

// Close releases what the account holds: nothing once its runs are over (Stop).
func (w *worker) Close() error { return nil }

// newWorker checks the account's warehouse (it opens, its schema is current, it takes writes
// when the account has jobs) and closes it again, then builds its jobs, their metrics labelled
// with the account: each run opens the warehouse and client it uses (accountRuns). An account
// with neither a schedule nor a folder gets a worker with no jobs (serve still answers for it).
func (c *runCommand) newWorker(ctx context.Context, as *accountSetup, slots *runner.Slots, log *slog.Logger) (*worker, error) {
	a := as.acct
	log = a.Logger(log)
	if err := checkSource(a); err != nil {
		return nil, err
	}
	copts := client.Options{HTTPClient: c.source, Observe: as.syncMetrics.ObserveRequest}
	w := &worker{acct: a, log: log}
	if err := c.checkWorker(ctx, w, copts); err != nil {
		return nil, err
	}
	w.runs = &accountRuns{acct: a, ctx: ctx, log: log, copts: copts, waits: as.waits}
	var trigger runner.Trigger
	var err error
	if a.Schedule != "" {
		if trigger, err = runner.Cron(a.Schedule, a.Location); err != nil {
			return nil, a.Wrap(err)
		}
		// Spread: many accounts on one schedule start each at its own place in the window.
		trigger = trigger.Delayed(a.Offset())
	}
	// One runner runs the sync and the onboarding alike: each on its trigger, under its own
	// warehouse lock, never overlapping itself, a panic recovered and counted, the same metrics.
	var jobs []runner.Job
	if a.Schedule != "" {
		wopts := a.WalkOptions() // the load guards included: a held load stays held until its source is back or a person accepts it
		wopts.Metrics, wopts.Logger = as.syncMetrics, log
		syncer := func(run *accountRun) *walk.Syncer { return walk.New(run.client, run.store, wopts) }
		job := syncer(&accountRun{}).Job(trigger, a.Resources)
		job.RunAtStart = c.now || a.Sync.RunAtStart
		job.Slots = slots
		jobs = append(jobs, w.runs.job(job, func(run *accountRun) runner.Job { return syncer(run).Job(trigger, a.Resources) }))
	} else if a.Onboarding.Dir != "" {
		log.Info("no schedule: the worker only watches the onboarding folder")
	} else if !a.Retention.Any() {
		log.Info("neither a schedule nor an onboarding folder: the account is only served")
	}
	if a.Onboarding.Dir != "" {
		// The account's for as long as the worker runs, on each run's warehouse and client.
		opts := onboardOptions(a, as.onboard, false, log)
		if opts.Notifier, err = newNotifier(a, as.onboard, log); err != nil {
			return nil, err
		}
		w.notifier = opts.Notifier
		o := onboard.New(runUpstream{w.runs}, runLedger{w.runs}, opts)
		job := o.Job(a.PollInterval, onboard.PassOptions{Dir: a.Onboarding.Dir, Settle: a.Settle, Retries: &onboard.FailedRetries{}})
		jobs = append(jobs, w.runs.job(job, func(*accountRun) runner.Job { return job }))
	}
	if a.Retention.Any() {
		// Checked every hour, run once a day, under the sync's lock: see retention.Job.
		log.Info("retention rules set: erased once a day", "rules", a.Retention.Describe())
		// Its hourly checks are spread too: they take the sync's lock, and 1,000 accounts'
		// checks at the same moment would each hold a warehouse session at once.
		job := retention.Job(nil, a.Retention, as.retention, log)
		job.Trigger = job.Trigger.Delayed(a.Offset() % retention.Every)
		jobs = append(jobs, w.runs.job(job, func(run *accountRun) runner.Job {
			return retention.Job(run.store, a.Retention, as.retention, log)
		}))
	}
	if w.runner, err = runner.NewRunner(ctx, runner.RunnerOptions{Lock: runLocker{w.runs}, Metrics: as.jobMetrics, Logger: log, Scheduler: c.sched}, jobs...); err != nil {
		return nil, a.Wrap(err)
	}
	c.probes.join(w)
	w.runs.seen = func(err error) { w.probe.saw(w, err) }
	return w, nil
}

// checkWorker opens the account's warehouse once, as the worker starts, and closes it again:
// it answers and its schema is current; it takes writes, for an account with jobs (every job
// writes: one is refused on a standby now, not at its first run); the ledger rows a killed
// process left "running" are closed, for an account with a schedule; and its client can be
// built. Where it is and whether it takes writes are kept for serve.
func (c *runCommand) checkWorker(ctx context.Context, w *worker, copts client.Options) error {
	a := w.acct
	opts := a.SinkOptions()
	opts.Logger = w.log
	store, err := sink.Open(ctx, a.Warehouse.URL, opts)
	if err != nil {
		return a.Wrap(err)
	}
	defer store.Close()
	w.location = store.Location()
	if err := store.Writable(ctx); err != nil {
		if a.Schedule != "" || a.Onboarding.Dir != "" || a.Retention.Any() || !errors.Is(err, sink.ErrReadOnly) {
			return a.Wrap(err)
		}
		w.readOnly = true
	}
	if a.Schedule != "" {
		// Unless a replica is syncing.
		if _, err := store.CloseAbandonedRuns(ctx); err != nil {
			w.log.Warn("close abandoned sync runs", "err", err)
		}
	}
	if _, _, err := newBudgetedClient(a, w.log, store, copts); err != nil {
		return err
	}
	return nil
}
