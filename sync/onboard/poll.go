package onboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hrsync/hrsync/sync/runner"
)

// LockName is the warehouse lock onboarding runs under: one process onboards at a time, across
// replicas, and apart from the sync (which holds walk.LockName).
const LockName = "onboarding"

// jobName is onboarding's job in the worker's runner: its name in logs and in the task label of
// the job metrics.
const jobName = "onboarding"

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
	for _, r := range results {
		// A file this process has just put in failed/ for its content would fail the same way
		// on a timed retry: none (a corrected file, or a restart with other settings, helps).
		if r.forContent() && filepath.Dir(r.movedTo) == failedDir {
			retries.settle(filepath.Base(r.movedTo))
		}
	}
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
		case stopped && !r.forContent():
			o.log.Error("onboarding: stopped retrying a file in failed/; fix the cause, then hrsync onboard --retry-failed",
				"file", r.Name, "unresolved", r.Count(OutcomeUnresolved), "err", r.Err)
		}
	}
	return append(results, retried...), err
}

// Idle reports whether a Pass with opts would find nothing to do: no entry of the drop folder
// to take (every one a folder, a name IgnoredName leaves alone, a file still settling, or a
// link already warned of) and, for the files in failed/, no retry due (RetryAll retries every
// one). It reads the folder's names and dates, nothing of the files, and never the warehouse:
// the worker asks it before a pass takes the warehouse's lock, so that an empty folder polled
// every 30 s costs the warehouse nothing. A folder it cannot read is not idle: the pass says
// why. Like Pass, it starts the backoff of a file first seen in failed/ (Retries.Due), so it
// is not safe beside a Pass with the same Retries.
func (o *Onboarder) Idle(opts PassOptions) bool {
	if opts.RetryAll {
		return false
	}
	if err := checkFolders(opts.Dir); err != nil {
		return false
	}
	entries, err := os.ReadDir(opts.Dir)
	if err != nil {
		return false
	}
	for _, ent := range entries {
		switch kind, _ := dropEntry(ent, opts.Settle); kind {
		case entryComplete:
			return false
		case entryNotAFile:
			if !o.hasWarned(ent.Name()) {
				return false // the pass says it is left alone, once
			}
		}
	}
	if opts.Retries == nil {
		return true
	}
	names, err := FailedFiles(opts.Dir)
	if err != nil {
		return false
	}
	opts.Retries.Forget(names)
	for _, name := range names {
		if opts.Retries.Due(name) {
			return false
		}
	}
	return true
}

// Job is the worker's onboarding as a job of a runner.Runner: named jobName, under LockName, a
// Pass every interval (a file still being written waits for opts.Settle), retrying the files in
// failed/ with backoff kept from pass to pass (opts.Retries; nil starts a new one). A pass logs
// its error; a pass in which a file failed (to failed/, or left in the folder by a refused key)
// returns a FilesFailedError, so the runner counts the run failed (each file was logged at
// WARN already); a panic in one is the runner's to recover and count. Either way the next pass
// goes on.
func (o *Onboarder) Job(interval time.Duration, opts PassOptions) runner.Job {
	if opts.Retries == nil && !opts.RetryAll {
		opts.Retries = &FailedRetries{}
	}
	idle := func() bool { return o.Idle(opts) }
	return runner.Job{Name: jobName, Trigger: runner.Every(interval), Lock: LockName, Idle: idle, Run: func(ctx context.Context) error {
		results, err := o.Pass(ctx, opts)
		if err != nil {
			if ctx.Err() == nil {
				o.log.Error("onboarding", "err", err)
			}
			return err
		}
		var failed []string
		for _, r := range results {
			if r.Failed() {
				failed = append(failed, r.Name)
			}
		}
		if len(failed) > 0 {
			return &FilesFailedError{Files: failed, Of: len(results)}
		}
		return nil
	}}
}

// FilesFailedError is a pass of the drop folder in which files failed: each is in failed/ (or,
// the key refused, still in the folder) with its report, and was logged.
type FilesFailedError struct {
	Files []string // their names
	Of    int      // the files the pass took
}

func (e *FilesFailedError) Error() string {
	return fmt.Sprintf("onboarding: %d of %d files not finished (%s): see their reports", len(e.Files), e.Of, strings.Join(e.Files, ", "))
}
