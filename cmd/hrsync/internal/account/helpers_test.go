package account

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// gathered is the value of the series of name in reg whose labels include every one of labels
// (name=value pairs), 0 when there is none: a counter's or a gauge's.
func gathered(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			has := map[string]bool{}
			for _, l := range m.GetLabel() {
				has[l.GetName()+"="+l.GetValue()] = true
			}
			for _, l := range labels {
				if !has[l] {
					continue series
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}
