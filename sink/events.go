package sink

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/source/v1"
)

// Joiner, mover and leaver events (docs/events.md): what a complete load of employees tells
// the systems that act on people joining, moving and leaving. A published load derives them in
// its own transaction (events_derive.go) into an outbox, the events table; an event is
// published, given its place in the feed (Seq), once it is due and not held. Events that take
// effect at a time still to come (a leaving at local midnight after the last day, a joining on
// the join date) wait pending until PublishDue finds them due: whoever runs it then (the
// worker's schedule, the next load) publishes them, across restarts, because they are rows.

// The event types.
const (
	EventJoinerScheduled   = "joiner.scheduled"
	EventJoinerEffective   = "joiner.effective"
	EventJoinerCancelled   = "joiner.cancelled"
	EventMover             = "mover"
	EventLeaverScheduled   = "leaver.scheduled"
	EventLeaverEffective   = "leaver.effective"
	EventLeaverRescheduled = "leaver.rescheduled"
	EventLeaverCancelled   = "leaver.cancelled"
	EventRehire            = "rehire"
)

// EventTypes are the event types, in the order docs/events.md lists them.
var EventTypes = []string{EventJoinerScheduled, EventJoinerEffective, EventJoinerCancelled, EventMover,
	EventLeaverScheduled, EventLeaverEffective, EventLeaverRescheduled, EventLeaverCancelled, EventRehire}

// An event's state in the outbox.
const (
	EventPending   = "pending"   // derived, not yet due (or due and not yet published)
	EventHeld      = "held"      // held by the mass-leaver brake until someone releases it
	EventPublished = "published" // in the feed, with its Seq
	EventWithdrawn = "withdrawn" // a pending event a later load made untrue (rescheduled, cancelled)
)

// EventSettings are what derives events beyond the records themselves.
type EventSettings struct {
	// Zone is the time zone whose midnights leavings and joinings take effect at (default
	// Europe/London): a leaver's last day ends at its local midnight.
	Zone *time.Location
	// MaxLeavers and MaxLeaverShare are the mass-leaver brake: a load whose leavers number more
	// than the larger of MaxLeavers and MaxLeaverShare of the people present holds its leaver
	// events until released (defaults DefaultMaxLeavers, DefaultMaxLeaverShare).
	MaxLeavers     int
	MaxLeaverShare float64
}

// The mass-leaver brake's defaults: max(5, 5 %).
const (
	DefaultMaxLeavers     = 5
	DefaultMaxLeaverShare = 0.05
)

func (e EventSettings) withDefaults() EventSettings {
	if e.Zone == nil {
		e.Zone = defaultEventZone()
	}
	if e.MaxLeavers <= 0 {
		e.MaxLeavers = DefaultMaxLeavers
	}
	if e.MaxLeaverShare <= 0 {
		e.MaxLeaverShare = DefaultMaxLeaverShare
	}
	return e
}

// defaultEventZone is Europe/London, from the system's zone data or the copy the binary embeds
// (cmd/hrsync imports time/tzdata).
func defaultEventZone() *time.Location {
	if z, err := time.LoadLocation("Europe/London"); err == nil {
		return z
	}
	return time.UTC
}

// brakeLimit is the most leavers one load may emit before the brake holds them, out of present
// people present.
func (e EventSettings) brakeLimit(present int) int {
	e = e.withDefaults()
	return max(e.MaxLeavers, int(e.MaxLeaverShare*float64(present)))
}

// An Event is one row of the outbox.
type Event struct {
	// Seq is the event's place in the feed, from 1; 0 until published.
	Seq        int64
	ID         string
	EmployeeID int64
	Type       string
	// EffectiveAt is when it takes effect (UTC); RecordedAt when a load derived it.
	EffectiveAt, RecordedAt time.Time
	// RunID is the sync run whose load derived it.
	RunID  string
	State  string
	HeldBy string // the run whose load the brake held, while held
	Data   EventData
}

// EventData is what an event says beyond its type: the members that changed, each before and
// after, and the dates it is about.
type EventData struct {
	Changes []EventChange `json:"changes,omitempty"`
	// JoinDate and LeavingDate are the person's dates as the load found them (YYYY-MM-DD).
	JoinDate    string `json:"join_date,omitempty"`
	LeavingDate string `json:"leaving_date,omitempty"`
	// Reason says what made a leaver or a cancelled joiner: "leaving_date" (a date, now passed),
	// "status" (the source lists them as a leaver), "unlisted" (the source no longer lists
	// them, confirmed by a second walk).
	Reason string `json:"reason,omitempty"`
}

// An EventChange is one member that changed: its name as the employee record has it, and its
// value before and after (null, a string, or {"id": n} for a reference).
type EventChange = v1.EventChange

// eventSeq orders the ids this process makes within one millisecond.
var eventSeq atomic.Uint64

// newEventID is a new event id: "evt_", the time in milliseconds and a counter (so that the
// ids of one load sort in the order it derived them), and random bytes.
func newEventID(now time.Time) string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("evt_%012x%06x%s", now.UnixMilli(), eventSeq.Add(1)&0xffffff, hex.EncodeToString(r[:]))
}

// ErrNoHeldEvents is ReleaseEvents' answer when the run holds no events.
var ErrNoHeldEvents = errors.New("no events are held")

// eventCols are the outbox's columns as Events reads them.
func (s *Store) eventCols() string {
	d := s.d
	return `coalesce(seq, 0), id, employee_id, type, ` + d.read(KindTimestamp, "effective_at") + `, ` +
		d.read(KindTimestamp, "recorded_at") + `, coalesce(run_id, ''), state, coalesce(held_by, ''), data`
}

func scanEvents(rows *sqlx.Rows) ([]Event, error) {
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var eff, rec, data string
		if err := rows.Scan(&e.Seq, &e.ID, &e.EmployeeID, &e.Type, &eff, &rec, &e.RunID, &e.State, &e.HeldBy, &data); err != nil {
			return nil, err
		}
		e.EffectiveAt, e.RecordedAt = parseTimestamp(eff), parseTimestamp(rec)
		if err := json.Unmarshal([]byte(data), &e.Data); err != nil {
			return nil, fmt.Errorf("event %s: data: %w", e.ID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Events are up to limit published events after the feed position after, in feed order.
func (s *Store) Events(ctx context.Context, after int64, limit int) ([]Event, error) {
	rows, err := s.db.QueryxContext(ctx, s.db.Rebind(`SELECT `+s.eventCols()+` FROM events
WHERE seq > ? ORDER BY seq LIMIT ?`), after, limit)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	out, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// FeedEvents are Events as the feed and the webhooks carry them (source/server).
func (s *Store) FeedEvents(ctx context.Context, after int64, limit int) ([]v1.Event, error) {
	es, err := s.Events(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]v1.Event, len(es))
	for i, e := range es {
		out[i] = e.Wire()
	}
	return out, nil
}

// Wire is the event as the feed and the webhooks carry it.
func (e Event) Wire() v1.Event {
	return v1.Event{ID: e.ID, Seq: e.Seq, Type: e.Type, EmployeeID: e.EmployeeID,
		EffectiveAt: e.EffectiveAt.UTC().Format(v1.TimestampLayout), RunID: e.RunID, Changes: e.Data.Changes,
		JoinDate: e.Data.JoinDate, LeavingDate: e.Data.LeavingDate, Reason: e.Data.Reason}
}

// EventFilter selects the outbox's events for ListEvents (zero fields: any).
type EventFilter struct {
	State      string
	Type       string
	EmployeeID int64
	RunID      string
	ID         string
	Limit      int // default 100
}

// ListEvents are the outbox's events the filter selects, every state, newest derived last.
func (s *Store) ListEvents(ctx context.Context, f EventFilter) ([]Event, error) {
	var conds []string
	var args []any
	if f.State != "" {
		conds, args = append(conds, "state = ?"), append(args, f.State)
	}
	if f.Type != "" {
		conds, args = append(conds, "type = ?"), append(args, f.Type)
	}
	if f.EmployeeID != 0 {
		conds, args = append(conds, "employee_id = ?"), append(args, f.EmployeeID)
	}
	if f.RunID != "" {
		conds, args = append(conds, "(run_id = ? OR held_by = ?)"), append(args, f.RunID, f.RunID)
	}
	if f.ID != "" {
		conds, args = append(conds, "id = ?"), append(args, f.ID)
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	where := ""
	if len(conds) > 0 {
		where = "WHERE " + strings.Join(conds, " AND ")
	}
	// The newest limit, shown oldest first.
	q := `SELECT * FROM (SELECT ` + s.eventCols() + ` FROM events ` + where + ` ORDER BY id DESC LIMIT ?) e ORDER BY 2`
	rows, err := s.db.QueryxContext(ctx, s.db.Rebind(q), append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}

// HeldEvents counts the events the mass-leaver brake holds, and the runs holding them.
func (s *Store) HeldEvents(ctx context.Context) (n int64, runs []string, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT held_by, count(*) FROM events WHERE state = 'held' GROUP BY held_by ORDER BY held_by`)
	if err != nil {
		return 0, nil, fmt.Errorf("held events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var run string
		var c int64
		if err := rows.Scan(&run, &c); err != nil {
			return 0, nil, fmt.Errorf("held events: %w", err)
		}
		n += c
		runs = append(runs, run)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("held events: %w", err)
	}
	return n, runs, nil
}

// ReleaseEvents lets the events the brake held for run go (every held event when run is ""):
// they are pending again, and those due are published at once. It returns how many it released
// (ErrNoHeldEvents when none).
func (s *Store) ReleaseEvents(ctx context.Context, run string) (released int64, published int64, err error) {
	err = s.eventsTx(ctx, func(tx *sqlx.Tx) error {
		q, args := `UPDATE events SET state = 'pending', held_by = NULL WHERE state = 'held'`, []any{}
		if run != "" {
			q, args = q+` AND held_by = ?`, append(args, run)
		}
		n, err := exec(ctx, tx, tx.Rebind(q), args...)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNoHeldEvents
		}
		released = n
		published, err = s.publishDue(ctx, tx)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("release events: %w", err)
	}
	return released, published, nil
}

// PublishDue publishes the pending events whose time has come, in the order they take effect,
// and returns how many.
func (s *Store) PublishDue(ctx context.Context) (int64, error) {
	// Most minutes nothing has come due: a read (on the partial index events_due) says so
	// without waiting for the writers' lock, and without holding it against a load.
	var due bool
	if err := s.db.QueryRowContext(ctx, s.db.Rebind(`SELECT EXISTS (SELECT 1 FROM events WHERE state = 'pending' AND effective_at <= ?)`),
		s.opts.Now().UTC().Format(v1.TimestampLayout)).Scan(&due); err != nil {
		return 0, fmt.Errorf("publish events: %w", err)
	}
	if !due {
		return 0, nil
	}
	var n int64
	err := s.eventsTx(ctx, func(tx *sqlx.Tx) (err error) {
		n, err = s.publishDue(ctx, tx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("publish events: %w", err)
	}
	return n, nil
}

// eventsTx runs f in a write transaction that waits for, then excludes, the other writers.
func (s *Store) eventsTx(ctx context.Context, f func(tx *sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return busyErr(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := s.d.serializeWrites(ctx, tx); err != nil {
		return busyErr(err)
	}
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return busyErr(err)
	}
	return nil
}

// publishDue gives the pending events due by now their places in the feed: by when they take
// effect, then in the order they were derived (their ids).
func (s *Store) publishDue(ctx context.Context, tx *sqlx.Tx) (int64, error) {
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	var ids []string
	if err := tx.SelectContext(ctx, &ids, tx.Rebind(`SELECT id FROM events WHERE state = 'pending' AND effective_at <= ?
ORDER BY effective_at, id`), now); err != nil {
		return 0, fmt.Errorf("due events: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	var last int64
	if err := tx.QueryRowxContext(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&last); err != nil {
		return 0, fmt.Errorf("last event: %w", err)
	}
	q := tx.Rebind(`UPDATE events SET state = 'published', seq = ? WHERE id = ?`)
	for i, id := range ids {
		if _, err := tx.ExecContext(ctx, q, last+int64(i)+1, id); err != nil {
			return 0, fmt.Errorf("publish event: %w", err)
		}
	}
	return int64(len(ids)), nil
}
