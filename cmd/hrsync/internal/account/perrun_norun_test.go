package account

import (
	"context"
	"errors"
	"testing"

	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestOnboardingOutsideARun: onboarding's warehouse and source, asked outside a run (none is
// open), answer errNoRun rather than dereference a run that is not there.
func TestOnboardingOutsideARun(t *testing.T) {
	t.Parallel()
	runs := &accountRuns{}
	ctx := context.Background()
	if _, err := (runLedger{runs}).OnboardingRows(ctx, "x"); !errors.Is(err, errNoRun) {
		t.Errorf("OnboardingRows: %v, want errNoRun", err)
	}
	if err := (runLedger{runs}).PutEmployee(ctx, v1.Employee{}); !errors.Is(err, errNoRun) {
		t.Errorf("PutEmployee: %v, want errNoRun", err)
	}
	if _, err := (runUpstream{runs}).CreateEmployee(ctx, v1.NewEmployee{}); !errors.Is(err, errNoRun) {
		t.Errorf("CreateEmployee: %v, want errNoRun", err)
	}
}
