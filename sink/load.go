package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/schema"
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
	table    string // the staging table
	cols     []string
	seq      int64 // records staged, duplicates included
	// distinctAt is seq when Distinct last counted, distinct what it counted: when the two
	// agree with seq, the staged walk has no duplicates and the merge reads it as it is.
	distinctAt, distinct int64
}

// MergeOptions says how a Load is merged.
type MergeOptions struct {
	// DryRun computes what the merge would do and writes nothing.
	DryRun bool
	// Complete says the walk was verified complete: only then are records the source no longer
	// lists soft-deleted.
	Complete bool
	// MaxDeleteShare refuses deletions when more than this share of the served records would go
	// (default 0.10); AllowMassDelete lifts the guard.
	MaxDeleteShare  float64
	AllowMassDelete bool
}

// MergeResult counts what a merge did (or, for a dry run, would do). Inserted are records new to
// the served collection, Updated served records that changed, Unchanged served records that did
// not; Deleted were soft-deleted.
type MergeResult struct {
	Inserted, Updated, Unchanged, Deleted int64
	// DeletionsRefused counts the soft deletes the guard refused, and GuardReason says why.
	DeletionsRefused int64
	GuardReason      string
}

// employee columns, in the order staged and merged (id first). The staging table also carries
// the nested objects' fields (refCols).
var employeeCols = []string{"id", "account_id", "first_name", "last_name", "email", "job_title", "status",
	"company_join_date", "job_start_date", "length_of_service_in_months", "age", "full_or_part_time",
	"notice_period", "working_pattern_id", "holiday_allowance_id", "department_id", "line_manager_id",
	"holiday_approver_id", "receives_statutory_holidays", "hr", "created_at", "updated_at", "extra", "nested"}

var refCols = []string{"wp_name", "wp_total_hours", "wp_default", "ha_name", "ha_extra",
	"d_name", "d_extra", "lm_first_name", "lm_last_name", "lm_email", "ap_first_name", "ap_last_name", "ap_email"}

var patternCols = func() []string {
	c := []string{"id", "name", "is_default", "total_hours"}
	c = append(c, v1.Weekdays[:]...)
	for _, d := range v1.Weekdays {
		c = append(c, d+"_hr")
	}
	return append(c, "created_at", "updated_at", "extra")
}()

// columnTypes are each staged column's type per dialect (Postgres, SQLite).
func columnType(d schema.Dialect, col string) string {
	pg := map[string]string{
		"id": "bigint", "account_id": "bigint", "length_of_service_in_months": "integer",
		"company_join_date": "date", "job_start_date": "date",
		"created_at": "timestamptz", "updated_at": "timestamptz",
		"receives_statutory_holidays": "boolean", "hr": "boolean", "wp_default": "boolean", "is_default": "boolean",
		"wp_total_hours": "numeric", "total_hours": "numeric",
		"age": "json", "full_or_part_time": "json", "notice_period": "json", "extra": "json",
		"nested": "json", "ha_extra": "json", "d_extra": "json",
	}
	if strings.HasSuffix(col, "_id") {
		return map[schema.Dialect]string{schema.Postgres: "bigint", schema.SQLite: "INTEGER"}[d]
	}
	for _, day := range v1.Weekdays {
		switch col {
		case day:
			pg[col] = "boolean"
		case day + "_hr":
			pg[col] = "numeric"
		}
	}
	t, ok := pg[col]
	if !ok {
		t = "text"
	}
	if d == schema.Postgres {
		return t
	}
	switch t {
	case "bigint", "integer", "boolean":
		return "INTEGER"
	}
	return "TEXT"
}

// BeginLoad starts staging a walk of one resource.
func (s *Store) BeginLoad(ctx context.Context, r Resource) (*Load, error) {
	l := &Load{s: s, resource: r}
	switch r {
	case Employees:
		l.table, l.cols = "stage_employees", append(append([]string{}, employeeCols...), refCols...)
	case WorkingPatterns:
		l.table, l.cols = "stage_working_patterns", patternCols
	default:
		return nil, fmt.Errorf("begin load: unknown resource %q", r)
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
	defs := []string{"seq " + columnType(s.dialect, "id")}
	for _, c := range l.cols {
		defs = append(defs, c+" "+columnType(s.dialect, c))
	}
	for _, q := range []string{
		`DROP TABLE IF EXISTS ` + l.table,
		`DROP TABLE IF EXISTS ` + l.table + `_latest`,
		`DROP TABLE IF EXISTS ` + l.table + `_seen`,
		`DROP TABLE IF EXISTS ` + l.table + `_delta`,
		`CREATE TEMPORARY TABLE ` + l.table + ` (` + strings.Join(defs, ", ") + `)`,
		`CREATE TEMPORARY TABLE ` + l.table + `_seen (id ` + columnType(s.dialect, "id") + ` PRIMARY KEY)`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("begin load %s: %w", r, err)
		}
	}
	return l, nil
}

// Staged is the number of records staged, duplicates included.
func (l *Load) Staged() int64 { return l.seq }

// AddEmployees stages one page of employees.
func (l *Load) AddEmployees(ctx context.Context, es []v1.Employee) error {
	if l.resource != Employees {
		return fmt.Errorf("stage employees: load is for %s", l.resource)
	}
	rows := make([][]any, len(es))
	for i := range es {
		rows[i] = stagedEmployee(&es[i])
	}
	return l.stage(ctx, rows)
}

// AddWorkingPatterns stages one page of working patterns.
func (l *Load) AddWorkingPatterns(ctx context.Context, ps []v1.WorkingPattern) error {
	if l.resource != WorkingPatterns {
		return fmt.Errorf("stage working patterns: load is for %s", l.resource)
	}
	rows := make([][]any, len(ps))
	for i := range ps {
		p := &ps[i]
		row := []any{p.ID, nullStr(p.Name), p.Default, nullStr(p.TotalHours)}
		for d := range v1.Weekdays {
			row = append(row, p.Days[d])
		}
		for d := range v1.Weekdays {
			row = append(row, nullStr(p.Hours[d]))
		}
		rows[i] = append(row, nullStr(p.CreatedAt), nullStr(p.UpdatedAt), nullRaw(p.Extra))
	}
	return l.stage(ctx, rows)
}

func stagedEmployee(e *v1.Employee) []any {
	row := []any{e.ID, e.AccountID, nullStr(e.FirstName), nullStr(e.LastName), nullStr(e.Email),
		nullStr(e.JobTitle), nullStr(e.Status), nullStr(e.CompanyJoinDate), nullStr(e.JobStartDate),
		e.LengthOfServiceInMonths, nullRaw(e.Age), nullRaw(e.FullOrPartTime), nullRaw(e.NoticePeriod),
		patternID(e.WorkingPattern), refID(e.HolidayAllowance), refID(e.Department),
		personID(e.LineManager), personID(e.HolidayApprover), e.ReceivesStatutoryHolidays, e.HR,
		nullStr(e.CreatedAt), nullStr(e.UpdatedAt), nullRaw(e.Extra), nullRaw(e.NestedRaw())}
	if p := e.WorkingPattern; p != nil {
		row = append(row, nullStr(p.Name), nullStr(p.TotalHours), p.Default)
	} else {
		row = append(row, nil, nil, nil)
	}
	for _, r := range []*v1.Ref{e.HolidayAllowance, e.Department} {
		if r != nil {
			row = append(row, nullStr(r.Name), nullRaw(r.Extra))
		} else {
			row = append(row, nil, nil)
		}
	}
	for _, p := range []*v1.PersonRef{e.LineManager, e.HolidayApprover} {
		if p != nil {
			row = append(row, nullStr(p.FirstName), nullStr(p.LastName), nullStr(p.Email))
		} else {
			row = append(row, nil, nil, nil)
		}
	}
	return row
}

// stage writes rows (each numbered by arrival) in one short transaction.
func (l *Load) stage(ctx context.Context, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	tx, err := l.conn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("stage %s: %w", l.resource, busyErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	cols := append([]string{"seq"}, l.cols...)
	if l.s.dialect == schema.Postgres {
		// lib/pq runs a prepared COPY … FROM STDIN as a COPY stream: one round trip a page.
		stmt, err := tx.PrepareContext(ctx, `COPY `+l.table+` (`+strings.Join(cols, ", ")+`) FROM STDIN`)
		if err != nil {
			return fmt.Errorf("stage %s: %w", l.resource, err)
		}
		for i, row := range rows {
			if _, err := stmt.ExecContext(ctx, append([]any{l.seq + int64(i) + 1}, row...)...); err != nil {
				_ = stmt.Close()
				return fmt.Errorf("stage %s: %w", l.resource, err)
			}
		}
		if _, err := stmt.ExecContext(ctx); err != nil {
			_ = stmt.Close()
			return fmt.Errorf("stage %s: %w", l.resource, err)
		}
		if err := stmt.Close(); err != nil {
			return fmt.Errorf("stage %s: %w", l.resource, err)
		}
	} else {
		// One multi-row INSERT per batch, well under SQLite's 32,766 variables.
		per := max(1, 30000/len(cols))
		for start := 0; start < len(rows); start += per {
			batch := rows[start:min(start+per, len(rows))]
			ph := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
			args := make([]any, 0, len(batch)*len(cols))
			for i, row := range batch {
				args = append(args, l.seq+int64(start+i)+1)
				args = append(args, row...)
			}
			q := `INSERT INTO ` + l.table + ` (` + strings.Join(cols, ", ") + `) VALUES ` +
				strings.TrimSuffix(strings.Repeat(ph+",", len(batch)), ",")
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("stage %s: %w", l.resource, err)
			}
		}
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

// DeletionCandidates counts the served records of the resource that the staged walk (and every
// remembered walk) did not see: what a merge of a complete walk would soft-delete.
func (l *Load) DeletionCandidates(ctx context.Context) (int64, error) {
	target := string(l.resource)
	var n int64
	err := l.conn.QueryRowxContext(ctx, `SELECT count(*) FROM `+target+` WHERE listed AND deleted_at IS NULL
    AND origin IN ('source', 'seed')
    AND NOT EXISTS (SELECT 1 FROM `+l.table+` s WHERE s.id = `+target+`.id)
    AND NOT EXISTS (SELECT 1 FROM `+l.table+`_seen s WHERE s.id = `+target+`.id)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count deletion candidates: %w", err)
	}
	return n, nil
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
	return errors.Join(err1, err2, err3, err4, l.conn.Close())
}

// Merge applies the staged walk in one transaction: nested references first, then the records
// (only those that changed are written), then, for a complete walk, soft deletes of records the
// source no longer lists, unless the guard refuses them. A dry run rolls everything back.
//
// A Load begun under a lock first proves, inside the merge transaction, that this process still
// holds the lock (see heldLock.prove), so that two merges under one lock never both commit; if
// it does not, the merge fails with a *LockLostError and writes nothing.
func (l *Load) Merge(ctx context.Context, opts MergeOptions) (MergeResult, error) {
	if opts.MaxDeleteShare <= 0 {
		opts.MaxDeleteShare = 0.10
	}
	m := merger{d: l.s.dialect, stage: l.table, latest: l.table + "_latest", seen: l.table + "_seen", delta: l.table + "_delta",
		unique: l.distinctAt == l.seq && l.distinct == l.seq}
	tx, err := l.conn.BeginTxx(ctx, nil)
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, busyErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	if l.lock != nil && !opts.DryRun {
		if err := l.lock.prove(ctx, tx); err != nil {
			return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, err)
		}
	}
	var res MergeResult
	switch l.resource {
	case Employees:
		res, err = m.employees(ctx, tx, opts)
	case WorkingPatterns:
		res, err = m.patterns(ctx, tx, opts)
	}
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: %w", l.resource, busyErr(err))
	}
	if opts.DryRun {
		return res, nil // rolled back by the deferred Rollback
	}
	if err := tx.Commit(); err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: commit: %w", l.resource, busyErr(err))
	}
	return res, nil
}

// merger builds and runs the merge statements of one dialect.
type merger struct {
	d                   schema.Dialect
	stage, latest, seen string
	delta               string // the ids the merge writes, and why (classify)
	unique              bool   // the stage holds each id once: no de-duplicated copy is needed
}

// maxBool and maxJSON aggregate per id in both dialects: the references' fields are chosen
// the same way whatever order the pages arrived in, so an unchanged source writes nothing.
func (m merger) maxBool(c string) string {
	if m.d == schema.Postgres {
		return "bool_or(" + c + ")"
	}
	return "max(" + c + ")"
}

func (m merger) maxJSON(c string) string {
	if m.d == schema.Postgres {
		return "CAST(max(CAST(" + c + " AS text)) AS json)"
	}
	return "max(" + c + ")"
}

func (m merger) now() string {
	if m.d == schema.Postgres {
		return "now()"
	}
	return "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
}

// changed is true when any of cols differs between t and s, or when t is not a served source
// record. Decimals and JSON compare as text ("30.0" and "30.00" differ, as the source's text
// does; json has no equality); on Postgres the other types compare as themselves, which costs
// far less than formatting every timestamp and date as text (the comparison runs over every
// staged row). SQLite compares everything as text.
func (m merger) changed(t, s string, cols []string) string {
	var l, r []string
	for _, c := range cols {
		if c == "id" {
			continue
		}
		if typ := columnType(m.d, c); m.d == schema.Postgres && typ != "json" && typ != "numeric" {
			l, r = append(l, t+"."+c), append(r, s+"."+c)
			continue
		}
		l = append(l, "CAST("+t+"."+c+" AS text)")
		r = append(r, "CAST("+s+"."+c+" AS text)")
	}
	return "((" + strings.Join(l, ", ") + ") IS DISTINCT FROM (" + strings.Join(r, ", ") + ") OR " + t + ".origin <> 'source')"
}

func exec(ctx context.Context, tx *sqlx.Tx, q string, args ...any) (int64, error) {
	r, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", firstWords(q), err)
	}
	return r.RowsAffected()
}

func firstWords(q string) string {
	f := strings.Fields(q)
	return strings.Join(f[:min(4, len(f))], " ")
}

// prepare keeps the last staged version of each id (a record seen twice during a shifting walk
// is taken as last seen) and serializes the merge with creates and other merges. A walk with no
// duplicates (the rule) is merged from the staging table itself.
func (m *merger) prepare(ctx context.Context, tx *sqlx.Tx) error {
	if m.d == schema.Postgres {
		if _, err := exec(ctx, tx, `SELECT 1 FROM meta FOR UPDATE`); err != nil {
			return err
		}
	}
	if _, err := exec(ctx, tx, `DROP TABLE IF EXISTS `+m.latest); err != nil {
		return err
	}
	if m.unique {
		m.latest = m.stage
	} else {
		_, err := exec(ctx, tx, `CREATE TEMPORARY TABLE `+m.latest+` AS SELECT * FROM `+m.stage+
			` WHERE seq IN (SELECT max(seq) FROM `+m.stage+` GROUP BY id)`)
		if err != nil {
			return err
		}
	}
	if m.d != schema.Postgres {
		return nil
	}
	if _, err := exec(ctx, tx, `CREATE INDEX ON `+m.latest+` (id)`); err != nil {
		return err
	}
	_, err := exec(ctx, tx, `ANALYZE `+m.latest+` (id)`) // the joins need only id's statistics
	return err
}

// classify compares the staged records with the table once, before the merge: the ids that
// need a write go into the delta table with what they need ('new': not in the table; 'back':
// there but not served; 'changed'), and the counts come from it. The writes then touch only
// those ids, so a nightly merge compares every row once, not once to count and again to write.
func (m merger) classify(ctx context.Context, tx *sqlx.Tx, table string, cols []string) (MergeResult, error) {
	var res MergeResult
	visible := "t.listed AND t.deleted_at IS NULL"
	for _, q := range []string{
		`DROP TABLE IF EXISTS ` + m.delta,
		`CREATE TEMPORARY TABLE ` + m.delta + ` AS
SELECT s.id, CASE WHEN t.id IS NULL THEN 'new' WHEN NOT (` + visible + `) THEN 'back' ELSE 'changed' END AS need
FROM ` + m.latest + ` s LEFT JOIN ` + table + ` t ON t.id = s.id
WHERE t.id IS NULL OR NOT (` + visible + `) OR ` + m.changed("t", "s", cols),
	} {
		if _, err := exec(ctx, tx, q); err != nil {
			return res, fmt.Errorf("classify %s: %w", table, err)
		}
	}
	if m.d == schema.Postgres {
		if _, err := exec(ctx, tx, `ANALYZE `+m.delta); err != nil {
			return res, fmt.Errorf("classify %s: %w", table, err)
		}
	}
	var total int64
	err := tx.QueryRowxContext(ctx, `SELECT coalesce(sum(CASE WHEN need = 'changed' THEN 0 ELSE 1 END), 0),
    coalesce(sum(CASE WHEN need = 'changed' THEN 1 ELSE 0 END), 0), (SELECT count(*) FROM `+m.latest+`)
FROM `+m.delta).Scan(&res.Inserted, &res.Updated, &total)
	if err != nil {
		return res, fmt.Errorf("classify %s: %w", table, err)
	}
	res.Unchanged = total - res.Inserted - res.Updated
	return res, nil
}

// upsert writes what classify found: an UPDATE of the ids there but changed or not served, then
// a plain INSERT of the new ones (no ON CONFLICT arbitration per row: the merge holds the meta
// lock, so no other writer adds an id in between).
func (m merger) upsert(ctx context.Context, tx *sqlx.Tx, table string, cols []string) error {
	var set, sCols []string
	for _, c := range cols {
		if c != "id" {
			set = append(set, c+" = s."+c)
		}
		sCols = append(sCols, "s."+c)
	}
	_, err := exec(ctx, tx, `UPDATE `+table+` SET `+strings.Join(set, ", ")+`, listed = true, origin = 'source',
    deleted_at = NULL, synced_at = `+m.now()+`
FROM `+m.latest+` s JOIN `+m.delta+` d ON d.id = s.id
WHERE `+table+`.id = s.id AND d.need <> 'new'`)
	if err != nil {
		return err
	}
	_, err = exec(ctx, tx, `INSERT INTO `+table+` (`+strings.Join(cols, ", ")+`, listed, origin, deleted_at, synced_at)
SELECT `+strings.Join(sCols, ", ")+`, true, 'source', NULL, `+m.now()+`
FROM `+m.latest+` s JOIN `+m.delta+` d ON d.id = s.id
WHERE d.need = 'new'`)
	return err
}

// softDelete retires served source records the walk did not see, within the guard. Seeded rows
// (the default pattern and allowance a new warehouse starts with) give way to the source's own
// records once it lists any; they never count against the guard, which protects source data.
func (m merger) softDelete(ctx context.Context, tx *sqlx.Tx, table string, opts MergeOptions, res *MergeResult, visibleBefore int64) error {
	if !opts.Complete || visibleBefore == 0 {
		return nil // only records served before the merge can be gone
	}
	staged := res.Inserted + res.Updated + res.Unchanged // classify counted the staged records
	origins := "'source'"
	if staged > 0 {
		origins = "'source', 'seed'"
	}
	gone := `FROM ` + table + ` WHERE listed AND deleted_at IS NULL AND origin IN (` + origins + `)
    AND NOT EXISTS (SELECT 1 FROM ` + m.latest + ` l WHERE l.id = ` + table + `.id)
    AND NOT EXISTS (SELECT 1 FROM ` + m.seen + ` s WHERE s.id = ` + table + `.id)`
	var n, fromSource int64
	err := tx.QueryRowxContext(ctx, `SELECT count(*), coalesce(sum(CASE WHEN origin = 'source' THEN 1 ELSE 0 END), 0) `+gone).Scan(&n, &fromSource)
	if err != nil {
		return fmt.Errorf("count deletions: %w", err)
	}
	if n == 0 {
		return nil
	}
	if !opts.AllowMassDelete {
		switch {
		case staged == 0 && fromSource > 0:
			res.GuardReason = fmt.Sprintf("the source lists no %s while the warehouse serves %d", table, visibleBefore)
		case float64(fromSource) > opts.MaxDeleteShare*float64(visibleBefore):
			res.GuardReason = fmt.Sprintf("%d of %d %s (%.1f%%) would be deleted, more than the %.1f%% allowed",
				fromSource, visibleBefore, table, 100*float64(fromSource)/float64(visibleBefore), 100*opts.MaxDeleteShare)
		}
		if res.GuardReason != "" {
			res.DeletionsRefused = fromSource
			return nil
		}
	}
	deleted, err := exec(ctx, tx, `UPDATE `+table+` SET deleted_at = `+m.now()+`, synced_at = `+m.now()+` WHERE id IN (SELECT id `+gone+`)`)
	res.Deleted = deleted
	return err
}

func (m merger) visible(ctx context.Context, tx *sqlx.Tx, table string) (int64, error) {
	var n int64
	err := tx.QueryRowxContext(ctx, `SELECT `+table+`_total FROM meta`).Scan(&n)
	return n, err
}

func (m *merger) employees(ctx context.Context, tx *sqlx.Tx, opts MergeOptions) (MergeResult, error) {
	if err := m.prepare(ctx, tx); err != nil {
		return MergeResult{}, err
	}
	before, err := m.visible(ctx, tx, "employees")
	if err != nil {
		return MergeResult{}, err
	}
	res, err := m.classify(ctx, tx, "employees", employeeCols)
	if err != nil {
		return res, err
	}
	now := m.now()
	// Departments and holiday allowances exist only as nested objects: the latest form wins.
	for _, ref := range []struct{ table, prefix, col string }{
		{"departments", "d", "department_id"}, {"holiday_allowances", "ha", "holiday_allowance_id"},
	} {
		p := ref.prefix
		_, err := exec(ctx, tx, `INSERT INTO `+ref.table+` (id, name, extra, origin, synced_at)
SELECT `+ref.col+`, max(`+p+`_name), `+m.maxJSON(p+"_extra")+`, 'source', `+now+` FROM `+m.latest+`
WHERE `+ref.col+` IS NOT NULL GROUP BY `+ref.col+`
ON CONFLICT (id) DO UPDATE SET name = excluded.name, extra = excluded.extra, origin = 'source',
    deleted_at = NULL, synced_at = excluded.synced_at
WHERE (CAST(`+ref.table+`.name AS text), CAST(`+ref.table+`.extra AS text), `+ref.table+`.origin, `+ref.table+`.deleted_at IS NULL)
    IS DISTINCT FROM (CAST(excluded.name AS text), CAST(excluded.extra AS text), 'source', true)`)
		if err != nil {
			return res, err
		}
	}
	// A working pattern only seen nested is kept as an unlisted row; listed ones keep their own.
	_, err = exec(ctx, tx, `INSERT INTO working_patterns (id, name, total_hours, is_default, listed, origin, synced_at)
SELECT working_pattern_id, max(wp_name), max(wp_total_hours), `+m.maxBool("wp_default")+`, false, 'source', `+now+`
FROM `+m.latest+` WHERE working_pattern_id IS NOT NULL GROUP BY working_pattern_id
ON CONFLICT (id) DO UPDATE SET name = excluded.name, total_hours = excluded.total_hours,
    is_default = excluded.is_default, synced_at = excluded.synced_at
WHERE NOT working_patterns.listed AND (CAST(working_patterns.name AS text), CAST(working_patterns.total_hours AS text), CAST(working_patterns.is_default AS text))
    IS DISTINCT FROM (CAST(excluded.name AS text), CAST(excluded.total_hours AS text), CAST(excluded.is_default AS text))`)
	if err != nil {
		return res, err
	}
	if err := m.upsert(ctx, tx, "employees", employeeCols); err != nil {
		return res, err
	}
	// Managers and approvers the collection does not list are kept as unlisted rows.
	_, err = exec(ctx, tx, `INSERT INTO employees (id, first_name, last_name, email, listed, origin, synced_at)
SELECT id, max(first_name), max(last_name), max(email), false, 'source', `+now+` FROM (
    SELECT line_manager_id AS id, lm_first_name AS first_name, lm_last_name AS last_name, lm_email AS email
    FROM `+m.latest+` WHERE line_manager_id IS NOT NULL
    UNION ALL
    SELECT holiday_approver_id, ap_first_name, ap_last_name, ap_email
    FROM `+m.latest+` WHERE holiday_approver_id IS NOT NULL) p
WHERE NOT EXISTS (SELECT 1 FROM `+m.latest+` l WHERE l.id = p.id) -- listed: written above
GROUP BY id
ON CONFLICT (id) DO UPDATE SET first_name = excluded.first_name, last_name = excluded.last_name,
    email = excluded.email, synced_at = excluded.synced_at
WHERE NOT employees.listed AND (employees.first_name, employees.last_name, employees.email)
    IS DISTINCT FROM (excluded.first_name, excluded.last_name, excluded.email)`)
	if err != nil {
		return res, err
	}
	return res, m.softDelete(ctx, tx, "employees", opts, &res, before)
}

func (m *merger) patterns(ctx context.Context, tx *sqlx.Tx, opts MergeOptions) (MergeResult, error) {
	if err := m.prepare(ctx, tx); err != nil {
		return MergeResult{}, err
	}
	before, err := m.visible(ctx, tx, "working_patterns")
	if err != nil {
		return MergeResult{}, err
	}
	res, err := m.classify(ctx, tx, "working_patterns", patternCols)
	if err != nil {
		return res, err
	}
	if err := m.upsert(ctx, tx, "working_patterns", patternCols); err != nil {
		return res, err
	}
	return res, m.softDelete(ctx, tx, "working_patterns", opts, &res, before)
}
