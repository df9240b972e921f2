package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source"
	hrsync "github.com/hrsync/hrsync/sync"
)

type onboardFlags struct {
	dryRun bool
	files  []string
}

// onboardCmd processes the drop folder once, or the files named.
func onboardCmd(ctx context.Context, cfg Config, f onboardFlags, stdout, stderr io.Writer) error {
	log := cfg.logger(stderr)
	if len(f.files) == 0 && cfg.Onboarding.Dir == "" {
		return &usageError{"onboard: name CSV files, or set onboarding.dir (HRSYNC_ONBOARDING_DIR)"}
	}
	client, err := newClient(cfg, log, source.ClientOptions{})
	if err != nil {
		return fmt.Errorf("onboard: %w", err)
	}
	store, err := cfg.openStore(ctx, log)
	if err != nil {
		return err
	}
	defer store.Close()
	o := newOnboarder(cfg, client, store, nil, f.dryRun, log)
	var results []hrsync.FileResult
	err = hrsync.WithLockNamed(ctx, store, onboardingLock, func(ctx context.Context) error {
		if len(f.files) > 0 {
			for _, path := range f.files {
				r, err := o.ProcessPath(ctx, path, "")
				results = append(results, r)
				if err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		results, err = o.ProcessDir(ctx, cfg.Onboarding.Dir, time.Duration(cfg.Onboarding.SettleSeconds)*time.Second)
		return err
	})
	if errors.Is(err, hrsync.ErrLocked) {
		return errors.New("onboard: another hrsync process is onboarding from this warehouse; try again when it is done")
	}
	failed := 0
	for _, r := range results {
		printFile(stdout, r, f.dryRun)
		if r.Failed() {
			failed++
		}
	}
	if err != nil {
		return fmt.Errorf("onboard: %w", err)
	}
	if len(results) == 0 {
		fmt.Fprintln(stdout, "no complete CSV files to onboard")
	}
	if failed > 0 {
		return fmt.Errorf("onboard: %d of %d files had rows that failed or could not be read; see their reports", failed, len(results))
	}
	return nil
}

const onboardingLock = "onboarding"

func newOnboarder(cfg Config, client *source.Client, store *sink.Store, m *hrsync.Metrics, dryRun bool, log *slog.Logger) *hrsync.Onboarder {
	return hrsync.NewOnboarder(client, store, hrsync.OnboardOptions{DryRun: dryRun, DateLayout: cfg.Onboarding.DateLayout, Metrics: m, Logger: log})
}

func printFile(w io.Writer, r hrsync.FileResult, dryRun bool) {
	n := map[string]int{}
	for _, x := range r.Rows {
		n[x.Outcome]++
	}
	if dryRun {
		fmt.Fprintf(w, "%s (dry run): %d valid, %d skipped, %d rejected\n", r.Name, n[hrsync.OutcomeWouldCreate], n[hrsync.OutcomeSkipped], n[hrsync.OutcomeRejected])
		if r.Err != nil {
			fmt.Fprintf(w, "  %s\n", oneLine(r.Err.Error()))
		}
		for _, x := range r.Rows {
			if x.Outcome != hrsync.OutcomeWouldCreate {
				fmt.Fprintf(w, "  line %d: %s: %s\n", x.Line, x.Outcome, x.Reason)
			}
		}
		return
	}
	fmt.Fprintf(w, "%s: %d created, %d skipped, %d rejected, %d failed", r.Name, n[hrsync.OutcomeCreated], n[hrsync.OutcomeSkipped], n[hrsync.OutcomeRejected], n[hrsync.OutcomeFailed])
	if r.Err != nil {
		fmt.Fprintf(w, " — %s", oneLine(r.Err.Error()))
	}
	fmt.Fprintln(w)
}

// pollOnboarding processes the drop folder every poll interval until ctx ends, one process at
// a time across replicas.
func pollOnboarding(ctx context.Context, cfg Config, o *hrsync.Onboarder, store *sink.Store, log *slog.Logger) {
	dir, settle := cfg.Onboarding.Dir, time.Duration(cfg.Onboarding.SettleSeconds)*time.Second
	tick := time.NewTicker(time.Duration(cfg.Onboarding.PollSeconds) * time.Second)
	defer tick.Stop()
	log.Info("onboarding folder watched", "dir", filepath.Clean(dir), "poll", time.Duration(cfg.Onboarding.PollSeconds)*time.Second)
	for {
		err := hrsync.WithLockNamed(ctx, store, onboardingLock, func(ctx context.Context) error {
			_, err := o.ProcessDir(ctx, dir, settle)
			return err
		})
		if err != nil && !errors.Is(err, hrsync.ErrLocked) && ctx.Err() == nil {
			log.Error("onboarding", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
