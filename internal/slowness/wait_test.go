package slowness

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeT records Until's failure (testing.T's Fatalf would end the goroutine; Until returns).
type fakeT struct{ failed string }

func (*fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestWaitUntil(t *testing.T) {
	// Not parallel: the bounds are read as written (as TestBound does, the package's factor
	// replaced), whatever calibration make test passed this process.
	factor = func() float64 { return 1 }
	t.Cleanup(func() { factor = onceFactor() })
	stopped := errors.New("exit status 3")
	tests := []struct {
		name    string
		wait    Wait
		holdsAt int // the check at which cond first holds (0: never)
		ended   bool
		want    string // the failure ("": none)
	}{
		{"holds at once", Wait{For: time.Second}, 1, false, ""},
		{"holds after some checks", Wait{For: 10 * time.Second, Every: time.Millisecond}, 5, false, ""},
		{"the bound passes", Wait{For: 30 * time.Millisecond, Every: time.Millisecond, Detail: func() string { return "the log" }}, 0, false,
			"no first sync within 30ms:\nthe log"},
		{"the process ends first", Wait{For: 10 * time.Second, Every: time.Millisecond}, 0, true, "ended (exit status 3) before first sync"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ended {
				tt.wait.Ended = make(chan error, 1)
				tt.wait.Ended <- stopped
			}
			checks := 0
			f := &fakeT{}
			start := time.Now()
			tt.wait.Until(f, "first sync", func() bool { checks++; return tt.holdsAt > 0 && checks >= tt.holdsAt })
			if f.failed != tt.want {
				t.Errorf("failure %q, want %q", f.failed, tt.want)
			}
			if tt.holdsAt > 0 && checks != tt.holdsAt {
				t.Errorf("%d checks, want %d", checks, tt.holdsAt)
			}
			if tt.want != "" && strings.HasPrefix(tt.want, "no ") && time.Since(start) < tt.wait.For {
				t.Errorf("gave up after %s, before its bound %s", time.Since(start), tt.wait.For)
			}
			if tt.ended {
				select {
				case err := <-tt.wait.Ended:
					if err != stopped {
						t.Errorf("sent back %v", err)
					}
				default:
					t.Error("the end was not sent back for the test's own wait")
				}
			}
		})
	}
}
