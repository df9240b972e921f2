package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sync/fleet"
)

// journal records what the members were told, in order, across goroutines.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, fmt.Sprintf(format, args...))
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.events)
}

// member is a fake account: its calls go to the journal; notReady makes Ready fail.
type member struct {
	name     string
	j        *journal
	notReady error
	started  chan struct{}
}

func (m *member) Start() { m.j.add("start %s", m.name); close(m.started) }
func (m *member) Stop(context.Context) error {
	m.j.add("stop %s", m.name)
	return nil
}
func (m *member) Ready(context.Context) error { return m.notReady }
func (m *member) Close() error                { m.j.add("close %s", m.name); return nil }

// opener opens the account named after failing the first fails tries, each with its own error.
type opener struct {
	name  string
	j     *journal
	fails int

	// started, when set, is closed by the member it opens when that member starts.
	started chan struct{}

	mu    sync.Mutex
	tries int
}

func (o *opener) open(context.Context) (*member, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tries++
	o.j.add("open %s", o.name)
	if o.tries <= o.fails {
		return nil, fmt.Errorf("schema behind (try %d)", o.tries)
	}
	started := o.started
	if started == nil {
		started = make(chan struct{})
	}
	return &member{name: o.name, j: o.j, started: started}, nil
}

func (o *opener) account() fleet.Account[*member] {
	return fleet.Account[*member]{Name: o.name, Open: o.open}
}

// clock answers the fleet's waits when the test says so, recording each wait asked for.
type clock struct {
	mu    sync.Mutex
	waits []time.Duration
	fire  chan time.Time
}

func newClock() *clock { return &clock{fire: make(chan time.Time)} }

func (c *clock) after(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return c.fire
}

func (c *clock) asked() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.waits)
}

// TestRetryUntilOpen: an account that does not open waits with its reason in Ready while the
// others run; it is tried again after waits doubling from RetryFirst up to RetryMost, and once
// it opens it is started and Ready is nil.
func TestRetryUntilOpen(t *testing.T) {
	j := &journal{}
	clk := newClock()
	f := fleet.New[*member](fleet.Options{RetryFirst: time.Second, RetryMost: 3 * time.Second, After: clk.after})
	acme := &opener{name: "acme", j: j}
	globex := &opener{name: "globex", j: j, fails: 3, started: make(chan struct{})}
	ctx := t.Context()
	if _, err := f.Open(ctx, acme.account()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Open(ctx, globex.account()); err == nil {
		t.Fatal("globex opened at the first try")
	}
	err := f.Ready(ctx)
	if err == nil || err.Error() != "account globex: not started: schema behind (try 1)" {
		t.Fatalf("ready: %v", err)
	}
	if got := f.Reason("globex"); got == nil || f.Reason("acme") != nil {
		t.Fatalf("reasons: globex %v, acme %v", got, f.Reason("acme"))
	}
	for _, m := range f.Members() {
		m.Start()
	}
	f.Retry(ctx, globex.account())
	for range 3 { // tries 2 and 3 fail, 4 opens
		clk.fire <- time.Time{}
	}
	<-globex.started
	if err := f.Ready(ctx); err != nil {
		t.Errorf("ready once every account is open: %v", err)
	}
	if got, want := clk.asked(), []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if got := len(f.Members()); got != 2 {
		t.Errorf("%d members, want 2", got)
	}
	if err := f.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := []string{"open acme", "open globex", "start acme", "open globex", "open globex", "open globex", "start globex"}
	got := j.list()
	if !slices.Equal(got[:len(want)], want) {
		t.Errorf("events %v, want them to start with %v", got, want)
	}
}

// TestStopOrder: Stop ends the retries before it stops the members, stops every member, and
// Close closes each after; a retry still waiting opens nothing once Stop has begun.
func TestStopOrder(t *testing.T) {
	j := &journal{}
	clk := newClock()
	f := fleet.New[*member](fleet.Options{RetryFirst: time.Hour, After: clk.after})
	ctx := t.Context()
	for _, name := range []string{"acme", "globex"} {
		if _, err := f.Open(ctx, (&opener{name: name, j: j}).account()); err != nil {
			t.Fatal(err)
		}
	}
	down := &opener{name: "initech", j: j, fails: 1}
	if _, err := f.Open(ctx, down.account()); err == nil {
		t.Fatal("initech opened")
	}
	f.Retry(ctx, down.account())
	if err := f.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := j.list()
	// open ×3, then the two stops in either order (at once), then the two closes in order.
	if len(got) != 7 || !slices.Equal(got[:3], []string{"open acme", "open globex", "open initech"}) ||
		!slices.Equal(got[5:], []string{"close acme", "close globex"}) {
		t.Fatalf("events %v", got)
	}
	stops := slices.Sorted(slices.Values(got[3:5]))
	if !slices.Equal(stops, []string{"stop acme", "stop globex"}) {
		t.Errorf("stops %v", got[3:5])
	}
	if _, err := f.Open(ctx, (&opener{name: "late", j: j}).account()); !errors.Is(err, fleet.ErrStopping) {
		t.Errorf("open after stop: %v, want ErrStopping", err)
	}
	if last := j.list(); last[len(last)-1] != "close late" {
		t.Errorf("a member opened after stop is closed at once: %v", last)
	}
}

// TestReadyNamesEachReason: Ready joins the waiting accounts' reasons, in name order, and the
// members' own.
func TestReadyNamesEachReason(t *testing.T) {
	j := &journal{}
	f := fleet.New[*member](fleet.Options{})
	ctx := t.Context()
	for _, name := range []string{"zeta", "alpha"} {
		_, _ = f.Open(ctx, (&opener{name: name, j: j, fails: 1}).account())
	}
	m, err := f.Open(ctx, (&opener{name: "acme", j: j}).account())
	if err != nil {
		t.Fatal(err)
	}
	m.notReady = errors.New("account acme: warehouse schema behind")
	err = f.Ready(ctx)
	want := "account alpha: not started: schema behind (try 1)\naccount zeta: not started: schema behind (try 1)\naccount acme: warehouse schema behind"
	if err == nil || err.Error() != want {
		t.Errorf("ready:\n%v\nwant\n%s", err, want)
	}
	if strings.Count(fmt.Sprint(err), "\n") != 2 {
		t.Errorf("want three reasons")
	}
}
