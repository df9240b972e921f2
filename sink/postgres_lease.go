package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// leaseLock is a lock held as a lease: a row of the warehouse's locks table (migration 0019),
// taken in one short transaction and renewed by a goroutine on the pool's connections, so
// holding it pins no session. Its token, raised at every take, is what identifies this holding:
// the lease is held while its row still carries the token and has not expired (by the
// database's clock, so the hosts' clocks do not matter). A holder that stops renewing (it
// died, stalled, or lost the warehouse for longer than the lease) loses the lock when it
// expires; another process may then take it over, and the old holder's merges fail (see prove).
//
// The holder also keeps, by its own clock, until when the lease is surely its own: the time it
// sent its last confirmed take or renewal (or a merge's seal that committed) plus the TTL. The
// database's lease ends no earlier, as it counts from when the statement ran. Unless another
// confirmation comes, the work under the lock is stopped (see TryLock) leaseMargin before
// that: a holder that cannot renew (the warehouse silent, or unreachable) stops writing
// before its lease ends and another process may take it. A merge that proved the lease holds
// its row, which no taker can lock meanwhile: its lease cannot change hands, so it is not
// stopped for the lease; its end is the confirmation (see settle).
type leaseLock struct {
	s     *Store
	name  string
	token int64
	ttl   time.Duration
	lost  atomic.Bool   // a renewal found the lease expired or taken over, or it ran out
	stop  chan struct{} // closed by release: the renewals end
	ended chan struct{} // closed when they have
	// renewing is the renewals' context, canceled by release: one in flight ends at once.
	renewing context.Context
	quit     context.CancelFunc
	// silences is the store's count of silences when the lease was taken (see release).
	silences int64

	mu        sync.Mutex
	confirmed time.Time              // the lease is surely this holder's until confirmed+ttl
	pins      map[*sqlx.Tx]time.Time // open transactions that proved it: when their last seal began
	timer     *time.Timer            // stops the work at the confirmed lease's end, less leaseMargin
	stopWork  context.CancelCauseFunc
	failed    error // the last renewal's error, for the message
}

// leaseMargin is how long before its confirmed lease ends a holder stops the work under it:
// time for the work's statements to be aborted (their sockets closed) before the lease ends,
// and for clocks that do not run at quite the same rate.
func (l *leaseLock) leaseMargin() time.Duration { return l.ttl / 6 }

// olderHolder is the session advisory lock hrsync took for a named lock before the leases
// (migration 0019), keyed by schema and name. A process of an older version may still hold it
// during a rolling upgrade, unaware of the leases: take and prove take it, shared, for their
// transaction too (without waiting), so they fail while it holds it, and it cannot take it
// (exclusive) while they run. So an older and a newer process never both commit under one lock.
// Shared, because newer processes must not stop each other: one's take attempt (which the
// lease then refuses) ran at the moment of another's prove, and failed that one's merge as lost.
// The $1 is the lock's name.
const olderHolder = `pg_try_advisory_xact_lock_shared(hashtextextended('hrsync:' || current_schema() || ':' || $1, 0))`

// pgLockBusy is Postgres's lock_not_available: a NOWAIT lock was taken by another transaction.
const pgLockBusy = "55P03"

func (pgDialect) tryLock(ctx context.Context, s *Store, name string) (processLock, bool, error) {
	l := &leaseLock{s: s, name: name, ttl: s.opts.LockTTL, stop: make(chan struct{}), ended: make(chan struct{}),
		pins: map[*sqlx.Tx]time.Time{}, silences: s.silences.Load()}
	sent := time.Now()
	if ok, err := l.take(ctx); err != nil || !ok {
		return nil, false, err
	}
	l.confirmed = sent
	l.renewing, l.quit = context.WithCancel(context.Background())
	go l.renew()
	return l, true, nil
}

// watch arms the stop of the work under the lock at the confirmed lease's end (see leaseLock).
func (l *leaseLock) watch(stop context.CancelCauseFunc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopWork = stop
	l.timer = time.AfterFunc(l.until(), l.expire)
}

// until is how long from now the work may go on, unless another confirmation comes (l.mu held).
func (l *leaseLock) until() time.Duration {
	return time.Until(l.confirmed.Add(l.ttl - l.leaseMargin()))
}

// confirm records that the lease was this holder's at least until sent+ttl (sent: when the
// statement that said so was sent), and moves the stop later.
func (l *leaseLock) confirm(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sent.After(l.confirmed) {
		l.confirmed = sent
	}
	if l.timer != nil && !l.lost.Load() {
		l.timer.Reset(l.until())
	}
}

// expire is the timer's: the confirmed lease is about to end. Unless a merge holds the lease's
// row (it stops the work when it ends: settle), or a confirmation came meanwhile, the lease is
// lost and the work under it stops.
func (l *leaseLock) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pins) > 0 || l.lost.Load() {
		return
	}
	if d := l.until(); d > 0 {
		l.timer.Reset(d)
		return
	}
	l.lost.Store(true)
	err := l.lostError()
	l.s.log.Warn("lock lost: no renewal of its lease was confirmed in time; the work under it stops before the lease ends",
		"lock", l.name, "ttl", l.ttl, "err", l.failed)
	l.stopWork(err)
}

// lostError says why the lease is lost when it ran out unconfirmed (l.mu held).
func (l *leaseLock) lostError() error {
	return &LockLostError{Name: l.name, Err: l.failed, Why: fmt.Sprintf(
		"no renewal of its lease was confirmed before it was about to end (it lasts %s unrenewed): the warehouse did not answer in time", l.ttl)}
}

// take takes the lease in one short transaction, unless a live holder has it. It locks the
// lock's row without waiting: a merge under the lock holds that row until its transaction ends
// (see prove), and its lease is not taken over until then, even when it expired meanwhile (its
// holder proved it held the lock when the merge began): take says false at once, as when the
// lease is live. A row that is gone or expired is taken with the next token.
func (l *leaseLock) take(ctx context.Context) (ok bool, err error) {
	tx, err := l.s.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	var free bool
	if err := tx.QueryRowxContext(ctx, `SELECT `+olderHolder, l.name).Scan(&free); err != nil || !free {
		return false, err // an older hrsync holds the lock
	}
	var live bool
	err = tx.QueryRowxContext(ctx, `SELECT expires_at > clock_timestamp() FROM locks WHERE name = $1 FOR UPDATE NOWAIT`, l.name).Scan(&live)
	var pqErr *pq.Error
	switch {
	case errors.As(err, &pqErr) && pqErr.Code == pgLockBusy, err == nil && live:
		return false, nil // a live holder, or a merge under the lock still running
	case errors.Is(err, sql.ErrNoRows):
		// Another taker may insert the row first: its insert wins, and this one takes nothing.
		err = tx.QueryRowxContext(ctx, `INSERT INTO locks (name, holder, token, taken_at, expires_at)
VALUES ($1, $2, 1, clock_timestamp(), clock_timestamp() + make_interval(secs => $3))
ON CONFLICT (name) DO NOTHING RETURNING token`, l.name, holderName, l.ttl.Seconds()).Scan(&l.token)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
	case err == nil:
		err = tx.QueryRowxContext(ctx, `UPDATE locks SET holder = $2, token = token + 1, taken_at = clock_timestamp(),
    expires_at = clock_timestamp() + make_interval(secs => $3)
WHERE name = $1 RETURNING token`, l.name, holderName, l.ttl.Seconds()).Scan(&l.token)
	}
	if err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// holderName says which process holds a lease, for an operator reading the locks table: host
// and process id. (The token, not this, is what tells holders apart.)
var holderName = func() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}()

// renew renews the lease every third of its TTL until release, each time one short statement
// on a pooled connection. A merge under the lock holds the lease's row (see prove) and extends
// the lease itself as it commits: a renewal does not wait for it (SKIP LOCKED), it finds the
// lease still its own and tries again at the next tick. A renewal that finds the lease expired
// or taken over marks it lost, for good: check and prove fail from then on, and it is never
// renewed again, so a lease that expired stays free for whoever takes it next. A renewal that
// fails (the warehouse unreachable) is retried at the next tick; if none succeeds within the
// TTL, the lease expires.
//
// A renewal confirmed moves the stop of the work under the lock later (see leaseLock); one that
// finds the lease lost stops that work at once.
func (l *leaseLock) renew() {
	defer close(l.ended)
	every := l.ttl / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if l.lost.Load() { // it ran out unconfirmed: never renewed again
			return
		}
		// A slow warehouse is not a silent one: the renewal may take until the work would stop
		// anyway (at least a tick), so one that answers late still confirms the lease.
		ctx, cancel := context.WithTimeout(l.renewing, l.patience(every))
		sent := time.Now()
		var renewed, mine bool
		err := l.s.db.QueryRowxContext(ctx, `WITH mine AS (
    SELECT name FROM locks WHERE name = $1 AND token = $2 AND expires_at > clock_timestamp() FOR UPDATE SKIP LOCKED
), renewed AS (
    UPDATE locks SET expires_at = clock_timestamp() + make_interval(secs => $3) FROM mine WHERE locks.name = mine.name RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM renewed), EXISTS (SELECT 1 FROM locks WHERE name = $1 AND token = $2 AND expires_at > clock_timestamp())`,
			l.name, l.token, l.ttl.Seconds()).Scan(&renewed, &mine)
		cancel()
		switch {
		case err != nil && l.renewing.Err() != nil:
			return // released
		case err != nil:
			l.mu.Lock()
			l.failed = err
			l.mu.Unlock()
			l.s.log.Warn("renew lock: will retry; the lock is lost if no renewal succeeds before its lease expires",
				"lock", l.name, "ttl", l.ttl, "err", err)
		case !renewed && !mine && l.pinned():
			// A merge of this holder's holds the lease's row (see prove): no taker can lock it
			// until that merge ends, and its seal extends the lease as it commits.
		case !renewed && !mine:
			l.mu.Lock()
			l.lost.Store(true)
			if l.timer != nil {
				l.timer.Stop()
			}
			stop := l.stopWork
			l.mu.Unlock()
			l.s.log.Warn("renew lock: its lease had expired or been taken over; the work under it stops", "lock", l.name)
			if stop != nil {
				stop(&LockLostError{Name: l.name, Why: "its lease expired or was taken over by another process"})
			}
			return
		case renewed:
			l.confirm(sent)
		}
	}
}

// patience is how long a renewal may wait for its answer: until the work under the lock stops
// unconfirmed (see until), and never less than a tick.
func (l *leaseLock) patience(tick time.Duration) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(l.until(), tick)
}

// check asks the warehouse whether the lease is still this holder's and unexpired.
func (l *leaseLock) check(ctx context.Context, q queryer, name string) error {
	if l.lost.Load() {
		return &LockLostError{Name: name, Why: "its lease expired or was taken over by another process"}
	}
	var token int64
	var live bool
	err := q.QueryRowxContext(ctx, `SELECT token, expires_at > clock_timestamp() FROM locks WHERE name = $1`, name).Scan(&token, &live)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("check the %s lock: %w", name, err)
	}
	return l.verdict(name, err == nil && token == l.token, live)
}

// verdict is check's and prove's answer: nil while the lease is this holder's (its token) and
// live.
func (l *leaseLock) verdict(name string, ours, live bool) error {
	switch {
	case !ours:
		return &LockLostError{Name: name, Why: "another process took its lease over"}
	case !live:
		return &LockLostError{Name: name, Why: fmt.Sprintf("its lease expired: not renewed within %s", l.ttl)}
	}
	return nil
}

// prove locks the lease's row in tx (FOR UPDATE, held until tx ends) and checks that the lease
// is still this holder's and unexpired, and that no older hrsync holds the lock (olderHolder),
// extending the lease. A taker locks that row too (see take), so
// either prove fails, or tx ends before anyone else holds the lock. The lease is extended again
// as tx commits (see seal): nobody could take it meanwhile, however long the merge took.
func (l *leaseLock) prove(ctx context.Context, tx *sqlx.Tx, name string) error {
	if l.lost.Load() {
		return &LockLostError{Name: name, Why: "its lease expired or was taken over by another process"}
	}
	var token int64
	var live bool
	err := tx.QueryRowxContext(ctx, `SELECT token, expires_at > clock_timestamp() FROM locks WHERE name = $1 FOR UPDATE`, name).Scan(&token, &live)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("prove the %s lock: %w", name, err)
	}
	var free bool
	if err := tx.QueryRowxContext(ctx, `SELECT `+olderHolder, name).Scan(&free); err != nil {
		return fmt.Errorf("prove the %s lock: %w", name, err)
	} else if !free {
		return &LockLostError{Name: name, Why: "an hrsync of an older version holds it (its session advisory lock)"}
	}
	if err := l.verdict(name, err == nil && token == l.token, live); err != nil {
		return err
	}
	l.mu.Lock()
	l.pins[tx] = time.Time{} // the row is locked until tx ends: see settle
	l.mu.Unlock()
	return l.seal(ctx, tx, name)
}

// pinned says whether a transaction that proved the lease is still open: it holds the row.
func (l *leaseLock) pinned() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pins) > 0
}

// settle is told that tx, which prove began, has ended. A committed seal confirmed the lease
// from when it was sent; then, unless another merge still holds the row, the stop of the work
// is where the confirmations put it (at once, if the lease ran out meanwhile).
func (l *leaseLock) settle(tx *sqlx.Tx, committed bool) {
	l.mu.Lock()
	sealed, pinned := l.pins[tx]
	delete(l.pins, tx)
	l.mu.Unlock()
	if !pinned {
		return
	}
	if committed && !sealed.IsZero() {
		l.confirm(sealed)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil && len(l.pins) == 0 && !l.lost.Load() {
		l.timer.Reset(max(l.until(), 0))
	}
}

// seal extends the lease in tx, whose row lock (taken by prove) has kept it this holder's since
// prove. Called last before COMMIT, it starts the lease afresh when the merge ends, so a merge
// longer than the TTL does not leave it expired.
func (l *leaseLock) seal(ctx context.Context, tx *sqlx.Tx, name string) error {
	l.mu.Lock()
	if _, ok := l.pins[tx]; ok {
		l.pins[tx] = time.Now()
	}
	l.mu.Unlock()
	if _, err := tx.ExecContext(ctx, `UPDATE locks SET expires_at = clock_timestamp() + make_interval(secs => $3)
WHERE name = $1 AND token = $2`, name, l.token, l.ttl.Seconds()); err != nil {
		return fmt.Errorf("extend the %s lock's lease: %w", name, err)
	}
	return nil
}

// release stops the renewals (one in flight ends at once) and expires the lease at once (its
// row stays, so tokens never repeat), on a context of its own: the run's may be canceled, the
// lock must still go. If that fails, the lease expires within its TTL. A lease already lost
// is left as it is: nothing is written for a lock this process no longer holds. After the
// warehouse was found silent while the lock was held, the release waits only
// afterSilenceTimeout for it: a silent host would hold a stopping run for nothing.
func (l *leaseLock) release(ctx context.Context, name string) {
	close(l.stop)
	l.quit()
	<-l.ended
	l.mu.Lock()
	if l.timer != nil {
		l.timer.Stop()
	}
	l.mu.Unlock()
	if l.lost.Load() {
		return
	}
	wait := cleanupTimeout
	if l.s.silences.Load() != l.silences {
		wait = afterSilenceTimeout
	}
	uctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := l.s.db.ExecContext(uctx, `UPDATE locks SET expires_at = clock_timestamp() WHERE name = $1 AND token = $2`,
		name, l.token); err != nil && ctx.Err() == nil {
		l.s.log.Warn("release lock: it stays taken until its lease expires", "lock", name, "ttl", l.ttl, "err", err)
	}
}

// historyTriggers are statement triggers of history_write (migration 0009), which copies the
// table's columns by name from the catalog, so cols need not be named. Each carries its
