package runner

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/internal/promset"
)

// Metrics are the job runner's Prometheus metrics, of one account of a MetricSet (the sync's own
// are walk.Metrics). A nil *Metrics records nothing.
type Metrics struct{ a *promset.Account }

// The runner's families, in the order of families.
const (
	famSkipped = iota
	famPanics
	famJobRuns
	famJobDuration
	famJobLastSuccess
	famJobNext
)

var families = []promset.Family{
	famSkipped: {Name: "hrsync_sync_skipped_total", Kind: promset.Counter, Labels: []string{"reason"},
		Help: "Scheduled syncs skipped: the previous still running (overlap) or another replica syncing (locked)."},
	famPanics: {Name: "hrsync_job_panics_total", Kind: promset.Counter, Labels: []string{"task"}, // not "job": Prometheus gives every target that label
		Help: "Scheduled jobs that panicked (recovered)."},
	famJobRuns: {Name: "hrsync_job_runs_total", Kind: promset.Counter, Labels: []string{"task", "outcome"},
		Help: "Due runs of the worker's jobs by job (task) and outcome (ok, failed, held: a load guard held the sync, panicked, stopped; skipped: locked, overlap)."},
	famJobDuration: {Name: "hrsync_job_duration_seconds", Kind: promset.Histogram, Labels: []string{"task"},
		Help:    "Wall time of the worker's job runs (not skipped ones) by job (task).",
		Buckets: []float64{.01, .1, .5, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600}},
	famJobLastSuccess: {Name: "hrsync_job_last_success_timestamp_seconds", Kind: promset.Gauge, Labels: []string{"task"},
		Help: "Unix time the last ok run of a job (task) finished."},
	famJobNext: {Name: "hrsync_job_next_run_timestamp_seconds", Kind: promset.Gauge, Labels: []string{"task"},
		Help: "Unix time the next run of a job (task) is due, its schedule's spread included."},
}

// JobOutcomes are how a due run of a job ends, the outcome label of hrsync_job_runs_total: ran
// to the end (ok), returned an error (failed), ended held (a sync a load guard held: ErrHeld),
// panicked, was ended by a stop (stopped), or was skipped because another process holds the
// job's lock (locked) or its previous run is still going (overlap).
var JobOutcomes = []string{"ok", "failed", "held", "panicked", "stopped", "locked", "overlap"}

// MetricSet is the runner's metrics of every account of a worker: one collector for each
// family, each account's series plain numbers of its own (promset), labelled with its name.
type MetricSet struct{ s *promset.Set }

// NewMetricSet registers the runner's families on reg, each series labelled label (e.g.
// "account") with its account's name.
func NewMetricSet(reg prometheus.Registerer, label string) *MetricSet {
	s := promset.New(label, families...)
	s.Register(reg)
	return &MetricSet{s}
}

// Account is the metrics of the account name, added to the set. Every series whose labels are
// known exists from the start, at zero, so increase() sees its first event.
func (ms *MetricSet) Account(name string) *Metrics {
	m := &Metrics{ms.s.Account(name)}
	for _, reason := range []string{"overlap", "locked"} {
		m.a.Vec(famSkipped).Start(reason)
	}
	return m
}

// NewMetrics creates the metrics of one account, without an account label, and registers them
// on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics { return NewMetricSet(reg, "").Account("") }

// jobAdded starts the series of a Runner's job at zero, so increase() sees their first event.
func (m *Metrics) jobAdded(task string) {
	if m == nil {
		return
	}
	for _, o := range JobOutcomes {
		m.a.Vec(famJobRuns).Start(task, o)
	}
	m.a.Vec(famPanics).Start(task)
}

// jobRan records a run of a job that started and ended, by its outcome.
func (m *Metrics) jobRan(task, outcome string, started, finished time.Time) {
	if m == nil {
		return
	}
	m.a.Vec(famJobRuns).Inc(task, outcome)
	m.a.Vec(famJobDuration).Observe(finished.Sub(started).Seconds(), task)
	if outcome == "ok" {
		m.a.Vec(famJobLastSuccess).Set(float64(finished.Unix()), task)
	}
}

// jobSkipped records a due run of a job that was skipped for reason (locked, overlap); the
// sync's skips are also counted on hrsync_sync_skipped_total, as they were before every job
// had hrsync_job_runs_total.
func (m *Metrics) jobSkipped(task, reason string) {
	if m == nil {
		return
	}
	m.a.Vec(famJobRuns).Inc(task, reason)
	if task == SyncJobName {
		m.a.Vec(famSkipped).Inc(reason)
	}
}

func (m *Metrics) panicked(task string) {
	if m != nil {
		m.a.Vec(famPanics).Inc(task)
	}
}

// scheduled records when the next run of a job is due.
func (m *Metrics) scheduled(task string, due time.Time) {
	if m != nil {
		m.a.Vec(famJobNext).Set(float64(due.Unix()), task)
	}
}
