package sink

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/schema"
)

// ErrLockLost is wrapped by the errors of work begun under a lock (see TryLock) that this
// process no longer holds: its Postgres session ended (terminated by an administrator, a
// dropped connection) or its SQLite lock file was removed or replaced. Another process may hold
// the lock now, so the work was not committed.
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
	// Postgres: the session that holds the advisory lock. Loads begun under the lock run on this
	// one connection, one at a time (turn), so their transactions live and die with the lock.
	conn *sqlx.Conn
	turn chan struct{}
	// SQLite: the locked file and its path.
	file *os.File
	path string
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
// work done under the lock. On Postgres the lock is a session advisory lock, and a Load begun
// with that context runs on the lock's own session, so its merge commits only while the lock is
// held (see BeginLoad); a process that dies releases the lock with its session. On SQLite it is
// an flock on the file beside the database, released by the kernel when the process dies.
//
// release gives the lock back; call it once the work is done (not while a Load is open).
func (s *Store) TryLock(ctx context.Context, name string) (held context.Context, release func(), ok bool, err error) {
	h := &heldLock{store: s, name: name}
	if s.dialect == schema.SQLite {
		h.path = s.location + "." + name + ".lock"
		f, ok, err := flock(h.path)
		if err != nil || !ok {
			return ctx, nil, ok, err
		}
		h.file = f
		return context.WithValue(ctx, heldKey{}, h), func() {
			h.released.Store(true)
			_ = f.Close() // closing the file releases the lock
		}, true, nil
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return ctx, nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	// One key per schema and name: replicas of one warehouse share it, other warehouses on the
	// same server do not.
	const key = `hashtextextended('hrsync:' || current_schema() || ':' || $1, 0)`
	if err := conn.QueryRowxContext(ctx, `SELECT pg_try_advisory_lock(`+key+`)`, name).Scan(&ok); err != nil {
		_ = conn.Close()
		return ctx, nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		_ = conn.Close()
		return ctx, nil, false, nil
	}
	h.conn, h.turn = conn, make(chan struct{}, 1)
	return context.WithValue(ctx, heldKey{}, h), func() {
		alive := h.alive()
		h.released.Store(true)
		if !alive {
			s.log.Warn("release lock: the lock's session had already ended; the lock was lost", "lock", name)
			_ = conn.Close()
			return
		}
		// Unlock on a context of its own: the run's may be canceled, the lock must still go.
		if _, err := conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(`+key+`)`, name); err != nil {
			s.log.Warn("release lock", "lock", name, "err", err)
		}
		_ = conn.Close()
	}, true, nil
}

// alive reports whether this process still holds the lock, as far as it can tell without a
// round trip: on Postgres, whether the lock's session is still usable (the driver marks it bad
// once the server ended it: the lock ended with it); on SQLite, whether the locked file is still
// the one at the lock's path (an flock cannot be taken away from a live process, but the file
// can be removed and another process lock a new one).
func (h *heldLock) alive() bool {
	if h.released.Load() {
		return false
	}
	if h.file != nil {
		a, err1 := h.file.Stat()
		b, err2 := os.Stat(h.path)
		return err1 == nil && err2 == nil && os.SameFile(a, b)
	}
	err := h.conn.Raw(func(dc any) error {
		if v, ok := dc.(driver.Validator); ok && !v.IsValid() {
			return driver.ErrBadConn
		}
		return nil
	})
	return err == nil
}

// lost returns the error for work under h that failed with err, or found the lock gone before
// committing (err nil): a *LockLostError when the lock is no longer held, else err.
func (h *heldLock) lost(err error) error {
	if h == nil || h.alive() {
		return err
	}
	why := "its database session ended"
	switch {
	case h.released.Load():
		why = "it was released before the work under it was done"
	case h.file != nil:
		why = "its lock file " + h.path + " was removed or replaced"
	}
	return &LockLostError{Name: h.name, Why: why, Err: err}
}
