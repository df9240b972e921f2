package hrdata

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/internal/storedb"
	"github.com/jmoiron/sqlx"
)

// Stats are the rows Load wrote, by table, and how long it took.
type Stats struct {
	People, Current int
	Rows            map[string]int64 // by table, history tables included
	Took            time.Duration
}

// The tables Load writes, current tables in the order written; each with a history table but
// working_patterns.
var tables = []string{"working_patterns", "departments", "divisions", "locations", "holiday_allowances",
	"other_leave_reasons", "company_training_types", "employees",
	"absences", "sicknesses", "leave_requests", "employee_training_courses"}

// Load generates the firm of o into the store's warehouse, which must be migrated and hold no
// employees, in one transaction. On Postgres it needs to own the tables (it turns their user
// triggers off while it writes: ALTER TABLE … DISABLE TRIGGER USER; foreign keys stay checked).
func Load(ctx context.Context, s *sink.Store, o Options) (Stats, error) {
	start := time.Now()
	o = o.withDefaults()
	db := storedb.Of(s)
	pg := db.DriverName() == "postgres"
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM employees`).Scan(&n); err != nil {
		return Stats{}, fmt.Errorf("hrdata: count employees: %w", err)
	}
	if n > 0 {
		return Stats{}, fmt.Errorf("hrdata: the warehouse already holds %d employees; Load writes only an empty one", n)
	}
	f := newFirm(o)
	st := Stats{People: len(f.people), Current: o.Employees, Rows: map[string]int64{}}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("hrdata: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	w := &writer{ctx: ctx, tx: tx, pg: pg, stats: &st}
	restore, err := w.triggersOff()
	if err != nil {
		return st, err
	}
	// The rows the migrations seed (a default working pattern and holiday allowance) make way
	// for the firm's, as a sync's would replace them, with their history.
	for _, t := range tables {
		if err := w.exec(`DELETE FROM ` + t + ` WHERE origin = 'seed'`); err != nil {
			return st, err
		}
		if t != "working_patterns" {
			if err := w.exec(`DELETE FROM ` + t + `_history WHERE origin = 'seed'`); err != nil {
				return st, err
			}
		}
	}
	if err := f.write(w); err != nil {
		return st, err
	}
	if err := w.histories(f); err != nil {
		return st, err
	}
	if err := restore(); err != nil {
		return st, err
	}
	if err := w.recount(); err != nil {
		return st, err
	}
	if err := tx.Commit(); err != nil {
		return st, fmt.Errorf("hrdata: commit: %w", err)
	}
	st.Took = time.Since(start)
	return st, nil
}

// Count is what Load would write for o, without a warehouse: the people, and the rows of each
// table but the history tables of events and reference data (one version a row).
func Count(o Options) Stats {
	start := time.Now()
	o = o.withDefaults()
	f := newFirm(o)
	st := Stats{People: len(f.people), Current: o.Employees, Rows: map[string]int64{}}
	if err := f.write(&writer{stats: &st}); err != nil {
		panic(err) // counting fails nowhere
	}
	st.Took = time.Since(start)
	return st
}

// writer writes rows of one table at a time into the transaction: COPY on Postgres, multi-row
// INSERTs on SQLite.
type writer struct {
	ctx   context.Context
	tx    *sqlx.Tx
	pg    bool
	stats *Stats
}

// Values of columns whose form differs between the backends.
type (
	date  day       // a date column
	stamp time.Time // a timestamp column
	// validity is a history table's valid_from or valid_to: on SQLite in the form the triggers
	// write it (milliseconds).
	validity time.Time
	decimal  float64 // a numeric column (TEXT as written on SQLite)
)

func (w *writer) value(v any) any {
	switch x := v.(type) {
	case date:
		return day(x).time().Format(time.DateOnly)
	case *date:
		if x == nil {
			return nil
		}
		return day(*x).time().Format(time.DateOnly)
	case stamp:
		return time.Time(x).UTC().Format("2006-01-02T15:04:05Z")
	case validity:
		return time.Time(x).UTC().Format("2006-01-02T15:04:05.000Z")
	case *validity:
		if x == nil {
			return nil
		}
		return time.Time(*x).UTC().Format("2006-01-02T15:04:05.000Z")
	case decimal:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", float64(x)), "0"), ".")
	case bool:
		if w.pg {
			return x
		}
		if x {
			return int64(1)
		}
		return int64(0)
	case int:
		return int64(x)
	case int64:
		if x == 0 {
			return nil // no id
		}
		return x
	}
	return v
}

// table writes the rows rows emits into table (columns cols).
func (w *writer) table(table string, cols []string, rows func(emit func(vals ...any) error) error) error {
	var count int64
	var err error
	if w.tx == nil { // counting only (Count)
		err = rows(func(...any) error { count++; return nil })
	} else if w.pg {
		err = w.copy(table, cols, rows, &count)
	} else {
		err = w.insert(table, cols, rows, &count)
	}
	if err != nil {
		return fmt.Errorf("hrdata: write %s: %w", table, err)
	}
	w.stats.Rows[table] += count
	return nil
}

func (w *writer) copy(table string, cols []string, rows func(emit func(vals ...any) error) error, count *int64) error {
	stmt, err := w.tx.PrepareContext(w.ctx, `COPY `+table+` (`+strings.Join(cols, ", ")+`) FROM STDIN`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	buf := make([]any, len(cols))
	err = rows(func(vals ...any) error {
		if len(vals) != len(cols) {
			return fmt.Errorf("%d values for %d columns", len(vals), len(cols))
		}
		for i, v := range vals {
			buf[i] = w.value(v)
		}
		*count++
		_, err := stmt.ExecContext(w.ctx, buf...)
		return err
	})
	if err != nil {
		return err
	}
	if _, err := stmt.ExecContext(w.ctx); err != nil {
		return err
	}
	return stmt.Close()
}

func (w *writer) insert(table string, cols []string, rows func(emit func(vals ...any) error) error, count *int64) error {
	per := max(1, 30000/len(cols))
	ph := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	head := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES `
	full, err := w.tx.PrepareContext(w.ctx, head+strings.TrimSuffix(strings.Repeat(ph+",", per), ","))
	if err != nil {
		return err
	}
	defer full.Close()
	args := make([]any, 0, per*len(cols))
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		var err error
		if len(args) == per*len(cols) {
			_, err = full.ExecContext(w.ctx, args...)
		} else {
			n := len(args) / len(cols)
			_, err = w.tx.ExecContext(w.ctx, head+strings.TrimSuffix(strings.Repeat(ph+",", n), ","), args...)
		}
		args = args[:0]
		return err
	}
	err = rows(func(vals ...any) error {
		if len(vals) != len(cols) {
			return fmt.Errorf("%d values for %d columns", len(vals), len(cols))
		}
		for _, v := range vals {
			args = append(args, w.value(v))
		}
		*count++
		if len(args) == per*len(cols) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

func (w *writer) exec(q string, args ...any) error {
	if _, err := w.tx.ExecContext(w.ctx, q, args...); err != nil {
		return fmt.Errorf("hrdata: %.80s: %w", q, err)
	}
	return nil
}

// triggersOff turns off the user triggers of the tables Load writes (history and meta), and
// returns what turns them on again, in the same transaction.
func (w *writer) triggersOff() (restore func() error, err error) {
	if w.pg {
		for _, t := range tables {
			if err := w.exec(`ALTER TABLE ` + t + ` DISABLE TRIGGER USER`); err != nil {
				return nil, err
			}
		}
		return func() error {
			// The deferred foreign-key checks first: a table with pending ones cannot be altered.
			if err := w.exec(`SET CONSTRAINTS ALL IMMEDIATE`); err != nil {
				return err
			}
			for _, t := range tables {
				if err := w.exec(`ALTER TABLE ` + t + ` ENABLE TRIGGER USER`); err != nil {
					return err
				}
			}
			return nil
		}, nil
	}
	// SQLite cannot disable a trigger: drop them and create them again as they were.
	q, args, err := sqlx.In(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN (?) ORDER BY name`, tables)
	if err != nil {
		return nil, err
	}
	var trigs []struct{ Name, SQL string }
	if err := w.tx.SelectContext(w.ctx, &trigs, q, args...); err != nil {
		return nil, fmt.Errorf("hrdata: list triggers: %w", err)
	}
	for _, t := range trigs {
		if err := w.exec(`DROP TRIGGER "` + t.Name + `"`); err != nil {
			return nil, err
		}
	}
	return func() error {
		for _, t := range trigs {
			if err := w.exec(t.SQL); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// columns are the columns of a table, in order.
func (w *writer) columns(table string) ([]string, error) {
	var cols []string
	var err error
	if w.pg {
		err = w.tx.SelectContext(w.ctx, &cols, `SELECT column_name::text FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	} else {
		err = w.tx.SelectContext(w.ctx, &cols, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	}
	if err == nil && len(cols) == 0 {
		err = errors.New("no such table")
	}
	if err != nil {
		return nil, fmt.Errorf("hrdata: columns of %s: %w", table, err)
	}
	return cols, nil
}

// histories writes the history tables but employees' (written with the employees): one version
// of each row, from the firm's first day for the reference data and from its created_at for an
// event. The columns are those the table and its history share (all but synced_at).
func (w *writer) histories(f *firm) error {
	first := f.people[0].join.time()
	for _, t := range tables {
		if t == "working_patterns" || t == "employees" {
			continue
		}
		cols, err := w.columns(t)
		if err != nil {
			return err
		}
		hcols, err := w.columns(t + "_history")
		if err != nil {
			return err
		}
		in := map[string]bool{}
		for _, c := range hcols {
			in[c] = true
		}
		var shared []string
		for _, c := range cols {
			if in[c] && c != "synced_at" {
				shared = append(shared, c)
			}
		}
		list := strings.Join(shared, ", ")
		from := w.bind("?")
		var args []any
		switch {
		case inSlice(cols, "created_at"):
			from = "created_at"
			if !w.pg {
				from = `strftime('%Y-%m-%dT%H:%M:%fZ', created_at)`
			}
		case inSlice(cols, "start_date"), inSlice(cols, "start_on"):
			c := "start_date"
			if !inSlice(cols, c) {
				c = "start_on"
			}
			// Recorded on its first day.
			from = `(` + c + `::timestamp AT TIME ZONE 'UTC')`
			if !w.pg {
				from = c + ` || 'T00:00:00.000Z'`
			}
		default:
			args = append(args, w.value(validity(first)))
		}
		q := `INSERT INTO ` + t + `_history (valid_from, ` + list + `) SELECT ` + from + `, ` + list + ` FROM ` + t
		res, err := w.tx.ExecContext(w.ctx, q, args...)
		if err != nil {
			return fmt.Errorf("hrdata: write %s_history: %w", t, err)
		}
		n, _ := res.RowsAffected()
		w.stats.Rows[t+"_history"] = n
	}
	return nil
}

func (w *writer) bind(q string) string {
	if w.pg {
		return strings.ReplaceAll(q, "?", "$1")
	}
	return q
}

func inSlice(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// recount sets meta's totals as the triggers keep them (listed rows not deleted) and bumps its
// version once.
func (w *writer) recount() error {
	var sets []string
	for _, t := range tables {
		sets = append(sets, t+`_total = (SELECT count(*) FROM `+t+` WHERE listed AND deleted_at IS NULL)`)
	}
	return w.exec(`UPDATE meta SET version = version + 1, ` + strings.Join(sets, ", "))
}
