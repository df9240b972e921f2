package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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

// stopTimeout bounds how long run waits, when asked to stop, for a sync to roll back.
const stopTimeout = 30 * time.Second

// run is the long-running worker: syncs on the schedule (one runner across replicas), watches
// the onboarding folder, the metrics and health endpoints when metrics.addr is set, and with
// --serve the /v1 replica. It runs until SIGTERM or SIGINT, with or without servers. On SIGTERM or SIGINT it stops
// fetching (the open transaction rolls back, or commits if it was committing), stops the
// scheduler, then the servers, then closes the warehouse, and exits 0.
func (c *runCommand) run(ctx context.Context, cfg settings, _, stderr io.Writer) error {
	log := cfg.logger(stderr)
	if cfg.Schedule == "" && cfg.Onboarding.Dir == "" {
		return errors.New("run: nothing to do: set schedule (HRSYNC_SCHEDULE), e.g. @daily, \"0 2 * * *\" or @every 1h, " +
			"and/or onboarding.dir (HRSYNC_ONBOARDING_DIR)")
	}
	reg := newRegistry()
	syncMetrics := hrsync.NewMetrics(reg)
	client, err := newClient(cfg, log, source.ClientOptions{Observe: syncMetrics.ObserveRequest})
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	store, err := cfg.openStore(ctx, log)
	if err != nil {
		return err
	}
	defer store.Close() // last: after the scheduler and the servers
	var sched *hrsync.Scheduler
	if cfg.Schedule != "" {
		// Ledger rows a killed process left "running" are closed now, unless a replica is syncing.
		if _, err := store.CloseAbandonedRuns(ctx); err != nil {
			log.Warn("close abandoned sync runs", "err", err)
		}
		syncer := hrsync.New(client, store, hrsync.Options{Concurrency: cfg.Sync.Concurrency, MaxWalks: cfg.Sync.MaxWalks,
			MaxDeleteShare: cfg.Sync.MaxDeleteShare, Metrics: syncMetrics, Logger: log})
		job := func(ctx context.Context) error {
			_, err := syncer.Run(ctx, hrsync.Resources)
			return err
		}
		sched, err = hrsync.NewScheduler(ctx, job, hrsync.SchedulerOptions{Spec: cfg.Schedule, Location: cfg.location,
			Lock: store, Metrics: syncMetrics, Logger: log})
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
	} else {
		log.Info("no schedule: the worker only watches the onboarding folder")
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

	if sched != nil {
		sched.Start()
		if c.now || cfg.Sync.RunAtStart {
			go sched.RunNow()
		}
	}
	onboardingDone := make(chan struct{})
	if cfg.Onboarding.Dir != "" {
		o := newOnboarder(cfg, client, store, syncMetrics, false, log)
		poll := onboard.PollOptions{Dir: cfg.Onboarding.Dir, Interval: cfg.pollInterval,
			Settle: cfg.settle, Locker: store}
		go func() { defer close(onboardingDone); o.Poll(ctx, poll) }()
	} else {
		close(onboardingDone)
	}
	select {
	case <-ctx.Done():
	case err := <-served: // a server could not start or failed
		stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if sched != nil {
			_ = sched.Stop(stopCtx)
		}
		return err
	}
	log.Info("stopping: the scheduler first, then the servers")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if sched != nil {
		if err := sched.Stop(stopCtx); err != nil {
			log.Error("stop", "err", err)
		}
	}
	select { // the folder: the row being sent is answered or left "sending" for the next run
	case <-onboardingDone:
	case <-stopCtx.Done():
		log.Error("stop: onboarding did not finish in time")
	}
	stopServers()
	if err := <-served; err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
