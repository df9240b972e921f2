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
	t.Parallel()
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

// TestMetricsKnowEveryFileOutcome: hrsync_onboarding_files_total has a series for every outcome
// of a file from the start, so an alert on a file that cannot be read sees the first one.
func TestMetricsKnowEveryFileOutcome(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	onboard.NewMetrics(reg)
	for _, o := range []string{onboard.FileDone, onboard.FilePartlyRejected, onboard.FileRejected, onboard.FileUnreadable, onboard.FileUnresolved} {
		if got := counterValue(t, reg, "hrsync_onboarding_files_total", "outcome", o); got != 0 {
			t.Errorf("hrsync_onboarding_files_total{outcome=%q} = %v at the start", o, got)
		}
	}
	if len(onboard.FileOutcomes) != 5 {
		t.Errorf("FileOutcomes %v: a new outcome needs a series here, in the alerts and in docs/operations.md", onboard.FileOutcomes)
	}
}
