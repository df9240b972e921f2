package hrdata_test

import (
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest/hrdata"
)

// TestCountBenchmarkFirm holds the figures docs/benchmarks.md gives of the benchmark's firm
// (BenchmarkModels, the default Options): a change to the generator that changes them must
// change the docs, and hrdata.Version.
func TestCountBenchmarkFirm(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 2 million rows in memory")
	}
	st := hrdata.Count(hrdata.Options{})
	want := map[string]int64{
		"people":                    47_035,
		"employees_history":         123_649,
		"absences":                  899_403,
		"sicknesses":                359_648,
		"leave_requests":            270_102,
		"employee_training_courses": 360_247,
	}
	st.Rows["people"] = int64(st.People)
	for k, v := range want {
		if st.Rows[k] != v {
			t.Errorf("%s: %d, docs/benchmarks.md says %d (and the cached warehouses are of hrdata.Version %d)", k, st.Rows[k], v, hrdata.Version)
		}
	}
	t.Logf("counted in %v", st.Took)
}
