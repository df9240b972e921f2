package events

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/internal/promset"
	"github.com/hrsync/hrsync/sink"
)

// Metrics are the events' Prometheus metrics, of one account of a MetricSet. A nil *Metrics
// records nothing.
type Metrics struct{ a *promset.Account }

// The events' families, in the order of families.
const (
	famDeliveries = iota
	famPending
	famOldest
	famDead
	famHeld
)

var families = []promset.Family{
	famDeliveries: {Name: "hrsync_webhook_deliveries_total", Kind: promset.Counter, Labels: []string{"subscriber", "outcome"},
		Help: "Webhook delivery attempts, by subscriber and outcome: delivered, failed (tried again later) or dead (its retries ran out)."},
	famPending: {Name: "hrsync_webhook_pending", Kind: promset.Gauge, Labels: []string{"subscriber"},
		Help: "Events queued for a webhook subscriber and not yet delivered."},
	famOldest: {Name: "hrsync_webhook_oldest_pending_seconds", Kind: promset.Gauge, Labels: []string{"subscriber"},
		Help: "How long the oldest event queued for a webhook subscriber has waited: its lag (0 when none waits)."},
	famDead: {Name: "hrsync_webhook_dead", Kind: promset.Gauge, Labels: []string{"subscriber"},
		Help: "Events whose delivery to a webhook subscriber ran out of retries (dead letters), until replayed."},
	famHeld: {Name: "hrsync_events_held", Kind: promset.Gauge,
		Help: "Leaver events the mass-leaver brake holds until hrsync events release."},
}

// MetricSet is the events' metrics of every account of a worker: one collector for each
// family, each account's series labelled with its name.
type MetricSet struct{ s *promset.Set }

// NewMetricSet registers the events' families on reg, each series labelled label (e.g.
// "account") with its account's name.
func NewMetricSet(reg prometheus.Registerer, label string) *MetricSet {
	s := promset.New(label, families...)
	s.Register(reg)
	return &MetricSet{s}
}

// Account is the metrics of the account name, its subscribers' series started at 0.
func (ms *MetricSet) Account(name string, subscribers []string) *Metrics {
	m := &Metrics{ms.s.Account(name)}
	m.a.Vec(famHeld).Start()
	for _, s := range subscribers {
		for _, o := range []string{"delivered", "failed", "dead"} {
			m.a.Vec(famDeliveries).Start(s, o)
		}
		for _, f := range []int{famPending, famOldest, famDead} {
			m.a.Vec(f).Start(s)
		}
	}
	return m
}

func (m *Metrics) delivered(subscriber string, _ time.Duration) {
	if m != nil {
		m.a.Vec(famDeliveries).Inc(subscriber, "delivered")
	}
}

func (m *Metrics) failed(subscriber string) {
	if m != nil {
		m.a.Vec(famDeliveries).Inc(subscriber, "failed")
	}
}

func (m *Metrics) dead(subscriber string) {
	if m != nil {
		m.a.Vec(famDeliveries).Inc(subscriber, "dead")
	}
}

// stats sets the gauges of where the subscribers' deliveries stand.
func (m *Metrics) stats(now time.Time, stats []sink.DeliveryStats) {
	if m == nil {
		return
	}
	for _, st := range stats {
		m.a.Vec(famPending).Set(float64(st.Pending), st.Subscriber)
		m.a.Vec(famDead).Set(float64(st.Dead), st.Subscriber)
		lag := 0.0
		if !st.OldestPending.IsZero() {
			lag = max(0, now.Sub(st.OldestPending).Seconds())
		}
		m.a.Vec(famOldest).Set(lag, st.Subscriber)
	}
}

// held sets the count of events the brake holds.
func (m *Metrics) held(n int64) {
	if m != nil {
		m.a.Vec(famHeld).Set(float64(n))
	}
}
