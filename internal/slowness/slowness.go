// Package slowness scales the tests' bounds on a hang to the speed of the machine they run on.
//
// make test (scripts/test.sh) times a fixed workload first (scripts/testbudget/calibrate) and
// passes the figure on in HRSYNC_TEST_CALIBRATION; the machine the suite's budgets are stated
// for took DefaultReference, or HRSYNC_BUDGET_REFERENCE when set. A bound that waits for work the test does not
// measure — a sync reaching its merge, a worker starting — is a bound on a hang: on a machine
// three times slower, it is three times as long. Bounds that are the point of a test (an answer
// within its own timeout, a stop well inside the statement timeout) stay as written, or are
// scaled only where what they guard against stays beyond the scaled figure.
package slowness

import (
	"os"
	"sync"
	"time"
)

// The environment's names, set by scripts/test.sh.
const (
	CalibrationEnv = "HRSYNC_TEST_CALIBRATION" // this machine's calibration ("2.213s")
	ReferenceEnv   = "HRSYNC_BUDGET_REFERENCE" // the calibration where the stated figures hold
)

// DefaultReference is the calibration of the machine the suite's figures are stated for.
const DefaultReference = 700 * time.Millisecond

// Ratio is how much slower a machine whose calibration took calibration is than one whose took
// reference, held within [1/4, 4]: a calibration run on a machine busy with something else must
// not lift a figure out of reach. Without both figures, 1.
func Ratio(reference, calibration time.Duration) float64 {
	if reference <= 0 || calibration <= 0 {
		return 1
	}
	return min(max(float64(calibration)/float64(reference), 0.25), 4)
}

var factor = onceFactor()

func onceFactor() func() float64 {
	return sync.OnceValue(readFactor)
}

func readFactor() float64 {
	calibration, err := time.ParseDuration(os.Getenv(CalibrationEnv))
	if err != nil {
		return 1
	}
	reference := DefaultReference
	if r, err := time.ParseDuration(os.Getenv(ReferenceEnv)); err == nil {
		reference = r
	}
	return max(Ratio(reference, calibration), 1)
}

// Factor is this machine's slowness against the reference, from the environment: 1 when the
// tests run without a calibration (go test by hand) or on a machine as fast or faster.
func Factor() float64 { return factor() }

// Bound is the bound on a hang d, written for the reference machine, on this machine: never
// shorter than d.
func Bound(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Factor()).Round(time.Millisecond)
}
