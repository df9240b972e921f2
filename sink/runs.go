package sink

import (
	"context"
	"fmt"
	"time"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/source"
)

// Run is one row of the sync_runs ledger: one resource of one sync.
type Run struct {
	ID               int64
	RunID            string // shared by the resources of one sync
	Resource         Resource
	StartedAt        time.Time
	FinishedAt       time.Time
	Status           string // running, ok, failed, inconsistent, guarded
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
}

// Run statuses.
const (
	RunRunning      = "running"
	RunOK           = "ok"
	RunFailed       = "failed"
	RunInconsistent = "inconsistent"
	RunGuarded      = "guarded"
)

// StartRun records that a run of one resource began and returns its ledger id.
func (s *Store) StartRun(ctx context.Context, runID string, r Resource, started time.Time) (int64, error) {
	var id int64
	err := s.db.QueryRowxContext(ctx, s.db.Rebind(`INSERT INTO sync_runs (run_id, resource, started_at, status)
VALUES (?, ?, ?, 'running') RETURNING id`), runID, string(r), started.UTC().Format(source.TimestampLayout)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("start run: %w", err)
	}
	return id, nil
}

// FinishRun records how a run ended.
func (s *Store) FinishRun(ctx context.Context, r Run) error {
	var total any
	if r.TotalReported >= 0 {
		total = r.TotalReported
	}
	_, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE sync_runs SET finished_at = ?, status = ?, pages = ?,
    requests = ?, retries = ?, rate_limited = ?, walks = ?, total_reported = ?, records_seen = ?,
    distinct_records = ?, inserted = ?, updated = ?, unchanged = ?, deleted = ?, deletions_refused = ?,
    error = ?
WHERE id = ?`), r.FinishedAt.UTC().Format(source.TimestampLayout), r.Status, r.Pages, r.Requests, r.Retries,
		r.RateLimited, r.Walks, total, r.RecordsSeen, r.DistinctRecords, r.Inserted, r.Updated, r.Unchanged,
		r.Deleted, r.DeletionsRefused, nullStr(r.Error), r.ID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", r.ID, err)
	}
	return nil
}

// Runs returns the latest ledger rows, newest first.
func (s *Store) Runs(ctx context.Context, limit int) ([]Run, error) {
	tsCol := func(c string) string {
		if s.dialect == schema.Postgres {
			return "coalesce(to_char(" + c + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '')`
		}
		return "coalesce(" + c + ", '')"
	}
	rows, err := s.db.QueryxContext(ctx, s.db.Rebind(`SELECT id, run_id, resource, `+tsCol("started_at")+`, `+tsCol("finished_at")+`,
    status, pages, requests, retries, rate_limited, walks, coalesce(total_reported, -1), records_seen,
    distinct_records, inserted, updated, unchanged, deleted, deletions_refused, coalesce(error, '')
FROM sync_runs ORDER BY id DESC LIMIT ?`), limit)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var res, started, finished string
		if err := rows.Scan(&r.ID, &r.RunID, &res, &started, &finished, &r.Status, &r.Pages, &r.Requests,
			&r.Retries, &r.RateLimited, &r.Walks, &r.TotalReported, &r.RecordsSeen, &r.DistinctRecords,
			&r.Inserted, &r.Updated, &r.Unchanged, &r.Deleted, &r.DeletionsRefused, &r.Error); err != nil {
			return nil, fmt.Errorf("read runs: %w", err)
		}
		r.Resource = Resource(res)
		r.StartedAt, _ = time.Parse(source.TimestampLayout, started)
		r.FinishedAt, _ = time.Parse(source.TimestampLayout, finished)
		out = append(out, r)
	}
	return out, rows.Err()
}
