// Package budget is the upstream's request budget as hrsync spends it: the spacing of requests
// (PacingInterval), the kinds of request a budget tells apart, the Budget a client draws every
// request's slot from, and Local, the budget of one process. The budget shared by every process of
// an account (sink.Budget) implements Budget too; the HTTP client (package client) consults one
// before every request.
package budget

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

// Pacing keeps a client.Client under the upstream's request budget (UPSTREAM.md: 60 requests per 60
// seconds per account, shared by every integration of the account). Requests are spread evenly,
// so a full walk never bunches up against the upstream's window: each takes a slot of the
// Client's Budget, by default one token bucket of burst 1 per Client (Local), or one
// budget shared by every process of the account (sink.Budget, kept in the warehouse). After a
// 429 every request of the Client pauses until the window is over, whatever its Budget.

// pacingHeadroom widens the spacing of requests beyond what RateLimit allows, so that delays
// between reserving a slot and the request reaching the upstream (scheduling, connection setup,
// network jitter) cannot push RateLimit+1 requests into one of the upstream's windows. At 60 per
// minute requests go out every 1.02 s, which leaves 1.2 s of slack in every 60 s window.
const pacingHeadroom = 1.02

// PacingInterval is the spacing of requests for a budget of perMinute requests a minute, in
// process or shared (sink.Budget).
func PacingInterval(perMinute int) time.Duration {
	return time.Duration(float64(time.Minute) / float64(perMinute) * pacingHeadroom)
}

// Clock is the time source of a budget's and a Client's waits; tests replace it so that nothing
// sleeps for real.
type Clock interface {
	Now() time.Time
	// Sleep waits for d, or returns ctx's error as soon as ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the Clock of the system: real time, real sleeps.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits for d, or returns ctx's error as soon as ctx is done.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Kind is what a request is for, so that a Budget can tell its waits apart (metrics); every
// kind draws on the same budget, first come first served.
type Kind string

const (
	// KindWalk is a page of a sync's walk (every list).
	KindWalk Kind = "walk"
	// KindCreate is a create sent by hrsync itself (onboard).
	KindCreate Kind = "create"
	// KindForward is a create serve forwards for a client (serve.writes: forward).
	KindForward Kind = "forward"
)

// Budget is where a Client's requests get their slots: Wait returns once a request of kind may
// leave, with the time it waited, or ctx's error as soon as ctx is done (and at once when the
// slot would come after ctx's deadline). The Client consults it before every attempt, after any
// pause for a 429, which stays the Client's. It must be safe for concurrent use; one Budget may
// serve several Clients.
type Budget interface {
	Wait(ctx context.Context, kind Kind) (time.Duration, error)
}

// Local paces the requests of one process: one token bucket of burst 1, spacing requests by
// PacingInterval. It is a Client's Budget by default (client.Options.RateLimit), and what a
// shared budget falls back to when it cannot reach its store.
type Local struct {
	clock   Clock
	limiter *rate.Limiter // nil: unpaced
}

// NewLocal returns a Budget of perMinute requests a minute (0: unpaced).
func NewLocal(perMinute int) *Local { return NewLocalClock(perMinute, SystemClock{}) }

// NewLocalClock is NewLocal on the time source c (a fake clock, in tests).
func NewLocalClock(perMinute int, c Clock) *Local {
	b := &Local{clock: c}
	if perMinute > 0 {
		b.limiter = rate.NewLimiter(rate.Every(PacingInterval(perMinute)), 1)
	}
	return b
}

// Wait takes the next slot of the bucket.
func (b *Local) Wait(ctx context.Context, _ Kind) (time.Duration, error) {
	if b.limiter == nil {
		return 0, ctx.Err()
	}
	start := b.clock.Now()
	r := b.limiter.ReserveN(start, 1) // always OK: burst 1, n 1
	d := r.DelayFrom(start)
	if d <= 0 {
		return 0, nil
	}
	if pastDeadline(ctx, d) {
		// As rate.Limiter.Wait does: no point in waiting for a slot past the deadline.
		r.CancelAt(start)
		return 0, fmt.Errorf("wait %s for the request budget: %w", d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	if err := b.clock.Sleep(ctx, d); err != nil {
		// Give the slot back, so the requests queued behind are not held for it.
		r.CancelAt(b.clock.Now())
		return b.clock.Now().Sub(start), err
	}
	return b.clock.Now().Sub(start), nil
}

// Limiter is the bucket b draws from, nil when unpaced; for tests and diagnostics (drawing on it
// takes slots of b).
func (b *Local) Limiter() *rate.Limiter { return b.limiter }

// pastDeadline reports whether waiting d would end after ctx's deadline.
func pastDeadline(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && d > time.Until(dl)
}
