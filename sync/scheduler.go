package sync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/hrsync/hrsync/sink"
)

// Locker takes a named lock shared by every process on one warehouse; *sink.Store is one. ok
// is false, without an error, when another process holds it. held is ctx carrying the lock:
// the work done under the lock gets it, so that the warehouse can bind that work to the lock
// (a sink.Load begun with it commits only while the lock is held).
type Locker interface {
	TryLock(ctx context.Context, name string) (held context.Context, release func(), ok bool, err error)
}

// LockName is the lock a sync holds: one sync of a source at a time across replicas.
const LockName = sink.SyncLock

// ErrLocked: another process holds the lock.
var ErrLocked = errors.New("another hrsync process holds the lock on this warehouse")

// Job is one scheduled run. It logs its own outcome (a sync logs each collection's result); the
// scheduler logs only what happens around it: a run skipped, the lock, a panic.
type Job func(ctx context.Context) error

// jobFailed marks an error the job returned, and so has already reported.
type jobFailed struct{ err error }

func (e jobFailed) Error() string { return e.err.Error() }
func (e jobFailed) Unwrap() error { return e.err }

// SchedulerOptions configures a Scheduler.
type SchedulerOptions struct {
	// Spec is when to run: five cron fields or a descriptor (@daily, @every 5m).
	Spec string
	// Location is the time zone Spec is read in (default UTC).
	Location *time.Location
	// Lock, when set, makes each run take LockName first, and skip when another holds it.
	Lock    Locker
	Metrics *Metrics
	Logger  *slog.Logger
}

// Scheduler runs a job on a cron schedule: never two at once (a run due while one is going is
// skipped and counted), one across replicas (see Locker), a panic recovered, logged and counted.
type Scheduler struct {
	cron    *cron.Cron
	job     Job
	opts    SchedulerOptions
	log     *slog.Logger
	running atomic.Bool
	wg      stdsync.WaitGroup
	ctx     context.Context
}

// ParseSchedule checks a schedule spec.
func ParseSchedule(spec string) error {
	if _, err := cron.ParseStandard(spec); err != nil {
		return fmt.Errorf("schedule %q: %w; want five cron fields (minute hour day-of-month month day-of-week, "+
			"e.g. \"0 2 * * *\" for 02:00 every day) or a descriptor: @yearly, @monthly, @weekly, @daily, @hourly, "+
			"or @every with a duration (@every 6h)", spec, err)
	}
	return nil
}

// NewScheduler returns a Scheduler that runs job on opts.Spec once started; runs get ctx,
// which should end when the process is asked to stop.
func NewScheduler(ctx context.Context, job Job, opts SchedulerOptions) (*Scheduler, error) {
	if err := ParseSchedule(opts.Spec); err != nil {
		return nil, err
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Scheduler{job: job, opts: opts, log: opts.Logger, ctx: ctx}
	s.cron = cron.New(cron.WithLocation(opts.Location))
	if _, err := s.cron.AddFunc(opts.Spec, func() { s.RunNow() }); err != nil {
		return nil, fmt.Errorf("schedule %q: %w", opts.Spec, err)
	}
	return s, nil
}

// Start starts the schedule.
func (s *Scheduler) Start() {
	s.cron.Start()
	if next := s.cron.Entries(); len(next) > 0 {
		s.log.Info("sync scheduled", "schedule", s.opts.Spec, "next", next[0].Next)
	}
}

// RunNow runs the job now, unless a run is going (skipped: overlap) or another process holds the
// lock (skipped: locked). It returns when the run ends.
func (s *Scheduler) RunNow() {
	if !s.running.CompareAndSwap(false, true) {
		s.opts.Metrics.skip("overlap")
		s.log.Warn("sync skipped: the previous run is still going")
		return
	}
	s.wg.Add(1)
	defer s.wg.Done()
	defer s.running.Store(false)
	if s.ctx.Err() != nil {
		return
	}
	err := s.guard(s.ctx)
	var reported jobFailed
	switch {
	case errors.Is(err, ErrLocked):
		s.opts.Metrics.skip("locked")
		s.log.Info("sync skipped: another replica is syncing")
	case errors.As(err, &reported):
		// The job said what happened, once; a stop is not a failure.
	case err != nil && s.ctx.Err() != nil:
		s.log.Info("scheduled sync stopped", "reason", err)
	case err != nil:
		s.log.Error("scheduled sync", "err", err)
	}
}

// guard takes the lock and recovers a panic.
func (s *Scheduler) guard(ctx context.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Metrics.panicked("sync")
			s.log.Error("scheduled sync panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = jobFailed{fmt.Errorf("panic: %v", p)} // logged above
		}
	}()
	return WithLock(ctx, s.opts.Lock, func(ctx context.Context) error {
		if err := s.job(ctx); err != nil {
			return jobFailed{err}
		}
		return nil
	})
}

// WithLock runs job while holding LockName (no lock: just runs it); ErrLocked when another
// process holds it.
func WithLock(ctx context.Context, l Locker, job Job) error {
	return WithLockNamed(ctx, l, LockName, job)
}

// WithLockNamed runs job while holding the named lock; ErrLocked when another process holds it.
// The job's context carries the lock (see Locker).
func WithLockNamed(ctx context.Context, l Locker, name string, job Job) error {
	if l == nil {
		return job(ctx)
	}
	held, release, ok, err := l.TryLock(ctx, name)
	if err != nil {
		return fmt.Errorf("take the %s lock: %w", name, err)
	}
	if !ok {
		return ErrLocked
	}
	defer release()
	return job(held)
}

// Stop stops the schedule and waits, until ctx ends, for a run in progress to finish (its
// context should already be ending, so it stops fetching and rolls back).
func (s *Scheduler) Stop(ctx context.Context) error {
	done := s.cron.Stop()
	finished := make(chan struct{})
	go func() { <-done.Done(); s.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop scheduler: a run did not finish: %w", ctx.Err())
	}
}
