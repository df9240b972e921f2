package onboard

import "github.com/prometheus/client_golang/prometheus"

// Metrics are onboarding's Prometheus metrics, registered on the registry given to NewMetrics.
// A nil *Metrics records nothing.
type Metrics struct {
	rows  *prometheus.CounterVec
	files *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them on reg. Every outcome's series exists from
// the start, at zero, so increase() sees its first event.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{rows: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hrsync_onboarding_rows_total", Help: "Onboarding CSV rows by outcome (created, already-done, skipped, rejected, unresolved).",
	}, []string{"outcome"}), files: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hrsync_onboarding_files_total", Help: "Onboarding files taken from the drop folder or failed/ (and named ones) by outcome (done, partly-rejected; to failed/: rejected, unreadable, unresolved).",
	}, []string{"outcome"})}
	reg.MustRegister(m.rows, m.files)
	for _, o := range outcomes {
		m.rows.WithLabelValues(o)
	}
	for _, o := range FileOutcomes {
		m.files.WithLabelValues(o)
	}
	return m
}

// row counts one row by its outcome.
func (m *Metrics) row(outcome string) {
	if m != nil {
		m.rows.WithLabelValues(outcome).Inc()
	}
}

// file counts one file by its outcome.
func (m *Metrics) file(outcome string) {
	if m != nil {
		m.files.WithLabelValues(outcome).Inc()
	}
}
