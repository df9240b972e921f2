package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/source/budget"
	"github.com/hrsync/hrsync/source/v1"
)

// fakeClock is a clock whose sleeps return at once. By default a sleep moves the clock to the
// end of the sleep (never backwards, so concurrent sleepers leave it at the latest end); with
// frozen set it does not move at all.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	frozen  bool
	sleeps  []time.Duration
	ends    []time.Time                 // when each sleep would have ended
	onSleep func(d time.Duration) error // called after each sleep; its error is returned
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	end := f.now.Add(d)
	f.sleeps = append(f.sleeps, d)
	f.ends = append(f.ends, end)
	if !f.frozen && end.After(f.now) {
		f.now = end
	}
	hook := f.onSleep
	f.mu.Unlock()
	if hook != nil {
		if err := hook(d); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (f *fakeClock) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sleeps)
}

func (f *fakeClock) Ends() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ends)
}

// near compares durations up to the limiter's float rounding (a nanosecond a slot).
func near(a, b time.Duration) bool {
	return (a - b).Abs() <= time.Microsecond
}

// arrivalServer answers every list with an empty page and notes the fake clock's time at each
// arrival.
func arrivalServer(t *testing.T, fc *fakeClock) (*httptest.Server, func() []time.Time) {
	t.Helper()
	var mu sync.Mutex
	var at []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, fc.Now())
		mu.Unlock()
		w.Header().Set("Total", "0")
		_, _ = w.Write([]byte(`{"employees":[],"working_patterns":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(at)
	}
}

func TestPacingSpacesRequestsEvenly(t *testing.T) {
	tests := []struct {
		name      string
		rateLimit int
		n         int
		wantGap   time.Duration
	}{
		{"600 a minute", 600, 11, 102 * time.Millisecond},
		{"60 a minute", 60, 5, 1020 * time.Millisecond},
		{"unpaced", 0, 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeClock()
			srv, arrivals := arrivalServer(t, fc)
			c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), RateLimit: tt.rateLimit, clock: fc})
			if err != nil {
				t.Fatal(err)
			}
			var stats Stats
			ctx := WithStats(context.Background(), &stats)
			start := fc.Now()
			for i := range tt.n {
				// Lists and creates draw on the same budget.
				if i%2 == 0 {
					_, _, err = c.ListEmployees(ctx, 1)
				} else {
					_, _, err = c.ListWorkingPatterns(ctx, 1)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			at := arrivals()
			if len(at) != tt.n {
				t.Fatalf("%d requests arrived, want %d", len(at), tt.n)
			}
			for i := 1; i < len(at); i++ {
				if gap := at[i].Sub(at[i-1]); !near(gap, tt.wantGap) {
					t.Errorf("gap before request %d = %v, want %v", i+1, gap, tt.wantGap)
				}
			}
			total := fc.Now().Sub(start)
			if want := time.Duration(tt.n-1) * tt.wantGap; !near(total, want) {
				t.Errorf("%d requests took %v, want %v", tt.n, total, want)
			}
			if got := stats.Snapshot().Waited; got != total {
				t.Errorf("Stats.Waited = %v, want %v", got, total)
			}
			if tt.rateLimit == 0 && len(fc.Sleeps()) != 0 {
				t.Errorf("unpaced client slept %v", fc.Sleeps())
			}
		})
	}
}

// With RateLimit=600/min, N requests take about (N-1)/10 s of wall time. Only the lower bound is
// asserted: the limiter guarantees it, while an upper bound would depend on the machine.
func TestPacingWallClock(t *testing.T) {
	srv, _ := arrivalServer(t, newFakeClock())
	c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), RateLimit: 600})
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	start := time.Now()
	for range n {
		if _, _, err := c.ListEmployees(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}
	if d, want := time.Since(start), (n-1)*100*time.Millisecond; d < want {
		t.Errorf("%d requests at 600/min took %v, want at least %v", n, d, want)
	}
}

// Every goroutine using the Client draws on its one bucket: the slots handed out are spaced by
// the interval, whoever asks.
func TestPacerSharedAcrossGoroutines(t *testing.T) {
	fc := newFakeClock()
	fc.frozen = true // each sleep's end is then the slot it was given
	p := newPacer(600, nil, fc)
	const n = 16
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := p.wait(context.Background(), budget.KindWalk); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ends := fc.Ends()
	if len(ends) != n-1 { // the first slot is free
		t.Fatalf("%d waits, want %d", len(ends), n-1)
	}
	slices.SortFunc(ends, time.Time.Compare)
	start := fc.Now()
	for i, e := range ends {
		if want := start.Add(time.Duration(i+1) * budget.PacingInterval(600)); !near(e.Sub(want), 0) {
			t.Errorf("slot %d at %v, want %v", i+1, e.Sub(start), want.Sub(start))
		}
	}
}

func TestPacerRealWaitsAcrossGoroutines(t *testing.T) {
	srv, _ := arrivalServer(t, newFakeClock())
	c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), RateLimit: 6000})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 6, 4
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				if _, _, err := c.ListEmployees(context.Background(), 1); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if d, want := time.Since(start), (workers*each-1)*budget.PacingInterval(6000); d < want {
		t.Errorf("%d requests from %d goroutines took %v, want at least %v", workers*each, workers, d, want)
	}
}

func TestPacerPauseHoldsEveryRequest(t *testing.T) {
	fc := newFakeClock()
	p := newPacer(0, nil, fc)
	p.pauseUntil(fc.Now().Add(time.Minute))
	p.pauseUntil(fc.Now().Add(time.Second)) // an earlier end does not shorten the pause
	waited, err := p.wait(context.Background(), budget.KindWalk)
	if err != nil {
		t.Fatal(err)
	}
	if waited != time.Minute || !slices.Equal(fc.Sleeps(), []time.Duration{time.Minute}) {
		t.Errorf("waited %v in sleeps %v, want one minute", waited, fc.Sleeps())
	}
	if waited, _ := p.wait(context.Background(), budget.KindWalk); waited != 0 {
		t.Errorf("after the pause, waited %v", waited)
	}
}

func TestPacerCanceled(t *testing.T) {
	p := newPacer(1, nil, budget.SystemClock{})
	if _, err := p.wait(context.Background(), budget.KindWalk); err != nil { // the first slot is free
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := p.wait(ctx, budget.KindWalk) // the next slot is a minute away
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("wait = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
	// The canceled slot was given back: the one after is no further away than a minute.
	r := p.budget.(*budget.Local).Limiter().ReserveN(time.Now(), 1)
	if d := r.Delay(); d > budget.PacingInterval(1) {
		t.Errorf("next slot in %v", d)
	}
}

// limitedServer is an upstream that, as the real service does, answers 429 past limit requests
// within any window, counted on the fake clock, so the test holds whatever the machine's speed.
func limitedServer(t *testing.T, fc *fakeClock, limit int, window time.Duration) (*httptest.Server, func() (refused, maxInWindow int)) {
	t.Helper()
	var mu sync.Mutex
	var accepted []time.Time
	refused, maxIn := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		now := fc.Now()
		in := 0
		for _, a := range accepted {
			if now.Sub(a) < window {
				in++
			}
		}
		if in >= limit {
			refused++
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"type":"Rate Limit Reached","message":"too many requests"}}`))
			return
		}
		accepted = append(accepted, now)
		maxIn = max(maxIn, in+1)
		mu.Unlock()
		w.Header().Set("Total", "0")
		_, _ = w.Write([]byte(`{"employees":[],"working_patterns":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return refused, maxIn
	}
}

// Paced below the upstream's limit, the client never provokes a 429; paced above it, it does
// (so the check can fail). The upstream counts its window on the client's clock: the pacer's
// schedule is what is checked, not how fast this machine runs it.
func TestClientPacingAvoidsTheUpstreamLimit(t *testing.T) {
	tests := []struct {
		name       string
		perMinute  int
		wantRefuse bool
	}{
		// 3 per 250 ms upstream: one every 102 ms puts at most 3 in any 250 ms.
		{"under the limit", 600, false},
		// One every 76.5 ms puts 4 in some 250 ms.
		{"over the limit", 800, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeClock()
			srv, counts := limitedServer(t, fc, 3, 250*time.Millisecond)
			c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), RateLimit: tt.perMinute,
				MaxAttempts: 1, clock: fc})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for i := range 12 {
				if i%2 == 0 {
					_, _, err = c.ListEmployees(ctx, 1)
				} else {
					_, _, err = c.ListWorkingPatterns(ctx, 1)
				}
				var rl *v1.RateLimitError
				if err != nil && !errors.As(err, &rl) {
					t.Fatal(err)
				}
			}
			refused, maxIn := counts()
			if (refused > 0) != tt.wantRefuse {
				t.Errorf("%d requests answered 429 at %d a minute (busiest window: %d)", refused, tt.perMinute, maxIn)
			}
			if !tt.wantRefuse && maxIn > 3 {
				t.Errorf("%d requests in one window", maxIn)
			}
		})
	}
}

// kindsBudget notes the kind of every slot asked for, and refuses with err when set.
type kindsBudget struct {
	mu    sync.Mutex
	kinds []budget.Kind
	err   error
}

func (b *kindsBudget) Wait(_ context.Context, k budget.Kind) (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kinds = append(b.kinds, k)
	return 0, b.err
}

func TestClientAsksItsBudgetBeforeEveryAttempt(t *testing.T) {
	var mu sync.Mutex
	sent := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent++
		first := sent == 1
		mu.Unlock()
		if first { // one 429: the retry asks for a slot again
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(createdAnswer))
			return
		}
		_, _ = w.Write([]byte(`{"employees":[]}`))
	}))
	t.Cleanup(srv.Close)
	ne := v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"}

	tests := []struct {
		name       string
		createKind budget.Kind
		want       []budget.Kind
	}{
		{"sync or onboard", "", []budget.Kind{budget.KindWalk, budget.KindWalk, budget.KindCreate}},
		{"serve forwarding", budget.KindForward, []budget.Kind{budget.KindWalk, budget.KindForward}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &kindsBudget{}
			// RateLimit is ignored beside a Budget: at 1 a minute the second request would wait.
			c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), RateLimit: 1, Budget: b, CreateKind: tt.createKind, RateLimitWindow: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, _, err := c.ListEmployees(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateEmployee(ctx, ne); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(b.kinds, tt.want) {
				t.Errorf("slots asked for %v, want %v", b.kinds, tt.want)
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		b := &kindsBudget{err: context.DeadlineExceeded}
		c, err := New(srv.URL, clientTestKey, Options{HTTPClient: srv.Client(), Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		before := sent
		mu.Unlock()
		if _, _, err := c.ListEmployees(context.Background(), 1); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("list = %v, want the budget's error", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if sent != before {
			t.Errorf("%d requests sent without a slot", sent-before)
		}
	})
}
