package sink

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/source"
)

// StatusCurrent is the status text the service gives a new employee.
const StatusCurrent = "Current employee"

// CreateEmployee creates an employee as the service does (seed 2.1, "observed behaviour on
// creation"): the default working pattern, a holiday allowance, no manager, approver or
// department, false booleans, a current-employee status, the join date as both company join
// date and job start date. Creates are serialized, so the email check and the new id hold.
func (s *Store) CreateEmployee(ctx context.Context, ne source.NewEmployee) (source.Employee, error) {
	id, err := s.createEmployee(ctx, ne)
	if err != nil {
		return source.Employee{}, fmt.Errorf("create employee: %w", err)
	}
	e, _, err := s.Employee(ctx, id)
	if err != nil {
		return source.Employee{}, fmt.Errorf("create employee: read back: %w", err)
	}
	return e, nil
}

func (s *Store) createEmployee(ctx context.Context, ne source.NewEmployee) (int64, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	if s.dialect == schema.Postgres {
		// One create at a time per warehouse; SQLite's IMMEDIATE transaction already is.
		if _, err := tx.ExecContext(ctx, `SELECT 1 FROM meta FOR UPDATE`); err != nil {
			return 0, err
		}
	}
	var taken int
	if err := tx.QueryRowContext(ctx, s.q.emailTaken, strings.ToLower(ne.Email)).Scan(&taken); err != nil {
		return 0, err
	}
	if taken > 0 {
		return 0, source.ErrEmailTaken
	}
	var pattern, allowance sql.NullInt64
	if err := tx.QueryRowContext(ctx, s.q.defaultPatterns).Scan(&pattern); err != nil && err != sql.ErrNoRows {
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
	now := s.opts.Now().UTC().Format(source.TimestampLayout)
	_, err = tx.ExecContext(ctx, tx.Rebind(`INSERT INTO employees (id, account_id, first_name, last_name, email,
    job_title, status, company_join_date, job_start_date, working_pattern_id, holiday_allowance_id,
    receives_statutory_holidays, hr, created_at, updated_at, listed, origin, synced_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'local', ?)`),
		id, account, ne.FirstName, ne.LastName, ne.Email, nullStr(ne.JobTitle), StatusCurrent,
		ne.JoinDate, ne.JoinDate, pattern, allowance, false, false, now, now, true, now)
	if err != nil {
		return 0, fmt.Errorf("insert: %w", err)
	}
	return id, tx.Commit()
}

// PutEmployee stores one employee as the source answered it, with its nested references, in
// one transaction: a forwarded create lands in the replica before the next sync.
func (s *Store) PutEmployee(ctx context.Context, e source.Employee) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("put employee: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	now := s.opts.Now().UTC().Format(source.TimestampLayout)
	if err := s.putRefs(ctx, tx, &e, now); err != nil {
		return fmt.Errorf("put employee: %w", err)
	}
	_, err = tx.ExecContext(ctx, tx.Rebind(`INSERT INTO employees (id, account_id, first_name, last_name, email,
    job_title, status, company_join_date, job_start_date, length_of_service_in_months, age,
    full_or_part_time, notice_period, working_pattern_id, holiday_allowance_id, department_id,
    line_manager_id, holiday_approver_id, receives_statutory_holidays, hr, created_at, updated_at,
    extra, nested, listed, origin, deleted_at, synced_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'source', NULL, ?)
ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id, first_name = excluded.first_name,
    last_name = excluded.last_name, email = excluded.email, job_title = excluded.job_title,
    status = excluded.status, company_join_date = excluded.company_join_date,
    job_start_date = excluded.job_start_date,
    length_of_service_in_months = excluded.length_of_service_in_months, age = excluded.age,
    full_or_part_time = excluded.full_or_part_time, notice_period = excluded.notice_period,
    working_pattern_id = excluded.working_pattern_id,
    holiday_allowance_id = excluded.holiday_allowance_id, department_id = excluded.department_id,
    line_manager_id = excluded.line_manager_id, holiday_approver_id = excluded.holiday_approver_id,
    receives_statutory_holidays = excluded.receives_statutory_holidays, hr = excluded.hr,
    created_at = excluded.created_at, updated_at = excluded.updated_at, extra = excluded.extra,
    nested = excluded.nested, listed = excluded.listed, origin = 'source', deleted_at = NULL, synced_at = excluded.synced_at`),
		e.ID, e.AccountID, nullStr(e.FirstName), nullStr(e.LastName), nullStr(e.Email),
		nullStr(e.JobTitle), nullStr(e.Status), nullStr(e.CompanyJoinDate), nullStr(e.JobStartDate),
		e.LengthOfServiceInMonths, nullRaw(e.Age), nullRaw(e.FullOrPartTime), nullRaw(e.NoticePeriod),
		patternID(e.WorkingPattern), refID(e.HolidayAllowance), refID(e.Department),
		personID(e.LineManager), personID(e.HolidayApprover), e.ReceivesStatutoryHolidays, e.HR,
		nullStr(e.CreatedAt), nullStr(e.UpdatedAt), nullRaw(e.Extra), nullRaw(e.NestedRaw()), true, now)
	if err != nil {
		return fmt.Errorf("put employee: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("put employee: %w", err)
	}
	return nil
}

// putRefs upserts the records an employee's nested objects name. A record only ever seen
// nested is kept unlisted; a listed one keeps its own fields.
func (s *Store) putRefs(ctx context.Context, tx *sqlx.Tx, e *source.Employee, now string) error {
	if p := e.WorkingPattern; p != nil {
		_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO working_patterns (id, name, total_hours, is_default, listed, origin, synced_at)
VALUES (?, ?, ?, ?, ?, 'source', ?)
ON CONFLICT (id) DO UPDATE SET
    name = CASE WHEN working_patterns.listed THEN working_patterns.name ELSE excluded.name END,
    total_hours = CASE WHEN working_patterns.listed THEN working_patterns.total_hours ELSE excluded.total_hours END,
    is_default = CASE WHEN working_patterns.listed THEN working_patterns.is_default ELSE excluded.is_default END`),
			p.ID, nullStr(p.Name), nullStr(p.TotalHours), p.Default, false, now)
		if err != nil {
			return fmt.Errorf("working pattern: %w", err)
		}
	}
	for _, r := range []struct {
		table string
		ref   *source.Ref
	}{{"holiday_allowances", e.HolidayAllowance}, {"departments", e.Department}} {
		if r.ref == nil {
			continue
		}
		_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO `+r.table+` (id, name, extra, origin, synced_at)
VALUES (?, ?, ?, 'source', ?)
ON CONFLICT (id) DO UPDATE SET name = excluded.name, extra = excluded.extra, origin = 'source',
    deleted_at = NULL, synced_at = excluded.synced_at`),
			r.ref.ID, nullStr(r.ref.Name), nullRaw(r.ref.Extra), now)
		if err != nil {
			return fmt.Errorf("%s: %w", r.table, err)
		}
	}
	for _, p := range []*source.PersonRef{e.LineManager, e.HolidayApprover} {
		if p == nil {
			continue
		}
		_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO employees (id, first_name, last_name, email, listed, origin, synced_at)
VALUES (?, ?, ?, ?, ?, 'source', ?)
ON CONFLICT (id) DO UPDATE SET
    first_name = CASE WHEN employees.listed THEN employees.first_name ELSE excluded.first_name END,
    last_name = CASE WHEN employees.listed THEN employees.last_name ELSE excluded.last_name END,
    email = CASE WHEN employees.listed THEN employees.email ELSE excluded.email END`),
			p.ID, nullStr(p.FirstName), nullStr(p.LastName), nullStr(p.Email), false, now)
		if err != nil {
			return fmt.Errorf("person %d: %w", p.ID, err)
		}
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

func patternID(p *source.PatternRef) any {
	if p == nil {
		return nil
	}
	return p.ID
}

func refID(r *source.Ref) any {
	if r == nil {
		return nil
	}
	return r.ID
}

func personID(p *source.PersonRef) any {
	if p == nil {
		return nil
	}
	return p.ID
}
