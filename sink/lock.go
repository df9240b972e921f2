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
// release gives the lock back; call it once the work is done (later calls do nothing).
func (s *Store) TryLock(ctx context.Context, name string) (held context.Context, release func(), ok bool, err error) {
	l, ok, err := s.d.tryLock(ctx, s, name)
	if err != nil {
		return ctx, nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return ctx, nil, false, nil
	}
	h := &heldLock{store: s, name: name, lock: l}
	return context.WithValue(ctx, heldKey{}, h), func() {
		if !h.released.Swap(true) { // once: a second call gives back nothing
			l.release(ctx, name)
		}
	}, true, nil
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
// commit (see the dialects' locks: leaseLock.prove, fileLock.prove).
func (h *heldLock) prove(ctx context.Context, tx *sqlx.Tx) error {
	if h.released.Load() {
		return &LockLostError{Name: h.name, Why: "it was released before the work under it was done"}
	}
	return h.lock.prove(ctx, tx, h.name)
}

// seal runs last before COMMIT in a transaction prove began (a merge): it renews what the
// transaction may have let run out meanwhile (a lease), as no other holder could take the lock
// while it ran.
func (h *heldLock) seal(ctx context.Context, tx *sqlx.Tx) error {
	return h.lock.seal(ctx, tx, h.name)
}
