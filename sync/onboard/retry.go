package onboard

import (
	"cmp"
	"context"
	"path/filepath"
	"time"
)

// RetryFailed onboards the files in dir/failed again (those due says to, when due is set): the
// ledger resumes each where it stopped. A file that is now finished goes to processed/ with its
// report; one that is not stays in failed/ with its report brought up to date.
func (o *Onboarder) RetryFailed(ctx context.Context, dir string, due func(name string) bool) ([]FileResult, error) {
	names, err := FailedFiles(dir)
	if err != nil {
		return nil, err
	}
	return o.retryFailed(ctx, dir, names, due)
}

// retryFailed is RetryFailed of the names FailedFiles listed.
func (o *Onboarder) retryFailed(ctx context.Context, dir string, names []string, due func(name string) bool) ([]FileResult, error) {
	var results []FileResult
	for _, name := range names {
		if ctx.Err() != nil {
			break
		}
		if due != nil && !due(name) {
			continue
		}
		r, err := o.ProcessPath(ctx, filepath.Join(dir, failedDir, name), dir)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

// Retrying files in failed/ on the worker's own: the first try a minute after the file is first
// seen there, then, while rows are unresolved, twice as long each time, at most an hour apart,
// FailedRetryAttempts tries in all (about a day). After that, `hrsync onboard --retry-failed`
// finishes it. A file that failed for its content (unreadable, or nobody onboarded because its
// rows were rejected) is not retried by the process that failed it: the same bytes with the
// same settings fail the same way, and a corrected file is dropped anew. The state lives in the
// process: a restarted worker (with new settings, say onboarding.date_layout) gives every file
// in failed/ one try a minute after it starts, which is local for a file failed for its
// content (the source is asked only about rows whose create changed), and the fix applies
// without anyone moving files.
const (
	FailedRetryInitial  = time.Minute
	FailedRetryMax      = time.Hour
	FailedRetryAttempts = 30
)

// FailedRetries is the backoff of the worker's retries of the files in failed/. The zero value
// uses the defaults above and the wall clock. It is not safe for concurrent use.
type FailedRetries struct {
	Initial, Max time.Duration
	Attempts     int
	Now          func() time.Time

	files map[string]*failedRetry
}

type failedRetry struct {
	tries   int
	next    time.Time
	stopped bool
}

func (b *FailedRetries) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Due reports whether the file in failed/ is to be retried now; the first call for a name
// starts its backoff.
func (b *FailedRetries) Due(name string) bool {
	if b.files == nil {
		b.files = make(map[string]*failedRetry)
	}
	f, ok := b.files[name]
	if !ok {
		f = &failedRetry{next: b.now().Add(cmp.Or(b.Initial, FailedRetryInitial))}
		b.files[name] = f
	}
	return !f.stopped && !b.now().Before(f.next)
}

// Tried records a retry's result: the next is due twice as late, up to Max; after Attempts, or
// when the file cannot be read, there is none. It reports whether the retries of the file
// stopped with this one (it is left to a person).
func (b *FailedRetries) Tried(name string, r FileResult) (stopped bool) {
	f, ok := b.files[name]
	if !ok || !r.Failed() {
		delete(b.files, name) // finished (moved to processed/), or not ours
		return false
	}
	if r.forContent() {
		// Tried once more (the first retry of a file this process did not fail itself, with
		// its settings): the same bytes and settings fail the same way.
		f.stopped = true
		return true
	}
	f.tries++
	initial, maxWait, attempts := cmp.Or(b.Initial, FailedRetryInitial), cmp.Or(b.Max, FailedRetryMax), cmp.Or(b.Attempts, FailedRetryAttempts)
	wait := initial
	for i := 0; i < f.tries && wait < maxWait; i++ {
		wait *= 2
	}
	wait = min(wait, maxWait)
	f.next = b.now().Add(wait)
	f.stopped = f.tries >= attempts
	return f.stopped
}

// settle stops the timed retries of a file put in failed/ for its content by this process.
func (b *FailedRetries) settle(name string) {
	if b.files == nil {
		b.files = make(map[string]*failedRetry)
	}
	b.files[name] = &failedRetry{stopped: true}
}

// Forget drops the state of names no longer in failed/.
func (b *FailedRetries) Forget(present []string) {
	keep := make(map[string]bool, len(present))
	for _, n := range present {
		keep[n] = true
	}
	for n := range b.files {
		if !keep[n] {
			delete(b.files, n)
		}
	}
}
