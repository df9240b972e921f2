package sync_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	hrsync "github.com/hrsync/hrsync/sync"
)

type fakeLock struct{ held atomic.Bool }

func (l *fakeLock) TryLock(ctx context.Context, _ string) (context.Context, func(), bool, error) {
	if !l.held.CompareAndSwap(false, true) {
		return ctx, nil, false, nil
	}
	return ctx, func() { l.held.Store(false) }, true, nil
}

func newScheduler(t *testing.T, job hrsync.Job, lock hrsync.Locker) (*hrsync.Scheduler, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	s, err := hrsync.NewScheduler(context.Background(), job, hrsync.SchedulerOptions{Spec: "@daily", Lock: lock, Metrics: hrsync.NewMetrics(reg)})
	if err != nil {
		t.Fatal(err)
	}
	return s, reg
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
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestSchedulerNeverOverlaps(t *testing.T) {
	started, finish := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	s, reg := newScheduler(t, func(ctx context.Context) error {
		runs.Add(1)
		close(started)
		<-finish
		return nil
	}, nil)
	go s.RunNow()
	<-started
	s.RunNow() // due while the first is going: skipped
	close(finish)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || counter(t, reg, "hrsync_sync_skipped_total", "reason=overlap") != 1 {
		t.Errorf("runs %d, overlap skips %v", runs.Load(), counter(t, reg, "hrsync_sync_skipped_total", "reason=overlap"))
	}
}

func TestSchedulerSkipsWhenAnotherReplicaSyncs(t *testing.T) {
	lock := &fakeLock{}
	lock.held.Store(true) // another process
	ran := false
	s, reg := newScheduler(t, func(ctx context.Context) error { ran = true; return nil }, lock)
	s.RunNow()
	if ran || counter(t, reg, "hrsync_sync_skipped_total", "reason=locked") != 1 {
		t.Errorf("ran %v with the lock held elsewhere", ran)
	}
	lock.held.Store(false)
	s.RunNow()
	if !ran || lock.held.Load() {
		t.Errorf("ran %v; lock still held after the run: %v", ran, lock.held.Load())
	}
}

func TestSchedulerRecoversPanics(t *testing.T) {
	lock := &fakeLock{}
	s, reg := newScheduler(t, func(ctx context.Context) error { panic("boom") }, lock)
	s.RunNow()
	s.RunNow() // the panic released the lock and the running flag
	if got := counter(t, reg, "hrsync_job_panics_total", "task=sync"); got != 2 {
		t.Errorf("panics counted %v, want 2", got)
	}
	if lock.held.Load() {
		t.Error("the lock was not released after a panic")
	}
}

func TestSchedulerStopWaitsBounded(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	s, _ := newScheduler(t, func(ctx context.Context) error { close(started); <-release; return nil }, nil)
	go s.RunNow()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stop with a stuck run: %v", err)
	}
}

func TestParseSchedule(t *testing.T) {
	for spec, ok := range map[string]bool{"@daily": true, "@every 5m": true, "0 2 * * *": true, "CRON_TZ=Europe/London 0 2 * * 1-5": true,
		"": false, "* * *": false, "@sometimes": false, "61 * * * *": false} {
		if err := hrsync.ParseSchedule(spec); (err == nil) != ok {
			t.Errorf("ParseSchedule(%q) = %v", spec, err)
		}
	}
}
