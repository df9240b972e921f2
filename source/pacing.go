package source

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Pacing keeps a Client under the upstream's request budget (UPSTREAM.md: 60 requests per 60
// seconds per account, shared by every integration of the account). Requests are spread evenly
// by one token bucket of burst 1 per Client, so a full walk never bunches up against the
// upstream's window; after a 429 every request of the Client pauses until the window is over.

// pacingHeadroom widens the spacing of requests beyond what RateLimit allows, so that delays
// between reserving a slot and the request reaching the upstream (scheduling, connection setup,
// network jitter) cannot push RateLimit+1 requests into one of the upstream's windows. At 60 per
// minute requests go out every 1.02 s, which leaves 1.2 s of slack in every 60 s window.
const pacingHeadroom = 1.02

// pacingInterval is the spacing of requests for a budget of perMinute requests a minute.
func pacingInterval(perMinute int) time.Duration {
	return time.Duration(float64(time.Minute) / float64(perMinute) * pacingHeadroom)
}

// clock is the time source of a Client's waits; tests replace it so that nothing sleeps for
// real.
type clock interface {
	Now() time.Time
	// Sleep waits for d, or returns ctx's error as soon as ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
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

// pacer is the request budget shared by everything that uses one Client.
type pacer struct {
	clock   clock
	limiter *rate.Limiter // nil: unpaced

	mu          sync.Mutex
	pausedUntil time.Time // no request leaves before this (a rate-limit window)
}

func newPacer(perMinute int, c clock) *pacer {
	p := &pacer{clock: c}
	if perMinute > 0 {
		p.limiter = rate.NewLimiter(rate.Every(pacingInterval(perMinute)), 1)
	}
	return p
}

// pauseUntil holds every request of the Client back until t (a later pause wins).
func (p *pacer) pauseUntil(t time.Time) {
	p.mu.Lock()
	if t.After(p.pausedUntil) {
		p.pausedUntil = t
	}
	p.mu.Unlock()
}

func (p *pacer) pauseEnd() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pausedUntil
}

// wait blocks until the next request may leave: first out any rate-limit pause, then for a slot
// of the token bucket. It returns the time spent waiting, and ctx's error as soon as ctx is done.
func (p *pacer) wait(ctx context.Context) (time.Duration, error) {
	start := p.clock.Now()
	for {
		// A pause can be extended while we sleep (another request met a 429): look again.
		d := p.pauseEnd().Sub(p.clock.Now())
		if d <= 0 {
			break
		}
		if err := p.clock.Sleep(ctx, d); err != nil {
			return p.clock.Now().Sub(start), err
		}
	}
	if p.limiter != nil {
		now := p.clock.Now()
		r := p.limiter.ReserveN(now, 1) // always OK: burst 1, n 1
		if d := r.DelayFrom(now); d > 0 {
			if pastDeadline(ctx, d) {
				// As rate.Limiter.Wait does: no point in waiting for a slot past the deadline.
				r.CancelAt(now)
				return p.clock.Now().Sub(start), fmt.Errorf("wait %s for the request budget: %w", d.Round(time.Millisecond), context.DeadlineExceeded)
			}
			if err := p.clock.Sleep(ctx, d); err != nil {
				// Give the slot back, so the requests queued behind are not held for it.
				r.CancelAt(p.clock.Now())
				return p.clock.Now().Sub(start), err
			}
		}
	}
	return p.clock.Now().Sub(start), nil
}
