package sink

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/source/v1"
)

// What a load of employees tells as events, derived in its transaction (Load.Merge) from each
// person as the last events told them (event_state) and as the load leaves them (employees).
// Only a published load derives: a dry run, a held load and a rolled-back one write nothing,
// these rows included; an incomplete walk (the collection changed under it) derives nothing
// either, and the next complete load tells what it changed, against the same event_state. A
// person the source stops listing is gone only once a second walk confirmed it (the merge's
// soft delete), so paging drift makes no leaver.

// person is one employee as events see them.
type person struct {
	present                        bool // listed by the source, not deleted
	status, joinDate, leavingDate  string
	department, division, location int64 // 0: none
	lineManager, workingPattern    int64
	jobTitle                       string
	leftAt                         string // event_state: when their leaving took (or takes) effect, UTC; "" none
}

// tracked are the members a mover event tells, as the employee record names them, and how
// each is read from a person.
var tracked = []struct {
	member string
	ref    func(p person) int64
	text   func(p person) string
}{
	{"department", func(p person) int64 { return p.department }, nil},
	{"division", func(p person) int64 { return p.division }, nil},
	{"location", func(p person) int64 { return p.location }, nil},
	{"line_manager", func(p person) int64 { return p.lineManager }, nil},
	{"job_title", nil, func(p person) string { return p.jobTitle }},
	{"working_pattern", func(p person) int64 { return p.workingPattern }, nil},
}

// personCols are the columns of employees read into a person, in scanPerson's order.
func personCols(d dialect) string {
	return `CASE WHEN listed AND deleted_at IS NULL THEN 1 ELSE 0 END, coalesce(status, ''),
  coalesce(` + d.read(KindDate, "company_join_date") + `, ''), coalesce(` + d.read(KindDate, "leaving_date") + `, ''),
  coalesce(department_id, 0), coalesce(division_id, 0), coalesce(location_id, 0), coalesce(line_manager_id, 0),
  coalesce(working_pattern_id, 0), coalesce(job_title, '')`
}

type scanner interface{ Scan(dest ...any) error }

func scanPerson(r scanner, id *int64, p *person, extra ...any) error {
	var present int
	dest := append([]any{id, &present, &p.status, &p.joinDate, &p.leavingDate, &p.department, &p.division,
		&p.location, &p.lineManager, &p.workingPattern, &p.jobTitle}, extra...)
	if err := r.Scan(dest...); err != nil {
		return err
	}
	p.present = present == 1
	return nil
}

// eventLoad derives the events of one load.
type eventLoad struct {
	s      *Store
	tx     *sqlx.Tx
	set    EventSettings
	now    time.Time
	stamp  string // now, as stored
	runID  string
	events []pendingEvent
	// withdraw are the pending events to withdraw: employee id and type.
	withdraw []withdrawal
}

type pendingEvent struct {
	employee int64
	typ      string
	at       time.Time
	data     EventData
}

type withdrawal struct {
	employee int64
	typ      string
}

// EventsResult is what a load derived.
type EventsResult struct {
	// Baseline says the load took the first state and derived nothing.
	Baseline bool
	// Derived counts the events derived; Held those of them the brake holds (the leavers'),
	// Published those published at once.
	Derived, Held, Published int64
	// Leavers counts the people the load made leavers of, Limit the brake's limit for it.
	Leavers, Limit int
}

// deriveEvents derives the events of a published load of employees in its transaction tx.
func (s *Store) deriveEvents(ctx context.Context, tx *sqlx.Tx, runID string) (EventsResult, error) {
	now := s.opts.Now().UTC()
	el := &eventLoad{s: s, tx: tx, set: s.opts.Events.withDefaults(), now: now, stamp: now.Format(v1.TimestampLayout), runID: runID}
	var baseline int
	if err := tx.QueryRowxContext(ctx, `SELECT count(*) FROM event_baseline`).Scan(&baseline); err != nil {
		return EventsResult{}, fmt.Errorf("events: %w", err)
	}
	cur, err := el.current(ctx)
	if err != nil {
		return EventsResult{}, err
	}
	if baseline == 0 {
		return EventsResult{Baseline: true}, el.takeBaseline(ctx, cur)
	}
	prev, err := el.state(ctx)
	if err != nil {
		return EventsResult{}, err
	}
	ids := make([]int64, 0, len(cur))
	for id := range cur {
		ids = append(ids, id)
	}
	for id := range prev {
		if _, ok := cur[id]; !ok {
			ids = append(ids, id) // a row gone from employees altogether: not present
		}
	}
	slices.Sort(ids)
	var changed []int64
	present := 0 // the people present before the load: what the brake's share is of
	for _, p := range prev {
		if p.present && p.leftAt == "" {
			present++
		}
	}
	leavers := map[int64]bool{}
	for _, id := range ids {
		c, p := cur[id], prev[id]
		next, ok := el.person(id, p, c)
		if !ok {
			continue
		}
		cur[id] = next
		changed = append(changed, id)
	}
	for _, e := range el.events {
		if e.typ == EventLeaverScheduled || e.typ == EventLeaverEffective {
			leavers[e.employee] = true
		}
	}
	res := EventsResult{Derived: int64(len(el.events)), Leavers: len(leavers), Limit: el.set.brakeLimit(present)}
	held := len(leavers) > res.Limit
	if err := el.write(ctx, held); err != nil {
		return res, err
	}
	if held {
		for _, e := range el.events {
			if isLeaverEvent(e.typ) {
				res.Held++
			}
		}
	}
	if err := el.saveState(ctx, changed, cur, prev); err != nil {
		return res, err
	}
	if res.Published, err = s.publishDue(ctx, tx); err != nil {
		return res, fmt.Errorf("events: %w", err)
	}
	return res, nil
}

func isLeaverEvent(typ string) bool {
	switch typ {
	case EventLeaverScheduled, EventLeaverEffective, EventLeaverRescheduled:
		return true
	}
	return false
}

// current reads every employee row as events see them.
func (el *eventLoad) current(ctx context.Context) (map[int64]person, error) {
	rows, err := el.tx.QueryContext(ctx, `SELECT id, `+personCols(el.s.d)+` FROM employees`)
	if err != nil {
		return nil, fmt.Errorf("events: read employees: %w", err)
	}
	defer rows.Close()
	out := map[int64]person{}
	for rows.Next() {
		var id int64
		var p person
		if err := scanPerson(rows, &id, &p); err != nil {
			return nil, fmt.Errorf("events: read employees: %w", err)
		}
		out[id] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: read employees: %w", err)
	}
	return out, nil
}

// stateCols are event_state's columns in scanPerson's order, and left_at.
func stateCols(d dialect) string {
	return `employee_id, CASE WHEN present THEN 1 ELSE 0 END, coalesce(status, ''),
  coalesce(` + d.read(KindDate, "join_date") + `, ''), coalesce(` + d.read(KindDate, "leaving_date") + `, ''),
  coalesce(department_id, 0), coalesce(division_id, 0), coalesce(location_id, 0), coalesce(line_manager_id, 0),
  coalesce(working_pattern_id, 0), coalesce(job_title, ''), coalesce(` + d.read(KindTimestamp, "left_at") + `, '')`
}

// state reads event_state.
func (el *eventLoad) state(ctx context.Context) (map[int64]*person, error) {
	rows, err := el.tx.QueryContext(ctx, `SELECT `+stateCols(el.s.d)+` FROM event_state`)
	if err != nil {
		return nil, fmt.Errorf("events: read state: %w", err)
	}
	defer rows.Close()
	out := map[int64]*person{}
	for rows.Next() {
		var id int64
		p := &person{}
		if err := scanPerson(rows, &id, p, &p.leftAt); err != nil {
			return nil, fmt.Errorf("events: read state: %w", err)
		}
		out[id] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: read state: %w", err)
	}
	return out, nil
}

// takeBaseline records everyone present as they are, leavers as left, and derives nothing.
func (el *eventLoad) takeBaseline(ctx context.Context, cur map[int64]person) error {
	ids := make([]int64, 0, len(cur))
	for id, p := range cur {
		if p.present {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		p := cur[id]
		if el.leaving(p) {
			p.leftAt = el.stamp
		}
		if err := el.putState(ctx, id, p); err != nil {
			return err
		}
	}
	if _, err := el.tx.ExecContext(ctx, el.tx.Rebind(`INSERT INTO event_baseline (id, taken_at, run_id) VALUES (1, ?, ?)`),
		el.stamp, nullString(el.runID)); err != nil {
		return fmt.Errorf("events: baseline: %w", err)
	}
	return nil
}

// leaving is true of a person the source lists as a leaver, or whose leaving has taken effect.
func (el *eventLoad) leaving(p person) bool {
	if p.status == statusLeaver {
		return true
	}
	return p.leavingDate != "" && !el.leaveAt(p.leavingDate).After(el.now)
}

// leaveAt is when a leaving on last day date takes effect: the local midnight that ends it.
func (el *eventLoad) leaveAt(date string) time.Time {
	d, err := time.ParseInLocation(time.DateOnly, date, el.set.Zone)
	if err != nil {
		return el.now
	}
	return time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, el.set.Zone).UTC()
}

// joinAt is when a joining on date takes effect: the local midnight that begins it.
func (el *eventLoad) joinAt(date string) time.Time {
	d, err := time.ParseInLocation(time.DateOnly, date, el.set.Zone)
	if err != nil {
		return el.now
	}
	return d.UTC()
}

func (el *eventLoad) emit(id int64, typ string, at time.Time, data EventData) {
	if at.Before(el.now) {
		at = el.now
	}
	el.events = append(el.events, pendingEvent{employee: id, typ: typ, at: at, data: data})
}

func (el *eventLoad) withdrawPending(id int64, typ string) {
	el.withdraw = append(el.withdraw, withdrawal{id, typ})
}

// person derives the events of one person, prev as events last told them (nil: never), c as
// the load leaves them, and returns their next state (ok false: unchanged, nothing to store).
func (el *eventLoad) person(id int64, prev *person, c person) (person, bool) {
	if prev == nil {
		if !c.present {
			return c, false
		}
		if el.leaving(c) {
			c.leftAt = el.stamp // first seen as a leaver: no joiner, no leaver
			return c, true
		}
		el.joiner(id, c, nil)
		return el.scheduleLeaving(id, c, ""), true
	}
	p := *prev
	c.leftAt = p.leftAt
	left := p.leftAt != "" && p.leftAt <= el.stamp // their leaving has taken effect
	switch {
	case left && c.present && !el.leaving(c):
		el.emit(id, EventRehire, el.now, EventData{JoinDate: c.joinDate})
		c.leftAt = ""
	case left:
		// Gone, or still a leaver: nothing more to tell.
	case !c.present && p.present:
		if p.joinDate != "" && el.joinAt(p.joinDate).After(el.now) {
			el.withdrawPending(id, EventJoinerEffective)
			el.withdrawPending(id, EventLeaverEffective)
			el.emit(id, EventJoinerCancelled, el.now, EventData{JoinDate: p.joinDate, Reason: LeftOnUnlisted})
			c.leftAt = el.stamp
			break
		}
		el.withdrawPending(id, EventLeaverEffective)
		el.emit(id, EventLeaverEffective, el.now, EventData{LeavingDate: c.leavingDate, Reason: LeftOnUnlisted})
		c.leftAt = el.stamp
	case !c.present:
		// Not there before either.
	default:
		el.joinDateChange(id, p, c)
		el.leavingChange(id, p, &c)
		if c.leftAt == "" || c.leftAt > el.stamp {
			el.mover(id, p, c)
		}
	}
	if p == c {
		return c, false
	}
	return c, true
}

// joiner tells of a person new to the feed: scheduled (and effective at the join date's
// midnight) when their join date is still to come, effective now otherwise.
func (el *eventLoad) joiner(id int64, c person, before *string) {
	data := EventData{JoinDate: c.joinDate}
	if before != nil {
		data.Changes = []EventChange{{Member: "join_date", Before: jsonText(*before), After: jsonText(c.joinDate)}}
	}
	if c.joinDate != "" && el.joinAt(c.joinDate).After(el.now) {
		el.emit(id, EventJoinerScheduled, el.now, data)
		el.emit(id, EventJoinerEffective, el.joinAt(c.joinDate), EventData{JoinDate: c.joinDate})
		return
	}
	el.emit(id, EventJoinerEffective, el.now, data)
}

// joinDateChange tells of a join date moved while the joining is still to come.
func (el *eventLoad) joinDateChange(id int64, p, c person) {
	if p.joinDate == c.joinDate || p.joinDate == "" || !el.joinAt(p.joinDate).After(el.now) {
		return
	}
	el.withdrawPending(id, EventJoinerEffective)
	before := p.joinDate
	el.joiner(id, c, &before)
}

// scheduleLeaving tells of a leaving date new to a present person: scheduled, and effective at
// the midnight after it; effective now when that has passed (or the source lists them as a
// leaver). It sets c.leftAt.
func (el *eventLoad) scheduleLeaving(id int64, c person, reason string) person {
	switch {
	case c.leavingDate != "" && el.leaveAt(c.leavingDate).After(el.now):
		at := el.leaveAt(c.leavingDate)
		el.emit(id, EventLeaverScheduled, el.now, EventData{LeavingDate: c.leavingDate, Reason: LeftOnLeavingDate})
		el.emit(id, EventLeaverEffective, at, EventData{LeavingDate: c.leavingDate, Reason: LeftOnLeavingDate})
		c.leftAt = at.Format(v1.TimestampLayout)
	case c.leavingDate != "":
		el.emit(id, EventLeaverEffective, el.now, EventData{LeavingDate: c.leavingDate, Reason: LeftOnLeavingDate})
		c.leftAt = el.stamp
	case reason != "":
		el.emit(id, EventLeaverEffective, el.now, EventData{Reason: reason})
		c.leftAt = el.stamp
	}
	return c
}

// leavingChange tells what changed of a present person's leaving: a date new, moved or taken
// back, or the source listing them as a leaver.
func (el *eventLoad) leavingChange(id int64, p person, c *person) {
	pending := p.leftAt != "" && p.leftAt > el.stamp
	switch {
	case p.leavingDate == c.leavingDate && p.status != statusLeaver && c.status == statusLeaver && !pending:
		*c = el.scheduleLeaving(id, *c, LeftOnStatus)
	case p.leavingDate == c.leavingDate:
	case p.leavingDate == "" && !pending:
		*c = el.scheduleLeaving(id, *c, "")
	case c.leavingDate == "":
		if pending {
			el.withdrawPending(id, EventLeaverEffective)
			el.emit(id, EventLeaverCancelled, el.now, EventData{Changes: []EventChange{{Member: "leaving_date",
				Before: jsonText(p.leavingDate), After: jsonText("")}}})
			c.leftAt = ""
		}
		if c.status == statusLeaver {
			*c = el.scheduleLeaving(id, *c, LeftOnStatus)
		}
	default: // moved
		if pending {
			el.withdrawPending(id, EventLeaverEffective)
		}
		el.emit(id, EventLeaverRescheduled, el.now, EventData{LeavingDate: c.leavingDate,
			Changes: []EventChange{{Member: "leaving_date", Before: jsonText(p.leavingDate), After: jsonText(c.leavingDate)}}})
		at := el.leaveAt(c.leavingDate)
		el.emit(id, EventLeaverEffective, at, EventData{LeavingDate: c.leavingDate, Reason: LeftOnLeavingDate})
		if at.Before(el.now) {
			at = el.now
		}
		c.leftAt = at.Format(v1.TimestampLayout)
	}
}

// mover tells of the tracked members that changed, in one event.
func (el *eventLoad) mover(id int64, p, c person) {
	var changes []EventChange
	for _, t := range tracked {
		if t.ref != nil {
			if b, a := t.ref(p), t.ref(c); b != a {
				changes = append(changes, EventChange{Member: t.member, Before: jsonRef(b), After: jsonRef(a)})
			}
			continue
		}
		if b, a := t.text(p), t.text(c); b != a {
			changes = append(changes, EventChange{Member: t.member, Before: jsonText(b), After: jsonText(a)})
		}
	}
	if len(changes) > 0 {
		el.emit(id, EventMover, el.now, EventData{Changes: changes})
	}
}

func jsonText(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(s)
	return b
}

func jsonRef(id int64) json.RawMessage {
	if id == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(`{"id":` + strconv.FormatInt(id, 10) + `}`)
}

// write withdraws what the load made untrue and inserts what it derived, the leavers' held
// when held.
func (el *eventLoad) write(ctx context.Context, held bool) error {
	tx := el.tx
	wq := tx.Rebind(`UPDATE events SET state = 'withdrawn', held_by = NULL WHERE employee_id = ? AND type = ? AND state IN ('pending', 'held')`)
	for _, w := range el.withdraw {
		if _, err := tx.ExecContext(ctx, wq, w.employee, w.typ); err != nil {
			return fmt.Errorf("events: withdraw: %w", err)
		}
	}
	iq := tx.Rebind(`INSERT INTO events (id, employee_id, type, effective_at, recorded_at, run_id, state, held_by, data)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	for _, e := range el.events {
		data, err := json.Marshal(e.data)
		if err != nil {
			return fmt.Errorf("events: %w", err)
		}
		state, heldBy := EventPending, any(nil)
		if held && isLeaverEvent(e.typ) {
			state, heldBy = EventHeld, nullString(el.runID)
			if heldBy == nil {
				heldBy = "unnamed run"
			}
		}
		if _, err := tx.ExecContext(ctx, iq, newEventID(el.now), e.employee, e.typ, e.at.UTC().Format(v1.TimestampLayout),
			el.stamp, nullString(el.runID), state, heldBy, string(data)); err != nil {
			return fmt.Errorf("events: insert: %w", err)
		}
	}
	return nil
}

// saveState stores the next state of the people whose state changed.
func (el *eventLoad) saveState(ctx context.Context, ids []int64, next map[int64]person, prev map[int64]*person) error {
	for _, id := range ids {
		if prev[id] != nil {
			if _, err := el.tx.ExecContext(ctx, el.tx.Rebind(`DELETE FROM event_state WHERE employee_id = ?`), id); err != nil {
				return fmt.Errorf("events: state: %w", err)
			}
		}
		if err := el.putState(ctx, id, next[id]); err != nil {
			return err
		}
	}
	return nil
}

func (el *eventLoad) putState(ctx context.Context, id int64, p person) error {
	_, err := el.tx.ExecContext(ctx, el.tx.Rebind(`INSERT INTO event_state (employee_id, present, status, join_date,
  leaving_date, department_id, division_id, location_id, line_manager_id, job_title, working_pattern_id, left_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), id, p.present, nullString(p.status), nullString(p.joinDate),
		nullString(p.leavingDate), nullID(p.department), nullID(p.division), nullID(p.location), nullID(p.lineManager),
		nullString(p.jobTitle), nullID(p.workingPattern), nullString(p.leftAt))
	if err != nil {
		return fmt.Errorf("events: state: %w", err)
	}
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// resnapshotState takes the event_state of employee id again from their row, keeping when
// their leaving took effect; it returns 1 when they had one, 0 otherwise (nothing is made).
func resnapshotState(ctx context.Context, tx *sqlx.Tx, d dialect, id int64) (int64, error) {
	var leftAt string
	err := tx.QueryRowxContext(ctx, tx.Rebind(`SELECT coalesce(`+d.read(KindTimestamp, "left_at")+`, '') FROM event_state WHERE employee_id = ?`), id).Scan(&leftAt)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var got int64
	var p person
	if err := scanPerson(tx.QueryRowxContext(ctx, tx.Rebind(`SELECT id, `+personCols(d)+` FROM employees WHERE id = ?`), id), &got, &p); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	p.leftAt = leftAt
	if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM event_state WHERE employee_id = ?`), id); err != nil {
		return 0, err
	}
	el := &eventLoad{tx: tx}
	return 1, el.putState(ctx, id, p)
}
