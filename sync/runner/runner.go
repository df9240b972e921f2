// Package runner runs a worker's named jobs (the sync, onboarding), each on its trigger (cron or
// every), with the same guarantees: one run of a job at a time, one across replicas (its warehouse
// lock), a panic recovered and counted, every run counted and timed (Metrics), a bounded stop.
package runner

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
)

// Locker takes a named lock shared by every process on one warehouse; *sink.Store is one. ok
// is false, without an error, when another process holds it. held is ctx carrying the lock:
// the work done under the lock gets it, so that the warehouse can bind that work to the lock
// (a sink.Load begun with it commits only while the lock is held).
type Locker interface {
	TryLock(ctx context.Context, name string) (held context.Context, release func(), ok bool, err error)
}

// SyncJobName is the sync's job: its name in the runner's logs and in the task label of the
// job metrics.
const SyncJobName = "sync"

// ErrLocked: another process holds the lock.
var ErrLocked = errors.New("another hrsync process holds the lock on this warehouse")

// ErrNotDue is what a run returns when it finds it has nothing to do yet (a daily job checked
// hourly, whose last run is recent): neither a run nor a skip, it is not counted, and logged
// only at debug level.
var ErrNotDue = errors.New("not due yet")

// Trigger is when a job runs: on a cron schedule (Cron) or at a fixed interval (Every).
type Trigger struct {
	spec     string
	schedule cron.Schedule
	loc      *time.Location
	every    time.Duration
	// delay shifts every time the trigger fires (Delayed).
	delay time.Duration
	// period is an @every schedule's interval: its times count from the start, not the clock.
	period time.Duration
}

// ParseSchedule checks a schedule spec.
func ParseSchedule(spec string) error {
	_, err := parseSchedule(spec)
	return err
}

func parseSchedule(spec string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w; want five cron fields (minute hour day-of-month month day-of-week, "+
			"e.g. \"0 2 * * *\" for 02:00 every day) or a descriptor: @yearly, @monthly, @weekly, @daily, @hourly, "+
			"or @every with a duration (@every 6h)", spec, err)
	}
	return s, nil
}

// Cron is a trigger on a cron schedule: five cron fields or a descriptor (@daily, @every 5m),
// read in loc (nil: UTC). A run still going when the next is due makes that one skipped and
// counted (overlap), never run late.
func Cron(spec string, loc *time.Location) (Trigger, error) {
	s, err := parseSchedule(spec)
	if err != nil {
		return Trigger{}, err
	}
	if loc == nil {
		loc = time.UTC
	}
	t := Trigger{spec: spec, schedule: s, loc: loc}
	if cd, ok := s.(cron.ConstantDelaySchedule); ok {
		t.period = cd.Delay
	}
	return t, nil
}

// Every is a trigger at a fixed interval: a run at start, then one every d from the start of
// the previous run, or at once after a run that took longer than d.
func Every(d time.Duration) Trigger { return Trigger{every: d} }

// Delayed is t with every time it fires moved d later: a cron schedule's runs each d after
// its times (its cadence unchanged), an interval's first run d after the start. Accounts on
// one schedule are spread by delaying each by its own Offset. An @every schedule, whose times
// count from the start, is delayed by d modulo its interval: a longer delay would only hold
// back its first run.
func (t Trigger) Delayed(d time.Duration) Trigger {
	t.delay = max(d, 0)
	if t.period > 0 {
		t.delay %= t.period
	}
	return t
}

// Offset is key's place in [0, window): where within the window the runs of the account named
// key start. It is a hash of the key, not a random draw, so that an account keeps its place
// across restarts and on every worker, and the places of many keys are spread evenly over the
// window (SHA-256's first 8 bytes, scaled to the window without the bias of a modulo). 0 when
// the window is 0 or less.
func Offset(key string, window time.Duration) time.Duration {
	if window <= 0 {
		return 0
	}
	sum := sha256.Sum256([]byte(key))
	hi, _ := bits.Mul64(binary.BigEndian.Uint64(sum[:8]), uint64(window))
	return time.Duration(hi)
}

// String says when the trigger fires, for logs.
func (t Trigger) String() string {
	s := "every " + t.every.String()
	if t.schedule != nil {
		s = t.spec
	}
	if t.delay > 0 {
		s += " + " + t.delay.String()
	}
	return s
}

func (t Trigger) valid() bool { return t.schedule != nil || t.every > 0 }

// next is the first time after prev the trigger fires: for a delayed schedule, the first of its
// times after prev-delay, delayed.
func (t Trigger) next(prev time.Time) time.Time {
	if t.schedule != nil {
		return t.schedule.Next(prev.Add(-t.delay).In(t.loc)).Add(t.delay)
	}
	return prev.Add(t.every)
}

// first is the first time after the start at now the trigger fires, when the job does not run
// at start.
func (t Trigger) first(now time.Time) time.Time {
	switch {
	case t.every > 0:
		return now.Add(t.delay)
	case t.period > 0: // @every: counted from now, then delayed
		return t.schedule.Next(now).Add(t.delay)
	}
	return t.next(now)
}

// Job is one named job of a Runner.
type Job struct {
	// Name names the job in logs and in the task label of its metrics: "sync", "onboarding".
	Name    string
	Trigger Trigger
	// RunAtStart runs the job once when the runner starts, undelayed, then on its trigger. An
	// Every trigger always runs at start (its delay after it, when Delayed).
	RunAtStart bool
	// Lock is the warehouse lock (RunnerOptions.Lock) each run takes first; a run is skipped,
	// and counted, while another process holds it. "" takes none.
	Lock string
	// Slots, when set, bounds how many runs of the jobs sharing it go on at once in this process
	// (a worker of many accounts: its syncs). A run waits for a slot before it tries its lock,
	// so while this process is full, another process with room takes the lock first.
	Slots *Slots
	// Idle, when set, is asked at each firing before the run takes its slot and its lock: true
	// when the run would find nothing to do (onboarding: no file waiting in the folder, no
	// retry due). The run is then counted ok, as it would have ended, without its slot, its
	// lock (and so, in a worker, its warehouse: a session) or Run. It runs in the job's turn:
	// never beside a run of the same job.
	Idle func() bool
	// Run is one run; its context carries the lock (see Locker) and ends when the runner is
	// stopped. It logs its own outcome (a sync logs each collection's result, onboarding each
	// file's); the runner logs only what happens around it: a run skipped, the lock, a panic.
	Run func(ctx context.Context) error
}

// Slots bounds how many runs go on at once across the jobs (of one runner or several) that
// share it. A nil *Slots bounds nothing.
type Slots struct{ ch chan struct{} }

// NewSlots returns room for n runs at once; nil (no bound) when n is 0 or less.
func NewSlots(n int) *Slots {
	if n <= 0 {
		return nil
	}
	return &Slots{ch: make(chan struct{}, n)}
}

// take waits for a slot until stop or ctx ends, calling waiting first when none is free;
// release gives it back.
func (s *Slots) take(ctx context.Context, stop <-chan struct{}, waiting func()) (release func(), ok bool) {
	if s == nil {
		return func() {}, true
	}
	select {
	case s.ch <- struct{}{}:
		return func() { <-s.ch }, true
	default:
	}
	waiting()
	select {
	case s.ch <- struct{}{}:
		return func() { <-s.ch }, true
	case <-stop:
	case <-ctx.Done():
	}
	return nil, false
}

// RunnerOptions configures a Runner.
type RunnerOptions struct {
	// Lock takes the jobs' warehouse locks; *sink.Store is one. Nil runs every job unlocked.
	Lock    Locker
	Metrics *Metrics
	Logger  *slog.Logger
	// Scheduler wakes the jobs when they are due: one shared by many runners (a worker of many
	// accounts) runs one goroutine for all their triggers. Nil gives the runner its own.
	Scheduler *Scheduler
}

// Runner runs named jobs, each on its trigger and with the same guarantees: never two runs of a
// job at once (a run due while one is going is skipped and counted), one run of a job across
// replicas (its warehouse lock, taken or skipped), a panic recovered, logged and counted with
// the worker going on, every run counted, timed and its last success stamped by job
// (Metrics), and a bounded stop.
type Runner struct {
	jobs   []*runnerJob
	byName map[string]*runnerJob
	opts   RunnerOptions
	log    *slog.Logger
	ctx    context.Context // the runs'; cancel ends it
	cancel context.CancelFunc

	mu       sync.Mutex
	started  bool
	stopped  bool
	stopping chan struct{} // closed by Stop: no more runs start
	wg       sync.WaitGroup
}

type runnerJob struct {
	Job
	r       *Runner
	running atomic.Bool
	// Under the scheduler's mu: when the job is next due, and its place in the scheduler's
	// heap (-1 while it is not there: running, or stopped).
	due time.Time
	idx int
}

// runFailed marks an error the job returned, and so has already reported.
type runFailed struct{ err error }

func (e runFailed) Error() string { return e.err.Error() }
func (e runFailed) Unwrap() error { return e.err }

// ErrHeld is what a job returns (wrapped) when its run ended held and had nothing else go wrong:
// a sync whose every load that did not publish was held by a load guard. Neither ok nor failed:
// the job's outcome is held.
var ErrHeld = errors.New("held")

// errPanicked: the run panicked; guard logged and counted it.
var errPanicked = errors.New("the run panicked")

// NewRunner returns a Runner of jobs, started by Start. Runs get a context derived from ctx,
// which should end when the process is asked to stop; Stop ends it too, at its deadline.
func NewRunner(ctx context.Context, opts RunnerOptions, jobs ...Job) (*Runner, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Scheduler == nil {
		opts.Scheduler = NewScheduler()
	}
	r := &Runner{byName: make(map[string]*runnerJob, len(jobs)), opts: opts, log: opts.Logger, stopping: make(chan struct{})}
	for _, j := range jobs {
		switch {
		case j.Name == "":
			return nil, errors.New("job runner: a job has no name")
		case r.byName[j.Name] != nil:
			return nil, fmt.Errorf("job runner: two jobs named %q", j.Name)
		case !j.Trigger.valid():
			return nil, fmt.Errorf("job runner: job %q has no trigger", j.Name)
		case j.Run == nil:
			return nil, fmt.Errorf("job runner: job %q has nothing to run", j.Name)
		}
		rj := &runnerJob{Job: j, r: r, idx: -1}
		r.jobs = append(r.jobs, rj)
		r.byName[j.Name] = rj
		opts.Metrics.jobAdded(j.Name)
	}
	r.ctx, r.cancel = context.WithCancel(ctx)
	// A runner whose context ends runs nothing more: its jobs leave the scheduler.
	context.AfterFunc(r.ctx, r.unschedule)
	return r, nil
}

// Start starts every job's trigger. It does nothing once the runner is stopped.
func (r *Runner) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.stopped {
		return
	}
	r.started = true
	now := time.Now()
	for _, j := range r.jobs {
		// RunAtStart is not delayed: the operator asked for a run now (Slots bound how many
		// accounts' runs go on at once).
		first := now
		if !j.RunAtStart {
			first = j.Trigger.first(now)
		}
		r.log.Info("job scheduled", "task", j.Name, "trigger", j.Trigger.String(), "next", first)
		r.opts.Metrics.scheduled(j.Name, first)
		r.opts.Scheduler.add(j, first)
	}
}

// fire is j's run at its due time, called by the scheduler; then j is due again on its trigger,
// unless the runner stopped.
func (r *Runner) fire(j *runnerJob, due time.Time) {
	r.run(j)
	now := time.Now()
	next := j.Trigger.next(due)
	if j.Trigger.every > 0 {
		if next.Before(now) {
			next = now // after a long run, the next at once: nothing is missed
		}
	} else {
		missed := 0
		for ; !next.After(now); next = j.Trigger.next(next) {
			r.opts.Metrics.jobSkipped(j.Name, "overlap") // due while the run went on
			missed++
		}
		if missed > 0 {
			r.log.Warn("job skipped: the previous run went on past its next times", "task", j.Name, "times", missed)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.ctx.Err() != nil {
		return
	}
	r.opts.Metrics.scheduled(j.Name, next)
	r.opts.Scheduler.add(j, next)
}

// unschedule takes the runner's jobs out of the scheduler: it is stopped, or its context ended.
func (r *Runner) unschedule() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, j := range r.jobs {
		r.opts.Scheduler.remove(j)
	}
}

// RunNow runs the named job now, unless a run of it is going (skipped: overlap), another
// process holds its lock (skipped: locked), or the runner is stopped. It returns when the run
// ends; false when there is no such job.
func (r *Runner) RunNow(name string) bool {
	j := r.byName[name]
	if j == nil {
		return false
	}
	r.run(j)
	return true
}

// run is one run of j, with everything around it: the overlap check, the lock, the panic, the
// metrics and the log.
func (r *Runner) run(j *runnerJob) {
	r.mu.Lock()
	if r.stopped || r.ctx.Err() != nil {
		r.mu.Unlock()
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	defer r.wg.Done()
	if !j.running.CompareAndSwap(false, true) {
		r.skipOverlap(j)
		return
	}
	defer j.running.Store(false)
	m := r.opts.Metrics
	if looked := time.Now(); r.idle(j) {
		m.jobRan(j.Name, "ok", looked, time.Now())
		r.log.Debug("job had nothing to do", "task", j.Name)
		return
	}
	release, ok := j.Slots.take(r.ctx, r.stopping, func() {
		r.log.Info("job waits: this process runs as many as it may at once", "task", j.Name)
	})
	if !ok {
		return // stopping
	}
	defer release()
	started := time.Now()
	err := r.guard(r.ctx, j)
	var reported runFailed
	switch {
	case errors.Is(err, ErrNotDue):
		r.log.Debug("job not due yet", "task", j.Name)
		return
	case errors.Is(err, ErrLocked):
		m.jobSkipped(j.Name, "locked")
		r.log.Info("job skipped: another hrsync process holds its lock", "task", j.Name, "lock", j.Lock)
		return
	case errors.Is(err, errPanicked):
		m.jobRan(j.Name, "panicked", started, time.Now())
	case err != nil && r.ctx.Err() != nil:
		// A stop is not a failure; the job said so itself when it returned the error.
		if !errors.As(err, &reported) {
			r.log.Info("job stopped", "task", j.Name, "reason", err)
		}
		m.jobRan(j.Name, "stopped", started, time.Now())
	case errors.Is(err, ErrHeld):
		m.jobRan(j.Name, "held", started, time.Now()) // the job said what happened, once
	case errors.As(err, &reported):
		m.jobRan(j.Name, "failed", started, time.Now()) // the job said what happened, once
	case err != nil:
		r.log.Error("job", "task", j.Name, "err", err)
		m.jobRan(j.Name, "failed", started, time.Now())
	default:
		m.jobRan(j.Name, "ok", started, time.Now())
	}
}

// idle asks j.Idle, if set; one that panics is logged and the run goes ahead, where its own
// panic, if it has one, is recovered and counted.
func (r *Runner) idle(j *runnerJob) (idle bool) {
	if j.Idle == nil {
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("job's check for work panicked; it runs", "task", j.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			idle = false
		}
	}()
	return j.Idle()
}

func (r *Runner) skipOverlap(j *runnerJob) {
	r.opts.Metrics.jobSkipped(j.Name, "overlap")
	r.log.Warn("job skipped: the previous run is still going", "task", j.Name)
}

// guard takes the job's lock and recovers a panic.
func (r *Runner) guard(ctx context.Context, j *runnerJob) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.opts.Metrics.panicked(j.Name)
			r.log.Error("job panicked; it runs again at its next time", "task", j.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = errPanicked
		}
	}()
	run := func(ctx context.Context) error {
		if err := j.Run(ctx); err != nil {
			return runFailed{err}
		}
		return nil
	}
	if j.Lock == "" {
		return run(ctx)
	}
	return WithLockNamed(ctx, r.opts.Lock, j.Lock, run)
}

// Stop stops the triggers and waits, until ctx ends, for the runs in progress to finish; at
// ctx's end it ends their context (a sync stops fetching and rolls back) and returns without
// waiting further. A run's context also ends with the one given to NewRunner, which a stopping
// process should already have canceled.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	if !r.stopped {
		r.stopped = true
		close(r.stopping)
	}
	r.mu.Unlock()
	r.unschedule()
	finished := make(chan struct{})
	go func() { r.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		r.cancel()
		return nil
	case <-ctx.Done():
		r.cancel()
		return fmt.Errorf("stop jobs: a run did not finish: %w", ctx.Err())
	}
}

// WithLockNamed runs job while holding the named lock; ErrLocked when another process holds it.
// The job's context carries the lock (see Locker).
func WithLockNamed(ctx context.Context, l Locker, name string, job func(ctx context.Context) error) error {
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
