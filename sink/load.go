package sink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/source/v1"
)

// Resource names a collection the sync loads.
type Resource string

// The resources.
const (
	Employees       Resource = "employees"
	WorkingPatterns Resource = "working_patterns"
)

// A Load stages the records of one walk of one resource and merges them into the warehouse in
// one transaction, so no reader ever sees half a sync. Records are staged page by page as they
// arrive (Postgres: COPY into a temporary table; SQLite: batched inserts), so memory does not
// grow with the collection. A Load holds one connection until Close.
//
// A Load begun under a lock (with the context TryLock returned) is bound to it: it merges only
// while this process still holds the lock (see Merge), and fails with ErrLockLost otherwise.
type Load struct {
	s        *Store
	conn     *sqlx.Conn
	lock     *heldLock // the lock it was begun under, or nil
	resource Resource
	t        *table   // the collection's declared table
	table    string   // the staging table
	cols     []string // the staging table's columns, seq first
	seq      int64    // records staged, duplicates included
	// distinctAt is seq when Distinct last counted, distinct what it counted: when the two
	// agree with seq, the staged walk has no duplicates and the merge reads it as it is.
	distinctAt, distinct int64
	// scope, for a walk of a window (Within), is the condition on the table's rows that says
	// which of them the walk covered: only those can be found missing. "" covers every row.
	scope string
	// erased is what the erasures in force when the load began say (nil: none, the rule), and
	// erasedMax the last erasure's id then: a merge refuses what was staged before a later one.
	erased    *erasedSet
	erasedMax int64
	// profile counts the staged records' values (the load's profile: LoadProfile).
	profile *stagedProfile
}

// Window is the part of a dated collection a walk covers: the records the source's date
// filter keeps for From..To (dates, inclusive; v1.DateWindow says how it matches).
type Window struct{ From, To time.Time }

// NewWindow is the window from daysBack days before today (the date of now in its location)
// to daysAhead days after it.
func NewWindow(now time.Time, daysBack, daysAhead int) Window {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return Window{From: today.AddDate(0, 0, -daysBack), To: today.AddDate(0, 0, daysAhead)}
}

// String is the window as from..to, YYYY-MM-DD.
func (w Window) String() string {
	return w.From.Format(time.DateOnly) + ".." + w.To.Format(time.DateOnly)
}

// Within says the walks staged from now on cover only the records inside w (the source was
// asked for w's records alone), or, nil, the whole collection again. A record of the warehouse
// outside w is then not missing, only not asked for: DeletionCandidates and Merge consider
// only the rows inside w, as the stored dates place them and as the source's filter matches
// (v1.DateWindow). The collection must be one the source filters by date.
func (l *Load) Within(w *Window) error {
	scope, err := windowScope(l.t, w)
	if err != nil {
		return fmt.Errorf("load %s: %w", l.resource, err)
	}
	l.scope = scope
	return nil
}

// windowScope is the condition on t's rows that keeps those inside w, as the stored dates
// place them and as the source's filter matches (v1.DateWindow); "" for w nil.
func windowScope(t *table, w *Window) (string, error) {
	if w == nil {
		return "", nil
	}
	c := v1.CollectionNamed(t.name)
	if c == nil || c.Window == nil {
		return "", errors.New("the source does not filter it by date")
	}
	if w.To.Before(w.From) {
		return "", fmt.Errorf("window %s ends before it starts", w)
	}
	// The dates are written out, not bound: the scope is a part of statements built once per
	// merge, and a date formatted here is only digits and dashes.
	from, to := "'"+w.From.Format(time.DateOnly)+"'", "'"+w.To.Format(time.DateOnly)+"'"
	start := t.name + "." + c.Window.Start
	switch {
	case c.Window.ByStart:
		return start + " >= " + from + " AND " + start + " <= " + to, nil
	case c.Window.End == "":
		return start + " <= " + to + " AND " + start + " >= " + from, nil
	default:
		end := t.name + "." + c.Window.End
		return start + " <= " + to + " AND (" + end + " IS NULL OR " + end + " >= " + from + ")", nil
	}
}

// MergeOptions says how a Load is merged.
type MergeOptions struct {
	// DryRun computes what the merge would do and writes nothing.
	DryRun bool
	// Complete says the walk was verified complete: only then are records the source no longer
	// lists soft-deleted.
	Complete bool
	// Guards are the load guards' thresholds for the collection (zero fields: DefaultGuards).
	Guards GuardSettings
	// Accept lets through the guards of these keys (Hold.Key) should they trip: the holds a
	// person accepted (hrsync sync --accept) and those a setting accepts for good. A tripped
	// guard accepted is still recorded (Hold.Accepted). AllowMassDelete accepts the shrink guard.
	Accept          []string
	AllowMassDelete bool
	// Unguarded says the load is weighed by no guard: records written one by one (a create's
	// answer: PutEmployee, not Complete, is not even profiled), which the guards, comparing a
	// walk with what is served, would take for a collection emptied.
	Unguarded bool
	// Widened, for a walk of a window that widened to the whole collection (records inside the
	// window were missing), is that window: the shrink guard weighs the deletions inside it
	// against the records served inside it too, like with like, so that a window losing 40 %
	// of its records is held however much history lies outside it.
	Widened *Window
	// RunID is the sync run the load is part of: the events a load of employees derives name
	// it (events_derive.go).
	RunID string
}

// DefaultMaxDeleteShare is the shrink guard's default: a complete walk may soft-delete at most
// this share of the served records (sync.max_delete_share), and at least
// DefaultGuards.MinRecords.
const DefaultMaxDeleteShare = 0.10

// MergeResult counts what a merge did (or, for a dry run, would do). Inserted are records new to
// the served collection (a seeded row the source's own record of its id replaces included),
// Updated served records that changed, Unchanged served records that did not; Deleted are the
// source's records soft-deleted.
type MergeResult struct {
	Inserted, Updated, Unchanged, Deleted int64
	// SeedRetired counts the seeded rows (the default pattern and allowance a new warehouse
	// starts with) that gave way to the source's records: retired, not served, but not the
	// source's deletions, so not counted in Deleted.
	SeedRetired int64
	// Holds are the guards the load tripped (none, the rule); when one of them is not accepted
	// the load was held (Held): nothing of it was written. DeletionsRefused counts the soft
	// deletes a held load would have made.
	Holds            []Hold
	DeletionsRefused int64
	// Profile is the load's profile, which the guards weighed.
	Profile LoadProfile
	// Events is what a published, complete load of employees derived (docs/events.md).
	Events EventsResult
}

// Held reports whether a guard held the load: one tripped that was not accepted.
func (r MergeResult) Held() bool { return Held(r.Holds) }

// Held reports whether holds held a load: one of them was not accepted.
func Held(holds []Hold) bool {
	return slices.ContainsFunc(holds, func(h Hold) bool { return !h.Accepted })
}

// BeginLoad starts staging a walk of one resource.
func (s *Store) BeginLoad(ctx context.Context, r Resource) (*Load, error) {
	t := tableOf(string(r))
	if t == nil {
		return nil, fmt.Errorf("begin load: unknown resource %q", r)
	}
	l := &Load{s: s, resource: r, t: t, table: "stage_" + t.name, cols: []string{"seq"}, profile: newStagedProfile(t)}
	defs := []string{"seq " + s.d.columnType(KindID)}
	for _, c := range t.stagedCols() {
		l.cols = append(l.cols, c.name)
		defs = append(defs, c.name+" "+s.d.columnType(c.kind))
	}
	if err := stopped(ctx); err != nil {
		return nil, fmt.Errorf("begin load %s: %w", r, err)
	}
	if l.lock = s.heldBy(ctx); l.lock != nil {
		// A lock lost before the load begins: stop before walking for nothing.
		if err := l.lock.check(ctx, s.db); err != nil {
			return nil, fmt.Errorf("begin load %s: %w", r, err)
		}
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin load %s: %w", r, err)
	}
	l.conn = conn
	for _, q := range []string{
		`DROP TABLE IF EXISTS ` + l.table,
		`DROP TABLE IF EXISTS ` + l.table + `_latest`,
		`DROP TABLE IF EXISTS ` + l.table + `_seen`,
		`DROP TABLE IF EXISTS ` + l.table + `_delta`,
		`DROP TABLE IF EXISTS ` + l.table + `_gone`,
		`CREATE TEMPORARY TABLE ` + l.table + ` (` + strings.Join(defs, ", ") + `)`,
		`CREATE TEMPORARY TABLE ` + l.table + `_seen (id ` + s.d.columnType(KindID) + ` PRIMARY KEY)`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("begin load %s: %w", r, err)
		}
	}
	// The erasures are read once per load: staging a record then costs a nil check when
	// nothing is erased, a few map lookups when something is (eraseStaged).
	if err := conn.QueryRowxContext(ctx, `SELECT coalesce(max(id), 0) FROM erasures`).Scan(&l.erasedMax); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("begin load %s: %w", r, err)
	}
	if l.erased, err = loadErased(ctx, conn); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("begin load %s: %w", r, err)
	}
	return l, nil
}

// Staged is the number of records staged, duplicates included.
func (l *Load) Staged() int64 { return l.seq }

// AddEmployees stages one page of employees.
func (l *Load) AddEmployees(ctx context.Context, es []v1.Employee) error {
	return addRecords(ctx, l, employeeCollection, es)
}

// AddWorkingPatterns stages one page of working patterns.
func (l *Load) AddWorkingPatterns(ctx context.Context, ps []v1.WorkingPattern) error {
	return addRecords(ctx, l, patternCollection, ps)
}

// AddRecords stages one page of a collection the wire declares (v1.Collections).
func (l *Load) AddRecords(ctx context.Context, rs []v1.Record) error {
	c, ok := wireCollections[l.t.name]
	if !ok {
		return fmt.Errorf("stage %s: not a collection the wire declares", l.resource)
	}
	return addRecords(ctx, l, c, rs)
}

// addRecords stages one page of a collection's records, each numbered by arrival.
func addRecords[T any](ctx context.Context, l *Load, c *collection[T], recs []T) error {
	if l.t != c.table {
		return fmt.Errorf("stage %s: load is for %s", c.name, l.resource)
	}
	rows := make([][]any, len(recs))
	for i := range recs {
		rec := &recs[i]
		if l.erased != nil {
			// What is erased never reaches the staging table: neither the merge nor the
			// history triggers write it again.
			erased, ok, err := eraseStaged(c, l.erased, l.s.opts.Declarations, rec)
			if err != nil {
				return fmt.Errorf("stage %s: %w", c.name, err)
			}
			if ok {
				rec = &erased
			}
		}
		rows[i] = c.stageRow(l.seq+int64(i)+1, rec)
		l.profile.add(rows[i])
	}
	return l.stage(ctx, rows)
}

// stage writes rows in one short transaction.
func (l *Load) stage(ctx context.Context, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if err := stopped(ctx); err != nil {
		return fmt.Errorf("stage %s: %w", l.resource, err)
	}
	tx, err := l.conn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("stage %s: %w", l.resource, busyErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := l.s.d.stage(ctx, tx, l.table, l.cols, rows); err != nil {
		return fmt.Errorf("stage %s: %w", l.resource, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("stage %s: %w", l.resource, busyErr(err))
	}
	l.seq += int64(len(rows))
	return nil
}

// Distinct counts the distinct ids staged.
func (l *Load) Distinct(ctx context.Context) (int64, error) {
	var n int64
	if err := l.conn.QueryRowxContext(ctx, `SELECT count(DISTINCT id) FROM `+l.table).Scan(&n); err != nil {
		return 0, fmt.Errorf("count staged %s: %w", l.resource, err)
	}
	l.distinctAt, l.distinct = l.seq, n
	return n, nil
}

// DeletionCandidates counts the served source records of the resource that the staged walk (and
// every remembered walk) did not see: what a merge of a complete walk would soft-delete. A seeded
// row is none: it was never the source's, and gives way to the source's records without a walk
// to confirm it (see merger.softDelete).
func (l *Load) DeletionCandidates(ctx context.Context) (int64, error) {
	target := string(l.resource)
	// Each served row looks its id up in the staged walk: indexed, not scanned per row.
	if err := l.s.d.indexStaged(ctx, l.conn, l.table); err != nil {
		return 0, fmt.Errorf("count deletion candidates: %w", err)
	}
	var n int64
	err := l.conn.QueryRowxContext(ctx, `SELECT count(*) FROM `+target+` WHERE listed AND deleted_at IS NULL
    AND origin = '`+originSource+`'
    AND NOT EXISTS (SELECT 1 FROM `+l.table+` s WHERE s.id = `+target+`.id)
    AND NOT EXISTS (SELECT 1 FROM `+l.table+`_seen s WHERE s.id = `+target+`.id)`+l.within()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count deletion candidates: %w", err)
	}
	return n, nil
}

// within is the load's scope as a further condition of a WHERE on its table, or "".
func (l *Load) within() string {
	if l.scope == "" {
		return ""
	}
	return "\n    AND " + l.scope
}

// Remember keeps the ids of the staged walk: a record seen by any remembered walk is not
// deleted. Offset pages that shift under a walk can hide a record that still exists; a record
// is deleted only when two walks both miss it.
func (l *Load) Remember(ctx context.Context) error {
	_, err := l.conn.ExecContext(ctx, `INSERT INTO `+l.table+`_seen (id) SELECT DISTINCT id FROM `+l.table+
		` t WHERE NOT EXISTS (SELECT 1 FROM `+l.table+`_seen s WHERE s.id = t.id)`)
	if err != nil {
		return fmt.Errorf("remember walk: %w", err)
	}
	return nil
}

// Reset empties the staging table for another walk.
func (l *Load) Reset(ctx context.Context) error {
	if _, err := l.conn.ExecContext(ctx, `DELETE FROM `+l.table); err != nil {
		return fmt.Errorf("reset staged %s: %w", l.resource, err)
	}
	l.seq = 0
	l.profile.reset()
	return nil
}

// Close drops the staging table and gives the connection back.
func (l *Load) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_, err1 := l.conn.ExecContext(ctx, `DROP TABLE IF EXISTS `+l.table)
	_, err2 := l.conn.ExecContext(ctx, `DROP TABLE IF EXISTS `+l.table+`_latest`)
	_, err3 := l.conn.ExecContext(ctx, `DROP TABLE IF EXISTS `+l.table+`_seen`)
	_, err4 := l.conn.ExecContext(ctx, `DROP TABLE IF EXISTS `+l.table+`_delta`)
	_, err5 := l.conn.ExecContext(ctx, `DROP TABLE IF EXISTS `+l.table+`_gone`)
	return errors.Join(err1, err2, err3, err4, err5, l.conn.Close())
}

// Merge applies the staged walk in one transaction: nested references first, then the records
// (only those that changed are written), then, for a complete walk, soft deletes of records the
// source no longer lists, unless the guard refuses them. A dry run rolls everything back.
//
// A Load begun under a lock first proves, inside the merge transaction, that this process still
// holds the lock (see heldLock.prove), so that two merges under one lock never both commit; if
// it does not, the merge fails with a *LockLostError and writes nothing.
func (l *Load) Merge(ctx context.Context, opts MergeOptions) (MergeResult, error) {
	m := merger{d: l.s.d, stage: l.table, latest: l.table + "_latest", seen: l.table + "_seen", delta: l.table + "_delta",
		unique: l.distinctAt == l.seq && l.distinct == l.seq, scope: l.within(), written: map[string]bool{}, gone: l.table + "_gone", staged: l.profile}
	if err := stopped(ctx); err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, err)
	}
	tx, err := l.conn.BeginTxx(ctx, nil)
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, busyErr(err))
	}
	committed := false
	if l.lock != nil && !opts.DryRun {
		defer func() { l.lock.settle(tx, committed) }() // once tx has ended (deferred first)
	}
	defer func() { _ = tx.Rollback() }()
	if l.lock != nil && !opts.DryRun {
		if err := l.lock.prove(ctx, tx); err != nil {
			return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, err)
		}
	}
	if !opts.DryRun {
		if err := l.checkErasures(ctx, tx); err != nil {
			return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, err)
		}
	}
	res, err := m.merge(ctx, tx, l.t, opts)
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, busyErr(err))
	}
	if opts.DryRun || res.Held() {
		return res, nil // rolled back by the deferred Rollback: a held load writes nothing
	}
	if l.t.name == string(Employees) && opts.Complete {
		if res.Events, err = l.s.deriveEvents(ctx, tx, opts.RunID); err != nil {
			return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, busyErr(err))
		}
	}
	if l.lock != nil {
		if err := l.lock.seal(ctx, tx); err != nil {
			return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: commit: %w", l.resource, busyErr(err))
	}
	committed = true
	l.analyze(ctx, m.written)
	return res, nil
}

// analyze gives the planner statistics of the tables a merge wrote, where the database would
// otherwise leave it without (dialect.analyzeWritten): the plans of serve's reads are made from
// them. What it cannot do is only logged: the merge is committed, and the next one tries again.
func (l *Load) analyze(ctx context.Context, written map[string]bool) {
	if len(written) == 0 {
		return
	}
	// The totals in meta move with the rows (triggers).
	tables := []string{"meta"}
	for t := range written {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	if err := l.s.d.analyzeWritten(ctx, l.conn, tables); err != nil {
		l.s.log.Warn("gather planner statistics after a merge", "resource", string(l.resource), "err", err)
	}
}

// checkErasures fails with ErrErasedDuringLoad when an erasure was made since the load began:
// what it staged was not erased of it. It first waits for, then excludes, the other writers
// (an erase among them), so an erasure either committed before it looks or begins after the
// merge.
func (l *Load) checkErasures(ctx context.Context, tx *sqlx.Tx) error {
	if err := l.s.d.serializeWrites(ctx, tx); err != nil {
		return fmt.Errorf("serialize writes: %w", busyErr(err))
	}
	var last int64
	if err := tx.QueryRowxContext(ctx, `SELECT coalesce(max(id), 0) FROM erasures`).Scan(&last); err != nil {
		return fmt.Errorf("read erasures: %w", err)
	}
	if last != l.erasedMax {
		return ErrErasedDuringLoad
	}
	return nil
}
