package sink

import (
	"context"
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
	// Postgres: the session holding the advisory lock, identified as pg_locks and
	// pg_stat_activity show it (a pid alone could be reused by a later session).
	conn         *sqlx.Conn
	pid          int64
	backendStart string
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

// The advisory lock keys of a named lock: one per schema and name, so replicas of one warehouse
// share them and other warehouses on the same server do not. The commit key guards merges
// under the lock (see prove). $1 is the lock's name.
const (
	lockKey   = `hashtextextended('hrsync:' || current_schema() || ':' || $1, 0)`
	commitKey = `hashtextextended('hrsync:' || current_schema() || ':' || $1 || ':commit', 0)`
)

// TryLock takes a named lock shared by every process using this warehouse, without waiting: ok
// is false when another process holds it. The returned context carries the lock: pass it to the
// work done under the lock; a Load begun with it merges only while the lock is still held (see
// Load.Merge). On Postgres the lock is a session advisory lock on a connection kept for it, so
// a process that dies releases it with its session; on SQLite it is an flock on the file beside
// the database, released by the kernel when the process dies.
//
// release gives the lock back; call it once the work is done.
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
	if ok, err := h.takeAdvisory(ctx, conn); err != nil || !ok {
		_ = conn.Close()
		if err != nil {
			err = fmt.Errorf("lock %s: %w", name, err)
		}
		return ctx, nil, false, err
	}
	h.conn = conn
	return context.WithValue(ctx, heldKey{}, h), func() {
		h.released.Store(true)
		// Unlock on a context of its own: the run's may be canceled, the lock must still go. It
		// is bounded: on a silent host, closing the connection ends the session, and the lock
		// with it, as soon as the server notices.
		uctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if _, err := conn.ExecContext(uctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, name); err != nil && ctx.Err() == nil {
			s.log.Warn("release lock: its session had ended, so the lock had gone with it", "lock", name, "err", err)
		}
		_ = conn.Close()
	}, true, nil
}

// takeAdvisory takes the lock's advisory lock on conn, the session that will hold it; then makes
// sure no merge begun by its previous holder is still running: a holder whose session was
// terminated may be in the middle of one (it proved it held the lock when it began, see prove).
// Such a merge holds the commit key until its transaction ends; until then the lock is not taken
// over, and takeAdvisory gives it back and says false.
func (h *heldLock) takeAdvisory(ctx context.Context, conn *sqlx.Conn) (bool, error) {
	var ok, free bool
	if err := conn.QueryRowxContext(ctx, `SELECT pg_try_advisory_lock(`+lockKey+`), pg_backend_pid(),
    (SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid())`, h.name).Scan(&ok, &h.pid, &h.backendStart); err != nil || !ok {
		return false, err
	}
	if err := conn.QueryRowxContext(ctx, `SELECT CASE WHEN pg_try_advisory_lock(`+commitKey+`)
    THEN pg_advisory_unlock(`+commitKey+`) ELSE false END`, h.name).Scan(&free); err != nil || free {
		return err == nil, err
	}
	_, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, h.name)
	return false, err
}

// queryer runs a query on the pool or in a transaction.
type queryer interface {
	QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row
}

// check says whether this process still holds the lock: nil if it does, a *LockLostError if it
// does not. On Postgres it asks the server whether the lock's session (by pid and start time)
// still holds the advisory lock; on SQLite, whether the locked file is still the one at the
// lock's path (an flock cannot be taken from a live process, but its file can be removed and
// another process lock a new one).
func (h *heldLock) check(ctx context.Context, q queryer) error {
	if h.released.Load() {
		return &LockLostError{Name: h.name, Why: "it was released before the work under it was done"}
	}
	if h.file != nil {
		a, err1 := h.file.Stat()
		b, err2 := os.Stat(h.path)
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			return &LockLostError{Name: h.name, Why: "its lock file " + h.path + " was removed or replaced"}
		}
		return nil
	}
	var held bool
	err := q.QueryRowxContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.pid = $2 AND a.backend_start::text = $3
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND ((l.classid::bigint << 32) | l.objid::bigint) = `+lockKey+`)`, h.name, h.pid, h.backendStart).Scan(&held)
	if err != nil {
		return fmt.Errorf("check the %s lock: %w", h.name, err)
	}
	if !held {
		return &LockLostError{Name: h.name, Why: "its database session ended (terminated, or its connection dropped)"}
	}
	return nil
}

// prove runs first in a merge transaction under the lock and fails it (*LockLostError) unless
// this process still holds the lock. It is race-free, so two merges under one lock never both
// commit:
//
//   - Postgres: the transaction takes the lock's commit key (a transaction advisory lock, held
//     until it commits or rolls back), then checks that the holder's session still holds the
//     lock. A process taking the lock over gets it only after the old holder's session lost it,
//     so after that check; and it then gives the lock up at once while the commit key is taken
//     (see TryLock). So either the check fails, or the merge ends before anyone else holds the
//     lock. (A check alone, or a lock on the merge's own session, would leave a window between
//     the check and COMMIT, or could not see the holder's session die.)
//   - SQLite: the transaction holds the write lock from its start (BEGIN IMMEDIATE), so no
//     other merge writes until it ends; inside it, the lock file is checked.
func (h *heldLock) prove(ctx context.Context, tx *sqlx.Tx) error {
	if h.conn != nil {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+commitKey+`)`, h.name); err != nil {
			return fmt.Errorf("take the %s lock's commit key: %w", h.name, err)
		}
	}
	return h.check(ctx, tx)
}
