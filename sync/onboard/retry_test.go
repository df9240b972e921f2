package onboard_test

import (
	"testing"
	"time"

	"github.com/hrsync/hrsync/sync/onboard"
)

// TestFailedRetriesBackOff: the worker's retries of a file in failed/ start a minute after it is
// seen, double up to an hour apart, and stop after the attempts, or after one try for a file that
// failed for its content.
func TestFailedRetriesBackOff(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	b := &onboard.FailedRetries{Attempts: 4, Max: 3 * time.Minute, Now: func() time.Time { return now }}
	unresolved := onboard.FileResult{Name: "a.csv", Rows: []onboard.RowResult{{Outcome: onboard.OutcomeUnresolved}}}
	steps := []struct {
		after   time.Duration
		due     bool
		stopped bool
	}{
		{0, false, false}, // seen: the first try a minute later
		{59 * time.Second, false, false},
		{time.Second, true, false}, // try 1; the next 2 min later
		{119 * time.Second, false, false},
		{time.Second, true, false},     // try 2; then 4 min, capped at 3
		{3 * time.Minute, true, false}, // try 3
		{3 * time.Minute, true, true},  // try 4: the last
		{time.Hour, false, false},
	}
	for i, s := range steps {
		now = now.Add(s.after)
		if got := b.Due("a.csv"); got != s.due {
			t.Fatalf("step %d: due %v, want %v", i, got, s.due)
		}
		if s.due {
			if got := b.Tried("a.csv", unresolved); got != s.stopped {
				t.Fatalf("step %d: stopped %v, want %v", i, got, s.stopped)
			}
		}
	}
	// A file failed for its content is tried once (a restarted worker's fresh look), then not
	// again: unreadable, or nobody onboarded because its rows were rejected.
	for _, r := range []onboard.FileResult{
		{Name: "b.csv", Err: onboard.ErrUnreadable},
		{Name: "c.csv", Rows: []onboard.RowResult{{Line: 2, Outcome: onboard.OutcomeRejected}, {Line: 3, Outcome: onboard.OutcomeSkipped}}},
	} {
		b.Due(r.Name)
		now = now.Add(time.Minute)
		if !b.Due(r.Name) || !b.Tried(r.Name, r) || b.Due(r.Name) {
			t.Errorf("%s (%s) is retried more than once", r.Name, r.Outcome())
		}
		now = now.Add(2 * time.Hour)
		if b.Due(r.Name) {
			t.Errorf("%s (%s) is retried hours later", r.Name, r.Outcome())
		}
	}
	// A file gone from failed/ is forgotten: dropped there again, its count starts again.
	b.Forget(nil)
	if b.Due("a.csv") {
		t.Error("a new file is due at once")
	}
	now = now.Add(time.Minute)
	if !b.Due("a.csv") {
		t.Error("a forgotten file is not retried")
	}
}
