package slowness

import (
	"fmt"
	"time"
)

// TB is what Until needs of a test (testing.TB has it): this package is not only the tests'.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// A Wait is a test's wait for work it does not measure (a worker's first sync, a file taken
// from the drop folder): a bound on a hang, scaled to the machine.
type Wait struct {
	// For is the bound on the reference machine; Bound scales it.
	For time.Duration
	// Every is how often the condition is checked (default 20 ms).
	Every time.Duration
	// Ended, when not nil, ends the wait at once when it delivers: the process or run the test
	// waits on stopped first. What it delivered is its error in the failure, and is sent back on
	// Ended (buffered) for the test's own wait on it.
	Ended chan error
	// Detail, when not nil, is printed after a failure: the log or the stderr that says why.
	Detail func() string
}

// Until returns once cond holds. It fails t, naming what it waited for, when the bound passes
// first or Ended delivers.
func (w Wait) Until(t TB, what string, cond func() bool) {
	t.Helper()
	every := w.Every
	if every <= 0 {
		every = 20 * time.Millisecond
	}
	bound := Bound(w.For)
	deadline := time.Now().Add(bound)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for !cond() {
		select {
		case err := <-w.Ended:
			w.Ended <- err
			t.Fatalf("ended (%v) before %s%s", err, what, w.detail())
			return
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s%s", what, bound, w.detail())
			return
		}
	}
}

func (w Wait) detail() string {
	if w.Detail == nil {
		return ""
	}
	return fmt.Sprintf(":\n%s", w.Detail())
}
