package onboard

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/internal/promset"
)

// Metrics are onboarding's Prometheus metrics, of one account of a MetricSet. A nil *Metrics
// records nothing.
type Metrics struct{ a *promset.Account }

// Onboarding's families, in the order of families.
const (
	famRows = iota
	famFiles
	famNotices
)

var families = []promset.Family{
	famRows: {Name: "hrsync_onboarding_rows_total", Kind: promset.Counter, Labels: []string{"outcome"},
		Help: "Onboarding CSV rows by outcome (created, already-done, skipped, rejected, unresolved)."},
	famFiles: {Name: "hrsync_onboarding_files_total", Kind: promset.Counter, Labels: []string{"outcome"},
		Help: "Onboarding files taken from the drop folder or failed/ (and named ones) by outcome (done, partly-rejected; to failed/: rejected, unreadable, unresolved)."},
	famNotices: {Name: "hrsync_onboarding_notifications_total", Kind: promset.Counter, Labels: []string{"outcome"},
		Help: "Notifications to onboarding.notify's webhook of a file filed in processed/ or failed/, by outcome (sent; failed: retries ran out, refused, or dropped at shutdown)."},
}

// Outcomes of a notification, the outcome label of hrsync_onboarding_notifications_total.
const (
	NoticeSent   = "sent"
	NoticeFailed = "failed"
)

// MetricSet is onboarding's metrics of every account of a worker: one collector for each
// family, each account's series plain numbers of its own (promset), labelled with its name.
type MetricSet struct{ s *promset.Set }

// NewMetricSet registers onboarding's families on reg, each series labelled label (e.g.
// "account") with its account's name.
func NewMetricSet(reg prometheus.Registerer, label string) *MetricSet {
	s := promset.New(label, families...)
	s.Register(reg)
	return &MetricSet{s}
}

// Account is the metrics of the account name, added to the set. Every outcome's series exists
// from the start, at zero, so increase() sees its first event.
func (ms *MetricSet) Account(name string) *Metrics {
	m := &Metrics{ms.s.Account(name)}
	for _, o := range outcomes {
		m.a.Vec(famRows).Start(o)
	}
	for _, o := range FileOutcomes {
		m.a.Vec(famFiles).Start(o)
	}
	for _, o := range []string{NoticeSent, NoticeFailed} {
		m.a.Vec(famNotices).Start(o)
	}
	return m
}

// NewMetrics creates the metrics of one account, without an account label, and registers them
// on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics { return NewMetricSet(reg, "").Account("") }

// row counts one row by its outcome.
func (m *Metrics) row(outcome string) {
	if m != nil {
		m.a.Vec(famRows).Inc(outcome)
	}
}

// file counts one file by its outcome.
func (m *Metrics) file(outcome string) {
	if m != nil {
		m.a.Vec(famFiles).Inc(outcome)
	}
}

// notice counts one notification by its outcome (NoticeSent, NoticeFailed).
func (m *Metrics) notice(outcome string) {
	if m != nil {
		m.a.Vec(famNotices).Inc(outcome)
	}
}
