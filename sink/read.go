package sink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/source/v1"
)

// tableReads are the read paths of one declared table. Its statements are prepared once, on
// first use: Postgres then plans them once per connection instead of on every request (planning
// cost more than running a page), and a process pays only for the tables it reads.
type tableReads struct {
	t *table
	// pageQuery reads the served rows with ids in [?, ?], at most ? of them, a row that keeps
	// sent as its id and sent only (selectList's sentOnly); pageFullQuery the same rows with
	// every column, read only for a page with a sent that cannot be served (hand-edited);
	// byIDQuery one served row, every column; byIDsQuery the served rows of a list of ids (one
	// parameter, the dialect's idList), every column, in id order; totalsQuery the warehouse's
	// version and the table's Total; visibleIDs the served ids in order (read in a snapshot with
	// totals).
	pageQuery, pageFullQuery, byIDQuery, byIDsQuery, totalsQuery, visibleIDs string

	mu                                  sync.Mutex
	page, pageFull, byID, byIDs, totals *sqlx.Stmt

	ids idCache
	// loadMu makes one goroutine reload the id cache after a write while the others wait and
	// reuse what it read.
	loadMu sync.Mutex
}

func newTableReads(s *Store, t *table) *tableReads {
	sel := "SELECT " + t.selectList(s.d, false) + "\nWHERE " + t.visible("t")
	const page = ` AND t.id BETWEEN ? AND ? ORDER BY t.id LIMIT ?`
	return &tableReads{t: t,
		pageQuery:     s.db.Rebind("SELECT " + t.selectList(s.d, true) + "\nWHERE " + t.visible("t") + page),
		pageFullQuery: s.db.Rebind(sel + page),
		byIDQuery:     s.db.Rebind(sel + ` AND t.id = ?`),
		byIDsQuery:    s.db.Rebind(sel + ` AND ` + s.d.idIn("t.id") + ` ORDER BY t.id`),
		totalsQuery:   `SELECT version, ` + t.name + `_total FROM meta`,
		visibleIDs:    `SELECT id FROM ` + t.name + ` t WHERE ` + t.visible("t") + ` ORDER BY id`,
	}
}

// prepared prepares the statements, once; a failure is returned and tried again next time.
func (r *tableReads) prepared(ctx context.Context, s *Store) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.totals != nil {
		return nil
	}
	var stmts [5]*sqlx.Stmt
	for i, q := range []string{r.pageQuery, r.pageFullQuery, r.byIDQuery, r.byIDsQuery, r.totalsQuery} {
		st, err := s.db.PreparexContext(ctx, q)
		if err != nil {
			for _, p := range stmts[:i] {
				_ = p.Close()
			}
			return fmt.Errorf("prepare: %w", err)
		}
		stmts[i] = st
	}
	r.page, r.pageFull, r.byID, r.byIDs, r.totals = stmts[0], stmts[1], stmts[2], stmts[3], stmts[4]
	return nil
}

func (r *tableReads) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range []*sqlx.Stmt{r.page, r.pageFull, r.byID, r.byIDs, r.totals} {
		if st != nil {
			_ = st.Close()
		}
	}
	r.page, r.pageFull, r.byID, r.byIDs, r.totals = nil, nil, nil, nil, nil
}

// listPage reads one page of a collection's served records, its Total and the version it was
// read at, in one statement (one snapshot). See idCache for how the page is found.
func listPage[T any](ctx context.Context, s *Store, c *collection[T], p v1.Page) (v1.List[T], error) {
	return listPageOf(ctx, s, c, p, false)
}

// listPageOf is listPage, every column of every row read when full (the page as it was read
// before pages sent only sent: what tests compare answers with).
func listPageOf[T any](ctx context.Context, s *Store, c *collection[T], p v1.Page, full bool) (v1.List[T], error) {
	r := s.readsOf(c.name)
	if err := r.prepared(ctx, s); err != nil {
		return v1.List[T]{}, err
	}
	for attempt := 0; ; attempt++ {
		ids, cachedVersion, ok := r.ids.get()
		if !ok || attempt > 0 {
			var err error
			if ids, cachedVersion, err = s.loadIDs(ctx, r); err != nil {
				return v1.List[T]{}, err
			}
		}
		off := p.Offset()
		if off >= int64(len(ids)) {
			// Past the end at the cached version: confirm the version, answer empty.
			var v, total int64
			if err := r.totals.QueryRowContext(ctx).Scan(&v, &total); err != nil {
				return v1.List[T]{}, err
			}
			if v == cachedVersion || attempt >= 2 {
				return v1.List[T]{Items: []T{}, Total: total, Version: v}, nil
			}
			continue
		}
		end := min(off+p.Size, int64(len(ids)))
		stmt := r.page
		if full {
			stmt = r.pageFull
		}
		list, err := readRows(ctx, s, c, stmt, !full, ids[off], ids[end-1], end-off)
		if errors.Is(err, errSentUnserved) {
			// A row keeps a sent that cannot be served: the page with every column.
			list, err = readRows(ctx, s, c, r.pageFull, false, ids[off], ids[end-1], end-off)
		}
		if err != nil {
			return v1.List[T]{}, err
		}
		// Rows read at another version than the ids were may belong to other pages: reload.
		if (len(list.Items) > 0 && list.Version == cachedVersion) || attempt >= 2 {
			if len(list.Items) == 0 {
				list.Items = []T{}
			}
			return list, nil
		}
	}
}

// loadIDs reads the served ids and the version they belong to in one read-only snapshot. One
// goroutine reloads at a time; one that waited reuses the reload it waited for when it is
// current.
func (s *Store) loadIDs(ctx context.Context, r *tableReads) ([]int64, int64, error) {
	before, _, _ := r.ids.get()
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	if ids, v, ok := r.ids.get(); ok && !sameSlice(ids, before) {
		var current int64
		if err := r.totals.QueryRowContext(ctx).Scan(&current, new(int64)); err == nil && current == v {
			return ids, v, nil
		}
	}
	tx, err := s.db.BeginTxx(ctx, s.d.snapshot())
	if err != nil {
		return nil, 0, fmt.Errorf("load %s ids: %w", r.t.name, err)
	}
	defer func() { _ = tx.Rollback() }()
	var version, total int64
	if err := tx.QueryRowContext(ctx, r.totalsQuery).Scan(&version, &total); err != nil {
		return nil, 0, fmt.Errorf("load %s ids: %w", r.t.name, err)
	}
	ids := make([]int64, 0, total)
	if err := tx.SelectContext(ctx, &ids, r.visibleIDs); err != nil {
		return nil, 0, fmt.Errorf("load %s ids: %w", r.t.name, err)
	}
	r.ids.set(ids, version)
	return ids, version, nil
}

// sameSlice reports whether a and b are the same slice (the cache unchanged), not equal ones.
func sameSlice(a, b []int64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// getOne reads one served record of a collection and the version it was read at.
func getOne[T any](ctx context.Context, s *Store, c *collection[T], id int64) (T, int64, error) {
	r := s.readsOf(c.name)
	if err := r.prepared(ctx, s); err != nil {
		var zero T
		return zero, 0, err
	}
	list, err := readRows(ctx, s, c, r.byID, false, id)
	if err != nil {
		var zero T
		return zero, 0, err
	}
	if len(list.Items) == 0 {
		var zero T
		return zero, 0, v1.ErrNotFound
	}
	return list.Items[0], list.Version, nil
}

// getMany reads the served rows of ids, every column, in id order, in one statement (one
// snapshot); an id not served (or not there) is left out, an id given twice read once. It is
// getOne for a list: what a page of events reads of its employees, where reading them one by
// one cost a statement each.
func getMany[T any](ctx context.Context, s *Store, c *collection[T], ids []int64) ([]T, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return nil, nil
	}
	r := s.readsOf(c.name)
	if err := r.prepared(ctx, s); err != nil {
		return nil, err
	}
	list, err := readRows(ctx, s, c, r.byIDs, false, s.d.idList(ids))
	return list.Items, err
}

// errSentUnserved is readRows' error for a row that keeps a sent its record could not take (not
// a JSON object: edited by hand), which a page's statement sent without the other columns the
// record is then built from.
var errSentUnserved = errors.New("a row's sent cannot be served")

// readRows runs a read statement of the collection and builds its records; sentOnly says the
// statement is of selectList's sentOnly shape.
func readRows[T any](ctx context.Context, s *Store, c *collection[T], stmt *sqlx.Stmt, sentOnly bool, args ...any) (v1.List[T], error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return v1.List[T]{}, err
	}
	defer rows.Close()
	var list v1.List[T]
	now := s.opts.Now()
	rd := c.newReader()
	for rows.Next() {
		if err := rows.Scan(rd.dest...); err != nil {
			return list, err
		}
		item := rd.record(now)
		if sentOnly && rd.unserved(&item) {
			return list, errSentUnserved
		}
		list.Items = append(list.Items, item)
		list.Version, list.Total = rd.version, rd.total
	}
	return list, rows.Err()
}

// idCache holds the ids of a table's served rows in order, for one version of the warehouse.
// Page N of any size is then a primary-key range (ids[off] … ids[off+size-1]): page 1,000 costs
// what page 1 costs, where OFFSET would walk 99,900 index entries first.
type idCache struct {
	mu      sync.Mutex
	version int64
	ids     []int64
	loaded  bool
}

func (c *idCache) get() (ids []int64, version int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ids, c.version, c.loaded
}

func (c *idCache) set(ids []int64, version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded || version >= c.version {
		c.ids, c.version, c.loaded = ids, version, true
	}
}

// ListEmployees reads one page of the served employees: what serve answers from. An employee
// kept as the source sent it has its ID and Sent only (and AppendJSON writes it whole); one
// without Sent (created here, or stored before Sent was kept) has every field. Employee reads
// every field of one.
func (s *Store) ListEmployees(ctx context.Context, p v1.Page) (v1.List[v1.Employee], error) {
	list, err := listPage(ctx, s, employeeCollection, p)
	if err != nil {
		return list, fmt.Errorf("list employees: %w", err)
	}
	return list, nil
}

// Employee reads one served employee and the version it was read at.
func (s *Store) Employee(ctx context.Context, id int64) (v1.Employee, int64, error) {
	e, v, err := getOne(ctx, s, employeeCollection, id)
	switch {
	case errors.Is(err, v1.ErrNotFound):
		return e, v, fmt.Errorf("get employee %d: %w", id, err)
	case err != nil:
		return e, v, fmt.Errorf("get employee: %w", err)
	}
	return e, v, nil
}

// Employees reads the listed employees of ids in one statement, by id; an id not listed is not in
// the map: what a page of the events feed or a batch of webhook deliveries reads.
func (s *Store) Employees(ctx context.Context, ids []int64) (map[int64]v1.Employee, error) {
	list, err := getMany(ctx, s, employeeCollection, ids)
	if err != nil {
		return nil, fmt.Errorf("get employees: %w", err)
	}
	out := make(map[int64]v1.Employee, len(list))
	for _, e := range list {
		out[e.ID] = e
	}
	return out, nil
}

// ListWorkingPatterns reads one page of the served working patterns: as ListEmployees, one kept
// as sent has its ID and Sent only.
func (s *Store) ListWorkingPatterns(ctx context.Context, p v1.Page) (v1.List[v1.WorkingPattern], error) {
	list, err := listPage(ctx, s, patternCollection, p)
	if err != nil {
		return list, fmt.Errorf("list working patterns: %w", err)
	}
	return list, nil
}

// ListRecords reads one page of the served records of a collection the wire declares: as
// ListEmployees, one kept as sent has its ID and Sent only; Record reads every field of one.
func (s *Store) ListRecords(ctx context.Context, collection string, p v1.Page) (v1.List[v1.Record], error) {
	c, ok := wireCollections[collection]
	if !ok {
		return v1.List[v1.Record]{}, fmt.Errorf("list %s: %w", collection, ErrUnknownCollection)
	}
	list, err := listPage(ctx, s, c, p)
	if err != nil {
		return list, fmt.Errorf("list %s: %w", collection, err)
	}
	return list, nil
}

// Record reads one served record of a collection the wire declares, and the version it was read
// at.
func (s *Store) Record(ctx context.Context, collection string, id int64) (v1.Record, int64, error) {
	c, ok := wireCollections[collection]
	if !ok {
		return v1.Record{}, 0, fmt.Errorf("get %s %d: %w", collection, id, ErrUnknownCollection)
	}
	r, v, err := getOne(ctx, s, c, id)
	if err != nil {
		return r, v, fmt.Errorf("get %s %d: %w", collection, id, err)
	}
	return r, v, nil
}

// Totals reads the warehouse's version and every declared table's Total (its served rows), in
// one statement.
func (s *Store) Totals(ctx context.Context) (version int64, totals map[string]int64, err error) {
	dest := make([]any, 1+len(tables))
	dest[0] = &version
	counts := make([]int64, len(tables))
	for i := range tables {
		dest[1+i] = &counts[i]
	}
	if err := s.db.QueryRowContext(ctx, totalsQuery).Scan(dest...); err != nil {
		return 0, nil, fmt.Errorf("read totals: %w", err)
	}
	totals = make(map[string]int64, len(tables))
	for i, t := range tables {
		totals[t.name] = counts[i]
	}
	return version, totals, nil
}

// totalsQuery reads the version and every declared table's total, in the order of tables.
var totalsQuery = func() string {
	cols := make([]string, len(tables))
	for i, t := range tables {
		cols[i] = t.name + "_total"
	}
	return `SELECT version, ` + strings.Join(cols, ", ") + ` FROM meta`
}()

// ErrUnknownCollection is wrapped by the errors of reads of a collection the warehouse does not
// declare.
var ErrUnknownCollection = errors.New("no such collection in the warehouse")

// emailTaken counts the served employees with the email, ignoring case.
const emailTaken = `SELECT count(*) FROM employees WHERE lower(email) = ? AND listed AND deleted_at IS NULL`

// EmailTaken reports whether a served employee has the email, ignoring case.
func (s *Store) EmailTaken(ctx context.Context, email string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.db.Rebind(emailTaken), strings.ToLower(email)).Scan(&n); err != nil {
		return false, fmt.Errorf("check email: %w", err)
	}
	return n > 0, nil
}

// monthsSince counts whole months from a YYYY-MM-DD date to now (0 for a future date).
func monthsSince(date string, now time.Time) (int64, bool) {
	t, err := time.Parse(time.DateOnly, date)
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
