package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

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

// run is the long-running worker: syncs on the schedule and watches the onboarding folder, both
// jobs of one hrsync.Runner (one run of each across replicas), the metrics and health endpoints
// when metrics.addr is set, and with --serve the /v1 replica. It runs until SIGTERM or SIGINT,
// with or without servers. On SIGTERM or SIGINT it stops fetching (the open transaction rolls
// back, or commits if it was committing), stops the runner, then the servers, then closes the
// warehouse, and exits 0.
func (c *runCommand) run(ctx context.Context, cfg settings, _, stderr io.Writer) error {
	log := cfg.logger(stderr)
	if cfg.Schedule == "" && cfg.Onboarding.Dir == "" {
		return errors.New("run: nothing to do: set schedule (HRSYNC_SCHEDULE), e.g. @daily, \"0 2 * * *\" or @every 1h, " +
			"and/or onboarding.dir (HRSYNC_ONBOARDING_DIR)")
	}
	reg := newRegistry()
	syncMetrics := hrsync.NewMetrics(reg)
	if err := checkSource(cfg); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	store, err := cfg.openStore(ctx, log)
	if err != nil {
		return err
	}
	defer store.Close() // last: after the runner and the servers
	client, err := newClient(cfg, log, store, reg, source.ClientOptions{Observe: syncMetrics.ObserveRequest})
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	// One runner runs the sync and the onboarding alike: each on its trigger, under its own
	// warehouse lock, never overlapping itself, a panic recovered and counted, the same metrics.
	var jobs []hrsync.Job
	if cfg.Schedule != "" {
		syncMetrics.Configure(cfg.resources)
		// Ledger rows a killed process left "running" are closed now, unless a replica is syncing.
		if _, err := store.CloseAbandonedRuns(ctx); err != nil {
			log.Warn("close abandoned sync runs", "err", err)
		}
		syncer := hrsync.New(client, store, hrsync.Options{Concurrency: cfg.Sync.Concurrency, MaxWalks: cfg.Sync.MaxWalks,
			MaxDeleteShare: cfg.Sync.MaxDeleteShare, Window: cfg.window, Metrics: syncMetrics, Logger: log})
		trigger, err := hrsync.Cron(cfg.Schedule, cfg.location)
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		job := syncer.Job(trigger, cfg.resources)
		job.RunAtStart = c.now || cfg.Sync.RunAtStart
		jobs = append(jobs, job)
	} else {
		log.Info("no schedule: the worker only watches the onboarding folder")
	}
	if cfg.Onboarding.Dir != "" {
		o := newOnboarder(cfg, client, store, onboard.NewMetrics(reg), false, log)
		jobs = append(jobs, o.Job(cfg.pollInterval, onboard.PassOptions{Dir: cfg.Onboarding.Dir, Settle: cfg.settle}))
	}
	runner, err := hrsync.NewRunner(ctx, hrsync.RunnerOptions{Lock: store, Metrics: syncMetrics, Logger: log}, jobs...)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}

	servers := []server{{name: "metrics", addr: cfg.Metrics.Addr, handler: metricsMux(reg, store, log)}}
	if c.serve {
		var upstream *source.Client
		if cfg.writes == serve.WritesForward {
			upstream = client // one budget for the account
		}
		mux, err := apiMux(cfg, store, upstream, newServeMetrics(reg), log)
		if err != nil {
			return err
		}
		servers = append(servers, server{name: "serve", addr: cfg.Serve.Addr, handler: mux})
	}
	srvCtx, stopServers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServers()
	served := make(chan error, 1)
	go func() { served <- serveAll(srvCtx, log, servers) }()

	runner.Start()
	if cfg.Onboarding.Dir != "" {
		log.Info("onboarding folder watched", "dir", filepath.Clean(cfg.Onboarding.Dir), "poll", cfg.pollInterval)
	}
	select {
	case <-ctx.Done():
	case err := <-served: // a server could not start or failed
		stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = runner.Stop(stopCtx)
		return err
	}
	log.Info("stopping: the jobs first, then the servers")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	// A sync rolls back; an onboarding's row being sent is answered or left "sending" for the
	// next run.
	if err := runner.Stop(stopCtx); err != nil {
		log.Error("stop", "err", err)
	}
	stopServers()
	if err := <-served; err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
