package walk

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/internal/promset"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
)

// Metrics are the sync's Prometheus metrics and those of its requests to the source, of one
// account of a MetricSet (the job runner's are runner.Metrics). A nil *Metrics records nothing.
type Metrics struct{ a *promset.Account }

// The sync's families, in the order of families.
const (
	famRuns = iota
	famDuration
	famRecords
	famLastSuccess
	famConfigured
	famInconsistencies
	famDeletionsRefused
	famHeld
	famRequests
	famRetries
	famRateLimitWait
)

var families = []promset.Family{
	famRuns: {Name: "hrsync_sync_runs_total", Kind: promset.Counter, Labels: []string{"resource", "status"},
		Help: "Sync runs by resource and final status (ok, failed, inconsistent, held: a load guard held the load; unavailable: the account does not offer the collection)."},
	famDuration: {Name: "hrsync_sync_duration_seconds", Kind: promset.Histogram, Labels: []string{"resource"},
		Help: "Wall time of sync runs by resource.", Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600}},
	famRecords: {Name: "hrsync_sync_records_total", Kind: promset.Counter, Labels: []string{"resource", "outcome"},
		Help: "Records merged by resource and outcome (inserted, updated, unchanged, deleted)."},
	famLastSuccess: {Name: "hrsync_sync_last_success_timestamp_seconds", Kind: promset.Gauge, Labels: []string{"resource"},
		Help: "Unix time the last successful sync of a resource finished."},
	famConfigured: {Name: "hrsync_sync_resource_configured", Kind: promset.Gauge, Labels: []string{"resource"},
		Help: "1 for each collection the worker's scheduled sync walks (sync.resources)."},
	famInconsistencies: {Name: "hrsync_sync_walk_inconsistencies_total", Kind: promset.Counter, Labels: []string{"resource"},
		Help: "Walks that found the source's collection changed under them."},
	famDeletionsRefused: {Name: "hrsync_sync_deletions_refused_total", Kind: promset.Counter, Labels: []string{"resource"},
		Help: "Soft deletes a held load would have made (the shrink guard)."},
	famHeld: {Name: "hrsync_load_held", Kind: promset.Gauge, Labels: []string{"resource"},
		Help: "1 while a load guard holds the collection's load (its last run ended held: nothing of it written), 0 once a load is published."},
	famRequests: {Name: "hrsync_source_requests_total", Kind: promset.Counter, Labels: []string{"route", "method", "code"},
		Help: "Requests to the source by route, method and status code (0: no answer)."},
	famRetries: {Name: "hrsync_source_retries_total", Kind: promset.Counter,
		Help: "Requests to the source that were retries."},
	famRateLimitWait: {Name: "hrsync_source_rate_limit_wait_seconds_total", Kind: promset.Counter,
		Help: "Seconds spent waiting on the source's rate limit (pacing and 429 windows)."},
}

// runStatuses are the final statuses of a resource's run, the status label of
// hrsync_sync_runs_total. Unavailable is no failure: the account does not offer the collection.
var runStatuses = []string{sink.RunOK, sink.RunFailed, sink.RunInconsistent, sink.RunHeld, sink.RunUnavailable}

// recordOutcomes are the outcome label of hrsync_sync_records_total.
var recordOutcomes = []string{"inserted", "updated", "unchanged", "deleted"}

// MetricSet is the sync's metrics of every account of a worker: one collector for each family,
// each account's series plain numbers of its own (promset), labelled with its name.
type MetricSet struct{ s *promset.Set }

// NewMetricSet registers the sync's families on reg, each series labelled label (e.g.
// "account") with its account's name.
func NewMetricSet(reg prometheus.Registerer, label string) *MetricSet {
	s := promset.New(label, families...)
	s.Register(reg)
	return &MetricSet{s}
}

// Account is the metrics of the account name, added to the set.
func (ms *MetricSet) Account(name string) *Metrics { return &Metrics{ms.s.Account(name)} }

// NewMetrics creates the metrics of one account, without an account label, and registers them
// on reg. A collection's series start at zero when Configure names it, so increase() sees its
// first event; not for every collection the sync knows: a worker of 1,000 accounts held 176
// series at zero for each (16 collections), most of them for collections its sync never walks.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	return NewMetricSet(reg, "").Account("")
}

// Configure says which collections the scheduled sync walks: hrsync_sync_resource_configured is
// 1 for each, so an alert can tell a collection that never succeeded from one nobody asked for
// without listing names in the rule. Their other series start at zero.
func (m *Metrics) Configure(rs []sink.Resource) {
	if m == nil {
		return
	}
	m.a.Vec(famConfigured).Reset()
	for _, r := range rs {
		m.a.Vec(famConfigured).Set(1, string(r))
		m.startResource(r)
	}
}

// startResource starts a resource's series at zero.
func (m *Metrics) startResource(r sink.Resource) {
	res := string(r)
	for _, st := range runStatuses {
		m.a.Vec(famRuns).Start(res, st)
	}
	for _, o := range recordOutcomes {
		m.a.Vec(famRecords).Start(res, o)
	}
	m.a.Vec(famInconsistencies).Start(res)
	m.a.Vec(famDeletionsRefused).Start(res)
	m.a.Vec(famHeld).Set(0, res)
}

func (m *Metrics) observeRun(r Result) {
	if m == nil {
		return
	}
	res := string(r.Resource)
	m.a.Vec(famRuns).Inc(res, r.Status)
	m.a.Vec(famDuration).Observe(r.FinishedAt.Sub(r.StartedAt).Seconds(), res)
	for i, n := range []int64{r.Inserted, r.Updated, r.Unchanged, r.Deleted} {
		m.a.Vec(famRecords).Add(float64(n), res, recordOutcomes[i])
	}
	m.a.Vec(famDeletionsRefused).Add(float64(r.DeletionsRefused), res)
	if r.Status == sink.RunOK {
		m.a.Vec(famLastSuccess).Set(float64(r.FinishedAt.Unix()), res)
	}
	switch r.Status {
	case sink.RunHeld:
		m.a.Vec(famHeld).Set(1, res)
	case sink.RunOK, sink.RunInconsistent:
		m.a.Vec(famHeld).Set(0, res) // a load was published: no hold stands
	}
}

func (m *Metrics) observeInconsistentWalk(r sink.Resource) {
	if m != nil {
		m.a.Vec(famInconsistencies).Inc(string(r))
	}
}

// ObserveRequest records one request to the source; give it to client.Options.Observe.
func (m *Metrics) ObserveRequest(e client.RequestEvent) {
	if m == nil {
		return
	}
	m.a.Vec(famRequests).Inc(e.Route, e.Method, strconv.Itoa(e.Status))
	if e.Retried {
		m.a.Vec(famRetries).Inc()
	}
	m.a.Vec(famRateLimitWait).Add(e.Waited.Seconds())
}
