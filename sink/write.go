package sink

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/source/v1"
)

// statusCurrent is the status text the service gives a new employee.
const statusCurrent = "Current employee"

// CreateEmployee creates an employee as the service does (seed 2.1, "observed behaviour on
// creation"): the default working pattern, a holiday allowance, no manager, approver or
// department, false booleans, a current-employee status, the join date as both company join
// date and job start date. Creates are serialized, so the email check and the new id hold.
func (s *Store) CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error) {
	return s.createAndRead(ctx, ne, nil)
}

// createAndRead creates an employee, running also (when set) in the same transaction, and reads
// it back.
func (s *Store) createAndRead(ctx context.Context, ne v1.NewEmployee, also func(context.Context, *sqlx.Tx, int64) error) (v1.Employee, error) {
	id, err := s.createEmployee(ctx, ne, also)
	if err != nil {
		return v1.Employee{}, fmt.Errorf("create employee: %w", busyErr(err))
	}
	e, _, err := s.Employee(ctx, id)
	if err != nil {
		return v1.Employee{}, fmt.Errorf("create employee: read back: %w", err)
	}
	return e, nil
}

func (s *Store) createEmployee(ctx context.Context, ne v1.NewEmployee, also func(context.Context, *sqlx.Tx, int64) error) (int64, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	// One create at a time per warehouse, and none during a merge.
	if err := s.d.serializeWrites(ctx, tx); err != nil {
		return 0, err
	}
	var taken int
	if err := tx.QueryRowContext(ctx, tx.Rebind(emailTaken), strings.ToLower(ne.Email)).Scan(&taken); err != nil {
		return 0, err
	}
	if taken > 0 {
		return 0, v1.ErrEmailTaken
	}
	var pattern, allowance sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM working_patterns WHERE is_default AND listed AND deleted_at IS NULL ORDER BY id LIMIT 1`).Scan(&pattern); err != nil && err != sql.ErrNoRows {
		return 0, fmt.Errorf("default working pattern: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT id FROM holiday_allowances WHERE deleted_at IS NULL ORDER BY id LIMIT 1`).Scan(&allowance); err != nil && err != sql.ErrNoRows {
		return 0, fmt.Errorf("holiday allowance: %w", err)
	}
	account := s.opts.AccountID
	if account == 0 {
		err := tx.QueryRowContext(ctx, `SELECT account_id FROM employees WHERE account_id IS NOT NULL AND origin = 'source' ORDER BY id LIMIT 1`).Scan(&account)
		if err == sql.ErrNoRows {
			account = 1
		} else if err != nil {
			return 0, fmt.Errorf("account: %w", err)
		}
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM employees`).Scan(&id); err != nil {
		return 0, fmt.Errorf("next id: %w", err)
	}
	now := s.opts.Now().UTC().Format(v1.TimestampLayout)
	no := false
	e := v1.Employee{ID: id, AccountID: &account, FirstName: ne.FirstName, LastName: ne.LastName,
		Email: ne.Email, JobTitle: ne.JobTitle, Status: statusCurrent, CompanyJoinDate: ne.JoinDate,
		JobStartDate: ne.JoinDate, ReceivesStatutoryHolidays: &no, HR: &no, CreatedAt: now, UpdatedAt: now}
	if pattern.Valid {
		e.WorkingPattern = &v1.PatternRef{ID: pattern.Int64}
	}
	if allowance.Valid {
		e.HolidayAllowance = &v1.Ref{ID: allowance.Int64}
	}
	if err := insertRecord(ctx, tx, employeeCollection, &e, originLocal, now); err != nil {
		return 0, fmt.Errorf("insert: %w", err)
	}
	if also != nil {
		if err := also(ctx, tx, id); err != nil {
			return 0, err
		}
	}
	return id, tx.Commit()
}

// insertRecord inserts a record as a served row of the collection's table, of the origin.
func insertRecord[T any](ctx context.Context, tx *sqlx.Tx, c *collection[T], rec *T, origin, now string) error {
	cols := colNames(c.table.cols)
	vals := c.stageRow(0, rec)[1 : 1+len(cols)]
	_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO `+c.name+` (`+strings.Join(cols, ", ")+`, listed, origin, synced_at)
VALUES (`+strings.Repeat("?, ", len(cols))+`true, ?, ?)`), append(vals, origin, now)...)
	return err
}

// PutEmployee stores one employee as the source answered it, with its nested references: a
// forwarded or onboarded create lands in the replica before the next sync. It is the sync's own
// load of a one-record walk, merged without deletions, so both write a record the same way.
func (s *Store) PutEmployee(ctx context.Context, e v1.Employee) error {
	l, err := s.BeginLoad(ctx, Employees)
	if err != nil {
		return fmt.Errorf("put employee: %w", err)
	}
	defer func() { _ = l.Close() }()
	if err := l.AddEmployees(ctx, []v1.Employee{e}); err != nil {
		return fmt.Errorf("put employee: %w", err)
	}
	if _, err := l.Merge(ctx, MergeOptions{Unguarded: true}); err != nil {
		return fmt.Errorf("put employee: %w", err)
	}
	return nil
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullRaw[T ~[]byte](b T) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
