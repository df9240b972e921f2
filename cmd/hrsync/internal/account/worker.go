package account

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/sync/events"
	"github.com/hrsync/hrsync/sync/fleet"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/retention"
	"github.com/hrsync/hrsync/sync/runner"
	"github.com/hrsync/hrsync/sync/walk"
	"github.com/prometheus/client_golang/prometheus"
)

// MetricSets are the worker's metrics of all its accounts: one collector for each family, which
// keeps each account's series as plain numbers of its own and labels them with its name
// (account). An account's series cost a few hundred bytes of heap, not the 25 KB of a
// client_golang vector per family for each account (a series object each).
type MetricSets struct {
	sync      *walk.MetricSet
	jobs      *runner.MetricSet
	onboard   *onboard.MetricSet
	retention *retention.MetricSet
	events    *events.MetricSet
	budgets   *prom.Budgets
}

// NewMetricSets registers the worker's families on reg. A family none of the accounts has a
// series of (onboarding's, without a folder) is not in the exposition.
func NewMetricSets(reg prometheus.Registerer) *MetricSets {
	return &MetricSets{
		sync:      walk.NewMetricSet(reg, "account"),
		jobs:      runner.NewMetricSet(reg, "account"),
		onboard:   onboard.NewMetricSet(reg, "account"),
		retention: retention.NewMetricSet(reg, "account"),
		events:    events.NewMetricSet(reg, "account"),
		budgets:   prom.NewBudgets(reg),
	}
}

// Setup is what one account's worker is built from, made once per process: its metrics
// are added once, whether its warehouse opens at the first try or a later one.
type Setup struct {
	acct        *config.Account
	syncMetrics *walk.Metrics
	jobMetrics  *runner.Metrics
	onboard     *onboard.Metrics
	retention   *retention.Metrics
	events      *events.Metrics
	// waits are the account's shared budget's, across the runs (and the replica's forwarded
	// creates) that each open one; nil without a shared budget.
	waits *budgetWaits
}

func NewSetup(a *config.Account, sets *MetricSets) *Setup {
	as := &Setup{acct: a}
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
	if a.Schedule != "" {
		names := make([]string, len(a.Webhooks))
		for i, w := range a.Webhooks {
			names[i] = w.Name
		}
		as.events = sets.events.Account(a.Name, names)
	}
	if SharesBudget(a) {
		as.waits = &budgetWaits{}
		sets.budgets.Add(a.Name, as.waits)
	}
	return as
}

// RetryOpen bounds the waits between tries to open an account's warehouse (fleet.Options);
// tests shorten them.
var RetryOpen = struct{ First, Most time.Duration }{fleet.DefaultRetryFirst, fleet.DefaultRetryMost}

// WorkerOptions are what one account's worker shares with the others of its process.
type WorkerOptions struct {
	// Source is the HTTP client of every account's source client.
	Source *http.Client
	// Scheduler wakes every account's jobs.
	Scheduler *runner.Scheduler
	// Slots bound the syncs running at once across accounts; nil: no bound.
	Slots *runner.Slots
	// Now syncs once at start, then on the schedule.
	Now    bool
	Logger *slog.Logger
	// DeliverEvery is how often an account's webhooks job looks for work (default
	// events.DeliverEvery; tests shorten it).
	DeliverEvery time.Duration
}

// NewWorker is one account's worker outside a whole hrsync run (Run builds its own): checked,
// its jobs built, not started.
func NewWorker(ctx context.Context, as *Setup, opts WorkerOptions) (*Worker, error) {
	c := &workerRun{now: opts.Now, source: opts.Source, sched: opts.Scheduler, deliverEvery: opts.DeliverEvery}
	return c.newWorker(ctx, as, opts.Slots, opts.Logger)
}

// Worker is one account's part of hrsync run: the runner of its jobs, and what opens its
// warehouse and client for each run (accountRuns); between runs it holds neither.
type Worker struct {
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
func (w *Worker) Start() {
	w.runner.Start()
	if dir := w.acct.Onboarding.Dir; dir != "" {
		w.log.Info("onboarding folder watched", "dir", filepath.Clean(dir), "poll", w.acct.PollInterval)
	}
}

// Stop stops the account's jobs within ctx, then sends the notifications they queued, within
// ctx and NotifyDrain.
func (w *Worker) Stop(ctx context.Context) error {
	err := w.runner.Stop(ctx)
	if w.notifier != nil {
		nctx, cancel := context.WithTimeout(ctx, NotifyDrain)
		defer cancel()
		err = errors.Join(err, w.notifier.Close(nctx))
	}
	return w.acct.Wrap(err)
}

// Ready is nil when the account's warehouse answers and is current, as its probe group last
// found it (see probeGroup).
func (w *Worker) Ready(ctx context.Context) error { return w.acct.Wrap(w.probe.ready(ctx, w)) }

// Close releases what the account holds: nothing once its runs are over (Stop).
func (w *Worker) Close() error { return nil }

// newWorker checks the account's warehouse (it opens, its schema is current, it takes writes
// when the account has jobs) and closes it again, then builds its jobs, their metrics labelled
// with the account: each run opens the warehouse and client it uses (accountRuns). An account
// with neither a schedule nor a folder gets a worker with no jobs (serve still answers for it).
func (c *workerRun) newWorker(ctx context.Context, as *Setup, slots *runner.Slots, log *slog.Logger) (*Worker, error) {
	a := as.acct
	log = a.Logger(log)
	if err := CheckSource(a); err != nil {
		return nil, err
	}
	copts := client.Options{HTTPClient: c.source, Observe: as.syncMetrics.ObserveRequest}
	w := &Worker{acct: a, log: log}
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
		// The webhooks' deliverer, when the account has subscribers: told when this process
		// publishes events (a load, the events job), so that its job passes at once and
		// otherwise opens nothing while it knows of no work (events.Deliverer).
		published := func() {}
		var deliverer *events.Deliverer
		if len(a.Webhooks) > 0 {
			dopts, err := DeliverOptions(a, as.events, log)
			if err != nil {
				return nil, err
			}
			dopts.Every = c.deliverEvery
			deliverer = events.NewDeliverer(dopts)
			published = deliverer.Published
		}
		wopts := a.WalkOptions() // the load guards included: a held load stays held until its source is back or a person accepts it
		wopts.Metrics, wopts.Logger = as.syncMetrics, log
		wopts.Finished = func(r walk.Result) {
			if r.Events.Published > 0 {
				published()
			}
		}
		syncer := func(run *accountRun) *walk.Syncer { return walk.New(run.client, run.store, wopts) }
		job := syncer(&accountRun{}).Job(trigger, a.Resources)
		job.RunAtStart = c.now || a.Sync.RunAtStart
		job.Slots = slots
		jobs = append(jobs, w.runs.job(job, func(run *accountRun) runner.Job { return syncer(run).Job(trigger, a.Resources) }))
		// The events loads derive and date ahead go out as they come due (docs/events.md).
		ev := events.Job(nil, as.events, log, published)
		ev.Trigger = ev.Trigger.Delayed(a.Offset() % events.Every)
		jobs = append(jobs, w.runs.job(ev, func(run *accountRun) runner.Job { return events.Job(run.store, as.events, log, published) }))
		if deliverer != nil {
			jobs = append(jobs, w.runs.job(deliverer.Job(nil), func(run *accountRun) runner.Job { return deliverer.Job(run.store) }))
		}
	} else if a.Onboarding.Dir != "" {
		log.Info("no schedule: the worker only watches the onboarding folder")
	} else if !a.Retention.Any() {
		log.Info("neither a schedule nor an onboarding folder: the account is only served")
	}
	if a.Onboarding.Dir != "" {
		// The account's for as long as the worker runs, on each run's warehouse and client.
		opts := OnboardOptions(a, as.onboard, false, log)
		if opts.Notifier, err = NewNotifier(a, as.onboard, log); err != nil {
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
func (c *workerRun) checkWorker(ctx context.Context, w *Worker, copts client.Options) error {
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
	if _, _, err := NewBudgetedClient(a, w.log, store, copts); err != nil {
		return err
	}
	return nil
}

// DeliverOptions are the account's webhook deliveries' (events.webhooks): each subscriber's
// payload is the event as its scope reads it, as the pull feed gives it to a key of that scope.
func DeliverOptions(a *config.Account, m *events.Metrics, log *slog.Logger) (events.DeliverOptions, error) {
	opts := events.DeliverOptions{RetryFor: a.RetryFor, Timeout: a.Timeout, RetryBackoff: a.RetryBackoff, Metrics: m, Logger: log}
	for _, w := range a.Webhooks {
		scope, err := server.NewEventScope(w.Scope, a.Declarations)
		if err != nil {
			return opts, a.Wrap(fmt.Errorf("events.webhooks %s: %w", w.Name, err))
		}
		opts.Subscribers = append(opts.Subscribers, events.Subscriber{Name: w.Name, URL: w.URL, Secret: w.Secret, Payload: scope.Event})
	}
	return opts, nil
}
