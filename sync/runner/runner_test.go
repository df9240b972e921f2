package runner_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sync/runner"
	"github.com/hrsync/hrsync/sync/walk"
)

type fakeLock struct{ held atomic.Bool }

func (l *fakeLock) TryLock(ctx context.Context, _ string) (context.Context, func(), bool, error) {
	if !l.held.CompareAndSwap(false, true) {
		return ctx, nil, false, nil
	}
	return ctx, func() { l.held.Store(false) }, true, nil
}

// namedLocks is fakeLock per lock name: jobs of different locks of one runner do not exclude
// each other, as the warehouse's locks do not.
type namedLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

func (l *namedLocks) TryLock(ctx context.Context, name string) (context.Context, func(), bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[name] {
		return ctx, nil, false, nil
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[name] = true
	return ctx, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.held, name)
	}, true, nil
}

func cronTrigger(t *testing.T, spec string) runner.Trigger {
	t.Helper()
	tr, err := runner.Cron(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// newRunner is a runner of one job, named as the worker names the sync, on a daily schedule
// that none of these tests waits for: they run it with RunNow.
func newRunner(t *testing.T, run func(ctx context.Context) error, lock runner.Locker) (*runner.Runner, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	r, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Lock: lock, Metrics: runner.NewMetrics(reg)},
		runner.Job{Name: runner.SyncJobName, Trigger: cronTrigger(t, "@daily"), Lock: walk.LockName, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	return r, reg
}

func counter(t *testing.T, reg *prometheus.Registry, name, labels string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			if strings.Join(ls, ",") == labels {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

func TestRunnerNeverOverlaps(t *testing.T) {
	started, finish := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	r, reg := newRunner(t, func(ctx context.Context) error {
		runs.Add(1)
		close(started)
		<-finish
		return nil
	}, nil)
	go r.RunNow(runner.SyncJobName)
	<-started
	r.RunNow(runner.SyncJobName) // due while the first is going: skipped
	close(finish)
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || counter(t, reg, "hrsync_sync_skipped_total", "reason=overlap") != 1 {
		t.Errorf("runs %d, overlap skips %v", runs.Load(), counter(t, reg, "hrsync_sync_skipped_total", "reason=overlap"))
	}
	if got := counter(t, reg, "hrsync_job_runs_total", "outcome=overlap,task=sync"); got != 1 {
		t.Errorf("hrsync_job_runs_total{task=sync,outcome=overlap} = %v, want 1", got)
	}
}

func TestRunnerSkipsWhenAnotherReplicaSyncs(t *testing.T) {
	lock := &fakeLock{}
	lock.held.Store(true) // another process
	ran := false
	r, reg := newRunner(t, func(ctx context.Context) error { ran = true; return nil }, lock)
	r.RunNow(runner.SyncJobName)
	if ran || counter(t, reg, "hrsync_sync_skipped_total", "reason=locked") != 1 {
		t.Errorf("ran %v with the lock held elsewhere", ran)
	}
	lock.held.Store(false)
	r.RunNow(runner.SyncJobName)
	if !ran || lock.held.Load() {
		t.Errorf("ran %v; lock still held after the run: %v", ran, lock.held.Load())
	}
}

func TestRunnerRecoversPanics(t *testing.T) {
	lock := &fakeLock{}
	r, reg := newRunner(t, func(ctx context.Context) error { panic("boom") }, lock)
	r.RunNow(runner.SyncJobName)
	r.RunNow(runner.SyncJobName) // the panic released the lock and the running flag
	if got := counter(t, reg, "hrsync_job_panics_total", "task=sync"); got != 2 {
		t.Errorf("panics counted %v, want 2", got)
	}
	if lock.held.Load() {
		t.Error("the lock was not released after a panic")
	}
}

func TestRunnerStopWaitsBounded(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	r, _ := newRunner(t, func(ctx context.Context) error { close(started); <-release; return nil }, nil)
	go r.RunNow(runner.SyncJobName)
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stop with a stuck run: %v", err)
	}
}

func TestParseSchedule(t *testing.T) {
	for spec, ok := range map[string]bool{"@daily": true, "@every 5m": true, "0 2 * * *": true, "CRON_TZ=Europe/London 0 2 * * 1-5": true,
		"": false, "* * *": false, "@sometimes": false, "61 * * * *": false} {
		if err := runner.ParseSchedule(spec); (err == nil) != ok {
			t.Errorf("ParseSchedule(%q) = %v", spec, err)
		}
		if _, err := runner.Cron(spec, nil); (err == nil) != ok {
			t.Errorf("Cron(%q) = %v", spec, err)
		}
	}
}

func TestNewRunnerRefusesBadJobs(t *testing.T) {
	run := func(context.Context) error { return nil }
	every := runner.Every(time.Second)
	for name, jobs := range map[string][]runner.Job{
		"no name":      {{Trigger: every, Run: run}},
		"two named a":  {{Name: "a", Trigger: every, Run: run}, {Name: "a", Trigger: every, Run: run}},
		"no trigger":   {{Name: "a", Run: run}},
		"nothing runs": {{Name: "a", Trigger: every}},
	} {
		if _, err := runner.NewRunner(context.Background(), runner.RunnerOptions{}, jobs...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestRunnerTriggers runs one job on its trigger for a while on a fake clock (midnight UTC
// 2000-01-01 at the start) and checks when its runs started and how each due run ended.
func TestRunnerTriggers(t *testing.T) {
	h, m, s := time.Hour, time.Minute, time.Second
	ok := func(context.Context, int) error { return nil }
	for _, tc := range []struct {
		name    string
		trigger func(t *testing.T) runner.Trigger
		atStart bool
		// lockedFor: another process holds the job's lock from the start for this long.
		lockedFor time.Duration
		// body is the job's nth run (from 0).
		body  func(ctx context.Context, n int) error
		watch time.Duration // how long the runner runs before Stop
		// wantStarts are the times, after the start, the body began.
		wantStarts []time.Duration
		// wantOutcomes are hrsync_job_runs_total by outcome; those not named must be 0.
		wantOutcomes map[string]float64
		wantSuccess  time.Duration // hrsync_job_last_success_timestamp_seconds, after the start; 0: none
	}{
		{
			name:    "cron: on its schedule, not at start",
			trigger: func(t *testing.T) runner.Trigger { return cronTrigger(t, "0 2 * * *") },
			body:    ok, watch: 51 * h,
			wantStarts:   []time.Duration{2 * h, 26 * h, 50 * h},
			wantOutcomes: map[string]float64{"ok": 3},
			wantSuccess:  50 * h,
		},
		{
			name:    "cron: at start too",
			trigger: func(t *testing.T) runner.Trigger { return cronTrigger(t, "@hourly") },
			atStart: true, body: ok, watch: 2*h + 30*m,
			wantStarts:   []time.Duration{0, h, 2 * h},
			wantOutcomes: map[string]float64{"ok": 3},
			wantSuccess:  2 * h,
		},
		{
			name:    "cron delayed: each run its delay after the schedule's time",
			trigger: func(t *testing.T) runner.Trigger { return cronTrigger(t, "0 2 * * *").Delayed(7*m + 30*s) },
			body:    ok, watch: 51 * h,
			wantStarts:   []time.Duration{2*h + 7*m + 30*s, 26*h + 7*m + 30*s, 50*h + 7*m + 30*s},
			wantOutcomes: map[string]float64{"ok": 3},
			wantSuccess:  50*h + 7*m + 30*s,
		},
		{
			// 00:40 is past 00:00's delayed time (00:20) and before 01:00's (01:20).
			name:    "cron delayed: the next time is the delayed one after the start",
			trigger: func(t *testing.T) runner.Trigger { return cronTrigger(t, "@hourly").Delayed(20 * m) },
			body:    ok, watch: 3 * h,
			wantStarts:   []time.Duration{20 * m, h + 20*m, 2*h + 20*m},
			wantOutcomes: map[string]float64{"ok": 3},
			wantSuccess:  2*h + 20*m,
		},
		{
			name:    "cron @every delayed: the delay is taken within its interval",
			trigger: func(t *testing.T) runner.Trigger { return cronTrigger(t, "@every 1h").Delayed(90 * m) },
			body:    ok, watch: 4 * h,
			wantStarts:   []time.Duration{h + 30*m, 2*h + 30*m, 3*h + 30*m},
			wantOutcomes: map[string]float64{"ok": 3},
			wantSuccess:  3*h + 30*m,
		},
		{
			name:    "cron delayed, at start: the run at start is not delayed",
			trigger: func(t *testing.T) runner.Trigger { return cronTrigger(t, "@hourly").Delayed(10 * m) },
			atStart: true, body: ok, watch: 2*h + 30*m,
			wantStarts:   []time.Duration{0, 10 * m, h + 10*m, 2*h + 10*m},
			wantOutcomes: map[string]float64{"ok": 4},
			wantSuccess:  2*h + 10*m,
		},
		{
			name:    "cron: a run longer than the period skips the runs due meanwhile",
			trigger: func(t *testing.T) runner.Trigger { return cronTrigger(t, "@every 1h") },
			body: func(ctx context.Context, n int) error {
				if n == 0 {
					time.Sleep(2*h + 30*m) // 1h to 3h30: 2h and 3h are skipped
				}
				return nil
			},
			watch:        4*h + 30*m,
			wantStarts:   []time.Duration{h, 4 * h},
			wantOutcomes: map[string]float64{"ok": 2, "overlap": 2},
			wantSuccess:  4 * h,
		},
		{
			name:    "poll: at start, then every interval",
			trigger: func(*testing.T) runner.Trigger { return runner.Every(30 * s) },
			body:    ok, watch: 95 * s,
			wantStarts:   []time.Duration{0, 30 * s, 60 * s, 90 * s},
			wantOutcomes: map[string]float64{"ok": 4},
			wantSuccess:  90 * s,
		},
		{
			name:    "poll delayed: the first run after the delay, then every interval",
			trigger: func(*testing.T) runner.Trigger { return runner.Every(30 * s).Delayed(10 * s) },
			body:    ok, watch: 75 * s,
			wantStarts:   []time.Duration{10 * s, 40 * s, 70 * s},
			wantOutcomes: map[string]float64{"ok": 3},
			wantSuccess:  70 * s,
		},
		{
			name:    "poll: after a run longer than the interval, the next at once",
			trigger: func(*testing.T) runner.Trigger { return runner.Every(30 * s) },
			body: func(ctx context.Context, n int) error {
				if n == 0 {
					time.Sleep(45 * s)
				}
				return nil
			},
			watch:        80 * s,
			wantStarts:   []time.Duration{0, 45 * s, 75 * s},
			wantOutcomes: map[string]float64{"ok": 3},
			wantSuccess:  75 * s,
		},
		{
			name:    "poll: a failed run is counted, the next goes on",
			trigger: func(*testing.T) runner.Trigger { return runner.Every(30 * s) },
			body: func(ctx context.Context, n int) error {
				if n == 0 {
					return errors.New("source down")
				}
				return nil
			},
			watch:        40 * s,
			wantStarts:   []time.Duration{0, 30 * s},
			wantOutcomes: map[string]float64{"failed": 1, "ok": 1},
			wantSuccess:  30 * s,
		},
		{
			name:      "lock held elsewhere: skipped and counted, runs once it is free",
			trigger:   func(*testing.T) runner.Trigger { return runner.Every(30 * s) },
			lockedFor: 45 * s, body: ok, watch: 70 * s,
			wantStarts:   []time.Duration{60 * s},
			wantOutcomes: map[string]float64{"locked": 2, "ok": 1},
			wantSuccess:  60 * s,
		},
		{
			name:    "panic: recovered, counted, the next run happens",
			trigger: func(*testing.T) runner.Trigger { return runner.Every(30 * s) },
			body: func(ctx context.Context, n int) error {
				if n == 0 {
					panic("boom")
				}
				return nil
			},
			watch:        40 * s,
			wantStarts:   []time.Duration{0, 30 * s},
			wantOutcomes: map[string]float64{"panicked": 1, "ok": 1},
			wantSuccess:  30 * s,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				lock := &fakeLock{}
				if tc.lockedFor > 0 {
					lock.held.Store(true)
					time.AfterFunc(tc.lockedFor, func() { lock.held.Store(false) })
				}
				var mu sync.Mutex
				var starts []time.Duration
				job := runner.Job{Name: "j", Trigger: tc.trigger(t), RunAtStart: tc.atStart, Lock: "j", Run: func(ctx context.Context) error {
					mu.Lock()
					n := len(starts)
					starts = append(starts, time.Since(start))
					mu.Unlock()
					return tc.body(ctx, n)
				}}
				reg := prometheus.NewRegistry()
				r, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Lock: lock, Metrics: runner.NewMetrics(reg)}, job)
				if err != nil {
					t.Fatal(err)
				}
				r.Start()
				time.Sleep(tc.watch)
				if err := r.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(starts, tc.wantStarts) {
					t.Errorf("runs started at %v, want %v", starts, tc.wantStarts)
				}
				for _, o := range runner.JobOutcomes {
					if got := counter(t, reg, "hrsync_job_runs_total", "outcome="+o+",task=j"); got != tc.wantOutcomes[o] {
						t.Errorf("hrsync_job_runs_total{outcome=%q} = %v, want %v", o, got, tc.wantOutcomes[o])
					}
				}
				if got, want := counter(t, reg, "hrsync_job_panics_total", "task=j"), tc.wantOutcomes["panicked"]; got != want {
					t.Errorf("hrsync_job_panics_total = %v, want %v", got, want)
				}
				ran := tc.wantOutcomes["ok"] + tc.wantOutcomes["failed"] + tc.wantOutcomes["panicked"]
				if got := counter(t, reg, "hrsync_job_duration_seconds", "task=j"); got != ran {
					t.Errorf("hrsync_job_duration_seconds counted %v runs, want %v", got, ran)
				}
				if got, want := counter(t, reg, "hrsync_job_last_success_timestamp_seconds", "task=j"), float64(start.Add(tc.wantSuccess).Unix()); got != want {
					t.Errorf("last success at %v, want %v", got, want)
				}
				if lock.held.Load() {
					t.Error("the lock is still held after the runner stopped")
				}
			})
		})
	}
}

// TestRunnerStop: Stop waits for a run going on, within its bound; at the bound it ends the
// run's context and returns.
func TestRunnerStop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		runFor   time.Duration // the run ends by itself after this, or when its context ends
		bound    time.Duration
		wantErr  error
		wantStop time.Duration // when Stop returns, after the run started
		canceled bool          // the run saw its context end
		outcome  string
	}{
		{name: "waits for the run", runFor: 10 * time.Second, bound: time.Minute,
			wantStop: 10 * time.Second, outcome: "ok"},
		{name: "cancels at the deadline", runFor: time.Hour, bound: 5 * time.Second, wantErr: context.DeadlineExceeded,
			wantStop: 5 * time.Second, canceled: true, outcome: "stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var canceled atomic.Bool
				started := make(chan struct{})
				reg := prometheus.NewRegistry()
				r, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Metrics: runner.NewMetrics(reg)},
					runner.Job{Name: "j", Trigger: runner.Every(time.Minute), Run: func(ctx context.Context) error {
						close(started)
						select {
						case <-time.After(tc.runFor):
							return nil
						case <-ctx.Done():
							canceled.Store(true)
							return ctx.Err()
						}
					}})
				if err != nil {
					t.Fatal(err)
				}
				r.Start()
				<-started
				begun := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), tc.bound)
				defer cancel()
				err = r.Stop(ctx)
				if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
					t.Errorf("Stop: %v, want %v", err, tc.wantErr)
				}
				if d := time.Since(begun); d != tc.wantStop {
					t.Errorf("Stop returned after %s, want %s", d, tc.wantStop)
				}
				synctest.Wait() // the canceled run returns
				if canceled.Load() != tc.canceled {
					t.Errorf("the run saw its context end: %v, want %v", canceled.Load(), tc.canceled)
				}
				if got := counter(t, reg, "hrsync_job_runs_total", "outcome="+tc.outcome+",task=j"); got != 1 {
					t.Errorf("hrsync_job_runs_total{outcome=%q} = %v, want 1", tc.outcome, got)
				}
				r.RunNow("j") // a stopped runner runs nothing
				if got := counter(t, reg, "hrsync_job_duration_seconds", "task=j"); got != 1 {
					t.Errorf("%v runs, want 1", got)
				}
			})
		})
	}
}

// Jobs sharing Slots run no more of them at once than it allows, each in its turn, and a runner
// stops without waiting for a slot that never frees.
func TestSlotsBoundRunsAtOnce(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d at once", n), func(t *testing.T) {
			slots := runner.NewSlots(n)
			var running, most, ran atomic.Int32
			body := func(context.Context) error {
				now := running.Add(1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				time.Sleep(50 * time.Millisecond)
				running.Add(-1)
				ran.Add(1)
				return nil
			}
			// One runner per account, as a worker of several accounts has.
			var runners []*runner.Runner
			for range 5 {
				r, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Metrics: runner.NewMetrics(prometheus.NewRegistry())},
					runner.Job{Name: "sync", Trigger: runner.Every(time.Hour), Slots: slots, Run: body})
				if err != nil {
					t.Fatal(err)
				}
				runners = append(runners, r)
			}
			var wg sync.WaitGroup
			for _, r := range runners {
				wg.Go(func() { r.RunNow("sync") })
			}
			wg.Wait()
			if ran.Load() != 5 || most.Load() != int32(n) {
				t.Errorf("%d runs, at most %d at once; want 5, at most %d", ran.Load(), most.Load(), n)
			}
		})
	}
	t.Run("stop while waiting", func(t *testing.T) {
		slots := runner.NewSlots(1)
		hold := make(chan struct{})
		defer close(hold)
		holding := make(chan struct{})
		first, err := runner.NewRunner(context.Background(), runner.RunnerOptions{},
			runner.Job{Name: "sync", Trigger: runner.Every(time.Hour), Slots: slots, Run: func(context.Context) error { close(holding); <-hold; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		go first.RunNow("sync")
		<-holding // the slot is taken
		var waiterRan atomic.Bool
		second, err := runner.NewRunner(context.Background(), runner.RunnerOptions{},
			runner.Job{Name: "sync", Trigger: runner.Every(time.Hour), Slots: slots, Run: func(context.Context) error { waiterRan.Store(true); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		second.Start() // an Every trigger runs at once: it waits for the slot first holds
		time.Sleep(100 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := second.Stop(ctx); err != nil {
			t.Errorf("stop while waiting for a slot: %v", err)
		}
		if waiterRan.Load() {
			t.Error("a job ran without a slot")
		}
	})
}

// TestRunnerNotDue: a run that finds nothing due yet (ErrNotDue) is neither a run nor a skip:
// nothing is counted, and the lock is released.
func TestRunnerNotDue(t *testing.T) {
	lock := &fakeLock{}
	due := false
	r, reg := newRunner(t, func(ctx context.Context) error {
		if !due {
			return fmt.Errorf("checked: %w", runner.ErrNotDue)
		}
		return nil
	}, lock)
	r.RunNow(runner.SyncJobName)
	for _, o := range runner.JobOutcomes {
		if got := counter(t, reg, "hrsync_job_runs_total", "outcome="+o+",task=sync"); got != 0 {
			t.Errorf("a run not due counted %s: %v", o, got)
		}
	}
	if lock.held.Load() {
		t.Error("the lock was not released")
	}
	due = true
	r.RunNow(runner.SyncJobName)
	if got := counter(t, reg, "hrsync_job_runs_total", "outcome=ok,task=sync"); got != 1 {
		t.Errorf("the run due counted ok %v, want 1", got)
	}
}

// countingLock is a Locker that counts the locks taken.
type countingLock struct{ taken atomic.Int64 }

func (l *countingLock) TryLock(ctx context.Context, _ string) (context.Context, func(), bool, error) {
	l.taken.Add(1)
	return ctx, func() {}, true, nil
}

// TestRunnerIdle: a run whose job says it is idle takes neither its slot nor its lock (in a
// worker: the warehouse) and does not call Run, and is counted ok, its last success set; a run
// that is not idle runs as any other.
func TestRunnerIdle(t *testing.T) {
	lock := &countingLock{}
	slots := runner.NewSlots(1)
	idle, ran := true, 0
	started, finish := make(chan struct{}), make(chan struct{})
	reg := prometheus.NewRegistry()
	r, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Lock: lock, Metrics: runner.NewMetrics(reg)},
		runner.Job{Name: "onboarding", Trigger: cronTrigger(t, "@daily"), Lock: "onboarding", Slots: slots,
			Idle: func() bool { return idle },
			Run:  func(context.Context) error { ran++; return nil }},
		// The sync holds the one slot while the idle runs happen: they do not wait for it.
		runner.Job{Name: runner.SyncJobName, Trigger: cronTrigger(t, "@daily"), Slots: slots,
			Run: func(context.Context) error { close(started); <-finish; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	syncDone := make(chan struct{})
	go func() { r.RunNow(runner.SyncJobName); close(syncDone) }()
	<-started
	r.RunNow("onboarding")
	r.RunNow("onboarding")
	close(finish)
	<-syncDone
	if ran != 0 || lock.taken.Load() != 0 {
		t.Errorf("idle runs: Run called %d times, the lock taken %d times; want neither", ran, lock.taken.Load())
	}
	if got := counter(t, reg, "hrsync_job_runs_total", "outcome=ok,task=onboarding"); got != 2 {
		t.Errorf("idle runs counted ok %v times, want 2", got)
	}
	if got := counter(t, reg, "hrsync_job_last_success_timestamp_seconds", "task=onboarding"); got == 0 {
		t.Error("an idle run set no last success")
	}
	idle = false
	r.RunNow("onboarding")
	if ran != 1 || lock.taken.Load() != 1 {
		t.Errorf("a run with work: Run called %d times, the lock taken %d times; want 1 and 1", ran, lock.taken.Load())
	}
	// A check that panics does not take the worker down: the run goes ahead.
	r2, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Lock: lock, Logger: slog.New(slog.DiscardHandler)},
		runner.Job{Name: "onboarding", Trigger: cronTrigger(t, "@daily"), Lock: "onboarding",
			Idle: func() bool { panic("boom") },
			Run:  func(context.Context) error { ran++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	r2.RunNow("onboarding")
	if ran != 2 {
		t.Errorf("after a check that panicked, Run called %d times in all, want 2", ran)
	}
	if got := counter(t, reg, "hrsync_job_runs_total", "outcome=ok,task=onboarding"); got != 3 {
		t.Errorf("runs counted ok %v times, want 3", got)
	}
}

// TestRunnerNextRunMetric: hrsync_job_next_run_timestamp_seconds is when the next run is due,
// its delay included, from the start and after each run.
func TestRunnerNextRunMetric(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		reg := prometheus.NewRegistry()
		r, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Metrics: runner.NewMetrics(reg)},
			runner.Job{Name: "j", Trigger: cronTrigger(t, "0 2 * * *").Delayed(7 * time.Minute), Run: func(context.Context) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		next := func() time.Duration {
			return time.Unix(int64(counter(t, reg, "hrsync_job_next_run_timestamp_seconds", "task=j")), 0).Sub(start)
		}
		r.Start()
		time.Sleep(time.Hour)
		if got, want := next(), 2*time.Hour+7*time.Minute; got != want {
			t.Errorf("next run at start+%s, want +%s", got, want)
		}
		time.Sleep(2 * time.Hour) // the run at 02:07 is done
		if got, want := next(), 26*time.Hour+7*time.Minute; got != want {
			t.Errorf("next run after the first at start+%s, want +%s", got, want)
		}
		if err := r.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestOffset: an account's place in the window is its own, the same at every call (a hash of
// its name, not a draw), inside the window, and 1,000 accounts' places fill a 30-minute window
// evenly: no minute of it holds more than about twice its share.
func TestOffset(t *testing.T) {
	const window = 30 * time.Minute
	if got := runner.Offset("acme", 0); got != 0 {
		t.Errorf("Offset with no window = %s, want 0", got)
	}
	// A change of the hash moves every account's runs: it must be deliberate.
	if got, want := runner.Offset("acme", window), 15*time.Minute+15249074705*time.Nanosecond; got != want {
		t.Errorf("Offset(acme, %s) = %s, want %s", window, got, want)
	}
	perMinute := make([]int, int(window/time.Minute))
	perSecond := map[time.Duration]int{}
	for i := range 1000 {
		o := runner.Offset(fmt.Sprintf("acct-%04d", i), window)
		if o < 0 || o >= window {
			t.Fatalf("Offset(acct-%04d) = %s: outside [0, %s)", i, o, window)
		}
		perSecond[o.Truncate(time.Second)]++
		perMinute[o/time.Minute]++
	}
	share := 1000 / len(perMinute) // 33
	for m, n := range perMinute {
		if n < share/2 || n > 2*share {
			t.Errorf("minute %d of the window holds %d of 1,000 accounts, want about %d", m, n, share)
		}
	}
	for sec, n := range perSecond {
		if n > 5 { // 1,000 places drawn uniformly over 1,800 seconds: 5 in one is already rare
			t.Errorf("%d of 1,000 accounts start in the second at %s", n, sec)
		}
	}
}

// TestSchedulerSharedByRunners: runners sharing one Scheduler (a worker's accounts) each run at
// their own times, their spread (Offset) kept, a slow run of one holding back none of the
// others; while they wait, they add one goroutine in all, not one a job; stopped, they run no
// more and the scheduler's goroutine ends (synctest fails a bubble left with one).
func TestSchedulerSharedByRunners(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 50
		const window = 30 * time.Minute
		start := time.Now() // midnight UTC, in the bubble
		sched := runner.NewScheduler()
		var mu sync.Mutex
		starts := map[string][]time.Duration{}
		var runners []*runner.Runner
		before := runtime.NumGoroutine()
		for i := range n {
			name := fmt.Sprintf("acct-%02d", i)
			job := runner.Job{Name: "sync", Trigger: cronTrigger(t, "@hourly").Delayed(runner.Offset(name, window)), Lock: "sync",
				Run: func(context.Context) error {
					mu.Lock()
					starts[name] = append(starts[name], time.Since(start))
					mu.Unlock()
					if name == "acct-00" {
						time.Sleep(20 * time.Minute) // the others run meanwhile
					}
					return nil
				}}
			poll := runner.Job{Name: "onboarding", Trigger: runner.Every(time.Hour).Delayed(runner.Offset(name, window)), Lock: "onboarding",
				Run: func(context.Context) error { return nil }}
			// Its two jobs are due at the same times, under locks of their own: one runner's
			// single fakeLock would let whichever took it first skip the other.
			r, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Lock: &namedLocks{}, Scheduler: sched}, job, poll)
			if err != nil {
				t.Fatal(err)
			}
			r.Start()
			runners = append(runners, r)
		}
		synctest.Wait()
		if got := runtime.NumGoroutine() - before; got > 1 {
			t.Errorf("%d runners of 2 jobs waiting hold %d goroutines, want at most 1", n, got)
		}
		time.Sleep(2*time.Hour + 50*time.Minute)
		for _, r := range runners {
			if err := r.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * time.Hour) // stopped: nothing more runs
		mu.Lock()
		defer mu.Unlock()
		for i := range n {
			name := fmt.Sprintf("acct-%02d", i)
			o := runner.Offset(name, window)
			if want := []time.Duration{o, time.Hour + o, 2*time.Hour + o}; !slices.Equal(starts[name], want) {
				t.Errorf("%s ran at %v, want %v (its offset %s after each hour)", name, starts[name], want, o)
			}
		}
	})
}
