package sink

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
)

// ErrLockLost is wrapped by the errors of work begun under a lock (see TryLock) that this
// process no longer holds: on Postgres its lease expired unrenewed (the process stalled, or lost
// the warehouse, for longer than Options.LockTTL) or another process took it over; on SQLite its
// lock file was removed or replaced. Another process may hold the lock now, so the work was not
// committed.
var ErrLockLost = errors.New("lost the lock")

// LockLostError says which lock was lost and how; it matches ErrLockLost.
type LockLostError struct {
	Name string // the lock's name, e.g. "sync"
	Why  string
	Err  error // what the lost session answered, if anything
}

func (e *LockLostError) Error() string {
	msg := "lost the " + e.Name + " lock: " + e.Why + "; another process may hold it now, so nothing was committed"
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg
}

// Is makes errors.Is(err, ErrLockLost) true.
func (e *LockLostError) Is(target error) bool { return target == ErrLockLost }

func (e *LockLostError) Unwrap() error { return e.Err }

// heldLock is a lock this process holds; the context TryLock returns carries it.
type heldLock struct {
	store    *Store
	name     string
	released atomic.Bool
	lock     processLock // the dialect's: a lease (Postgres), or a lock file
	// stop ends the context TryLock returned, with its cause: the work under the lock stops.
	stop context.CancelCauseFunc
}

type heldKey struct{}

// heldBy returns the lock of this store that ctx carries (from TryLock), or nil.
func (s *Store) heldBy(ctx context.Context) *heldLock {
	h, _ := ctx.Value(heldKey{}).(*heldLock)
	if h == nil || h.store != s {
		return nil
	}
	return h
}

// TryLock takes a named lock shared by every process using this warehouse, without waiting: ok
// is false when another process holds it. The returned context carries the lock: pass it to the
// work done under the lock; a Load begun with it merges only while the lock is still held (see
// Load.Merge).
//
// On Postgres the lock is a lease, a row of the warehouse's locks table taken in one short
// transaction and renewed every third of Options.LockTTL on the pool's connections: holding it
// pins no database session, so a worker's sessions follow the work it does, not the locks it
// holds. The price: the lease of a process that dies stays taken until it expires (the TTL,
// 30 s by default), where a session's lock went with its session at once. On SQLite it is an
// flock on the file beside the database, released by the kernel when the process dies.
//
// The returned context also ends, at once and with its cause (context.Cause), when the work
// under the lock must stop: when this process can no longer be sure it holds the lock (a
// *LockLostError: on Postgres, its lease was found expired or taken over, or no renewal was
// confirmed and the lease is about to end: the work stops before it does), or when the
// warehouse stopped answering (an error wrapping ErrNoAnswer). Nothing is written under the
// lock after that.
//
// release gives the lock back; call it once the work is done (later calls do nothing).
func (s *Store) TryLock(ctx context.Context, name string) (held context.Context, release func(), ok bool, err error) {
	l, ok, err := s.d.tryLock(ctx, s, name)
	if err != nil {
		return ctx, nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return ctx, nil, false, nil
	}
	hctx, stop := context.WithCancelCause(ctx)
	h := &heldLock{store: s, name: name, lock: l, stop: stop}
	s.holding(h, true)
	l.watch(stop)
	return context.WithValue(hctx, heldKey{}, h), func() {
		if !h.released.Swap(true) { // once: a second call gives back nothing
			s.holding(h, false)
			l.release(ctx, name)
			stop(errReleased)
		}
	}, true, nil
}

// stopped is why the work under a lock was stopped (see TryLock): the lock lost or the
// warehouse silent, from the context that carries the lock; nil while it goes on, or when ctx
// ended otherwise (the process is stopping). Work under the lock that finds it stopped fails
// with it, not with the context's "context canceled".
func stopped(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrLockLost) || errors.Is(cause, ErrNoAnswer) {
		return cause
	}
	return nil
}

// errReleased ends the context of work under a lock once the lock is given back.
var errReleased = errors.New("the lock was released")

// holding adds h to the locks the store holds (the warehouse's silence stops the work under
// them: see silenced), or takes it out.
func (s *Store) holding(h *heldLock, held bool) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	if !held {
		delete(s.held, h)
		return
	}
	if s.held == nil {
		s.held = map[*heldLock]struct{}{}
	}
	s.held[h] = struct{}{}
}

// silenced is told that a connection of the warehouse found it silent (cause wraps
// ErrNoAnswer): the work under every lock the store holds stops now, naming it, rather than
// each of its next statements waiting for the same silence; the locks' releases wait only
// afterSilenceTimeout.
func (s *Store) silenced(cause error) {
	s.silences.Add(1)
	s.heldMu.Lock()
	held := make([]*heldLock, 0, len(s.held))
	for h := range s.held {
		held = append(held, h)
	}
	s.heldMu.Unlock()
	for _, h := range held {
		h.stop(cause)
	}
}

// queryer runs a query on the pool or in a transaction.
type queryer interface {
	QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row
}

// check says whether this process still holds the lock: nil if it does, a *LockLostError if it
// does not (see the dialects' locks).
func (h *heldLock) check(ctx context.Context, q queryer) error {
	if h.released.Load() {
		return &LockLostError{Name: h.name, Why: "it was released before the work under it was done"}
	}
	return h.lock.check(ctx, q, h.name)
}

// prove runs first in a merge transaction under the lock and fails it (*LockLostError) unless
// this process still holds the lock. It is race-free, so two merges under one lock never both
// commit (see the dialects' locks: leaseLock.prove, fileLock.prove). Once tx ends, settle must
// be called with it, whatever prove returned.
func (h *heldLock) prove(ctx context.Context, tx *sqlx.Tx) error {
	if h.released.Load() {
		return &LockLostError{Name: h.name, Why: "it was released before the work under it was done"}
	}
	return h.lock.prove(ctx, tx, h.name)
}

// settle is told that tx, which prove began, has ended: committed or not.
func (h *heldLock) settle(tx *sqlx.Tx, committed bool) {
	h.lock.settle(tx, committed)
}

// seal runs last before COMMIT in a transaction prove began (a merge): it renews what the
// transaction may have let run out meanwhile (a lease), as no other holder could take the lock
// while it ran.
func (h *heldLock) seal(ctx context.Context, tx *sqlx.Tx) error {
	return h.lock.seal(ctx, tx, h.name)
}
