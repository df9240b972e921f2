package walk

import (
	"context"
	"errors"
	"fmt"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sync/runner"
)

// LockName is the lock a sync holds: one sync of a source at a time across replicas.
const LockName = sink.SyncLock

// WithLock runs job while holding LockName (no lock: just runs it); runner.ErrLocked when
// another process holds it.
func WithLock(ctx context.Context, l runner.Locker, job func(ctx context.Context) error) error {
	return runner.WithLockNamed(ctx, l, LockName, job)
}

// Job is the sync of resources as a job of a Runner: named runner.SyncJobName, under LockName,
// on trigger.
func (s *Syncer) Job(trigger runner.Trigger, resources []sink.Resource) runner.Job {
	return runner.Job{Name: runner.SyncJobName, Trigger: trigger, Lock: LockName, Run: func(ctx context.Context) error {
		_, err := s.Run(ctx, resources)
		if err != nil && heldOnly(err) {
			return fmt.Errorf("%w: %w", runner.ErrHeld, err)
		}
		return err
	}}
}

// heldOnly reports whether every error a run joined is a hold (ErrHeld): the run did what it
// could and held the rest, which is not a failure.
func heldOnly(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !heldOnly(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	return errors.Is(err, ErrHeld)
}
