package onboard_test

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sync/onboard"
)

// TestMetricsKnowEveryOutcome: onboarding's metrics start a series of
// hrsync_onboarding_rows_total for every outcome a run records (all but dry runs'
// would-create), and for no other.
func TestMetricsKnowEveryOutcome(t *testing.T) {
	reg := prometheus.NewRegistry()
	onboard.NewMetrics(reg)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		if f.GetName() != "hrsync_onboarding_rows_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					got = append(got, l.GetValue())
				}
			}
		}
	}
	want := []string{onboard.OutcomeCreated, onboard.OutcomeAlreadyDone, onboard.OutcomeSkipped, onboard.OutcomeRejected, onboard.OutcomeUnresolved}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("hrsync_onboarding_rows_total outcomes %v, want %v", got, want)
	}
}
