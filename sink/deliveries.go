package sink

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/source/v1"
)

// Webhook deliveries (docs/events.md#webhooks): each subscriber of events.webhooks has a cursor
// in the feed (event_subscribers.after_seq); QueueDeliveries queues for it every event published
// after its cursor (event_deliveries), and the worker (sync/events) delivers what is due, in
// feed order but never an employee's event before that employee's earlier ones, recording each
// attempt. A row is pending until delivered, or dead once its retries run out; ReplayDeliveries
// queues dead or delivered ones again.

// A Delivery is one event queued for one subscriber, with what its attempts came to.
type Delivery struct {
	Subscriber string
	Event      Event
	State      string // pending, delivered or dead
	Attempts   int
	QueuedAt   time.Time
	NextAt     time.Time
	LastStatus int    // the receiver's last status, 0 for none (a transport error)
	LastError  string // the last attempt's failure, "" when none
}

// The states of a delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryDead      = "dead"
)

// QueueDeliveries registers the subscribers (a new one starts at the feed's end: it is sent
// what is published from now on) and queues for each the events published after its cursor.
// It returns how many deliveries it queued.
func (s *Store) QueueDeliveries(ctx context.Context, subscribers []string) (int64, error) {
	var queued int64
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	err := s.eventsTx(ctx, func(tx *sqlx.Tx) error {
		var last int64
		if err := tx.QueryRowxContext(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&last); err != nil {
			return err
		}
		for _, name := range subscribers {
			var after int64
			err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT after_seq FROM event_subscribers WHERE name = ?`), name).Scan(&after)
			if errors.Is(err, sql.ErrNoRows) {
				if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO event_subscribers (name, after_seq) VALUES (?, ?)`), name, last); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			if after >= last {
				continue
			}
			n, err := exec(ctx, tx, tx.Rebind(`INSERT INTO event_deliveries (subscriber, event_id, seq, employee_id, state, queued_at, next_at)
SELECT ?, id, seq, employee_id, 'pending', ?, ? FROM events WHERE seq > ? AND seq <= ?`), name, now, now, after, last)
			if err != nil {
				return err
			}
			queued += n
			if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE event_subscribers SET after_seq = ? WHERE name = ?`), last, name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("queue deliveries: %w", err)
	}
	return queued, nil
}

// deliveryCols are a delivery's columns, and its event's, in scanDeliveries' order.
func (s *Store) deliveryCols() string {
	d := s.d
	return `d.subscriber, d.state, d.attempts, ` + d.read(KindTimestamp, "d.queued_at") + `, ` + d.read(KindTimestamp, "d.next_at") +
		`, coalesce(d.last_status, 0), coalesce(d.last_error, ''), coalesce(e.seq, 0), e.id, e.employee_id, e.type, ` +
		d.read(KindTimestamp, "e.effective_at") + `, ` + d.read(KindTimestamp, "e.recorded_at") +
		`, coalesce(e.run_id, ''), e.state, coalesce(e.held_by, ''), e.data`
}

func scanDeliveries(rows *sqlx.Rows) ([]Delivery, error) {
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		var d Delivery
		var queued, next, eff, rec, data string
		e := &d.Event
		if err := rows.Scan(&d.Subscriber, &d.State, &d.Attempts, &queued, &next, &d.LastStatus, &d.LastError,
			&e.Seq, &e.ID, &e.EmployeeID, &e.Type, &eff, &rec, &e.RunID, &e.State, &e.HeldBy, &data); err != nil {
			return nil, err
		}
		d.QueuedAt, d.NextAt = parseTimestamp(queued), parseTimestamp(next)
		e.EffectiveAt, e.RecordedAt = parseTimestamp(eff), parseTimestamp(rec)
		if err := json.Unmarshal([]byte(data), &e.Data); err != nil {
			return nil, fmt.Errorf("event %s: data: %w", e.ID, err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DueDeliveries are up to limit of subscriber's pending deliveries due by now, in feed order,
// none of them behind an earlier pending delivery of the same employee's: what may be sent now,
// side by side, without an employee's events overtaking each other.
func (s *Store) DueDeliveries(ctx context.Context, subscriber string, limit int) ([]Delivery, error) {
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	rows, err := s.db.QueryxContext(ctx, s.db.Rebind(`SELECT `+s.deliveryCols()+`
FROM event_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.subscriber = ? AND d.state = 'pending' AND d.next_at <= ?
  AND NOT EXISTS (SELECT 1 FROM event_deliveries o WHERE o.subscriber = d.subscriber AND o.employee_id = d.employee_id
    AND o.state = 'pending' AND o.seq < d.seq)
ORDER BY d.seq LIMIT ?`), subscriber, now, limit)
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	out, err := scanDeliveries(rows)
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	return out, nil
}

// An Attempt is what one delivery attempt came to.
type Attempt struct {
	Delivered bool
	Status    int    // the receiver's status, 0 for a transport error
	Error     string // why it failed, without the body or the secret
	// NextAt is when to try again, for an attempt that failed; Dead gives up instead.
	NextAt time.Time
	Dead   bool
}

// RecordAttempt records an attempt at delivering event eventID to subscriber: delivered, due
// again at a.NextAt, or dead.
func (s *Store) RecordAttempt(ctx context.Context, subscriber, eventID string, a Attempt) error {
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	state, next, done := DeliveryPending, a.NextAt.UTC().Format(v1.TimestampLayout), any(nil)
	switch {
	case a.Delivered:
		state, next, done = DeliveryDelivered, now, now
	case a.Dead:
		state, next, done = DeliveryDead, now, now
	}
	_, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE event_deliveries SET state = ?, attempts = attempts + 1, next_at = ?,
  last_status = ?, last_error = ?, done_at = ? WHERE subscriber = ? AND event_id = ? AND state = 'pending'`),
		state, next, nullID(int64(a.Status)), nullString(a.Error), done, subscriber, eventID)
	if err != nil {
		return fmt.Errorf("record delivery: %w", busyErr(err))
	}
	return nil
}

// DeliveryFilter selects deliveries (zero fields: any).
type DeliveryFilter struct {
	Subscriber string
	State      string
	EventID    string
	Limit      int // default 100
}

// ListDeliveries are the deliveries the filter selects, the newest queued last.
func (s *Store) ListDeliveries(ctx context.Context, f DeliveryFilter) ([]Delivery, error) {
	conds, args := deliveryConds(f, "d.")
	if conds != "" {
		conds = "WHERE " + conds
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	q := `SELECT * FROM (SELECT ` + s.deliveryCols() + ` FROM event_deliveries d JOIN events e ON e.id = d.event_id ` +
		conds + ` ORDER BY d.seq DESC, d.subscriber LIMIT ?) x ORDER BY 8, 1`
	rows, err := s.db.QueryxContext(ctx, s.db.Rebind(q), append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	out, err := scanDeliveries(rows)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return out, nil
}

// deliveryConds are the filter's conditions on event_deliveries (its columns named with
// prefix: "d." in a join, "" alone), joined by AND, and their arguments; "" for none.
func deliveryConds(f DeliveryFilter, prefix string) (string, []any) {
	var conds []string
	var args []any
	for _, c := range []struct{ col, v string }{{"subscriber", f.Subscriber}, {"state", f.State}, {"event_id", f.EventID}} {
		if c.v != "" {
			conds, args = append(conds, prefix+c.col+" = ?"), append(args, c.v)
		}
	}
	return strings.Join(conds, " AND "), args
}

// ReplayDeliveries queues again, due now, the deliveries the filter selects that are not
// pending (dead ones, or delivered ones a subscriber asks for again: the same ids, which the
// receiver deduplicates by), and returns how many.
func (s *Store) ReplayDeliveries(ctx context.Context, f DeliveryFilter) (int64, error) {
	if f.State == DeliveryPending {
		return 0, nil
	}
	conds, args := deliveryConds(f, "")
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	where := "state <> 'pending'"
	if conds != "" {
		where += " AND " + conds
	}
	res, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE event_deliveries SET state = 'pending', attempts = 0, queued_at = ?,
  next_at = ?, done_at = NULL WHERE `+where), append([]any{now, now}, args...)...)
	if err != nil {
		return 0, fmt.Errorf("replay deliveries: %w", busyErr(err))
	}
	return res.RowsAffected()
}

// DeliveryStats is where one subscriber's deliveries stand.
type DeliveryStats struct {
	Subscriber string
	Pending    int64
	Dead       int64
	// OldestPending is when the oldest pending delivery was queued (zero: none pending): the
	// subscriber's lag.
	OldestPending time.Time
	// NextAt is when the soonest pending delivery that may be sent is due: one behind an earlier
	// pending delivery of its employee's goes with that one (zero: none pending).
	NextAt time.Time
}

// DeliveryStats are every subscriber's.
func (s *Store) DeliveryStats(ctx context.Context) ([]DeliveryStats, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT s.name,
  (SELECT count(*) FROM event_deliveries d WHERE d.subscriber = s.name AND d.state = 'pending'),
  (SELECT count(*) FROM event_deliveries d WHERE d.subscriber = s.name AND d.state = 'dead'),
  coalesce((SELECT `+s.d.read(KindTimestamp, "min(d.queued_at)")+` FROM event_deliveries d WHERE d.subscriber = s.name AND d.state = 'pending'), ''),
  coalesce((SELECT `+s.d.read(KindTimestamp, "min(d.next_at)")+` FROM event_deliveries d WHERE d.subscriber = s.name AND d.state = 'pending'
    AND NOT EXISTS (SELECT 1 FROM event_deliveries o WHERE o.subscriber = d.subscriber AND o.employee_id = d.employee_id
      AND o.state = 'pending' AND o.seq < d.seq)), '')
FROM event_subscribers s ORDER BY s.name`)
	if err != nil {
		return nil, fmt.Errorf("delivery stats: %w", err)
	}
	defer rows.Close()
	var out []DeliveryStats
	for rows.Next() {
		var st DeliveryStats
		var oldest, next string
		if err := rows.Scan(&st.Subscriber, &st.Pending, &st.Dead, &oldest, &next); err != nil {
			return nil, fmt.Errorf("delivery stats: %w", err)
		}
		if oldest != "" {
			st.OldestPending = parseTimestamp(oldest)
		}
		if next != "" {
			st.NextAt = parseTimestamp(next)
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("delivery stats: %w", err)
	}
	return out, nil
}
