package sink_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/sink/sinktest/hrdata"
	"github.com/lib/pq"
)

var (
	modelsEmployees = flag.Int("bench.models.employees", 20_000, "BenchmarkModels: current employees of the generated firm")
	modelsFresh     = flag.Bool("bench.models.fresh", false, "BenchmarkModels: generate the firm again rather than use the one cached")
	modelsWhole     = flag.Bool("bench.models.whole", false, "BenchmarkModels: also count the views read by day or as_of whole (every day of ten years: minutes)")
	modelsTag       = flag.String("bench.models.tag", "", "BenchmarkModels: keep the generated firm under its own name (key_<tag>), apart from the one other branches migrate")
)

// BenchmarkModels runs every view whose name starts with model_ (found in the warehouse, so a
// new model is benchmarked without editing this) over a generated firm (hrdata: 20,000 current
// employees and ten years of leavers, versions and events) on both backends: count(*) of the
// whole view; for a view with a day column, its rows of a day five years before the data's
// today and of that day's month instead (a daily view is read for the days a chart shows);
// for one with an as_of column (a month end), its rows of that month's end and of the twelve
// month ends of the year to it. -bench.models.whole counts those whole too (ten years of days:
// minutes). The models kept as tables (sink.RefreshedModels) are read whole, and refreshed
// (refresh: what a sync's end costs). Before them, the generation's time and two plain queries
// (headcount today, and as it was five years ago, from employees and their history). The firm
// is generated once and kept (a schema of the test database; a file in the user's cache
// directory), keyed by the generator's version and size; the statistics are those a
// deployment would have (see modelsStatistics). See docs/benchmarks.md.
func BenchmarkModels(b *testing.B) {
	opts := hrdata.Options{Employees: *modelsEmployees}
	day := hrdata.DefaultToday.AddDate(-5, 0, 0)
	for _, backend := range sinktest.Backends {
		b.Run("db="+backend, func(b *testing.B) {
			s, took, cached := modelsStore(b, backend, opts)
			db := sinktest.DB(s)
			b.Run("generate", func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(0, "ns/op") // nothing is timed here
				b.ReportMetric(took.Seconds(), "gen-s")
				c := 0.0
				if cached {
					c = 1
				}
				b.ReportMetric(c, "cached")
			})
			histDay := day.Format(time.DateOnly)
			if backend == "sqlite" {
				histDay = day.Format("2006-01-02T15:04:05.000Z") // as the history triggers write it
			}
			queries := []struct{ name, sql string }{
				{"query=headcount-today", `SELECT count(*) FROM employees
WHERE listed AND deleted_at IS NULL AND status = 'Current employee'`},
				{"query=headcount-5y-ago", `SELECT count(*) FROM employees_history
WHERE valid_from <= '` + histDay + `' AND (valid_to IS NULL OR valid_to > '` + histDay + `')
  AND listed AND deleted_at IS NULL AND status = 'Current employee'`},
			}
			views := modelViews(b, db.DB, backend)
			month := time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC)
			monthEnd := month.AddDate(0, 1, -1)
			for _, v := range views {
				if v.slice == "" || *modelsWhole {
					queries = append(queries, struct{ name, sql string }{"view=" + v.name + "/count",
						`SELECT count(*) FROM (SELECT * FROM ` + v.name + `) s`})
				}
				switch v.slice {
				case "day":
					queries = append(queries, struct{ name, sql string }{"view=" + v.name + "/day",
						`SELECT * FROM ` + v.name + ` WHERE day = '` + day.Format(time.DateOnly) + `'`})
					queries = append(queries, struct{ name, sql string }{"view=" + v.name + "/month",
						`SELECT * FROM ` + v.name + ` WHERE day >= '` + month.Format(time.DateOnly) +
							`' AND day <= '` + monthEnd.Format(time.DateOnly) + `'`})
				case "as_of":
					// One month end (a list of that day, as the report draws), and the twelve of the year
					// before it.
					queries = append(queries, struct{ name, sql string }{"view=" + v.name + "/as_of",
						`SELECT * FROM ` + v.name + ` WHERE as_of = '` + monthEnd.Format(time.DateOnly) + `'`})
					var ends []string
					for i := range 12 {
						ends = append(ends, "'"+month.AddDate(0, -i, 0).AddDate(0, 1, -1).Format(time.DateOnly)+"'")
					}
					queries = append(queries, struct{ name, sql string }{"view=" + v.name + "/year",
						`SELECT * FROM ` + v.name + ` WHERE as_of IN (` + strings.Join(ends, ", ") + `)`})
				}
			}
			// The models kept as tables: read whole, as their views were.
			for _, m := range sink.RefreshedModels {
				queries = append(queries, struct{ name, sql string }{"table=" + m + "/count",
					`SELECT count(*) FROM (SELECT * FROM ` + m + `) s`})
			}
			if len(views) == 0 {
				b.Logf("no model_ views in the warehouse yet")
			}
			// What keeps them: a refresh, as a sync's end does (forced: the warehouse has not changed).
			b.Run("refresh", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.RefreshModels(context.Background(), true); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
			})
			for _, q := range queries {
				b.Run(q.name, func(b *testing.B) {
					var rows int
					for b.Loop() {
						rows = modelsQuery(b, db.DB, q.sql)
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
					b.ReportMetric(float64(rows), "rows")
				})
			}
		})
	}
}

// modelsQuery runs query and reads every row it returns; it returns how many.
func modelsQuery(b *testing.B, db *sql.DB, query string) int {
	rows, err := db.QueryContext(context.Background(), query)
	if err != nil {
		b.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		b.Fatal(err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatalf("%s: %v", query, err)
	}
	return n
}

type modelView struct {
	name  string
	slice string // its column day, or as_of (a month end), when it has one: it is read by that
}

// modelViews are the warehouse's views named model_…, by name.
func modelViews(b *testing.B, db *sql.DB, backend string) []modelView {
	ctx := context.Background()
	q := `SELECT table_name::text, coalesce((SELECT min(c.column_name::text) FROM information_schema.columns c
  WHERE c.table_schema = v.table_schema AND c.table_name = v.table_name AND c.column_name IN ('day', 'as_of')), '')
FROM information_schema.views v WHERE table_schema = current_schema() AND table_name LIKE 'model\_%' ORDER BY 1`
	if backend == "sqlite" {
		q = `SELECT name, coalesce((SELECT min(name) FROM pragma_table_info(m.name) WHERE name IN ('day', 'as_of')), '')
FROM sqlite_master m WHERE type = 'view' AND name LIKE 'model\_%' ESCAPE '\' ORDER BY 1`
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		b.Fatalf("model views: %v", err)
	}
	defer rows.Close()
	var out []modelView
	for rows.Next() {
		var v modelView
		if err := rows.Scan(&v.name, &v.slice); err != nil {
			b.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// modelsStore opens the generated firm of the backend, generating it unless a previous run
// cached it (or -bench.models.fresh), migrated to the current schema (new views included), with
// a deployment's statistics. It returns how long the generation took (when it was made) and
// whether it came from the cache.
func modelsStore(b *testing.B, backend string, o hrdata.Options) (s *sink.Store, took time.Duration, cached bool) {
	b.Helper()
	ctx := context.Background()
	key := fmt.Sprintf("hrdata_models_v%d_n%d", hrdata.Version, o.Employees)
	if *modelsTag != "" {
		key += "_" + *modelsTag
	}
	var url string
	opts := sink.Options{}
	switch backend {
	case "postgres":
		url, _ = sinktest.Postgres(b)
		opts.Schema = key
		took, cached = modelsPostgres(b, url, key, o)
		if _, err := sink.Migrate(ctx, url, opts); err != nil { // views added since it was cached
			b.Fatal(err)
		}
	case "sqlite":
		url, took, cached = modelsSQLite(b, key, o)
	}
	s, err := sink.Open(ctx, url, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	// The settings and holidays the absence models read (schema 0028), as a sync's end writes
	// them before it refreshes: the defaults (England and Wales).
	if _, err := s.ApplyModelSettings(ctx, sink.DefaultModelSettings()); err != nil {
		b.Fatal(err)
	}
	modelsStatistics(b, s, backend)
	if cached {
		b.Logf("%s: the firm cached by an earlier run (generated in %v)", backend, took.Round(time.Millisecond))
	}
	return s, took, cached
}

// modelsPostgres makes the schema hrdata_models_v…_n… of the test database hold the generated
// firm, unless it does already (its comment says so, with the generation's time), and drops
// the schemas of other versions.
func modelsPostgres(b *testing.B, url, schema string, o hrdata.Options) (took time.Duration, cached bool) {
	ctx := context.Background()
	admin, err := sql.Open("postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	var comment sql.NullString
	err = admin.QueryRowContext(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, schema).Scan(&comment)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		b.Fatal(err)
	}
	if s, ok := strings.CutPrefix(comment.String, "hrdata complete, generated in "); ok && !*modelsFresh {
		took, _ = time.ParseDuration(s)
		return took, true
	}
	var old []string
	rows, err := admin.QueryContext(ctx, `SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'hrdata\_models\_%'`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			b.Fatal(err)
		}
		old = append(old, n)
	}
	rows.Close()
	current := fmt.Sprintf("hrdata_models_v%d_", hrdata.Version)
	for _, n := range append(old, schema) {
		if strings.HasPrefix(n, current) && n != schema {
			continue // another size of this version
		}
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+pq.QuoteIdentifier(n)+` CASCADE`); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	opts := sink.Options{Schema: schema}
	if _, err := sink.Migrate(ctx, url, opts); err != nil {
		b.Fatal(err)
	}
	s, err := sink.Open(ctx, url, opts)
	if err != nil {
		b.Fatal(err)
	}
	st, err := hrdata.Load(ctx, s, o)
	if err != nil {
		s.Close()
		b.Fatal(err)
	}
	// Closing ends the loading sessions, which flush their statistics for autovacuum.
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	took = time.Since(start)
	b.Logf("postgres: generated %d people (%d current) in %v (Load %v): %v", st.People, st.Current, took.Round(time.Millisecond), st.Took.Round(time.Millisecond), st.Rows)
	if _, err := admin.ExecContext(ctx, `COMMENT ON SCHEMA `+pq.QuoteIdentifier(schema)+` IS `+pq.QuoteLiteral("hrdata complete, generated in "+took.Round(time.Millisecond).String())); err != nil {
		b.Fatal(err)
	}
	return took, false
}

// modelsSQLite makes a file in the user's cache directory hold the generated firm, unless it
// does already (a file beside it has the generation's time), and returns its path; it removes
// the files of other versions.
func modelsSQLite(b *testing.B, key string, o hrdata.Options) (path string, took time.Duration, cached bool) {
	ctx := context.Background()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "hrsync-bench")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	path = filepath.Join(dir, key+".db")
	if s, err := os.ReadFile(path + ".took"); err == nil && !*modelsFresh {
		if took, err = time.ParseDuration(strings.TrimSpace(string(s))); err == nil {
			if _, err := os.Stat(path); err == nil {
				return path, took, true
			}
		}
	}
	old, _ := filepath.Glob(filepath.Join(dir, "hrdata_models_*"))
	current := fmt.Sprintf("hrdata_models_v%d_", hrdata.Version)
	for _, f := range old {
		if base := filepath.Base(f); strings.HasPrefix(base, current) && !strings.HasPrefix(base, key+".") {
			continue // another size of this version
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			b.Fatal(err)
		}
	}
	start := time.Now()
	tmp := path + ".tmp"
	sinktest.SQLiteFile(b, tmp)
	s, err := sink.Open(ctx, tmp, sink.Options{})
	if err != nil {
		b.Fatal(err)
	}
	st, err := hrdata.Load(ctx, s, o)
	if err != nil {
		s.Close()
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	took = time.Since(start)
	b.Logf("sqlite: generated %d people (%d current) in %v (Load %v): %v", st.People, st.Current, took.Round(time.Millisecond), st.Took.Round(time.Millisecond), st.Rows)
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Rename(tmp+suffix, path+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			b.Fatal(err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path+".took", []byte(took.Round(time.Millisecond).String()+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return path, took, false
}

// modelsStatistics gives the warehouse the statistics a deployment's would have, nothing
// tuned by hand. Postgres: what autovacuum would have done by now (its defaults: VACUUM a table
// once 1,000 rows plus a fifth of it were inserted since the last, ANALYZE one once 50 rows plus
// a tenth changed; the test server may run without autovacuum, or not have got there yet), and
// the small tables a sync's merge analyzes itself (never analyzed). SQLite: PRAGMA optimize as
// SQLite advises on opening a connection (0x10002: every table, analysis_limit as the merges
// use).
func modelsStatistics(b *testing.B, s *sink.Store, backend string) {
	ctx := context.Background()
	db := sinktest.DB(s)
	if backend == "sqlite" {
		conn, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		for _, q := range []string{`PRAGMA analysis_limit = 1000`, `PRAGMA optimize = 0x10002`} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
		}
		return
	}
	var due []struct {
		Table          string
		Vacuum, Analyz bool
	}
	const q = `SELECT t.relname::text AS table,
  n_ins_since_vacuum > 1000 + 0.2 * greatest(c.reltuples, 0) AS vacuum,
  n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0) OR (last_analyze IS NULL AND last_autoanalyze IS NULL) AS analyz
FROM pg_stat_user_tables t JOIN pg_class c ON c.oid = t.relid
WHERE schemaname = current_schema()
  AND (n_ins_since_vacuum > 1000 + 0.2 * greatest(c.reltuples, 0)
    OR n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
    OR (last_analyze IS NULL AND last_autoanalyze IS NULL))
ORDER BY 1`
	if err := db.SelectContext(ctx, &due, q); err != nil {
		b.Fatal(err)
	}
	var done []string
	for _, d := range due {
		var stmt string
		switch {
		case d.Vacuum && d.Analyz:
			stmt = `VACUUM (ANALYZE) `
		case d.Vacuum:
			stmt = `VACUUM `
		default:
			stmt = `ANALYZE `
		}
		if _, err := db.ExecContext(ctx, stmt+pq.QuoteIdentifier(d.Table)); err != nil {
			b.Fatal(err)
		}
		done = append(done, strings.TrimSpace(stmt)+" "+d.Table)
	}
	if len(done) > 0 {
		b.Logf("postgres: as autovacuum and the merges would: %s", strings.Join(done, ", "))
	}
}
