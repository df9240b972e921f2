package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/source/v1"
)

// Creates sent to serve mode with an Idempotency-Key (table idempotency_keys, migration 0013).

// sweepExpired is how many expired records a claim deletes at most: the table is kept small
// with bounded work per create.
const sweepExpired = 100

// ReserveIdempotency claims c.Key for c.Client's create: reserved when this request is the
// first with it, or the record there expired (older than c.TTL) or stalled in progress (older
// than c.Stale: its process died). Otherwise it returns the record found, in progress or
// answered, for the caller to compare hashes and replay.
func (s *Store) ReserveIdempotency(ctx context.Context, c v1.IdempotencyClaim) (v1.IdempotencyRecord, bool, error) {
	rec, reserved, err := s.reserveIdempotency(ctx, c)
	if err != nil {
		return v1.IdempotencyRecord{}, false, fmt.Errorf("reserve idempotency key: %w", busyErr(err))
	}
	return rec, reserved, nil
}

func (s *Store) reserveIdempotency(ctx context.Context, c v1.IdempotencyClaim) (v1.IdempotencyRecord, bool, error) {
	now := s.opts.Now().Unix()
	expired := now - int64(c.TTL.Seconds())
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return v1.IdempotencyRecord{}, false, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM idempotency_keys WHERE (client, idem_key) IN
(SELECT client, idem_key FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)`), expired, sweepExpired); err != nil {
		return v1.IdempotencyRecord{}, false, fmt.Errorf("delete expired: %w", err)
	}
	// Expired, or stalled in progress: the claim takes the row over.
	if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM idempotency_keys WHERE client = ? AND idem_key = ?
AND (created_at < ? OR (status = 0 AND employee_id IS NULL AND created_at < ?))`),
		c.Client, c.Key, expired, now-int64(c.Stale.Seconds())); err != nil {
		return v1.IdempotencyRecord{}, false, fmt.Errorf("take over: %w", err)
	}
	res, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO idempotency_keys (client, idem_key, request_hash, created_at)
VALUES (?, ?, ?, ?) ON CONFLICT (client, idem_key) DO NOTHING`), c.Client, c.Key, c.Hash, now)
	if err != nil {
		return v1.IdempotencyRecord{}, false, fmt.Errorf("insert: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return v1.IdempotencyRecord{}, false, err
	} else if n == 1 {
		return v1.IdempotencyRecord{Hash: c.Hash}, true, tx.Commit()
	}
	var rec v1.IdempotencyRecord
	var emp sql.NullInt64
	err = tx.QueryRowContext(ctx, tx.Rebind(`SELECT request_hash, status, body, location, employee_id
FROM idempotency_keys WHERE client = ? AND idem_key = ?`), c.Client, c.Key).Scan(&rec.Hash, &rec.Status, &rec.Body, &rec.Location, &emp)
	if errors.Is(err, sql.ErrNoRows) {
		// Deleted between the insert and the read (a concurrent take-over): in progress.
		return v1.IdempotencyRecord{Hash: c.Hash}, false, nil
	}
	if err != nil {
		return v1.IdempotencyRecord{}, false, fmt.Errorf("read: %w", err)
	}
	rec.EmployeeID = emp.Int64
	return rec, false, tx.Commit()
}

// CreateEmployeeOnce is CreateEmployee for a create reserved under an Idempotency-Key: the
// record notes the new employee in the same transaction, so it is never created twice.
func (s *Store) CreateEmployeeOnce(ctx context.Context, ne v1.NewEmployee, client, key string) (v1.Employee, error) {
	return s.createAndRead(ctx, ne, func(ctx context.Context, tx *sqlx.Tx, id int64) error {
		_, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE idempotency_keys SET employee_id = ? WHERE client = ? AND idem_key = ?`), id, client, key)
		return err
	})
}

// CompleteIdempotency keeps the answer of a reserved create for its retries.
func (s *Store) CompleteIdempotency(ctx context.Context, client, key string, rec v1.IdempotencyRecord) error {
	var emp sql.NullInt64
	if rec.EmployeeID != 0 {
		emp = sql.NullInt64{Int64: rec.EmployeeID, Valid: true}
	}
	_, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE idempotency_keys SET status = ?, body = ?, location = ?,
employee_id = coalesce(?, employee_id) WHERE client = ? AND idem_key = ?`), rec.Status, rec.Body, rec.Location, emp, client, key)
	if err != nil {
		return fmt.Errorf("keep idempotent answer: %w", busyErr(err))
	}
	return nil
}

// ReleaseIdempotency forgets a reserved create whose answer is not kept (a failure the client
// should retry): its retry runs as a new create.
func (s *Store) ReleaseIdempotency(ctx context.Context, client, key string) error {
	_, err := s.db.ExecContext(ctx, s.db.Rebind(`DELETE FROM idempotency_keys WHERE client = ? AND idem_key = ? AND employee_id IS NULL`), client, key)
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", busyErr(err))
	}
	return nil
}
