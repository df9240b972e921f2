package retention

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/internal/promset"
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

// Metrics are retention's Prometheus metrics, of one account of a MetricSet. A nil *Metrics
// records nothing.
type Metrics struct{ a *promset.Account }

// Retention's families, in the order of families.
const (
	famErased = iota
	famFiles
	famLastSuccess
)

var families = []promset.Family{
	famErased: {Name: "hrsync_retention_erased_total", Kind: promset.Counter, Labels: []string{"class"},
		Help: "Subjects whose values of a class retention erased: people (leavers), sicknesses (health) and onboarding ledger rows (identifying)."},
	famFiles: {Name: "hrsync_retention_files_deleted_total", Kind: promset.Counter,
		Help: "Onboarding files retention deleted from processed/, failed/ and reports/."},
	famLastSuccess: {Name: "hrsync_retention_last_success_timestamp_seconds", Kind: promset.Gauge,
		Help: "Unix time the last successful retention run ended, as the warehouse's erasure log records it; 0 until one has."},
}

// MetricSet is retention's metrics of every account of a worker with a rule set: one collector
// for each family, each account's series plain numbers of its own (promset), labelled with its
// name.
type MetricSet struct{ s *promset.Set }

// NewMetricSet registers retention's families on reg, each series labelled label (e.g.
// "account") with its account's name.
func NewMetricSet(reg prometheus.Registerer, label string) *MetricSet {
	s := promset.New(label, families...)
	s.Register(reg)
	return &MetricSet{s}
}

// Account is the metrics of the account name (one with a rule set), added to the set.
func (ms *MetricSet) Account(name string) *Metrics {
	m := &Metrics{ms.s.Account(name)}
	for _, c := range LeaverClasses {
		m.a.Vec(famErased).Start(c.String())
	}
	return m
}

// NewMetrics creates the metrics of one account, without an account label, and registers them
// on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics { return NewMetricSet(reg, "").Account("") }

func (m *Metrics) succeeded(at time.Time) {
	if m != nil {
		m.a.Vec(famLastSuccess).Set(float64(at.Unix()))
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
			m.a.Vec(famErased).Add(float64(rr.Subjects), class.String())
		}
		m.a.Vec(famFiles).Add(float64(rr.Files))
	}
}
