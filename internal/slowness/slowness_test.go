package slowness

import (
	"testing"
	"time"
)

func TestRatio(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		reference, calibration time.Duration
		want                   float64
	}{
		{"as fast", 700 * time.Millisecond, 700 * time.Millisecond, 1},
		{"three times slower", 700 * time.Millisecond, 2100 * time.Millisecond, 3},
		{"faster", time.Second, 500 * time.Millisecond, 0.5},
		{"held at four", 700 * time.Millisecond, 10 * time.Second, 4},
		{"held at a quarter", time.Second, 10 * time.Millisecond, 0.25},
		{"no calibration", 700 * time.Millisecond, 0, 1},
		{"no reference", 0, time.Second, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Ratio(tt.reference, tt.calibration); got != tt.want {
				t.Errorf("Ratio(%s, %s) = %v, want %v", tt.reference, tt.calibration, got, tt.want)
			}
		})
	}
}

// The factor is read once per process, so each case runs in a process of its own.
func TestBound(t *testing.T) {
	for _, tt := range []struct {
		name, calibration, reference string
		want                         time.Duration
	}{
		{"without a calibration", "", "", 30 * time.Second},
		{"a machine three times slower", "2.1s", "", 90 * time.Second},
		{"against a stated reference", "2s", "1s", 60 * time.Second},
		{"never shorter on a faster machine", "350ms", "", 30 * time.Second},
		{"an unreadable calibration", "fast", "", 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(CalibrationEnv, tt.calibration)
			t.Setenv(ReferenceEnv, tt.reference)
			factor = onceFactor() // as a new process would
			t.Cleanup(func() { factor = onceFactor() })
			if got := Bound(30 * time.Second); got != tt.want {
				t.Errorf("Bound(30s) = %s, want %s", got, tt.want)
			}
		})
	}
}
