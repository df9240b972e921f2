package walk

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
)

// Metrics are the sync's Prometheus metrics and those of its requests to the source, registered
// on the registry given to NewMetrics (the job runner's are runner.Metrics). A nil *Metrics
// records nothing.
type Metrics struct {
	runs             *prometheus.CounterVec
	duration         *prometheus.HistogramVec
	records          *prometheus.CounterVec
	lastSuccess      *prometheus.GaugeVec
	configured       *prometheus.GaugeVec
	inconsistencies  *prometheus.CounterVec
	deletionsRefused *prometheus.CounterVec
	requests         *prometheus.CounterVec
	retries          prometheus.Counter
	rateLimitWait    prometheus.Counter
}

// runStatuses are the final statuses of a resource's run, the status label of
// hrsync_sync_runs_total. Unavailable is no failure: the account does not offer the collection.
var runStatuses = []string{sink.RunOK, sink.RunFailed, sink.RunInconsistent, sink.RunGuarded, sink.RunUnavailable}

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
		m.requests, m.retries, m.rateLimitWait)
	// A collection's series start at zero when Configure names it, so increase() sees its
	// first event; not for every collection the sync knows: a worker of 1,000 accounts held
	// 176 series at zero for each (16 collections), about 65 KB of heap an account, most of
	// them for collections its sync never walks.
	return m
}

// Configure says which collections the scheduled sync walks: hrsync_sync_resource_configured is
// 1 for each, so an alert can tell a collection that never succeeded from one nobody asked for
// without listing names in the rule. Their other series start at zero.
func (m *Metrics) Configure(rs []sink.Resource) {
	if m == nil {
		return
	}
	m.configured.Reset()
	for _, r := range rs {
		m.configured.WithLabelValues(string(r)).Set(1)
		m.startResource(r)
	}
}

// startResource starts a resource's series at zero.
func (m *Metrics) startResource(r sink.Resource) {
	res := string(r)
	for _, st := range runStatuses {
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

// ObserveRequest records one request to the source; give it to client.Options.Observe.
func (m *Metrics) ObserveRequest(e client.RequestEvent) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(e.Route, e.Method, strconv.Itoa(e.Status)).Inc()
	if e.Retried {
		m.retries.Inc()
	}
	m.rateLimitWait.Add(e.Waited.Seconds())
}
