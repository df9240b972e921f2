package account

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/server"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// servedStore is an account's warehouse as the /v1 replica reads it: a Lazy (serve, and
// run --serve, whose worker holds no warehouse open between its runs).
type servedStore interface {
	server.Store
	Ready(ctx context.Context) error
}

// OpenStores bounds how many accounts' warehouses serve keeps open at once (serve.open_accounts).
// serve answers for every account of the configuration, and an open warehouse keeps sessions
// of its pool even while nobody asks for its account: 1,000 accounts opened at start held 1,000
// Postgres sessions, ten times a default max_connections, and serve could not start. So a
// warehouse is opened at its account's first request, and when as many are open as allowed, the
// one asked least recently, with no request in progress, is closed first: sessions follow the
// accounts being asked for, not the accounts configured. An account asked again after its
// warehouse was closed pays one open (a connection and the schema's check) at that request.
type OpenStores struct {
	max int // 0: no bound

	mu   sync.Mutex
	open []*Lazy // open warehouses, in no order (few: at most max, plus those busy)
}

// Lazy is one account's warehouse, opened by OpenStores at its first request. serve still
// checks every account's warehouse at start (CheckStore), so a schema behind or a warehouse out
// of reach is said then, not at a client's request.
type Lazy struct {
	acct *config.Account
	set  *OpenStores
	// open opens the warehouse and, for an account whose creates are forwarded, its client;
	// and how to close what it opened.
	open func(ctx context.Context) (*sink.Store, server.Creator, func(), error)

	// Under set.mu:
	store    *sink.Store
	upstream server.Creator
	done     func()    // closes store (and what open opened with it)
	busy     int       // requests using store
	lastUse  time.Time // when the last of them ended
	opening  chan struct{}
	readOnly bool // what the warehouse last said (see ReadOnly)
	// openFailed: the last try to open the warehouse failed (see Ready).
	openFailed bool
}

// acquire is the account's warehouse for one use, opened when it is not; release ends the use.
// A failure to open is tried again at the next request (the warehouse may be back).
func (l *Lazy) acquire(ctx context.Context) (_ *sink.Store, release func(), _ error) {
	set := l.set
	set.mu.Lock()
	for l.opening != nil { // another request of the account is opening it
		ch := l.opening
		set.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		set.mu.Lock()
	}
	if l.store == nil {
		var evict *Lazy
		if set.max > 0 && len(set.open) >= set.max {
			for _, o := range set.open {
				if o.busy == 0 && o.store != nil && (evict == nil || o.lastUse.Before(evict.lastUse)) {
					evict = o
				}
			}
		}
		var old func()
		if evict != nil {
			old = evict.done
			evict.store, evict.upstream, evict.done = nil, nil, nil
			set.remove(evict)
		}
		l.opening = make(chan struct{})
		set.mu.Unlock()
		if old != nil {
			old()
		}
		store, up, done, err := l.open(ctx)
		set.mu.Lock()
		close(l.opening)
		l.opening = nil
		l.openFailed = err != nil
		if err != nil {
			set.mu.Unlock()
			return nil, nil, sink.Unreachable(err)
		}
		l.store, l.upstream, l.done = store, up, done
		set.open = append(set.open, l)
	}
	l.busy++
	store := l.store
	set.mu.Unlock()
	return store, func() {
		set.mu.Lock()
		l.busy--
		l.lastUse = time.Now()
		set.mu.Unlock()
	}, nil
}

func (s *OpenStores) remove(l *Lazy) {
	for i, o := range s.open {
		if o == l {
			s.open = append(s.open[:i], s.open[i+1:]...)
			return
		}
	}
}

// Ready is the warehouse's readiness while it is open; otherwise nil: serve checked it at
// start, and checking it here would open it (a session for every account at every probe).
// Unless the last try to open it failed: then a probe tries again, so that a replica whose
// warehouse is down says so (and is taken out of a load balancer's rotation) until it opens.
func (l *Lazy) Ready(ctx context.Context) error {
	l.set.mu.Lock()
	if (l.store == nil && !l.openFailed) || l.opening != nil {
		l.set.mu.Unlock()
		return nil
	}
	l.set.mu.Unlock()
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.Ready(ctx)
}

// ReadOnly is whether the warehouse takes no writes (a hot standby), asked of it while it is
// open; otherwise what it said when last asked (at serve's start, or while it was open), so that
// /readyz opens no warehouse. A create asks the warehouse itself, opening it.
func (l *Lazy) ReadOnly(ctx context.Context) (bool, error) {
	l.set.mu.Lock()
	if l.store == nil || l.opening != nil {
		ro := l.readOnly
		l.set.mu.Unlock()
		return ro, nil
	}
	l.set.mu.Unlock()
	s, release, err := l.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	ro, err := s.ReadOnly(ctx)
	err = sink.Unreachable(err)
	if err == nil {
		l.set.mu.Lock()
		l.readOnly = ro
		l.set.mu.Unlock()
	}
	return ro, err
}

// Close closes every open warehouse; serve's last step.
func (s *OpenStores) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.open {
		l.done()
		l.store, l.upstream, l.done = nil, nil, nil
	}
	s.open = nil
}

// lazyCreator forwards an account's creates to its source through the client built with its
// warehouse (on the shared budget), opening both if they are not open.
type lazyCreator struct{ l *Lazy }

func (c lazyCreator) CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error) {
	_, release, err := c.l.acquire(ctx)
	if err != nil {
		return v1.Employee{}, err
	}
	defer release()
	c.l.set.mu.Lock()
	up := c.l.upstream
	c.l.set.mu.Unlock()
	if up == nil {
		return v1.Employee{}, errNoUpstream
	}
	return up.CreateEmployee(ctx, ne)
}

var errNoUpstream = errors.New("forward the create: the account has no source client")

func (l *Lazy) Version(ctx context.Context) (int64, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	return unreachable2(s.Version(ctx))
}

func (l *Lazy) ListEmployees(ctx context.Context, p v1.Page) (v1.List[v1.Employee], error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return v1.List[v1.Employee]{}, err
	}
	defer release()
	return unreachable2(s.ListEmployees(ctx, p))
}

func (l *Lazy) Employee(ctx context.Context, id int64) (v1.Employee, int64, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return v1.Employee{}, 0, err
	}
	defer release()
	return unreachable3(s.Employee(ctx, id))
}

func (l *Lazy) Employees(ctx context.Context, ids []int64) (map[int64]v1.Employee, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return unreachable2(s.Employees(ctx, ids))
}

func (l *Lazy) ListWorkingPatterns(ctx context.Context, p v1.Page) (v1.List[v1.WorkingPattern], error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return v1.List[v1.WorkingPattern]{}, err
	}
	defer release()
	return unreachable2(s.ListWorkingPatterns(ctx, p))
}

func (l *Lazy) EmailTaken(ctx context.Context, email string) (bool, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return unreachable2(s.EmailTaken(ctx, email))
}

func (l *Lazy) CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return v1.Employee{}, err
	}
	defer release()
	return unreachable2(s.CreateEmployee(ctx, ne))
}

func (l *Lazy) PutEmployee(ctx context.Context, e v1.Employee) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return sink.Unreachable(s.PutEmployee(ctx, e))
}

func (l *Lazy) ListRecords(ctx context.Context, collection string, p v1.Page) (v1.List[v1.Record], error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return v1.List[v1.Record]{}, err
	}
	defer release()
	return unreachable2(s.ListRecords(ctx, collection, p))
}

func (l *Lazy) Record(ctx context.Context, collection string, id int64) (v1.Record, int64, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return v1.Record{}, 0, err
	}
	defer release()
	return unreachable3(s.Record(ctx, collection, id))
}

func (l *Lazy) Unavailable(ctx context.Context, collection string) (bool, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return unreachable2(s.Unavailable(ctx, collection))
}

func (l *Lazy) Totals(ctx context.Context) (int64, map[string]int64, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer release()
	return unreachable3(s.Totals(ctx))
}

func (l *Lazy) ReserveIdempotency(ctx context.Context, c v1.IdempotencyClaim) (v1.IdempotencyRecord, bool, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return v1.IdempotencyRecord{}, false, err
	}
	defer release()
	return unreachable3(s.ReserveIdempotency(ctx, c))
}

func (l *Lazy) CreateEmployeeOnce(ctx context.Context, ne v1.NewEmployee, client, key string) (v1.Employee, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return v1.Employee{}, err
	}
	defer release()
	return unreachable2(s.CreateEmployeeOnce(ctx, ne, client, key))
}

func (l *Lazy) CompleteIdempotency(ctx context.Context, client, key string, rec v1.IdempotencyRecord) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return sink.Unreachable(s.CompleteIdempotency(ctx, client, key, rec))
}

func (l *Lazy) ReleaseIdempotency(ctx context.Context, client, key string) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return sink.Unreachable(s.ReleaseIdempotency(ctx, client, key))
}

func (l *Lazy) FeedEvents(ctx context.Context, after int64, limit int) ([]v1.Event, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return unreachable2(s.FeedEvents(ctx, after, limit))
}

// unreachable2 and unreachable3 are a store's answer with its error marked when it says the
// warehouse could not be reached (sink.Unreachable), which the replica answers 503.
func unreachable2[T any](v T, err error) (T, error) { return v, sink.Unreachable(err) }

func unreachable3[T, U any](v T, u U, err error) (T, U, error) {
	return v, u, sink.Unreachable(err)
}
