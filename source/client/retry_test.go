package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// step is one scripted answer.
type step struct {
	status int
	header http.Header
	body   string
	drop   bool          // close the connection without answering
	short  bool          // declare a longer body than is sent
	delay  time.Duration // real delay before answering
}

const okPage = `{"employees":[{"id":1,"first_name":"Ana","total_hours":"40.0"}],"working_patterns":[]}`

var created201 = step{status: http.StatusCreated, body: createdAnswer}

func rateLimited(retryAfter string) step {
	s := step{status: http.StatusTooManyRequests, body: `{"error":{"type":"Rate Limit Reached"}}`, header: http.Header{"X-Request-Id": {"rl-1"}}}
	if retryAfter != "" {
		s.header.Set("Retry-After", retryAfter)
	}
	return s
}

func status(code int) step {
	return step{status: code, body: string(v1.ErrorBody(code, "")), header: http.Header{"X-Request-Id": {"req-" + strconv.Itoa(code)}}}
}

// scriptServer answers request i with script[i], and 200 with okPage after the script.
func scriptServer(t *testing.T, script ...step) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	var done = make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		i := int(n.Add(1)) - 1
		s := step{status: http.StatusOK, body: okPage}
		if i < len(script) {
			s = script[i]
		}
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-done:
			case <-r.Context().Done():
			}
		}
		if s.drop {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			_ = conn.Close()
			return
		}
		for k, vs := range s.header {
			w.Header()[k] = vs
		}
		if s.short {
			w.Header().Set("Content-Length", strconv.Itoa(len(s.body)+100))
		}
		w.WriteHeader(s.status)
		_, _ = io.WriteString(w, s.body)
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, &n
}

// noKeepAlive is an HTTP client whose every request dials anew, so a dropped connection reaches
// the client instead of being retried by the transport on a fresh one.
func noKeepAlive() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
}

type retryCase struct {
	name   string
	script []step
	opts   Options
	create bool // CreateEmployee instead of ListEmployees

	wantErr      func(*testing.T, error) // nil: success
	wantRequests int64
	wantSleeps   func(*testing.T, []time.Duration)
	wantStats    func(*testing.T, StatsSnapshot)
}

func sleeps(want ...time.Duration) func(*testing.T, []time.Duration) {
	return func(t *testing.T, got []time.Duration) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("slept %v, want %v", got, want)
		}
	}
}

// backoffSleeps wants n sleeps, the first one within the jitter of RetryInitial (1 s ±50%).
func backoffSleeps(n int) func(*testing.T, []time.Duration) {
	return func(t *testing.T, got []time.Duration) {
		t.Helper()
		if len(got) != n {
			t.Fatalf("slept %v, want %d backoff waits", got, n)
		}
		if n > 0 && (got[0] < 500*time.Millisecond || got[0] > 1500*time.Millisecond) {
			t.Errorf("first backoff %v, want 1s ±50%%", got[0])
		}
	}
}

func errIs(target error) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Errorf("error %v, want %v", err, target)
		}
	}
}

func errStatus(code int, contains string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var er *ErrorResponse
		if !errors.As(err, &er) || er.Status != code {
			t.Errorf("error %v (%T), want an *ErrorResponse with %d", err, err, code)
		}
		if !strings.Contains(err.Error(), contains) {
			t.Errorf("error %q does not say %q", err, contains)
		}
	}
}

func errRateLimit(contains string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var rl *v1.RateLimitError
		if !errors.As(err, &rl) {
			t.Errorf("error %v (%T), want a *RateLimitError", err, err)
		}
		if !strings.Contains(err.Error(), contains) {
			t.Errorf("error %q does not say %q", err, contains)
		}
	}
}

func errTransport(t *testing.T, err error) {
	t.Helper()
	var er *ErrorResponse
	if errors.As(err, &er) || errors.Is(err, v1.ErrUnauthorized) {
		t.Errorf("error %v, want a transport error", err)
	}
}

func TestRetries(t *testing.T) {
	tests := []retryCase{
		{name: "429 without Retry-After waits the window", script: []step{rateLimited("")},
			wantRequests: 2, wantSleeps: sleeps(time.Minute),
			wantStats: func(t *testing.T, s StatsSnapshot) {
				if s.RateLimited != 1 || s.Retries != 1 || s.Requests != 2 || s.Waited != time.Minute || s.BackedOff != 0 {
					t.Errorf("stats %+v", s)
				}
			}},
		{name: "429 waits the configured window", script: []step{rateLimited(""), rateLimited("")},
			opts: Options{RateLimitWindow: 90 * time.Second}, wantRequests: 3, wantSleeps: sleeps(90*time.Second, 90*time.Second)},
		{name: "429 with Retry-After waits that", script: []step{rateLimited("7")},
			wantRequests: 2, wantSleeps: sleeps(7 * time.Second)},
		{name: "429 Retry-After past the budget gives up at once", script: []step{rateLimited("3600")},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errRateLimit("giving up after 1 attempt (waiting 1h0m0s more would pass the retry budget of 5m0s)")},
		{name: "429 over and over stops at MaxElapsed", script: slices.Repeat([]step{rateLimited("")}, 20),
			opts:         Options{MaxAttempts: 20},
			wantRequests: 6, wantSleeps: sleeps(time.Minute, time.Minute, time.Minute, time.Minute, time.Minute),
			wantErr: errRateLimit("giving up after 6 attempts (waiting 1m0s more would pass the retry budget of 5m0s)")},
		{name: "429 over and over stops at MaxAttempts", script: slices.Repeat([]step{rateLimited("")}, 20),
			opts:         Options{MaxAttempts: 3, MaxElapsed: time.Hour},
			wantRequests: 3, wantSleeps: sleeps(time.Minute, time.Minute), wantErr: errRateLimit("giving up after 3 attempts")},
		{name: "500 then 200", script: []step{status(500)},
			wantRequests: 2, wantSleeps: backoffSleeps(1),
			wantStats: func(t *testing.T, s StatsSnapshot) {
				if s.Requests != 2 || s.Retries != 1 || s.Failures != 1 || s.RateLimited != 0 || s.Waited != 0 || s.BackedOff < 500*time.Millisecond {
					t.Errorf("stats %+v", s)
				}
			}},
		{name: "502 503 504 then 200", script: []step{status(502), status(503), status(504)},
			wantRequests: 4, wantSleeps: backoffSleeps(3)},
		{name: "dropped connection then 200", script: []step{{drop: true}},
			wantRequests: 2, wantSleeps: backoffSleeps(1)},
		{name: "body cut short then 200", script: []step{{status: 200, body: `{"employees":[`, short: true}},
			wantRequests: 2, wantSleeps: backoffSleeps(1)},
		{name: "HTTP client timeout then 200", script: []step{{status: 200, body: okPage, delay: 5 * time.Second}},
			opts:         Options{HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}},
			wantRequests: 2, wantSleeps: backoffSleeps(1)},
		{name: "401 stops at once", script: []step{status(401)},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: func(t *testing.T, err error) {
				errIs(v1.ErrUnauthorized)(t, err)
				if want := "list employees page 1: 401 Unauthorized: the source refused the API key"; err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
			}},
		{name: "403 stops at once", script: []step{status(403)},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errIs(v1.ErrUnauthorized)},
		{name: "404 stops at once", script: []step{status(404)},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errStatus(404, "source answered 404")},
		{name: "400 stops at once", script: []step{status(400)},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errStatus(400, "source answered 400")},
		{name: "unreadable page is not retried", script: []step{{status: 200, body: `<html>maintenance</html>`}},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: func(t *testing.T, err error) {
				if !strings.Contains(err.Error(), "decode answer") {
					t.Errorf("error %v", err)
				}
			}},
		{name: "max attempts exhausted returns the last error", script: slices.Repeat([]step{status(503)}, 10),
			wantRequests: 6, wantSleeps: backoffSleeps(5), wantErr: errStatus(503, "list employees page 1: giving up after 6 attempts: source answered 503")},
		{name: "MaxAttempts 1 disables retries", script: []step{status(500)}, opts: Options{MaxAttempts: 1},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errStatus(500, "list employees page 1: source answered 500")},
		// The backoff is jittered, so only a wait surely past the budget gives a fixed count
		// (the 429 cases above show the budget over several waits).
		{name: "backoff stops at MaxElapsed", script: slices.Repeat([]step{status(500)}, 10),
			opts:         Options{MaxAttempts: 10, MaxElapsed: 4 * time.Second, RetryInitial: 10 * time.Second},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errStatus(500, "giving up after 1 attempt (waiting")},

		// Creates are retried only when the service surely did not act.
		{name: "create: 500 is not retried", create: true, script: []step{status(500)},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errStatus(500, "create employee: source answered 500")},
		{name: "create: dropped connection is not retried", create: true, script: []step{{drop: true}},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errTransport},
		{name: "create: timeout is not retried", create: true, script: []step{{status: 201, body: createdAnswer, delay: 5 * time.Second}},
			opts:         Options{HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errTransport},
		{name: "create: 429 is retried", create: true, script: []step{rateLimited(""), created201},
			wantRequests: 2, wantSleeps: sleeps(time.Minute)},
		{name: "create: 429 with Retry-After", create: true, script: []step{rateLimited("2"), rateLimited("3"), created201},
			wantRequests: 3, wantSleeps: sleeps(2*time.Second, 3*time.Second)},
		{name: "create: 400 is not retried", create: true, script: []step{{status: 400, body: `{"error":{"type":"Record Invalid","employee[email]":["has already been taken"]}}`}},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: func(t *testing.T, err error) {
				var v *v1.ValidationError
				if !errors.As(err, &v) {
					t.Errorf("error %v, want a *ValidationError", err)
				}
			}},
		{name: "create: 401 is not retried", create: true, script: []step{status(401)},
			wantRequests: 1, wantSleeps: sleeps(), wantErr: errIs(v1.ErrUnauthorized)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := scriptServer(t, tt.script...)
			fc := newFakeClock()
			opts := tt.opts
			if opts.HTTPClient == nil {
				opts.HTTPClient = noKeepAlive()
			}
			opts.clock = fc
			var events []RequestEvent
			var mu sync.Mutex
			opts.Observe = func(e RequestEvent) { mu.Lock(); events = append(events, e); mu.Unlock() }
			c, err := New(srv.URL, clientTestKey, opts)
			if err != nil {
				t.Fatal(err)
			}
			var stats Stats
			ctx := WithStats(context.Background(), &stats)
			if tt.create {
				_, err = c.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JoinDate: "2024-02-29"})
			} else {
				var emps []v1.Employee
				emps, _, err = c.ListEmployees(ctx, 1)
				if err == nil && (len(emps) != 1 || emps[0].ID != 1) {
					t.Errorf("employees %+v", emps)
				}
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != nil && err == nil:
				t.Fatal("no error")
			case tt.wantErr != nil:
				tt.wantErr(t, err)
				if strings.Contains(err.Error(), clientTestKey) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q holds the key or more than one line", err)
				}
			}
			if got := n.Load(); got != tt.wantRequests {
				t.Errorf("server saw %d requests, want %d", got, tt.wantRequests)
			}
			tt.wantSleeps(t, fc.Sleeps())
			s := stats.Snapshot()
			if s.Requests != tt.wantRequests || s.Retries != tt.wantRequests-1 {
				t.Errorf("stats %+v, want %d requests and %d retries", s, tt.wantRequests, tt.wantRequests-1)
			}
			if tt.wantStats != nil {
				tt.wantStats(t, s)
			}
			// One event per attempt; every one but the last is retried.
			if int64(len(events)) != tt.wantRequests {
				t.Fatalf("%d events, want %d", len(events), tt.wantRequests)
			}
			for i, e := range events {
				route := "/v1/employees"
				if e.Attempt != i+1 || e.Retried != (i < len(events)-1) || e.Route != route {
					t.Errorf("event %d: %+v", i, e)
				}
				wantMethod := http.MethodGet
				if tt.create {
					wantMethod = http.MethodPost
				}
				if e.Method != wantMethod {
					t.Errorf("event %d method %s, want %s", i, e.Method, wantMethod)
				}
				if i < len(tt.script) {
					wantStatus := tt.script[i].status
					if tt.script[i].drop || tt.script[i].delay > 0 && opts.HTTPClient.Timeout > 0 {
						wantStatus = 0
					}
					if e.Status != wantStatus {
						t.Errorf("event %d status %d, want %d", i, e.Status, wantStatus)
					}
				}
			}
		})
	}
}

// refusingDialer refuses the first n dials as a closed port does, then dials for real.
func refusingDialer(n int) (func(ctx context.Context, network, addr string) (net.Conn, error), *atomic.Int64) {
	var dials atomic.Int64
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) <= int64(n) {
			return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}
		return d.DialContext(ctx, network, addr)
	}, &dials
}

func TestRetryRefusedConnection(t *testing.T) {
	for _, create := range []bool{false, true} {
		t.Run(fmt.Sprintf("create=%v", create), func(t *testing.T) {
			srv, n := scriptServer(t, created201)
			if !create {
				srv, n = scriptServer(t)
			}
			dial, dials := refusingDialer(2)
			fc := newFakeClock()
			c, err := New(srv.URL, clientTestKey, Options{
				HTTPClient: &http.Client{Transport: &http.Transport{DialContext: dial}},
				clock:      fc,
			})
			if err != nil {
				t.Fatal(err)
			}
			if create {
				_, err = c.CreateEmployee(context.Background(), v1.NewEmployee{FirstName: "Ana", LastName: "L", Email: "a@b.co", JoinDate: "2024-01-01"})
			} else {
				_, _, err = c.ListEmployees(context.Background(), 1)
			}
			if err != nil {
				t.Fatal(err)
			}
			if dials.Load() != 3 || n.Load() != 1 {
				t.Errorf("%d dials and %d requests, want 3 and 1", dials.Load(), n.Load())
			}
			backoffSleeps(2)(t, fc.Sleeps())
		})
	}
}

func TestRetryClassification(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: &timeoutErr{}}
	urlErr := func(err error) error { return fmt.Errorf("Get \"http://x\": %w", err) }
	tests := []struct {
		err       error
		transient bool
		refused   bool
	}{
		{urlErr(io.EOF), true, false},
		{urlErr(io.ErrUnexpectedEOF), true, false},
		{urlErr(refused), true, true},
		{urlErr(reset), true, false},
		{urlErr(timeout), true, false},
		{urlErr(context.DeadlineExceeded), true, false},
		{urlErr(&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}), false, false},
		{urlErr(&net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}), true, false},
		{urlErr(errors.New("x509: certificate signed by unknown authority")), false, false},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNREFUSED)}, true, false},
	}
	for _, tt := range tests {
		if got := transient(tt.err); got != tt.transient {
			t.Errorf("transient(%v) = %v", tt.err, got)
		}
		if got := refusedBeforeSend(tt.err); got != tt.refused {
			t.Errorf("refusedBeforeSend(%v) = %v", tt.err, got)
		}
	}
}

type timeoutErr struct{}

func (*timeoutErr) Error() string   { return "i/o timeout" }
func (*timeoutErr) Timeout() bool   { return true }
func (*timeoutErr) Temporary() bool { return true }

// A canceled context stops any wait at once: pacing, a rate-limit window, a backoff.
func TestRetryWaitsStopOnCancel(t *testing.T) {
	tests := []struct {
		name   string
		script []step
		opts   Options
		warm   bool // make one request first, so the next must wait for pacing
	}{
		{"rate-limit window", []step{rateLimited("")}, Options{RateLimitWindow: time.Hour, MaxElapsed: 2 * time.Hour}, false},
		{"Retry-After", []step{rateLimited("240")}, Options{}, false},
		{"backoff", []step{status(500)}, Options{RetryInitial: time.Hour, MaxElapsed: 3 * time.Hour}, false},
		{"pacing", nil, Options{RateLimit: 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := scriptServer(t, tt.script...)
			opts := tt.opts
			opts.HTTPClient = srv.Client()
			c, err := New(srv.URL, clientTestKey, opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.warm {
				if _, _, err := c.ListEmployees(context.Background(), 1); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			start := time.Now()
			_, _, err = c.ListEmployees(ctx, 1)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("returned after %v", d)
			}
		})
	}
}

// A wait that would outlast the context's deadline is not begun: the call fails at once.
func TestRetryRespectsDeadline(t *testing.T) {
	t.Run("rate-limit window", func(t *testing.T) {
		srv, n := scriptServer(t, rateLimited(""))
		fc := newFakeClock()
		c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), clock: fc})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _, err = c.ListEmployees(ctx, 1)
		errRateLimit("giving up after 1 attempt (waiting 1m0s more would pass the context's deadline)")(t, err)
		if n.Load() != 1 || len(fc.Sleeps()) != 0 {
			t.Errorf("%d requests, sleeps %v", n.Load(), fc.Sleeps())
		}
	})
	t.Run("pacing", func(t *testing.T) {
		srv, n := scriptServer(t)
		c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), RateLimit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ListEmployees(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		_, _, err = c.ListEmployees(ctx, 1)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
			t.Errorf("error %v after %v, want DeadlineExceeded at once", err, time.Since(start))
		}
		if n.Load() != 1 {
			t.Errorf("%d requests", n.Load())
		}
	})
}

// A 429 holds back every request of the Client, not only the one that met it: the window is
// recorded on the Client's pacer, which every call waits on.
func TestRateLimitPausesTheWholeClient(t *testing.T) {
	srv, n := scriptServer(t, rateLimited(""))
	fc := newFakeClock()
	c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	start := fc.Now()
	var pauseSeen time.Time
	fc.onSleep = func(time.Duration) error {
		pauseSeen = c.pacer.pauseEnd()
		return nil
	}
	if _, _, err := c.ListEmployees(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if want := start.Add(time.Minute); !pauseSeen.Equal(want) {
		t.Errorf("while waiting, the client was paused until %v, want %v", pauseSeen, want)
	}
	fc.onSleep = nil

	// Another call, while a pause is on, waits it out before sending anything.
	c.pacer.pauseUntil(fc.Now().Add(42 * time.Second))
	before := n.Load()
	var stats Stats
	if _, _, err := c.ListWorkingPatterns(WithStats(context.Background(), &stats), 1); err != nil {
		t.Fatal(err)
	}
	if got := fc.Sleeps(); len(got) != 2 || got[1] != 42*time.Second {
		t.Errorf("sleeps %v, want the window then 42s", got)
	}
	if n.Load() != before+1 || stats.Snapshot().Waited != 42*time.Second {
		t.Errorf("%d requests, stats %+v", n.Load()-before, stats.Snapshot())
	}

	// Once the pause is over, nothing waits.
	if _, _, err := c.ListEmployees(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if got := fc.Sleeps(); len(got) != 2 {
		t.Errorf("sleeps %v after the pause", got)
	}
}

func TestRetryLogs(t *testing.T) {
	srv, _ := scriptServer(t, status(503), rateLimited(""))
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), Logger: logger, clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ListEmployees(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("log:\n%s\nwant two lines", out)
	}
	for i, want := range []string{"status=503 request_id=req-503", "status=429 request_id=rl-1"} {
		if !strings.Contains(lines[i], "level=WARN") || !strings.Contains(lines[i], want) || !strings.Contains(lines[i], "route=/v1/employees") {
			t.Errorf("log line %q, want a warning with %q", lines[i], want)
		}
	}
	if strings.Contains(out, clientTestKey) || strings.Contains(out, "Ana") {
		t.Errorf("log holds the key or record data:\n%s", out)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
