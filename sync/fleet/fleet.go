// Package fleet supervises the accounts one worker runs side by side: it opens each, keeps
// retrying in the background one that does not open (its warehouse out of reach, its schema
// behind) while the others run, says through Ready which are running and which are waiting and
// why, and stops them in order: the retries first, then every account's jobs at once; Close
// then releases what each holds.
//
// It knows nothing of configuration, warehouses or HTTP: an account is a name and a function
// that opens it into a Member, and every dependency comes in through Options.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// Member is one account opened: its jobs, started and stopped, the readiness of what it runs on,
// and what it holds. Errors of Ready and Stop name the account when that is wanted (the fleet
// adds nothing to them).
type Member interface {
	// Start starts the account's jobs.
	Start()
	// Stop stops them, waiting for a running one within ctx.
	Stop(ctx context.Context) error
	// Ready is nil when what the account runs on answers.
	Ready(ctx context.Context) error
	// Close releases what the account holds (its warehouse); called once, after Stop.
	Close() error
}

// Account is one account to open.
type Account[M Member] struct {
	// Name names the account in Ready's reasons and in the fleet's bookkeeping; unique.
	Name string
	// Open opens the account: on success its Member, not started.
	Open func(ctx context.Context) (M, error)
	// Logger logs the account's retries; nil: Options.Logger.
	Logger *slog.Logger
}

// Defaults for Options.
const (
	DefaultRetryFirst = 10 * time.Second
	DefaultRetryMost  = 5 * time.Minute
)

// Options shape a Fleet.
type Options struct {
	// RetryFirst is the wait before the first retry of an account that did not open; each
	// next wait doubles, up to RetryMost (defaults DefaultRetryFirst, DefaultRetryMost).
	RetryFirst, RetryMost time.Duration
	// After waits d, as time.After does (default); a test may answer at once.
	After  func(d time.Duration) <-chan time.Time
	Logger *slog.Logger
}

// ErrStopping is Open's error once Stop has begun: the member opened is closed again.
var ErrStopping = errors.New("stopping")

// Fleet is the accounts of one worker.
type Fleet[M Member] struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	members  []M
	waiting  map[string]error // accounts not open yet, and why
	stopping bool
	retries  sync.WaitGroup
	quit     chan struct{} // closed by Stop: retries end
}

// New returns an empty fleet.
func New[M Member](opts Options) *Fleet[M] {
	if opts.RetryFirst <= 0 {
		opts.RetryFirst = DefaultRetryFirst
	}
	if opts.RetryMost < opts.RetryFirst {
		opts.RetryMost = max(DefaultRetryMost, opts.RetryFirst)
	}
	if opts.After == nil {
		opts.After = time.After
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Fleet[M]{opts: opts, log: opts.Logger, waiting: map[string]error{}, quit: make(chan struct{})}
}

// Open opens the account once: on success its member joins the fleet (not started) and is
// returned; on failure the account is waiting, with the error as its reason (see Retry).
func (f *Fleet[M]) Open(ctx context.Context, a Account[M]) (M, error) {
	m, err := a.Open(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && f.stopping {
		_ = m.Close()
		err = ErrStopping
	}
	if err != nil {
		var zero M
		if !f.stopping {
			f.waiting[a.Name] = err
		}
		return zero, err
	}
	f.members = append(f.members, m)
	delete(f.waiting, a.Name)
	return m, nil
}

// Members are the accounts open, in the order they opened.
func (f *Fleet[M]) Members() []M {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.members)
}

// Reason is why the account named is waiting; nil when it is not.
func (f *Fleet[M]) Reason(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting[name]
}

// Retry tries to open the account again and again in the background, the waits growing from
// RetryFirst to RetryMost, and starts it once it opens; until ctx ends or Stop.
func (f *Fleet[M]) Retry(ctx context.Context, a Account[M]) {
	log := a.Logger
	if log == nil {
		log = f.log
	}
	log.Error("account not started: its warehouse did not open; the other accounts run, and this one is tried again",
		"err", f.Reason(a.Name), "retry_in", f.opts.RetryFirst)
	f.retries.Go(func() {
		wait := f.opts.RetryFirst
		for {
			select {
			case <-ctx.Done():
				return
			case <-f.quit:
				return
			case <-f.opts.After(wait):
			}
			m, err := f.Open(ctx, a)
			if err == nil {
				log.Info("account started: its warehouse opened")
				m.Start()
				return
			}
			if f.isStopping() {
				return
			}
			wait = min(2*wait, f.opts.RetryMost)
			log.Warn("account still not started: its warehouse did not open", "err", err, "retry_in", wait)
		}
	})
}

func (f *Fleet[M]) isStopping() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stopping
}

// Ready is /readyz: every member is ready and no account is waiting to open; otherwise the
// reasons, a waiting account's named ("account acme: not started: …"), in name order first.
func (f *Fleet[M]) Ready(ctx context.Context) error {
	f.mu.Lock()
	members := slices.Clone(f.members)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(f.waiting)) {
		errs = append(errs, fmt.Errorf("account %s: not started: %w", name, f.waiting[name]))
	}
	f.mu.Unlock()
	for _, m := range members {
		errs = append(errs, m.Ready(ctx))
	}
	return errors.Join(errs...)
}

// Stop ends the retries, then stops every member at once, within ctx. A retry either ends
// or has added its member before Stop stops the members: none is left running.
func (f *Fleet[M]) Stop(ctx context.Context) error {
	f.mu.Lock()
	if !f.stopping {
		f.stopping = true
		close(f.quit)
	}
	f.mu.Unlock()
	f.retries.Wait()
	members := f.Members()
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { errs[i] = m.Stop(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes every member; the last step, after Stop and after the servers that read them.
func (f *Fleet[M]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.members {
		_ = m.Close()
	}
}
