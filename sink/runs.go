package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// Run is one row of the sync_runs ledger: one resource of one sync.
type Run struct {
	ID               int64
	RunID            string // shared by the resources of one sync
	Resource         Resource
	StartedAt        time.Time
	FinishedAt       time.Time
	Status           string // running, ok, failed, inconsistent, guarded, abandoned (see AbandonedError), unavailable
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
}

// Run statuses.
const (
	RunRunning      = "running"
	RunOK           = "ok"
	RunFailed       = "failed"
	RunInconsistent = "inconsistent"
	RunGuarded      = "guarded"
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

// FinishRun records how a run ended.
func (s *Store) FinishRun(ctx context.Context, r Run) error {
	var total, from, to any
	if r.TotalReported >= 0 {
		total = r.TotalReported
	}
	if r.Window != nil {
		from, to = r.Window.From.Format(time.DateOnly), r.Window.To.Format(time.DateOnly)
	}
	_, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE sync_runs SET finished_at = ?, status = ?, pages = ?,
    requests = ?, retries = ?, rate_limited = ?, walks = ?, total_reported = ?, records_seen = ?,
    distinct_records = ?, inserted = ?, updated = ?, unchanged = ?, deleted = ?, deletions_refused = ?,
    error = ?, window_from = ?, window_to = ?
WHERE id = ?`), r.FinishedAt.UTC().Format(v1.TimestampLayout), r.Status, r.Pages, r.Requests, r.Retries,
		r.RateLimited, r.Walks, total, r.RecordsSeen, r.DistinctRecords, r.Inserted, r.Updated, r.Unchanged,
		r.Deleted, r.DeletionsRefused, nullStr(r.Error), from, to, r.ID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	return nil
}

// Runs returns the latest ledger rows, newest first.
func (s *Store) Runs(ctx context.Context, limit int) ([]Run, error) {
	tsCol := func(c string) string { return "coalesce(" + s.d.read(KindTimestamp, c) + ", '')" }
	rows, err := s.db.QueryxContext(ctx, s.db.Rebind(`SELECT id, run_id, resource, `+tsCol("started_at")+`, `+tsCol("finished_at")+`,
    status, pages, requests, retries, rate_limited, walks, coalesce(total_reported, -1), records_seen,
    distinct_records, inserted, updated, unchanged, deleted, deletions_refused, coalesce(error, ''),
    coalesce(`+s.d.read(KindDate, "window_from")+`, ''), coalesce(`+s.d.read(KindDate, "window_to")+`, ''),
    coalesce(account, '')
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
			&r.Inserted, &r.Updated, &r.Unchanged, &r.Deleted, &r.DeletionsRefused, &r.Error, &from, &to, &r.Account); err != nil {
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
FROM sync_runs WHERE resource = ? AND status IN (?, ?, ?, ?) AND `+shape+`
ORDER BY id DESC LIMIT 1`), string(r), RunOK, RunInconsistent, RunGuarded, RunUnavailable).
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
