package sink_test

// BenchmarkServe measures serve mode end to end: the real /v1 handler (server.NewHandler) over
// the real *sink.Store, behind a real HTTP server on loopback, driven by keep-alive clients, over
// a warehouse of 100,000 employees. Beside it, in the same run, the SQL it replaces: an OFFSET
// page and a COUNT(*) Total. See docs/benchmarks.md for the command and the figures.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// The Postgres side of BenchmarkServe (bench_test.go): the baselines a data team would write,
// their plans, and what each read costs the tables.

// The Postgres statements the benchmark compares, on the seeded warehouse. employeeSelect is
// the store's own employee statement (sink/export_test.go), so the baselines are built on what
// the store runs.
var employeeSelect = sink.PostgresEmployeeSelect()

var (
	// what the store runs: the page as a primary-key range the id cache found
	rangeSQL = employeeSelect + ` AND t.id BETWEEN $1 AND $2 ORDER BY t.id LIMIT $3`
	// the same page by OFFSET, written the plain way
	offsetSQL = employeeSelect + ` ORDER BY t.id LIMIT $1 OFFSET $2`
	// the same page by OFFSET done before the joins (as read.go paged the small collections once)
	offsetSubSQL = strings.Replace(employeeSelect, "FROM employees t\n",
		"FROM (SELECT * FROM employees WHERE listed AND deleted_at IS NULL ORDER BY id LIMIT $1 OFFSET $2) t\n", 1) + ` ORDER BY t.id`
	// the store's page with the range applied in a subquery, not run by the store: it plans
	// several times faster than the flat join (see planTimes)
	rangeSubSQL = strings.Replace(employeeSelect, "FROM employees t\n",
		"FROM (SELECT * FROM employees WHERE listed AND deleted_at IS NULL AND id BETWEEN $1 AND $2 ORDER BY id LIMIT $3) t\n", 1) + ` ORDER BY t.id`
	countSQL = `SELECT count(*) FROM employees WHERE listed AND deleted_at IS NULL`
	metaSQL  = `SELECT employees_total FROM meta`
	idsSQL   = `SELECT id FROM employees WHERE listed AND deleted_at IS NULL ORDER BY id`
)

// scanAll reads every row of a query to the end, as raw bytes, and returns the first column of
// the first row and the row count.
func scanAll(ctx context.Context, db *sql.DB, query string, args ...any) (first string, n int, err error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return "", 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", 0, err
	}
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return "", 0, err
		}
		if n == 0 {
			first = string(raw[0])
		}
		n++
	}
	return first, n, rows.Err()
}

// sqlBaselines times the statements directly on the store's pool, with the same clients.
func (f *postgresBench) sqlBaselines(b *testing.B) {
	db := sinktest.DB(f.store).DB
	page := func(number int64) (lo, hi int64) {
		return (number-1)*benchPerPage + 1, number * benchPerPage // the seeded ids are 1…100,000
	}
	rows := func(want int, wantFirst int64, query string, args ...any) func(context.Context) error {
		return func(ctx context.Context) error {
			first, n, err := scanAll(ctx, db, query, args...)
			if err != nil {
				return err
			}
			if n != want || (wantFirst > 0 && first != strconv.FormatInt(wantFirst, 10)) {
				return fmt.Errorf("%d rows from %s, want %d from %d", n, first, want, wantFirst)
			}
			return nil
		}
	}
	for _, number := range []int64{1, 1000} {
		lo, hi := page(number)
		b.Run(fmt.Sprintf("sql=range/page=%d", number), func(b *testing.B) {
			measure(b, rows(benchPerPage, lo, rangeSQL, lo, hi, benchPerPage))
		})
		b.Run(fmt.Sprintf("sql=offset/page=%d", number), func(b *testing.B) {
			measure(b, rows(benchPerPage, lo, offsetSQL, benchPerPage, lo-1))
		})
		b.Run(fmt.Sprintf("sql=offset-subquery/page=%d", number), func(b *testing.B) {
			measure(b, rows(benchPerPage, lo, offsetSubSQL, benchPerPage, lo-1))
		})
	}
	b.Run("sql=total-meta", func(b *testing.B) {
		measure(b, rows(1, benchEmployees, metaSQL))
	})
	b.Run("sql=total-count", func(b *testing.B) {
		measure(b, rows(1, benchEmployees, countSQL))
	})
	// What the id cache costs to fill: once per warehouse version, not per request.
	b.Run("sql=load-ids", func(b *testing.B) {
		measure(b, rows(benchEmployees, 1, idsSQL))
	})
}

// explain logs the plans of the page-1,000 statements and of COUNT(*).
func (f *postgresBench) explain(b *testing.B) {
	ctx := context.Background()
	db := sinktest.DB(f.store).DB
	lo, hi := int64(99_901), int64(100_000)
	// The store's statement with its parameters filled in: the plan of the request.
	literal := strings.NewReplacer("$1", strconv.FormatInt(lo, 10), "$2", strconv.FormatInt(hi, 10), "$3", strconv.Itoa(benchPerPage)).Replace(rangeSQL)
	for _, q := range []struct{ name, sql string }{
		{"range page 1 (the store's statement)", strings.NewReplacer("$1", "1", "$2", "100", "$3", "100").Replace(rangeSQL)},
		{"range page 1000 (the store's statement)", literal},
		{"offset page 1000", strings.NewReplacer("$1", "100", "$2", "99900").Replace(offsetSQL)},
		{"offset-subquery page 1000", strings.NewReplacer("$1", "100", "$2", "99900").Replace(offsetSubSQL)},
		{"count(*)", countSQL},
		{"meta", metaSQL},
	} {
		// The second run is logged: the first also pays for loading catalog caches.
		if _, err := db.ExecContext(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+q.sql); err != nil {
			b.Fatalf("explain %s: %v", q.name, err)
		}
		rows, err := db.QueryContext(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+q.sql)
		if err != nil {
			b.Fatalf("explain %s: %v", q.name, err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				b.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		b.Logf("EXPLAIN (ANALYZE, BUFFERS) %s:\n%s", q.name, strings.Join(plan, "\n"))
	}
}

// planTimes logs the median planning and execution time of the compared statements as the
// store runs them (planned afresh on every request: lib/pq sends a statement with arguments
// unnamed), and of the page statement prepared on a cached generic plan, to show what
// planning costs per request.
func (f *postgresBench) planTimes(b *testing.B) {
	ctx := context.Background()
	conn, err := sinktest.DB(f.store).DB.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	median := func(query string) (plan, exec float64, text []string) {
		const n = 21
		var ps, es []float64
		for range n {
			rows, err := conn.QueryContext(ctx, query)
			if err != nil {
				b.Fatalf("%v\n%s", err, query)
			}
			text = text[:0]
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					b.Fatal(err)
				}
				text = append(text, line)
				var ms float64
				if _, err := fmt.Sscanf(line, "Planning Time: %f ms", &ms); err == nil {
					ps = append(ps, ms)
				} else if _, err := fmt.Sscanf(line, "Execution Time: %f ms", &ms); err == nil {
					es = append(es, ms)
				}
			}
			rows.Close()
		}
		slices.Sort(ps)
		slices.Sort(es)
		if len(ps) != n || len(es) != n {
			b.Fatalf("no timings in %q", text)
		}
		return ps[n/2], es[n/2], text
	}
	for _, q := range []struct{ name, sql string }{
		{"range page 1 (the store's statement)", strings.NewReplacer("$1", "1", "$2", "100", "$3", "100").Replace(rangeSQL)},
		{"range page 1000 (the store's statement)", strings.NewReplacer("$1", "99901", "$2", "100000", "$3", "100").Replace(rangeSQL)},
		{"range in a subquery page 1000 (not run)", strings.NewReplacer("$1", "99901", "$2", "100000", "$3", "100").Replace(rangeSubSQL)},
		{"offset page 1000", strings.NewReplacer("$1", "100", "$2", "99900").Replace(offsetSQL)},
		{"offset-subquery page 1", strings.NewReplacer("$1", "100", "$2", "0").Replace(offsetSubSQL)},
		{"offset-subquery page 1000", strings.NewReplacer("$1", "100", "$2", "99900").Replace(offsetSubSQL)},
		{"count(*)", countSQL},
		{"meta", metaSQL},
	} {
		p, e, _ := median("EXPLAIN (ANALYZE, SUMMARY, TIMING OFF) " + q.sql)
		b.Logf("%-40s planned per request: median planning %7.3f ms, execution %8.3f ms", q.name, p, e)
	}
	for _, q := range []string{
		`PREPARE bench_page(bigint, bigint, bigint) AS ` + rangeSQL,
		`SET plan_cache_mode = force_generic_plan`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	defer func() {
		for _, q := range []string{`DEALLOCATE bench_page`, `RESET plan_cache_mode`} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				b.Error(err)
			}
		}
	}()
	p, e, text := median("EXPLAIN (ANALYZE, SUMMARY, TIMING OFF, COSTS OFF) EXECUTE bench_page(99901, 100000, 100)")
	b.Logf("same statement prepared, cached generic plan: median planning %.3f ms, execution %.3f ms; plan:\n%s", p, e, strings.Join(text, "\n"))
}

// tableReads are the cumulative statistics of one table: scans, rows read and buffers touched.
type tableReads struct {
	seqScans, idxScans, rows, buffers int64
}

func (r tableReads) minus(o tableReads) tableReads {
	return tableReads{r.seqScans - o.seqScans, r.idxScans - o.idxScans, r.rows - o.rows, r.buffers - o.buffers}
}

func readStats(ctx context.Context, db *sql.DB, table string) (tableReads, error) {
	var r tableReads
	err := db.QueryRowContext(ctx, `SELECT coalesce(t.seq_scan, 0), coalesce(t.idx_scan, 0),
    coalesce(t.seq_tup_read, 0) + coalesce((SELECT sum(idx_tup_read) FROM pg_stat_user_indexes i WHERE i.relid = t.relid), 0),
    coalesce(io.heap_blks_hit, 0) + coalesce(io.heap_blks_read, 0) + coalesce(io.idx_blks_hit, 0) + coalesce(io.idx_blks_read, 0)
FROM pg_stat_user_tables t JOIN pg_statio_user_tables io USING (relid)
WHERE t.schemaname = current_schema() AND t.relname = $1`, table).Scan(&r.seqScans, &r.idxScans, &r.rows, &r.buffers)
	return r, err
}

// accountRows shows, from Postgres's own statistics, what one request reads. It serves requests
// from a store with a single connection (one backend), makes that backend flush its statistics
// before and after, and divides by the number of requests. A Total by COUNT(*) would read every
// employee row or index entry on every request; COUNT(*) is measured the same way beside it.
func (f *postgresBench) accountRows(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	const k = 200
	tb := &procTB{TB: b}
	defer tb.close()
	s := openBenchStore(b, f.url, f.schema, 1)
	tb.Cleanup(func() { s.Close() })
	fx := newBenchFixture(tb, s) // loads the id cache: not counted below
	db := sinktest.DB(s).DB
	// A backend flushes its pending statistics when it goes idle at least a second after its
	// last flush (PGSTAT_MIN_INTERVAL), before it answers.
	flush := func() {
		time.Sleep(1100 * time.Millisecond)
		if _, err := db.ExecContext(ctx, `SELECT 1`); err != nil {
			b.Fatal(err)
		}
	}
	get := func(page int64, inm string, want int) func() error {
		return func() error {
			resp, _, err := fx.get(page, inm)
			if err == nil && resp.StatusCode != want {
				err = fmt.Errorf("status %d, want %d", resp.StatusCode, want)
			}
			return err
		}
	}
	for _, o := range []struct {
		name string
		op   func() error
	}{
		{"GET page=1", get(1, "", http.StatusOK)},
		{"GET page=1000", get(1000, "", http.StatusOK)},
		{"GET page=1000 with If-None-Match (304)", get(1000, fx.etags[1000], http.StatusNotModified)},
		{"SELECT count(*) (not run by the store)", func() error { _, _, err := scanAll(ctx, db, countSQL); return err }},
	} {
		flush()
		e0, err1 := readStats(ctx, db, "employees")
		m0, err2 := readStats(ctx, db, "meta")
		for range k {
			if err := o.op(); err != nil {
				b.Fatalf("%s: %v", o.name, err)
			}
		}
		flush()
		e1, err3 := readStats(ctx, db, "employees")
		m1, err4 := readStats(ctx, db, "meta")
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			b.Fatal(err)
		}
		e, m := e1.minus(e0), m1.minus(m0)
		per := func(n int64) float64 { return float64(n) / k }
		b.Logf("%-40s per request: employees %.2f seq scans, %.2f index scans, %.1f rows/index entries read, %.1f buffers; meta %.2f rows read",
			o.name, per(e.seqScans), per(e.idxScans), per(e.rows), per(e.buffers), per(m.rows))
	}
}

// ---- SQLite ------------------------------------------------------------------------------
