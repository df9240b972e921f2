package account

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"syscall"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/sync/fleet"
	"github.com/hrsync/hrsync/sync/runner"
	"github.com/prometheus/client_golang/prometheus"
)

// RunOptions are hrsync run's: its flags, and the process's registry and logger.
type RunOptions struct {
	// Serve: also serve the /v1 replica on serve.addr.
	Serve bool
	// Now: sync once at start, then on the schedule.
	Now      bool
	Registry *prometheus.Registry
	Logger   *slog.Logger
}

// workerRun is one hrsync run: what its accounts' workers share.
type workerRun struct {
	serve bool
	now   bool
	reg   *prometheus.Registry
	log   *slog.Logger

	probes probeGroups // the accounts' warehouses as /readyz asks them
	// source is the HTTP client of every account's source client: one transport, so accounts
	// of one source share its idle connections instead of each keeping its own after a run.
	source *http.Client
	// sched wakes every account's jobs: one goroutine and one timer for all their triggers,
	// not one for each job of each account.
	sched *runner.Scheduler
	// deliverEvery is how often the webhooks jobs look for work (0: events.DeliverEvery).
	deliverEvery time.Duration
}

// StopTimeout bounds how long run waits, when asked to stop, for a job's run to end (a sync to
// roll back).
const StopTimeout = 30 * time.Second

// Run is hrsync run, the long-running worker: for every account, syncs on its schedule and watches its
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
func Run(ctx context.Context, cfg config.Settings, opts RunOptions) error {
	c := &workerRun{serve: opts.Serve, now: opts.Now, reg: opts.Registry, log: opts.Logger}
	return c.run(ctx, cfg)
}

func (c *workerRun) run(ctx context.Context, cfg config.Settings) error {
	log := c.log
	if !slices.ContainsFunc(cfg.Accounts, func(a *config.Account) bool {
		return a.Schedule != "" || a.Onboarding.Dir != "" || a.Retention.Any()
	}) {
		what := "set schedule (HRSYNC_SCHEDULE), e.g. @daily, \"0 2 * * *\" or @every 1h, and/or onboarding.dir (HRSYNC_ONBOARDING_DIR)"
		if cfg.Accounts[0].Listed {
			what = "give an account a schedule (e.g. @daily, \"0 2 * * *\" or @every 1h) or an onboarding.dir"
		}
		return errors.New("run: nothing to do: " + what)
	}
	reg := c.reg
	c.source = client.NewHTTPClient()
	c.sched = runner.NewScheduler()
	var api httpserve.Server
	if c.serve {
		var err error
		if api, err = APIServer(cfg, reg, log); err != nil {
			return err
		}
	}
	f := fleet.New[*Worker](fleet.Options{RetryFirst: RetryOpen.First, RetryMost: RetryOpen.Most, Logger: log})
	defer f.Close() // last: after the runners and the servers
	// One set of sync slots, shared by every account's sync.
	slots := runner.NewSlots(cfg.Worker.MaxSyncs)
	var failed []fleet.Account[*Worker]
	setups := make(map[string]*Setup, len(cfg.Accounts))
	sets := NewMetricSets(reg)
	for _, a := range cfg.Accounts {
		as := NewSetup(a, sets)
		setups[a.Name] = as
		fa := fleet.Account[*Worker]{Name: a.Name, Logger: a.Logger(log),
			Open: func(ctx context.Context) (*Worker, error) { return c.newWorker(ctx, as, slots, log) }}
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
	open := &OpenStores{max: cfg.Serve.OpenAccounts}
	defer open.Close() // after the servers, before the fleet
	var stores []Served
	for _, w := range f.Members() {
		as := setups[w.acct.Name]
		copts := client.Options{HTTPClient: c.source, Observe: as.syncMetrics.ObserveRequest}
		l := &Lazy{acct: w.acct, set: open, open: ServeOpener(ctx, w.acct, log, as.waits, copts), readOnly: w.readOnly}
		s := Served{acct: w.acct, store: l, location: w.location}
		if w.acct.Writes == server.WritesForward {
			s.upstream = lazyCreator{l} // on the account's budget
		}
		stores = append(stores, s)
	}
	servers := []httpserve.Server{{Name: "metrics", Addr: cfg.Metrics.Addr, Handler: prom.Mux(reg, f, log)}}
	if c.serve {
		mux, err := APIMux(cfg, stores, prom.NewServe(reg), log)
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
		stopCtx, cancel := context.WithTimeout(context.Background(), StopTimeout)
		defer cancel()
		_ = f.Stop(stopCtx)
		return runMetricsInUse(err)
	}
	log.Info("stopping: the jobs first, then the servers")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StopTimeout)
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
