package sink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hrsync/hrsync/source/budget"
)

// The account's request budget lives in the warehouse, which every hrsync process of the account
// shares: each request reserves the next slot in one short statement (GCRA: request_budget.tat
// is when the slot after the last one reserved starts) and sleeps until its slot. The slots are
// spaced by the in-process pacer's interval (budget.PacingInterval), so however many processes
// reserve, no window of the upstream holds more than the rate. It is fair by construction: a
// request reserves its slot when it is about to be sent, so a create behind a running sync waits
// for the slots already reserved (about the sync's concurrency), not for the whole walk.

// Defaults of BudgetOptions.
const (
	DefaultBudgetAccount = "default"
	DefaultBudgetShare   = 2
	DefaultBudgetTimeout = 2 * time.Second
	DefaultBudgetRetry   = 10 * time.Second
)

// BudgetOptions configures a Budget.
type BudgetOptions struct {
	// Account names the budget (source.account, default "default"): processes that use the same
	// upstream account must use the same name, processes of different accounts different ones.
	Account string
	// PerMinute is the account's rate (source.rate_limit); it must be positive.
	PerMinute int
	// Share divides PerMinute when the warehouse cannot be reached: the process then paces
	// itself at PerMinute/Share (default 2). When the warehouse is down it is down for every
	// process of the account, so up to Share processes falling back together stay within the
	// rate; one that falls back while the others still reach the warehouse may overshoot by its
	// share, which the 429 pause then absorbs.
	Share int
	// Timeout bounds one reservation (default 2 s): a warehouse slower than that is treated as
	// unreachable.
	Timeout time.Duration
	// Retry is how often a process that fell back tries the warehouse again (default 10 s); the
	// requests in between do not wait for it.
	Retry time.Duration
	// Logger receives one warning when the process falls back, and one notice when it is back
	// (default: the Store's logger).
	Logger *slog.Logger
}

// Budget is a budget.Budget kept in the warehouse, shared by every process of the account. It is
// safe for concurrent use.
type Budget struct {
	s        *Store
	opts     BudgetOptions
	interval time.Duration
	fallback *budget.Local
	log      *slog.Logger
	// reserving lets one reservation of the process at a time to the warehouse: the others
	// would only queue on the row (Postgres) or on the file's write lock (SQLite, whose busy
	// handler sleeps in steps of up to 100 ms, leaving slots unused).
	reserving sync.Mutex

	mu        sync.Mutex
	degraded  bool
	nextProbe time.Time // while degraded: when the warehouse is tried again
	probing   bool      // a request is trying the warehouse; the others use the fallback
	waited    map[budget.Kind]*KindWaits
}

// KindWaits counts the slots a Budget granted to one kind of request, and the time they waited.
type KindWaits struct {
	Granted int64
	Waited  time.Duration
}

// NewBudget returns the shared budget of opts.Account in the warehouse s.
func (s *Store) NewBudget(opts BudgetOptions) (*Budget, error) {
	if opts.PerMinute <= 0 {
		return nil, errors.New("shared request budget: the rate must be positive (an unpaced client needs no budget)")
	}
	if opts.Share < 0 || opts.Timeout < 0 || opts.Retry < 0 {
		return nil, errors.New("shared request budget: share, timeout and retry must not be negative")
	}
	opts.Account = cmp.Or(opts.Account, DefaultBudgetAccount)
	opts.Share = cmp.Or(opts.Share, DefaultBudgetShare)
	opts.Timeout = cmp.Or(opts.Timeout, DefaultBudgetTimeout)
	opts.Retry = cmp.Or(opts.Retry, DefaultBudgetRetry)
	log := opts.Logger
	if log == nil {
		log = s.log
	}
	return &Budget{
		s:        s,
		opts:     opts,
		interval: budget.PacingInterval(opts.PerMinute),
		// At least one request a minute, however large the share.
		fallback: budget.NewLocal(max(opts.PerMinute/opts.Share, 1)),
		log:      log,
		waited:   make(map[budget.Kind]*KindWaits),
	}, nil
}

// ReserveRequest reserves the next request slot of account's budget, slots spaced by interval,
// and returns how long from now the slot starts (0 or less: now). The clock is the database's,
// which every process of the account shares.
func (s *Store) ReserveRequest(ctx context.Context, account string, interval time.Duration) (time.Duration, error) {
	us := interval.Microseconds()
	var delay int64
	if err := s.db.QueryRowContext(ctx, s.db.Rebind(s.d.reserveSlot()), account, us, us, us).Scan(&delay); err != nil {
		return 0, fmt.Errorf("reserve a request of account %q: %w", account, busyErr(err))
	}
	return time.Duration(delay) * time.Microsecond, nil
}

// Wait reserves the request's slot in the warehouse and sleeps until it starts, or, when the
// warehouse does not answer within Timeout, paces the process at its share. A slot reserved for
// a request whose ctx ends before it is not given back: it stays unused.
func (b *Budget) Wait(ctx context.Context, kind budget.Kind) (time.Duration, error) {
	start := time.Now()
	waited, err := b.wait(ctx, kind)
	if err == nil {
		b.mu.Lock()
		w := b.waited[kind]
		if w == nil {
			w = &KindWaits{}
			b.waited[kind] = w
		}
		w.Granted++
		w.Waited += time.Since(start)
		b.mu.Unlock()
	}
	return waited, err
}

func (b *Budget) wait(ctx context.Context, kind budget.Kind) (time.Duration, error) {
	start := time.Now()
	if !b.shared(start) {
		return b.fallback.Wait(ctx, kind)
	}
	rctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	d, err := b.reserve(rctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return time.Since(start), ctx.Err()
		}
		b.fellBack(err)
		_, err := b.fallback.Wait(ctx, kind)
		return time.Since(start), err
	}
	b.reached()
	if d <= 0 {
		return time.Since(start), nil
	}
	if dl, ok := ctx.Deadline(); ok && d > time.Until(dl) {
		return time.Since(start), fmt.Errorf("wait %s for the shared request budget: %w", d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return time.Since(start), ctx.Err()
	case <-t.C:
		return time.Since(start), nil
	}
}

// reserve reserves the next slot, one reservation of the process at a time.
func (b *Budget) reserve(ctx context.Context) (time.Duration, error) {
	// A channel would let the wait for the mutex end with ctx; reservations take milliseconds,
	// and a hung one ends with its Timeout, so the mutex is held no longer than that.
	b.reserving.Lock()
	defer b.reserving.Unlock()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return b.s.ReserveRequest(ctx, b.opts.Account, b.interval)
}

// shared reports whether this request asks the warehouse: always, unless the process fell back,
// when one request asks every Retry and the others pace at the share meanwhile.
func (b *Budget) shared(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.degraded {
		return true
	}
	if b.probing || now.Before(b.nextProbe) {
		return false
	}
	b.probing = true
	return true
}

// fellBack notes a reservation that failed; the first after the warehouse answered is logged.
func (b *Budget) fellBack(err error) {
	b.mu.Lock()
	first := !b.degraded
	b.degraded, b.probing = true, false
	b.nextProbe = time.Now().Add(b.opts.Retry)
	b.mu.Unlock()
	if first {
		b.log.Warn("the shared request budget is out of reach; pacing this process at its share until the warehouse answers",
			slog.String("account", b.opts.Account), slog.Int("requests_per_minute", max(b.opts.PerMinute/b.opts.Share, 1)),
			slog.Int("share", b.opts.Share), slog.String("err", err.Error()))
	}
}

// reached notes a reservation that succeeded; the first after a fallback is logged.
func (b *Budget) reached() {
	b.mu.Lock()
	back := b.degraded
	b.degraded, b.probing = false, false
	b.mu.Unlock()
	if back {
		b.log.Info("the shared request budget answers again; pacing with the account's other processes",
			slog.String("account", b.opts.Account))
	}
}

// Shared reports whether the process paces on the warehouse (false: it fell back to its share).
func (b *Budget) Shared() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.degraded
}

// Waits returns, per kind, the slots granted and the time their requests waited for them.
func (b *Budget) Waits() map[budget.Kind]KindWaits {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[budget.Kind]KindWaits, len(b.waited))
	for k, w := range b.waited {
		out[k] = *w
	}
	return out
}
