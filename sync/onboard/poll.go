package onboard

import (
	"context"
	"time"

	hrsync "github.com/hrsync/hrsync/sync"
)

// LockName is the warehouse lock onboarding runs under: one process onboards at a time, across
// replicas, and apart from the sync (which holds hrsync.LockName).
const LockName = "onboarding"

// JobName is onboarding's job in the worker's runner: its name in logs and in the task label of
// the job metrics.
const JobName = "onboarding"

// PassOptions configures Pass.
type PassOptions struct {
	// Dir is the drop folder.
	Dir string
	// Settle is how long a file must be unchanged before it is taken as complete.
	Settle time.Duration
	// Retries, when set, retries the files in failed/ whose backoff is due, and keeps the
	// backoff from pass to pass (the worker's passes).
	Retries *FailedRetries
	// RetryAll retries every file in failed/ (hrsync onboard --retry-failed); Retries is not
	// consulted then.
	RetryAll bool
}

// Pass is one pass of the drop folder: its complete files (ProcessDir), then the files in
// failed/ that opts retry; with neither Retries nor RetryAll, none. It takes no lock: its caller
// holds LockName (the job runner does for Job).
func (o *Onboarder) Pass(ctx context.Context, opts PassOptions) ([]FileResult, error) {
	results, err := o.ProcessDir(ctx, opts.Dir, opts.Settle)
	if err != nil {
		return results, err
	}
	switch {
	case opts.RetryAll:
		retried, err := o.RetryFailed(ctx, opts.Dir, nil)
		return append(results, retried...), err
	case opts.Retries == nil:
		return results, nil
	}
	retries := opts.Retries
	names, err := FailedFiles(opts.Dir)
	if err != nil {
		return results, err
	}
	retries.Forget(names)
	retried, err := o.retryFailed(ctx, opts.Dir, names, retries.Due)
	for _, r := range retried {
		stopped := retries.Tried(r.Name, r)
		switch {
		case !r.Failed():
			o.log.Info("onboarding: a file in failed/ is finished and moved to processed/", "file", r.Name)
		case stopped:
			o.log.Error("onboarding: stopped retrying a file in failed/; fix the cause, then hrsync onboard --retry-failed",
				"file", r.Name, "unresolved", r.Count(OutcomeUnresolved), "err", r.Err)
		}
	}
	return append(results, retried...), err
}

// Job is the worker's onboarding as a job of an hrsync.Runner: named JobName, under LockName, a
// Pass every interval (a file still being written waits for opts.Settle), retrying the files in
// failed/ with backoff kept from pass to pass (opts.Retries; nil starts a new one). A pass logs
// its error; a panic in one is the runner's to recover and count, and the next pass goes on.
func (o *Onboarder) Job(interval time.Duration, opts PassOptions) hrsync.Job {
	if opts.Retries == nil && !opts.RetryAll {
		opts.Retries = &FailedRetries{}
	}
	return hrsync.Job{Name: JobName, Trigger: hrsync.Every(interval), Lock: LockName, Run: func(ctx context.Context) error {
		_, err := o.Pass(ctx, opts)
		if err != nil && ctx.Err() == nil {
			o.log.Error("onboarding", "err", err)
		}
		return err
	}}
}
