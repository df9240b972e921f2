package retention

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/runner"
	"github.com/hrsync/hrsync/sync/walk"
)

// JobName is retention's job in the worker's runner: its name in logs and in the task label of
// the job metrics.
const JobName = "retention"

// Every is how often the worker checks whether retention is due; Interval how long after the
// last successful run (the warehouse's erasure log) it is.
const (
	Every    = time.Hour
	Interval = 24 * time.Hour
)

// JobStore is what the job needs of the warehouse: Store and the last run.
type JobStore interface {
	Store
	LastRetentionRun(ctx context.Context) (time.Time, bool, error)
}

// Job is retention as a job of the worker's runner.Runner: checked every hour (and at start),
// it runs when the last successful run, as the warehouse's erasure log records it (so across
// restarts and replicas), is a day old or more; otherwise the check is not counted
// (runner.ErrNotDue). It runs under the sync's lock (walk.LockName): never during a sync, on
// any replica, so that no sync is refused for an erasure made while it staged, and always after
// one.
func Job(store JobStore, rules Rules, m *Metrics, log *slog.Logger) runner.Job {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return runner.Job{Name: JobName, Trigger: runner.Every(Every), Lock: walk.LockName, Run: func(ctx context.Context) error {
		last, ok, err := store.LastRetentionRun(ctx)
		if err != nil {
			log.Error("retention: read the last run", "err", err)
			return err
		}
		if ok {
			m.succeeded(last)
			if time.Since(last) < Interval {
				return fmt.Errorf("retention ran at %s: %w", last.Format(time.RFC3339), runner.ErrNotDue)
			}
		}
		res, err := Run(ctx, store, rules, Options{Logger: log})
		if err != nil {
			log.Error("retention", "err", err)
			return err
		}
		m.erased(res)
		m.succeeded(time.Now())
		return nil
	}}
}

// Metrics are retention's Prometheus metrics (the account's label added by the registerer). A
// nil *Metrics records nothing.
type Metrics struct {
	erasedTotal *prometheus.CounterVec
	files       prometheus.Counter
	lastSuccess prometheus.Gauge
}

// NewMetrics registers retention's metrics on reg: for an account with a rule set.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		erasedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_retention_erased_total",
			Help: "Subjects whose values of a class retention erased: people (leavers), sicknesses (health) and onboarding ledger rows (identifying).",
		}, []string{"class"}),
		files: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hrsync_retention_files_deleted_total", Help: "Onboarding files retention deleted from processed/ and failed/.",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hrsync_retention_last_success_timestamp_seconds",
			Help: "Unix time the last successful retention run ended, as the warehouse's erasure log records it; 0 until one has.",
		}),
	}
	reg.MustRegister(m.erasedTotal, m.files, m.lastSuccess)
	for _, c := range LeaverClasses {
		m.erasedTotal.WithLabelValues(c.String())
	}
	return m
}

func (m *Metrics) succeeded(at time.Time) {
	if m != nil {
		m.lastSuccess.Set(float64(at.Unix()))
	}
}

// erased counts what a run erased.
func (m *Metrics) erased(res Result) {
	if m == nil || res.DryRun {
		return
	}
	for _, rr := range res.Rules {
		if rr.Subjects > 0 {
			class := v1.Identifying // the onboarding rows: an email, and free text
			if len(rr.Classes) > 0 {
				class = rr.Classes[0]
			}
			m.erasedTotal.WithLabelValues(class.String()).Add(float64(rr.Subjects))
		}
		m.files.Add(float64(rr.Files))
	}
}
