package client

import (
	"context"
	"sync"
	"time"

	"github.com/hrsync/hrsync/source/budget"
)

// clock is the time source of a Client's waits (pacing and retries); tests replace it so that
// nothing sleeps for real.
type clock = budget.Clock

// pacer holds back every request of one Client: out of any rate-limit pause (a 429 seen by any
// request of the Client), then for a slot of its Budget.
type pacer struct {
	clock  clock
	budget budget.Budget // nil: unpaced

	mu          sync.Mutex
	pausedUntil time.Time // no request leaves before this (a rate-limit window)
}

// newPacer paces at budget, or at perMinute in process when budget is nil.
func newPacer(perMinute int, b budget.Budget, c clock) *pacer {
	p := &pacer{clock: c, budget: b}
	if b == nil && perMinute > 0 {
		p.budget = budget.NewLocalClock(perMinute, c)
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
// of the budget. It returns the time spent waiting, and ctx's error as soon as ctx is done.
func (p *pacer) wait(ctx context.Context, kind budget.Kind) (time.Duration, error) {
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
	if p.budget != nil {
		if _, err := p.budget.Wait(ctx, kind); err != nil {
			return p.clock.Now().Sub(start), err
		}
	}
	return p.clock.Now().Sub(start), nil
}
