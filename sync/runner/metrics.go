package runner

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the job runner's Prometheus metrics, registered on the registry given to
// NewMetrics (the sync's own are walk.Metrics). A nil *Metrics records nothing.
type Metrics struct {
	skipped        *prometheus.CounterVec
	panics         *prometheus.CounterVec
	jobRuns        *prometheus.CounterVec
	jobDuration    *prometheus.HistogramVec
	jobLastSuccess *prometheus.GaugeVec
	jobNext        *prometheus.GaugeVec
}

// JobOutcomes are how a due run of a job ends, the outcome label of hrsync_job_runs_total: ran
// to the end (ok), returned an error (failed), panicked, was ended by a stop (stopped), or was
// skipped because another process holds the job's lock (locked) or its previous run is still
// going (overlap).
var JobOutcomes = []string{"ok", "failed", "panicked", "stopped", "locked", "overlap"}

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_sync_skipped_total", Help: "Scheduled syncs skipped: the previous still running (overlap) or another replica syncing (locked).",
		}, []string{"reason"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_job_panics_total", Help: "Scheduled jobs that panicked (recovered).",
		}, []string{"task"}), // not "job": Prometheus gives every target that label
		jobRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_job_runs_total", Help: "Due runs of the worker's jobs by job (task) and outcome (ok, failed, panicked, stopped; skipped: locked, overlap).",
		}, []string{"task", "outcome"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hrsync_job_duration_seconds", Help: "Wall time of the worker's job runs (not skipped ones) by job (task).",
			Buckets: []float64{.01, .1, .5, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600},
		}, []string{"task"}),
		jobLastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hrsync_job_last_success_timestamp_seconds", Help: "Unix time the last ok run of a job (task) finished.",
		}, []string{"task"}),
		jobNext: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hrsync_job_next_run_timestamp_seconds", Help: "Unix time the next run of a job (task) is due, its schedule's spread included.",
		}, []string{"task"}),
	}
	reg.MustRegister(m.skipped, m.panics, m.jobRuns, m.jobDuration, m.jobLastSuccess, m.jobNext)
	// Every series whose labels are known exists from the start, at zero, so increase() sees
	// its first event.
	for _, reason := range []string{"overlap", "locked"} {
		m.skipped.WithLabelValues(reason)
	}
	return m
}

// jobAdded starts the series of a Runner's job at zero, so increase() sees their first event.
func (m *Metrics) jobAdded(task string) {
	if m == nil {
		return
	}
	for _, o := range JobOutcomes {
		m.jobRuns.WithLabelValues(task, o)
	}
	m.panics.WithLabelValues(task)
}

// jobRan records a run of a job that started and ended, by its outcome.
func (m *Metrics) jobRan(task, outcome string, started, finished time.Time) {
	if m == nil {
		return
	}
	m.jobRuns.WithLabelValues(task, outcome).Inc()
	m.jobDuration.WithLabelValues(task).Observe(finished.Sub(started).Seconds())
	if outcome == "ok" {
		m.jobLastSuccess.WithLabelValues(task).Set(float64(finished.Unix()))
	}
}

// jobSkipped records a due run of a job that was skipped for reason (locked, overlap); the
// sync's skips are also counted on hrsync_sync_skipped_total, as they were before every job
// had hrsync_job_runs_total.
func (m *Metrics) jobSkipped(task, reason string) {
	if m == nil {
		return
	}
	m.jobRuns.WithLabelValues(task, reason).Inc()
	if task == SyncJobName {
		m.skipped.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) panicked(task string) {
	if m != nil {
		m.panics.WithLabelValues(task).Inc()
	}
}

// scheduled records when the next run of a job is due.
func (m *Metrics) scheduled(task string, due time.Time) {
	if m != nil {
		m.jobNext.WithLabelValues(task).Set(float64(due.Unix()))
	}
}
