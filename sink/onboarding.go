package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/hrsync/hrsync/source/v1"
)

// OnboardingRow is one CSV row in the onboarding ledger.
type OnboardingRow struct {
	FileHash   string `db:"file_hash"`
	FileName   string `db:"file_name"`
	Line       int    `db:"line"`
	Email      string `db:"email"`
	Status     string `db:"status"` // sending, created, skipped, rejected, failed
	EmployeeID int64  `db:"employee_id"`
	Reason     string `db:"reason"`
	// RequestHash is the hash of the create sent (v1.NewEmployee.Hash) when the source answered
	// it with a refusal (status rejected or skipped); "" otherwise.
	RequestHash string `db:"request_hash"`
}

// Onboarding row statuses.
const (
	RowSending  = "sending" // written before a create goes out; a crash leaves it so
	RowCreated  = "created"
	RowSkipped  = "skipped"
	RowRejected = "rejected"
	RowFailed   = "failed"
)

// onboardingColumns are the columns an OnboardingRow is read from, by name (sqlx).
const onboardingColumns = `file_hash, file_name, line, email, status, coalesce(employee_id, 0) AS employee_id,
    coalesce(reason, '') AS reason, coalesce(request_hash, '') AS request_hash`

// OnboardingRows returns the ledger rows of one file (by content hash), by line.
func (s *Store) OnboardingRows(ctx context.Context, fileHash string) (map[int]OnboardingRow, error) {
	var rows []OnboardingRow
	if err := s.db.SelectContext(ctx, &rows, s.db.Rebind(`SELECT `+onboardingColumns+` FROM onboarding_rows WHERE file_hash = ?`), fileHash); err != nil {
		return nil, fmt.Errorf("read onboarding ledger: %w", err)
	}
	out := make(map[int]OnboardingRow, len(rows))
	for _, r := range rows {
		out[r.Line] = r
	}
	return out, nil
}

// CreatedByEmail finds a row of any file that created, or is sending, an employee with the email:
// the same person in another file is not created again. A confirmed create (status created) wins
// over one whose answer never came (sending), then the oldest row.
func (s *Store) CreatedByEmail(ctx context.Context, email string) (OnboardingRow, error) {
	var r OnboardingRow
	err := s.db.GetContext(ctx, &r, s.db.Rebind(`SELECT `+onboardingColumns+` FROM onboarding_rows
WHERE email = ? AND status IN ('created', 'sending')
ORDER BY CASE status WHEN 'created' THEN 0 ELSE 1 END, id LIMIT 1`), strings.ToLower(email))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("onboarding row for email: %w", v1.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("read onboarding ledger: %w", err)
	}
	return r, nil
}

// PutOnboardingRow writes a row's state; it is durable when it returns. The email of a person an
// erasure in force was made of (ErasedEmail) is never kept: the row is written without it, and
// without the hash of its request, whatever wrote it.
func (s *Store) PutOnboardingRow(ctx context.Context, r OnboardingRow) error {
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	erased, err := s.ErasedEmail(ctx, r.Email)
	if err != nil {
		return fmt.Errorf("write onboarding ledger: %w", err)
	}
	if erased > 0 {
		r.Email, r.RequestHash = "", ""
	}
	var id any
	if r.EmployeeID > 0 {
		id = r.EmployeeID
	}
	_, err = s.db.ExecContext(ctx, s.db.Rebind(`INSERT INTO onboarding_rows (file_hash, file_name, line, email, status, employee_id, reason, request_hash, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (file_hash, line) DO UPDATE SET file_name = excluded.file_name, email = excluded.email,
    status = excluded.status, employee_id = excluded.employee_id, reason = excluded.reason,
    request_hash = excluded.request_hash, updated_at = excluded.updated_at`),
		r.FileHash, r.FileName, r.Line, strings.ToLower(r.Email), r.Status, id, nullStr(r.Reason), nullStr(r.RequestHash), now, now)
	if err != nil {
		return fmt.Errorf("write onboarding ledger: %w", err)
	}
	return nil
}

// ConfirmSending marks every row still sending a create for the email, in any file, as created
// with the employee's id: the person was confirmed at the source (answered, or found by email),
// so no row of them is left unresolved.
func (s *Store) ConfirmSending(ctx context.Context, email string, employeeID int64, reason string) error {
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	_, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE onboarding_rows SET status = 'created', employee_id = ?,
    reason = ?, updated_at = ? WHERE email = ? AND status = 'sending'`), employeeID, nullStr(reason), now, strings.ToLower(email))
	if err != nil {
		return fmt.Errorf("write onboarding ledger: %w", err)
	}
	return nil
}
