package sink

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/source/v1"
)

// queries are the read statements, built once per dialect. Postgres formats dates and
// timestamps in SQL so both backends hand Go the same text and nothing is parsed on the way out.
type queries struct {
	employeePage    string
	employeeByID    string
	patternPage     string
	departmentPage  string
	allowancePage   string
	totals          string
	visibleIDs      string
	emailTaken      string
	defaultPatterns string
}

func buildQueries(d schema.Dialect) queries {
	pg := d == schema.Postgres
	date := func(c string) string {
		if pg {
			return "to_char(" + c + ", 'YYYY-MM-DD')"
		}
		return c
	}
	ts := func(c string) string {
		if pg {
			return "to_char(" + c + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`
		}
		return c
	}
	txt := func(c string) string {
		if pg {
			return c + "::text"
		}
		return c
	}
	employeeFrom := strings.Join([]string{
		"e.id, e.account_id, e.first_name, e.last_name, e.email, e.job_title, e.status",
		date("e.company_join_date"), date("e.job_start_date"), "e.length_of_service_in_months",
		txt("e.age"), txt("e.full_or_part_time"), txt("e.notice_period"),
		"e.working_pattern_id, wp.name", txt("wp.total_hours"), "wp.is_default",
		"e.holiday_allowance_id, ha.name", txt("ha.extra"),
		"e.department_id, d.name", txt("d.extra"),
		"e.line_manager_id, lm.first_name, lm.last_name, lm.email",
		"e.holiday_approver_id, ap.first_name, ap.last_name, ap.email",
		"e.receives_statutory_holidays, e.hr", ts("e.created_at"), ts("e.updated_at"), txt("e.extra"), txt("e.nested"),
		"e.origin, m.version, m.employees_total",
	}, ", ") + `
FROM employees e
CROSS JOIN meta m
LEFT JOIN working_patterns wp ON wp.id = e.working_pattern_id
LEFT JOIN holiday_allowances ha ON ha.id = e.holiday_allowance_id
LEFT JOIN departments d ON d.id = e.department_id
LEFT JOIN employees lm ON lm.id = e.line_manager_id
LEFT JOIN employees ap ON ap.id = e.holiday_approver_id
WHERE e.listed AND e.deleted_at IS NULL`

	days := make([]string, 0, 14)
	for _, day := range v1.Weekdays {
		days = append(days, day)
	}
	for _, day := range v1.Weekdays {
		days = append(days, txt(day+"_hr"))
	}
	q := queries{
		employeePage: "SELECT " + employeeFrom + ` AND e.id BETWEEN ? AND ? ORDER BY e.id LIMIT ?`,
		employeeByID: "SELECT " + employeeFrom + ` AND e.id = ?`,
		patternPage: "SELECT w.id, w.name, w.is_default, " + txt("w.total_hours") + ", " + strings.Join(days, ", ") + ", " +
			ts("w.created_at") + ", " + ts("w.updated_at") + ", " + txt("w.extra") + `, m.version, m.working_patterns_total
FROM meta m LEFT JOIN (SELECT * FROM working_patterns WHERE listed AND deleted_at IS NULL ORDER BY id LIMIT ? OFFSET ?) w ON true
ORDER BY w.id`,
		departmentPage: `SELECT r.id, r.name, ` + txt("r.extra") + `, m.version, m.departments_total
FROM meta m LEFT JOIN (SELECT * FROM departments WHERE deleted_at IS NULL ORDER BY id LIMIT ? OFFSET ?) r ON true
ORDER BY r.id`,
		allowancePage: `SELECT r.id, r.name, ` + txt("r.extra") + `, m.version, m.holiday_allowances_total
FROM meta m LEFT JOIN (SELECT * FROM holiday_allowances WHERE deleted_at IS NULL ORDER BY id LIMIT ? OFFSET ?) r ON true
ORDER BY r.id`,
		totals:          `SELECT version, employees_total FROM meta`,
		visibleIDs:      `SELECT id FROM employees WHERE listed AND deleted_at IS NULL ORDER BY id`,
		emailTaken:      `SELECT count(*) FROM employees WHERE lower(email) = ? AND listed AND deleted_at IS NULL`,
		defaultPatterns: `SELECT id FROM working_patterns WHERE is_default AND listed AND deleted_at IS NULL ORDER BY id LIMIT 1`,
	}
	if pg {
		for _, p := range []*string{&q.employeePage, &q.employeeByID, &q.patternPage, &q.departmentPage, &q.allowancePage, &q.emailTaken} {
			*p = rebind(*p)
		}
	}
	return q
}

// rebind turns ? placeholders into $1, $2, … for Postgres.
func rebind(q string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// ListEmployees reads one page of the served employees, its Total and the version it was read
// at, in one statement (one snapshot). See idCache for how the page is found.
func (s *Store) ListEmployees(ctx context.Context, p v1.Page) (v1.List[v1.Employee], error) {
	for attempt := 0; ; attempt++ {
		ids, cachedVersion, ok := s.ids.get()
		if !ok || attempt > 0 {
			var err error
			if ids, cachedVersion, err = s.loadIDs(ctx); err != nil {
				return v1.List[v1.Employee]{}, err
			}
		}
		off := p.Offset()
		if off >= int64(len(ids)) {
			// Past the end at the cached version: confirm the version, answer empty.
			var v, total int64
			if err := s.stmts.totals.QueryRowContext(ctx).Scan(&v, &total); err != nil {
				return v1.List[v1.Employee]{}, fmt.Errorf("list employees: %w", err)
			}
			if v == cachedVersion || attempt >= 2 {
				return v1.List[v1.Employee]{Items: []v1.Employee{}, Total: total, Version: v}, nil
			}
			continue
		}
		end := min(off+p.Size, int64(len(ids)))
		list, err := s.employeeRows(ctx, s.stmts.employeePage, ids[off], ids[end-1], end-off)
		if err != nil {
			return v1.List[v1.Employee]{}, fmt.Errorf("list employees: %w", err)
		}
		// Rows read at another version than the ids were may belong to other pages: reload.
		if (len(list.Items) > 0 && list.Version == cachedVersion) || attempt >= 2 {
			if len(list.Items) == 0 {
				list.Items = []v1.Employee{}
			}
			return list, nil
		}
	}
}

// loadIDs reads the served ids and the version they belong to in one read-only snapshot. One
// goroutine reloads at a time; one that waited reuses the reload it waited for when it is
// current.
func (s *Store) loadIDs(ctx context.Context) ([]int64, int64, error) {
	before, _, _ := s.ids.get()
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if ids, v, ok := s.ids.get(); ok && !sameSlice(ids, before) {
		var current int64
		if err := s.stmts.totals.QueryRowContext(ctx).Scan(&current, new(int64)); err == nil && current == v {
			return ids, v, nil
		}
	}
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect == schema.Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.db.BeginTxx(ctx, opts)
	if err != nil {
		return nil, 0, fmt.Errorf("load employee ids: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var version, total int64
	if err := tx.QueryRowContext(ctx, s.q.totals).Scan(&version, &total); err != nil {
		return nil, 0, fmt.Errorf("load employee ids: %w", err)
	}
	ids := make([]int64, 0, total)
	if err := tx.SelectContext(ctx, &ids, s.q.visibleIDs); err != nil {
		return nil, 0, fmt.Errorf("load employee ids: %w", err)
	}
	s.ids.set(ids, version)
	return ids, version, nil
}

// sameSlice reports whether a and b are the same slice (the cache unchanged), not equal ones.
func sameSlice(a, b []int64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Employee reads one served employee and the version it was read at.
func (s *Store) Employee(ctx context.Context, id int64) (v1.Employee, int64, error) {
	list, err := s.employeeRows(ctx, s.stmts.employeeByID, id)
	if err != nil {
		return v1.Employee{}, 0, fmt.Errorf("get employee: %w", err)
	}
	if len(list.Items) == 0 {
		return v1.Employee{}, 0, fmt.Errorf("get employee %d: %w", id, v1.ErrNotFound)
	}
	return list.Items[0], list.Version, nil
}

func (s *Store) employeeRows(ctx context.Context, stmt *sqlx.Stmt, args ...any) (v1.List[v1.Employee], error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return v1.List[v1.Employee]{}, err
	}
	defer rows.Close()
	var list v1.List[v1.Employee]
	now := s.opts.Now()
	for rows.Next() {
		var r employeeRow
		if err := rows.Scan(r.dest()...); err != nil {
			return list, err
		}
		list.Items = append(list.Items, r.employee(now))
		list.Version, list.Total = r.version, r.total
	}
	return list, rows.Err()
}

// employeeRow is one row of the employee queries, column for column.
type employeeRow struct {
	id                                           int64
	accountID                                    sql.NullInt64
	firstName, lastName, email, jobTitle, status sql.NullString
	joinDate, startDate                          sql.NullString
	service                                      sql.NullInt64
	age, fullOrPart, notice                      sql.NullString
	wpID                                         sql.NullInt64
	wpName, wpHours                              sql.NullString
	wpDefault                                    sql.NullBool
	haID                                         sql.NullInt64
	haName, haExtra                              sql.NullString
	dID                                          sql.NullInt64
	dName, dExtra                                sql.NullString
	lmID                                         sql.NullInt64
	lmFirst, lmLast, lmEmail                     sql.NullString
	apID                                         sql.NullInt64
	apFirst, apLast, apEmail                     sql.NullString
	statutory, hr                                sql.NullBool
	createdAt, updatedAt, extra, nested, origin  sql.NullString
	version, total                               int64
}

func (r *employeeRow) dest() []any {
	return []any{&r.id, &r.accountID, &r.firstName, &r.lastName, &r.email, &r.jobTitle, &r.status,
		&r.joinDate, &r.startDate, &r.service, &r.age, &r.fullOrPart, &r.notice,
		&r.wpID, &r.wpName, &r.wpHours, &r.wpDefault,
		&r.haID, &r.haName, &r.haExtra,
		&r.dID, &r.dName, &r.dExtra,
		&r.lmID, &r.lmFirst, &r.lmLast, &r.lmEmail,
		&r.apID, &r.apFirst, &r.apLast, &r.apEmail,
		&r.statutory, &r.hr, &r.createdAt, &r.updatedAt, &r.extra, &r.nested, &r.origin,
		&r.version, &r.total}
}

func (r *employeeRow) employee(now time.Time) v1.Employee {
	e := v1.Employee{
		ID:                        r.id,
		AccountID:                 intPtr(r.accountID),
		FirstName:                 r.firstName.String,
		LastName:                  r.lastName.String,
		Email:                     r.email.String,
		JobTitle:                  r.jobTitle.String,
		Status:                    r.status.String,
		CompanyJoinDate:           r.joinDate.String,
		JobStartDate:              r.startDate.String,
		LengthOfServiceInMonths:   intPtr(r.service),
		Age:                       raw(r.age),
		FullOrPartTime:            raw(r.fullOrPart),
		NoticePeriod:              raw(r.notice),
		ReceivesStatutoryHolidays: boolPtr(r.statutory),
		HR:                        boolPtr(r.hr),
		CreatedAt:                 r.createdAt.String,
		UpdatedAt:                 r.updatedAt.String,
		Extra:                     v1.Extra(r.extra.String),
	}
	// A record created here ages: its length of service is reckoned at read time, as the
	// service reckons it, not frozen at creation.
	if r.origin.String == "local" && e.CompanyJoinDate != "" {
		if m, ok := monthsSince(e.CompanyJoinDate, now); ok {
			e.LengthOfServiceInMonths = &m
		}
	}
	if r.wpID.Valid {
		e.WorkingPattern = &v1.PatternRef{ID: r.wpID.Int64, Name: r.wpName.String, TotalHours: r.wpHours.String,
			Default: boolPtr(r.wpDefault)}
	}
	if r.haID.Valid {
		e.HolidayAllowance = &v1.Ref{ID: r.haID.Int64, Name: r.haName.String, Extra: v1.Extra(r.haExtra.String)}
	}
	if r.dID.Valid {
		e.Department = &v1.Ref{ID: r.dID.Int64, Name: r.dName.String, Extra: v1.Extra(r.dExtra.String)}
	}
	if r.lmID.Valid {
		e.LineManager = &v1.PersonRef{ID: r.lmID.Int64, FirstName: r.lmFirst.String, LastName: r.lmLast.String,
			Email: r.lmEmail.String}
	}
	if r.apID.Valid {
		e.HolidayApprover = &v1.PersonRef{ID: r.apID.Int64, FirstName: r.apFirst.String, LastName: r.apLast.String,
			Email: r.apEmail.String}
	}
	// The forms the source embedded the references in; a malformed column (hand-edited) leaves
	// the forms built from the referenced rows.
	_ = e.SetNestedRaw(raw(r.nested))
	return e
}

// monthsSince counts whole months from a YYYY-MM-DD date to now (0 for a future date).
func monthsSince(date string, now time.Time) (int64, bool) {
	t, err := time.Parse("2006-01-02", date)
	if err != nil {
		return 0, false
	}
	now = now.UTC()
	m := int64(now.Year()-t.Year())*12 + int64(now.Month()-t.Month())
	if now.Day() < t.Day() {
		m--
	}
	return max(m, 0), true
}

func intPtr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

func boolPtr(b sql.NullBool) *bool {
	if !b.Valid {
		return nil
	}
	return &b.Bool
}

func raw(s sql.NullString) []byte {
	if !s.Valid || s.String == "" {
		return nil
	}
	return []byte(s.String)
}

// ListWorkingPatterns reads one page of the served working patterns.
func (s *Store) ListWorkingPatterns(ctx context.Context, p v1.Page) (v1.List[v1.WorkingPattern], error) {
	rows, err := s.db.QueryContext(ctx, s.q.patternPage, p.Size, p.Offset())
	if err != nil {
		return v1.List[v1.WorkingPattern]{}, fmt.Errorf("list working patterns: %w", err)
	}
	defer rows.Close()
	list := v1.List[v1.WorkingPattern]{Items: []v1.WorkingPattern{}}
	for rows.Next() {
		var (
			id                   sql.NullInt64
			name, hours          sql.NullString
			def                  sql.NullBool
			days                 [7]sql.NullBool
			dayHours             [7]sql.NullString
			created, updated, ex sql.NullString
		)
		dest := []any{&id, &name, &def, &hours}
		for i := range days {
			dest = append(dest, &days[i])
		}
		for i := range dayHours {
			dest = append(dest, &dayHours[i])
		}
		dest = append(dest, &created, &updated, &ex, &list.Version, &list.Total)
		if err := rows.Scan(dest...); err != nil {
			return list, fmt.Errorf("list working patterns: %w", err)
		}
		if !id.Valid { // the meta row alone: an empty page
			continue
		}
		w := v1.WorkingPattern{ID: id.Int64, Name: name.String, Default: boolPtr(def), TotalHours: hours.String,
			CreatedAt: created.String, UpdatedAt: updated.String, Extra: v1.Extra(ex.String)}
		for i := range days {
			w.Days[i] = boolPtr(days[i])
			w.Hours[i] = dayHours[i].String
		}
		list.Items = append(list.Items, w)
	}
	if err := rows.Err(); err != nil {
		return list, fmt.Errorf("list working patterns: %w", err)
	}
	return list, nil
}

// ListDepartments reads one page of the departments.
func (s *Store) ListDepartments(ctx context.Context, p v1.Page) (v1.List[v1.Ref], error) {
	return s.refPage(ctx, "list departments", s.q.departmentPage, p)
}

// ListHolidayAllowances reads one page of the holiday allowances.
func (s *Store) ListHolidayAllowances(ctx context.Context, p v1.Page) (v1.List[v1.Ref], error) {
	return s.refPage(ctx, "list holiday allowances", s.q.allowancePage, p)
}

func (s *Store) refPage(ctx context.Context, op, query string, p v1.Page) (v1.List[v1.Ref], error) {
	rows, err := s.db.QueryContext(ctx, query, p.Size, p.Offset())
	if err != nil {
		return v1.List[v1.Ref]{}, fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()
	list := v1.List[v1.Ref]{Items: []v1.Ref{}}
	for rows.Next() {
		var id sql.NullInt64
		var name, ex sql.NullString
		if err := rows.Scan(&id, &name, &ex, &list.Version, &list.Total); err != nil {
			return list, fmt.Errorf("%s: %w", op, err)
		}
		if id.Valid {
			list.Items = append(list.Items, v1.Ref{ID: id.Int64, Name: name.String, Extra: v1.Extra(ex.String)})
		}
	}
	if err := rows.Err(); err != nil {
		return list, fmt.Errorf("%s: %w", op, err)
	}
	return list, nil
}

// EmailTaken reports whether a served employee has the email, ignoring case.
func (s *Store) EmailTaken(ctx context.Context, email string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.q.emailTaken, strings.ToLower(email)).Scan(&n); err != nil {
		return false, fmt.Errorf("check email: %w", err)
	}
	return n > 0, nil
}
