package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/source/v1"
)

// Run is one row of the sync_runs ledger: one resource of one sync.
type Run struct {
	ID               int64
	RunID            string // shared by the resources of one sync
	Resource         Resource
	StartedAt        time.Time
	FinishedAt       time.Time
	Status           string // running, ok, failed, inconsistent, held, abandoned (see AbandonedError), unavailable
	Pages            int64
	Requests         int64
	Retries          int64
	RateLimited      int64
	Walks            int64
	TotalReported    int64 // -1: the source named none
	RecordsSeen      int64
	DistinctRecords  int64
	Inserted         int64
	Updated          int64
	Unchanged        int64
	Deleted          int64
	DeletionsRefused int64
	Error            string
	// Window is the part of the collection the run walked (Load.Within), or nil for the whole.
	Window *Window
	// Account is the account the run synced (Options.Account); "" for runs recorded before the
	// ledger named accounts.
	Account string
	// Holds are the guards the run's load tripped (MergeResult.Holds): held, or accepted. A
	// person's acceptance says who (AcceptedBy) and why (AcceptReason).
	Holds                    []Hold
	AcceptedBy, AcceptReason string
	// Profile is the run's load's profile (MergeResult.Profile); nil when it merged nothing.
	Profile *LoadProfile
}

// Run statuses.
const (
	RunRunning      = "running"
	RunOK           = "ok"
	RunFailed       = "failed"
	RunInconsistent = "inconsistent"
	// RunHeld: a load guard held the load (Run.Holds): nothing of it was written.
	RunHeld = "held"
	// RunGuarded is the status of runs recorded before load guards (migration 0031), whose
	// deletions the deletion guard refused while the rest of the load was written.
	RunGuarded = "guarded"
	// RunAbandoned: the process running it stopped before it finished (killed, its machine
	// lost); closed by the next process that held the sync lock (see CloseAbandonedRuns).
	RunAbandoned = "abandoned"
	// RunUnavailable: the account does not offer the collection (the source answered its
	// first page 403 or 404, as it does for a module the account lacks); nothing was written.
	RunUnavailable = "unavailable"
)

// SyncLock is the lock every sync holds while it runs (one sync of a warehouse at a time): the
// ledger trusts that a run still "running" while another process holds it is dead.
const SyncLock = "sync"

// AbandonedError is the error a ledger row gets when its run was found abandoned: still
// "running" although no process is running it (killed mid-way). Its status becomes abandoned
// and its finished_at the time this was noticed.
const AbandonedError = "abandoned: the process running it stopped before it finished; closed when another process next held the sync lock"

// StartRun records that a run of one resource began and returns its ledger id. Under the sync
// lock (ctx from TryLock(ctx, SyncLock)), it first closes the rows of other runs still marked
// running: no other sync can be running while this one holds the lock (see CloseAbandonedRuns).
func (s *Store) StartRun(ctx context.Context, runID string, r Resource, started time.Time) (int64, error) {
	if err := stopped(ctx); err != nil {
		return 0, fmt.Errorf("start run: %w", err)
	}
	if h := s.heldBy(ctx); h != nil && h.name == SyncLock {
		if _, err := s.closeAbandoned(ctx, h, runID); err != nil {
			return 0, fmt.Errorf("start run: %w", err)
		}
	}
	var id int64
	err := s.db.QueryRowxContext(ctx, s.db.Rebind(`INSERT INTO sync_runs (run_id, resource, started_at, status, account)
VALUES (?, ?, ?, 'running', ?) RETURNING id`), runID, string(r), started.UTC().Format(v1.TimestampLayout), s.opts.Account).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("start run: %w", err)
	}
	return id, nil
}

// CloseAbandonedRuns closes the ledger rows of runs a killed process left "running": status
// abandoned, finished_at now (when it was noticed), error AbandonedError. It needs proof that none
// of them is running, which only the sync lock gives: with ctx carrying it (from TryLock) it
// closes every running row; otherwise it takes the lock for the moment, and when another process
// holds it (a sync may be running right now) it closes nothing and returns 0. It returns how
// many rows it closed.
func (s *Store) CloseAbandonedRuns(ctx context.Context) (int64, error) {
	if h := s.heldBy(ctx); h != nil && h.name == SyncLock {
		return s.closeAbandoned(ctx, h, "")
	}
	held, release, ok, err := s.TryLock(ctx, SyncLock)
	if err != nil || !ok {
		return 0, err
	}
	defer release()
	return s.closeAbandoned(held, s.heldBy(held), "")
}

// closeAbandoned closes the running rows of runs other than runID, in a transaction that first
// proves this process still holds the sync lock h (a holder that lost it must not close the
// new holder's run).
func (s *Store) closeAbandoned(ctx context.Context, h *heldLock, runID string) (int64, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("close abandoned runs: %w", busyErr(err))
	}
	committed := false
	defer func() { h.settle(tx, committed) }() // once tx has ended (deferred first)
	defer func() { _ = tx.Rollback() }()
	if err := h.prove(ctx, tx); err != nil {
		return 0, fmt.Errorf("close abandoned runs: %w", err)
	}
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE sync_runs SET status = ?, finished_at = ?, error = ?
WHERE status = 'running' AND run_id <> ?`), RunAbandoned, now, AbandonedError, runID)
	if err != nil {
		return 0, fmt.Errorf("close abandoned runs: %w", busyErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("close abandoned runs: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("close abandoned runs: %w", busyErr(err))
	}
	committed = true
	if n > 0 {
		s.log.Warn("closed abandoned sync runs: their process stopped before they finished", "runs", n)
	}
	return n, nil
}

// FinishRun records how a run ended, with its load's profile and the guards it tripped, in
// one transaction.
func (s *Store) FinishRun(ctx context.Context, r Run) error {
	var total, from, to any
	if r.TotalReported >= 0 {
		total = r.TotalReported
	}
	if r.Window != nil {
		from, to = r.Window.From.Format(time.DateOnly), r.Window.To.Format(time.DateOnly)
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, busyErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE sync_runs SET finished_at = ?, status = ?, pages = ?,
    requests = ?, retries = ?, rate_limited = ?, walks = ?, total_reported = ?, records_seen = ?,
    distinct_records = ?, inserted = ?, updated = ?, unchanged = ?, deleted = ?, deletions_refused = ?,
    error = ?, window_from = ?, window_to = ?, accepted_by = ?, accept_reason = ?
WHERE id = ?`), r.FinishedAt.UTC().Format(v1.TimestampLayout), r.Status, r.Pages, r.Requests, r.Retries,
		r.RateLimited, r.Walks, total, r.RecordsSeen, r.DistinctRecords, r.Inserted, r.Updated, r.Unchanged,
		r.Deleted, r.DeletionsRefused, nullStr(r.Error), from, to, nullStr(r.AcceptedBy), nullStr(r.AcceptReason), r.ID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, busyErr(err))
	}
	if err := s.recordLoad(ctx, tx, r); err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, busyErr(err))
	}
	return nil
}

// recordLoad writes a run's profile and holds (load_profiles, load_holds).
func (s *Store) recordLoad(ctx context.Context, tx *sqlx.Tx, r Run) error {
	for _, table := range []string{"load_profiles", "load_holds"} {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM `+table+` WHERE run = ?`), r.ID); err != nil {
			return fmt.Errorf("record the load: %w", busyErr(err))
		}
	}
	if p := r.Profile; p != nil {
		for _, c := range p.Columns {
			var ub, ua any
			if c.UnlistedCounted {
				ub, ua = c.UnlistedBefore, c.UnlistedAfter
			}
			name := c.Column
			if c.Member {
				name = memberPrefix + name
			}
			_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO load_profiles (run, column_name, records_before, filled_before,
    records_after, filled_after, distinct_after, distinct_capped, unlisted_before, unlisted_after)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), r.ID, name, p.Before, c.FilledBefore, p.After, c.FilledAfter,
				c.Distinct, c.Capped, ub, ua)
			if err != nil {
				return fmt.Errorf("record the load's profile: %w", busyErr(err))
			}
		}
	}
	for _, h := range r.Holds {
		_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO load_holds (run, guard, message, before_count, before_of,
    after_count, after_of, accepted) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), r.ID, h.Key(), h.Message,
			h.BeforeCount, h.BeforeOf, h.AfterCount, h.AfterOf, h.Accepted)
		if err != nil {
			return fmt.Errorf("record the load's holds: %w", busyErr(err))
		}
	}
	return nil
}

// Hold returns the holds of resource r's load when its latest concluded run (ok, inconsistent,
// held) was held, and ok false otherwise: what a person accepting the hold accepts
// (hrsync sync --accept), and what says whether a new hold is news. A run that failed or was
// skipped since changes nothing: the warehouse is as the held run left it.
func (s *Store) Hold(ctx context.Context, r Resource) (run Run, ok bool, err error) {
	var status string
	err = s.db.QueryRowxContext(ctx, s.db.Rebind(`SELECT id, run_id, status FROM sync_runs
WHERE resource = ? AND status IN (?, ?, ?, ?) ORDER BY id DESC LIMIT 1`), string(r), RunOK, RunInconsistent, RunHeld, RunGuarded).
		Scan(&run.ID, &run.RunID, &status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Run{}, false, nil
	case err != nil:
		return Run{}, false, fmt.Errorf("read the hold of %s: %w", r, busyErr(err))
	case status != RunHeld:
		return Run{}, false, nil
	}
	run.Resource, run.Status = r, status
	if run.Holds, err = s.holds(ctx, run.ID); err != nil {
		return Run{}, false, fmt.Errorf("read the hold of %s: %w", r, err)
	}
	return run, true, nil
}

// holds reads the holds recorded for ledger row id.
func (s *Store) holds(ctx context.Context, id int64) ([]Hold, error) {
	rows, err := s.db.QueryxContext(ctx, s.db.Rebind(`SELECT guard, message, before_count, before_of, after_count, after_of, accepted
FROM load_holds WHERE run = ? ORDER BY guard`), id)
	if err != nil {
		return nil, busyErr(err)
	}
	defer rows.Close()
	var out []Hold
	for rows.Next() {
		var h Hold
		var key string
		if err := rows.Scan(&key, &h.Message, &h.BeforeCount, &h.BeforeOf, &h.AfterCount, &h.AfterOf, &h.Accepted); err != nil {
			return nil, err
		}
		h.Guard, h.Resource, h.Column = parseGuardKey(key)
		out = append(out, h)
	}
	return out, rows.Err()
}

// memberPrefix marks a member's row of load_profiles (ColumnProfile.Member).
const memberPrefix = "extra."

// parseGuardKey splits a key GuardKey made.
func parseGuardKey(key string) (guard string, r Resource, column string) {
	guard, rest, _ := strings.Cut(key, ":")
	coll, column, _ := strings.Cut(rest, ".")
	return guard, Resource(coll), column
}

// Profile reads the profile recorded for ledger row id (nil when none was).
func (s *Store) Profile(ctx context.Context, id int64) (*LoadProfile, error) {
	rows, err := s.db.QueryxContext(ctx, s.db.Rebind(`SELECT column_name, records_before, filled_before, records_after, filled_after,
    distinct_after, distinct_capped, unlisted_before, unlisted_after
FROM load_profiles WHERE run = ?`), id)
	if err != nil {
		return nil, fmt.Errorf("read the profile of run %d: %w", id, busyErr(err))
	}
	defer rows.Close()
	var p *LoadProfile
	for rows.Next() {
		if p == nil {
			p = &LoadProfile{}
		}
		var c ColumnProfile
		var ub, ua sql.NullInt64
		if err := rows.Scan(&c.Column, &p.Before, &c.FilledBefore, &p.After, &c.FilledAfter, &c.Distinct, &c.Capped, &ub, &ua); err != nil {
			return nil, fmt.Errorf("read the profile of run %d: %w", id, err)
		}
		c.UnlistedCounted, c.UnlistedBefore, c.UnlistedAfter = ub.Valid, ub.Int64, ua.Int64
		c.Column, c.Member = strings.CutPrefix(c.Column, memberPrefix)
		p.Columns = append(p.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the profile of run %d: %w", id, err)
	}
	if p != nil {
		// In the table's order, then the members by name, as MergeResult.Profile has them.
		if t := s.runTable(ctx, id); t != nil {
			for i := range p.Columns {
				c := &p.Columns[i]
				c.Reference = !c.Member && slices.ContainsFunc(t.refs, func(r refDef) bool { return r.column == c.Column })
			}
			order := map[string]int{}
			for i, c := range t.cols {
				order[c.name] = i
			}
			rank := func(c ColumnProfile) int {
				if c.Member {
					return len(t.cols)
				}
				return order[c.Column]
			}
			slices.SortStableFunc(p.Columns, func(a, b ColumnProfile) int {
				if x, y := rank(a), rank(b); x != y {
					return x - y
				}
				return strings.Compare(a.Column, b.Column)
			})
		}
	}
	return p, nil
}

// runTable is the declared table of ledger row id's collection, or nil.
func (s *Store) runTable(ctx context.Context, id int64) *table {
	var res string
	if err := s.db.QueryRowxContext(ctx, s.db.Rebind(`SELECT resource FROM sync_runs WHERE id = ?`), id).Scan(&res); err != nil {
		return nil
	}
	return tableOf(res)
}

// Runs returns the latest ledger rows, newest first.
func (s *Store) Runs(ctx context.Context, limit int) ([]Run, error) {
	tsCol := func(c string) string { return "coalesce(" + s.d.read(KindTimestamp, c) + ", '')" }
	rows, err := s.db.QueryxContext(ctx, s.db.Rebind(`SELECT id, run_id, resource, `+tsCol("started_at")+`, `+tsCol("finished_at")+`,
    status, pages, requests, retries, rate_limited, walks, coalesce(total_reported, -1), records_seen,
    distinct_records, inserted, updated, unchanged, deleted, deletions_refused, coalesce(error, ''),
    coalesce(`+s.d.read(KindDate, "window_from")+`, ''), coalesce(`+s.d.read(KindDate, "window_to")+`, ''),
    coalesce(account, ''), coalesce(accepted_by, ''), coalesce(accept_reason, '')
FROM sync_runs ORDER BY id DESC LIMIT ?`), limit)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var res, started, finished, from, to string
		if err := rows.Scan(&r.ID, &r.RunID, &res, &started, &finished, &r.Status, &r.Pages, &r.Requests,
			&r.Retries, &r.RateLimited, &r.Walks, &r.TotalReported, &r.RecordsSeen, &r.DistinctRecords,
			&r.Inserted, &r.Updated, &r.Unchanged, &r.Deleted, &r.DeletionsRefused, &r.Error, &from, &to, &r.Account, &r.AcceptedBy, &r.AcceptReason); err != nil {
			return nil, fmt.Errorf("read runs: %w", err)
		}
		if from != "" && to != "" {
			w := Window{}
			w.From, _ = time.Parse(time.DateOnly, from)
			w.To, _ = time.Parse(time.DateOnly, to)
			r.Window = &w
		}
		r.Resource = Resource(res)
		r.StartedAt, _ = time.Parse(v1.TimestampLayout, started)
		r.FinishedAt, _ = time.Parse(v1.TimestampLayout, finished)
		out = append(out, r)
	}
	return out, rows.Err()
}

// LastFullWalk is when the last run of r that walked the whole collection (no window) and
// ended ok started; ok is false when none did. A full walk is what keeps a collection walked in
// windows exact outside them, so its age decides when the next one is due.
func (s *Store) LastFullWalk(ctx context.Context, r Resource) (started time.Time, ok bool, err error) {
	var at string
	err = s.db.QueryRowxContext(ctx, s.db.Rebind(`SELECT coalesce(`+s.d.read(KindTimestamp, "max(started_at)")+`, '')
FROM sync_runs WHERE resource = ? AND status = ? AND window_from IS NULL`), string(r), RunOK).Scan(&at)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("last full walk of %s: %w", r, busyErr(err))
	}
	if at == "" {
		return time.Time{}, false, nil
	}
	started, err = time.Parse(v1.TimestampLayout, at)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("last full walk of %s: %w", r, err)
	}
	return started, true, nil
}

// LastWalk is the newest finished run of r that walked what this one would: a window of the
// collection (windowed) or the whole of it; ok is false when none did. Its pages (per walk) and
// status size the next run's plan (sync.Plan). A run that stopped part-way (failed, abandoned,
// running) is passed over: its pages are not the collection's.
func (s *Store) LastWalk(ctx context.Context, r Resource, windowed bool) (Run, bool, error) {
	shape := "window_from IS NULL"
	if windowed {
		shape = "window_from IS NOT NULL"
	}
	var run Run
	var status string
	err := s.db.QueryRowxContext(ctx, s.db.Rebind(`SELECT status, pages, requests, walks, coalesce(total_reported, -1)
FROM sync_runs WHERE resource = ? AND status IN (?, ?, ?, ?, ?) AND `+shape+`
ORDER BY id DESC LIMIT 1`), string(r), RunOK, RunInconsistent, RunGuarded, RunHeld, RunUnavailable).
		Scan(&status, &run.Pages, &run.Requests, &run.Walks, &run.TotalReported)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Run{}, false, nil
	case err != nil:
		return Run{}, false, fmt.Errorf("last walk of %s: %w", r, busyErr(err))
	}
	run.Resource, run.Status = r, status
	return run, true, nil
}

// latestStatus reads the status of the newest run of a resource: "" when it never ran.
const latestStatus = `SELECT status FROM sync_runs WHERE resource = ? ORDER BY id DESC LIMIT 1`

// Unavailable reports whether the latest sync run of the collection found it not offered by the
// account (RunUnavailable): serve mode then answers as the source does, not with an empty list.
func (s *Store) Unavailable(ctx context.Context, collection string) (bool, error) {
	var status string
	err := s.db.QueryRowContext(ctx, s.db.Rebind(latestStatus), collection).Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read the latest run of %s: %w", collection, err)
	}
	return status == RunUnavailable, nil
}
