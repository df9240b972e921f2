package sync

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source"
)

// Metrics are the sync's and the job runner's Prometheus metrics, registered on the registry
// given to NewMetrics. A nil *Metrics records nothing.
type Metrics struct {
	runs             *prometheus.CounterVec
	duration         *prometheus.HistogramVec
	records          *prometheus.CounterVec
	lastSuccess      *prometheus.GaugeVec
	configured       *prometheus.GaugeVec
	inconsistencies  *prometheus.CounterVec
	deletionsRefused *prometheus.CounterVec
	skipped          *prometheus.CounterVec
	panics           *prometheus.CounterVec
	jobRuns          *prometheus.CounterVec
	jobDuration      *prometheus.HistogramVec
	jobLastSuccess   *prometheus.GaugeVec
	requests         *prometheus.CounterVec
	retries          prometheus.Counter
	rateLimitWait    prometheus.Counter
}

// JobOutcomes are how a due run of a job ends, the outcome label of hrsync_job_runs_total: ran
// to the end (ok), returned an error (failed), panicked, was ended by a stop (stopped), or was
// skipped because another process holds the job's lock (locked) or its previous run is still
// going (overlap).
var JobOutcomes = []string{"ok", "failed", "panicked", "stopped", "locked", "overlap"}

// RunStatuses are the final statuses of a resource's run, the status label of
// hrsync_sync_runs_total. Unavailable is no failure: the account does not offer the collection.
var RunStatuses = []string{sink.RunOK, sink.RunFailed, sink.RunInconsistent, sink.RunGuarded, sink.RunUnavailable}

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_sync_runs_total", Help: "Sync runs by resource and final status (ok, failed, inconsistent, guarded; unavailable: the account does not offer the collection).",
		}, []string{"resource", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hrsync_sync_duration_seconds", Help: "Wall time of sync runs by resource.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600},
		}, []string{"resource"}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_sync_records_total", Help: "Records merged by resource and outcome (inserted, updated, unchanged, deleted).",
		}, []string{"resource", "outcome"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hrsync_sync_last_success_timestamp_seconds", Help: "Unix time the last successful sync of a resource finished.",
		}, []string{"resource"}),
		configured: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hrsync_sync_resource_configured", Help: "1 for each collection the worker's scheduled sync walks (sync.resources).",
		}, []string{"resource"}),
		inconsistencies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_sync_walk_inconsistencies_total", Help: "Walks that found the source's collection changed under them.",
		}, []string{"resource"}),
		deletionsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_sync_deletions_refused_total", Help: "Soft deletes the deletion guard refused.",
		}, []string{"resource"}),
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
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_source_requests_total", Help: "Requests to the source by route, method and status code (0: no answer).",
		}, []string{"route", "method", "code"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hrsync_source_retries_total", Help: "Requests to the source that were retries.",
		}),
		rateLimitWait: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hrsync_source_rate_limit_wait_seconds_total", Help: "Seconds spent waiting on the source's rate limit (pacing and 429 windows).",
		}),
	}
	reg.MustRegister(m.runs, m.duration, m.records, m.lastSuccess, m.configured, m.inconsistencies, m.deletionsRefused,
		m.skipped, m.panics, m.jobRuns, m.jobDuration, m.jobLastSuccess, m.requests, m.retries, m.rateLimitWait)
	// Every series whose labels are known exists from the start, at zero, so increase() sees
	// its first event.
	for _, r := range Resources {
		m.startResource(r)
	}
	for _, reason := range []string{"overlap", "locked"} {
		m.skipped.WithLabelValues(reason)
	}
	return m
}

// Configure says which collections the scheduled sync walks: hrsync_sync_resource_configured is
// 1 for each, so an alert can tell a collection that never succeeded from one nobody asked for
// without listing names in the rule.
func (m *Metrics) Configure(rs []sink.Resource) {
	if m == nil {
		return
	}
	m.configured.Reset()
	for _, r := range rs {
		m.configured.WithLabelValues(string(r)).Set(1)
		m.startResource(r) // one named beyond the default (salaries) starts at zero too
	}
}

// startResource starts a resource's series at zero.
func (m *Metrics) startResource(r sink.Resource) {
	res := string(r)
	for _, st := range RunStatuses {
		m.runs.WithLabelValues(res, st)
	}
	for _, o := range []string{"inserted", "updated", "unchanged", "deleted"} {
		m.records.WithLabelValues(res, o)
	}
	m.inconsistencies.WithLabelValues(res)
	m.deletionsRefused.WithLabelValues(res)
}

func (m *Metrics) observeRun(r Result) {
	if m == nil {
		return
	}
	res := string(r.Resource)
	m.runs.WithLabelValues(res, r.Status).Inc()
	m.duration.WithLabelValues(res).Observe(r.FinishedAt.Sub(r.StartedAt).Seconds())
	for outcome, n := range map[string]int64{"inserted": r.Inserted, "updated": r.Updated, "unchanged": r.Unchanged, "deleted": r.Deleted} {
		m.records.WithLabelValues(res, outcome).Add(float64(n))
	}
	m.deletionsRefused.WithLabelValues(res).Add(float64(r.DeletionsRefused))
	if r.Status == sink.RunOK {
		m.lastSuccess.WithLabelValues(res).Set(float64(r.FinishedAt.Unix()))
	}
}

func (m *Metrics) observeInconsistentWalk(r sink.Resource) {
	if m != nil {
		m.inconsistencies.WithLabelValues(string(r)).Inc()
	}
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

// ObserveRequest records one request to the source; give it to source.ClientOptions.Observe.
func (m *Metrics) ObserveRequest(e source.RequestEvent) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(e.Route, e.Method, strconv.Itoa(e.Status)).Inc()
	if e.Retried {
		m.retries.Inc()
	}
	m.rateLimitWait.Add(e.Waited.Seconds())
}
