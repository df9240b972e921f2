package onboard

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"time"

	hrsync "github.com/hrsync/hrsync/sync"
)

// LockName is the warehouse lock onboarding runs under: one process onboards at a time, across
// replicas, and apart from the sync (which holds hrsync.LockName).
const LockName = "onboarding"

// PollOptions configures Poll and Pass.
type PollOptions struct {
	// Dir is the drop folder.
	Dir string
	// Interval is the time between passes (Poll only).
	Interval time.Duration
	// Settle is how long a file must be unchanged before it is taken as complete.
	Settle time.Duration
	// Locker takes the onboarding lock (LockName) for each pass; *sink.Store is one.
	Locker hrsync.Locker
	// Retries is the backoff of the retries of the files in failed/, kept from pass to pass;
	// Poll starts a new one when it is nil, Pass retries nothing then.
	Retries *FailedRetries
}

// Poll processes the drop folder every opts.Interval until ctx ends, one process at a time
// across replicas, and retries the files in failed/ with backoff (FailedRetries). A pass that
// panics is logged and counted (hrsync_job_panics_total{task="onboarding"}); the polling goes
// on.
func (o *Onboarder) Poll(ctx context.Context, opts PollOptions) {
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	o.log.Info("onboarding folder watched", "dir", filepath.Clean(opts.Dir), "poll", opts.Interval)
	if opts.Retries == nil {
		opts.Retries = &FailedRetries{}
	}
	for {
		if err := o.Pass(ctx, opts); err != nil && !errors.Is(err, hrsync.ErrLocked) && ctx.Err() == nil {
			o.log.Error("onboarding", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Pass is one pass of the folder and of the retries due in failed/, under the onboarding lock
// (hrsync.ErrLocked when another process holds it); a panic in it is recovered, logged and
// counted.
func (o *Onboarder) Pass(ctx context.Context, opts PollOptions) (err error) {
	defer func() {
		if p := recover(); p != nil {
			o.opts.Metrics.Panicked("onboarding")
			o.log.Error("onboarding pass panicked; the folder is polled again next time", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = nil
		}
	}()
	retries := opts.Retries
	return hrsync.WithLockNamed(ctx, opts.Locker, LockName, func(ctx context.Context) error {
		if _, err := o.ProcessDir(ctx, opts.Dir, opts.Settle); err != nil {
			return err
		}
		if retries == nil {
			return nil
		}
		names, err := FailedFiles(opts.Dir)
		if err != nil {
			return err
		}
		retries.Forget(names)
		results, err := o.retryFailed(ctx, opts.Dir, names, retries.Due)
		for _, r := range results {
			stopped := retries.Tried(r.Name, r)
			switch {
			case !r.Failed():
				o.log.Info("onboarding: a file in failed/ is finished and moved to processed/", "file", r.Name)
			case stopped:
				o.log.Error("onboarding: stopped retrying a file in failed/; fix the cause, then hrsync onboard --retry-failed",
					"file", r.Name, "unresolved", r.Count(OutcomeUnresolved), "err", r.Err)
			}
		}
		return err
	})
}
