package walk_test

// Benchmarks of syncs at scale, into Postgres. docs/benchmarks.md ("Sync") has the commands and
// the figures.
//
//   - BenchmarkSync: a full sync of 100,000 employees from an unpaced loopback source that holds
//     every answer back 20 ms, at concurrency 1 (the baseline) and 4: into an empty warehouse
//     (state=new), and the nightly case (state=nightly): the warehouse holds the previous load
//     and 1% of the records changed since.
//   - BenchmarkMerge: Load.Merge of 100,000 staged employees against the baseline of the same
//     rows written one INSERT … ON CONFLICT (id) DO UPDATE per row in one transaction, into an
//     empty warehouse and again as an unchanged re-sync; and the merge alone of the nightly
//     case (state=nightly: 1% of the records changed).
//   - BenchmarkPacedSync: a 40-page walk of a source that enforces 60 requests a minute, with
//     the client's budget set to that limit: wall time against pages ÷ rate, and no 429.
//
// Each iteration gets a fresh schema, dropped when the iteration ends; set-up is not timed.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/walk"
)

// benchEmployees is the size of the collection BenchmarkSync and BenchmarkMerge load.
const benchEmployees = 100_000

func BenchmarkSync(b *testing.B) {
	const delay = 20 * time.Millisecond
	base := fakeupstream.Generate(benchEmployees, 42)
	// The nightly state: the warehouse holds yesterday's load, and 1% of the records changed
	// since (a first name edited).
	changed := slices.Clone(base)
	for i := 0; i < len(changed); i += 100 {
		changed[i] = json.RawMessage(strings.Replace(string(changed[i]), `"first_name":"`, `"first_name":"Re-`, 1))
	}
	up := newUpstream(b, benchEmployees, fakeupstream.Options{
		Employees: base,
		Fault:     func(int, *http.Request) fakeupstream.Fault { return fakeupstream.Fault{Delay: delay} },
	})
	for _, state := range []struct {
		name             string
		before           []json.RawMessage // loaded untimed first, when not nil
		inserted, update int64
	}{
		{"new", nil, benchEmployees, 0},
		{"nightly", base, 0, benchEmployees / 100},
	} {
		for _, concurrency := range []int{1, 4} {
			b.Run(fmt.Sprintf("state=%s/concurrency=%d", state.name, concurrency), func(b *testing.B) {
				c := fastClient(b, up, client.Options{}) // unpaced
				// The employees' run splits into the walk (fetching and staging every page) and
				// what follows it (counting the staged records, the merge, the ledger).
				var walking, afterWalk time.Duration
				for b.Loop() {
					b.StopTimer()
					store, drop := benchStore(b)
					if state.before != nil {
						up.SetEmployees(state.before)
						if _, err := walk.New(c, store, walk.Options{Concurrency: 4, AllowMassDelete: true}).Run(context.Background(), seeds); err != nil {
							b.Fatalf("load yesterday's state: %v", err)
						}
						up.SetEmployees(changed)
					}
					var walked time.Duration
					opts := walk.Options{Concurrency: concurrency, AllowMassDelete: true,
						Progress: func(p walk.Progress) {
							if p.Resource == sink.Employees && p.PagesDone == p.PagesTotal {
								walked = p.Elapsed
							}
						}}
					b.StartTimer()
					rs, err := walk.New(c, store, opts).Run(context.Background(), seeds)
					b.StopTimer()
					r := employeesResult(b, rs)
					if err != nil || r.Inserted != state.inserted || r.Updated != state.update || r.Walks != 1 {
						b.Fatalf("sync: %v; employees run %+v", err, r.Run)
					}
					walking += walked
					afterWalk += r.FinishedAt.Sub(r.StartedAt) - walked
					drop()
					up.SetEmployees(base)
					b.StartTimer()
				}
				n := float64(b.N)
				b.ReportMetric(benchEmployees*n/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(walking.Seconds()/n, "walk-s/op")
				b.ReportMetric(afterWalk.Seconds()/n, "after-walk-s/op")
			})
		}
	}
}

func BenchmarkMerge(b *testing.B) {
	ctx := context.Background()
	emps := decodeEmployees(b, fakeupstream.Generate(benchEmployees, 42))
	// The baseline writes the rows the merge writes: a reference warehouse is merged once, and
	// its listed employees are read back as the baseline's rows. The rows they reference
	// (working patterns, departments, holiday allowances, managers outside the collection) are
	// copied in from it before the baseline's clock starts.
	ref, dropRef := benchStore(b)
	defer dropRef()
	mergeAll(b, ref, emps)
	refSchema := schemaOf(b, ref)
	rows := listedEmployees(b, ref)

	// mergeRun times Merge of the staged walk; staging is timed apart and reported.
	mergeRun := func(b *testing.B, prepare func(*sink.Store), staged []v1.Employee, check func(sink.MergeResult) bool) {
		var staging time.Duration
		for b.Loop() {
			b.StopTimer()
			s, drop := benchStore(b)
			prepare(s)
			l, d := stageAll(b, s, staged)
			staging += d
			b.StartTimer()
			res, err := l.Merge(ctx, sink.MergeOptions{Complete: true})
			b.StopTimer()
			if err != nil || !check(res) {
				b.Fatalf("merge: %v; %+v", err, res)
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			drop()
			b.StartTimer()
		}
		b.ReportMetric(benchEmployees*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(staging.Seconds()/float64(b.N), "staging-s/op")
	}
	// rowByRowRun times the baseline.
	rowByRowRun := func(b *testing.B, prepare func(*sink.Store), q string) {
		for b.Loop() {
			b.StopTimer()
			s, drop := benchStore(b)
			prepare(s)
			b.StartTimer()
			upsertRowByRow(b, s, q, rows)
			b.StopTimer()
			assertSameEmployees(b, s, refSchema)
			drop()
			b.StartTimer()
		}
		b.ReportMetric(benchEmployees*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	}

	b.Run("state=new", func(b *testing.B) {
		empty := func(*sink.Store) {}
		b.Run("write=merge", func(b *testing.B) {
			mergeRun(b, empty, emps, func(r sink.MergeResult) bool { return r.Inserted == benchEmployees })
		})
		b.Run("write=row-by-row", func(b *testing.B) {
			rowByRowRun(b, func(s *sink.Store) { copyReferenced(b, s, refSchema) }, rowByRowSQL(false))
		})
	})
	// An unchanged re-sync: the warehouse already holds exactly what is staged.
	b.Run("state=unchanged", func(b *testing.B) {
		synced := func(s *sink.Store) { mergeAll(b, s, emps) }
		b.Run("write=merge", func(b *testing.B) {
			mergeRun(b, synced, emps, func(r sink.MergeResult) bool {
				return r.Unchanged == benchEmployees && r.Inserted+r.Updated+r.Deleted == 0
			})
		})
		b.Run("write=row-by-row", func(b *testing.B) {
			rowByRowRun(b, synced, rowByRowSQL(false))
		})
		// The baseline rewrites every row (a new history version each); this one, like the
		// merge, updates only rows that differ.
		b.Run("write=row-by-row-if-changed", func(b *testing.B) {
			rowByRowRun(b, synced, rowByRowSQL(true))
		})
	})
	// The nightly case: the warehouse holds yesterday's load, and 1% of the records changed
	// since (a first name edited), as in BenchmarkSync.
	b.Run("state=nightly", func(b *testing.B) {
		synced := func(s *sink.Store) { mergeAll(b, s, emps) }
		nightly := slices.Clone(emps)
		for i := 0; i < len(nightly); i += 100 {
			nightly[i].FirstName = "Re-" + nightly[i].FirstName
		}
		b.Run("write=merge", func(b *testing.B) {
			mergeRun(b, synced, nightly, func(r sink.MergeResult) bool {
				return r.Updated == benchEmployees/100 && r.Unchanged == benchEmployees-benchEmployees/100 && r.Inserted+r.Deleted == 0
			})
		})
	})
}

// BenchmarkPacedSync walks a source that enforces the real service's limit, 60 requests in any
// 60 s, with the client's budget set to it. Slow by design: about 40 s an iteration.
func BenchmarkPacedSync(b *testing.B) {
	const (
		employees = 4000 // 40 pages
		limit     = 60   // requests a minute
	)
	var wall, ideal time.Duration
	var tooMany, maxInWindow int
	for b.Loop() {
		b.StopTimer()
		up := newUpstream(b, employees, fakeupstream.Options{RateLimit: limit, Window: time.Minute,
			WorkingPatterns: []json.RawMessage{}})
		c, err := client.New(up.URL, up.APIKey(), client.Options{RateLimit: limit})
		if err != nil {
			b.Fatal(err)
		}
		store, drop := benchStore(b)
		b.StartTimer()
		start := time.Now()
		rs, err := walk.New(c, store, walk.Options{}).Run(context.Background(), []sink.Resource{sink.Employees})
		took := time.Since(start)
		b.StopTimer()
		r := employeesResult(b, rs)
		if err != nil || r.Inserted != employees {
			b.Fatalf("sync: %v; run %+v", err, r.Run)
		}
		wall += took
		ideal += time.Duration(r.Pages) * time.Minute / limit
		refused := up.Count("/v1/employees", http.StatusTooManyRequests)
		tooMany += refused
		maxInWindow = max(maxInWindow, up.MaxInWindow())
		if refused != 0 || r.RateLimited != 0 || up.MaxInWindow() > limit {
			b.Errorf("%d requests answered 429 (the client saw %d), %d in one window (limit %d)",
				refused, r.RateLimited, up.MaxInWindow(), limit)
		}
		up.Close()
		drop()
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(wall.Seconds()/n, "wall-s/op")
	b.ReportMetric(ideal.Seconds()/n, "pages/rate-s/op")
	b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
	b.ReportMetric(float64(tooMany)/n, "429s/op")
	b.ReportMetric(float64(maxInWindow), "max-in-window")
}

// benchStore is a migrated Postgres warehouse in a fresh schema, and a function that drops the
// schema, so that iterations do not pile schemas up (the test's cleanup drops it otherwise).
func benchStore(b *testing.B) (*sink.Store, func()) {
	b.Helper()
	s := sinktest.Store(b, "postgres", sink.Options{})
	name := schemaOf(b, s)
	return s, func() {
		if _, err := sinktest.DB(s).Exec(`DROP SCHEMA ` + pq.QuoteIdentifier(name) + ` CASCADE`); err != nil {
			b.Fatal(err)
		}
	}
}

func schemaOf(b *testing.B, s *sink.Store) string {
	b.Helper()
	var name string
	if err := sinktest.DB(s).QueryRow(`SELECT current_schema()`).Scan(&name); err != nil {
		b.Fatal(err)
	}
	return name
}

func employeesResult(b *testing.B, rs []walk.Result) walk.Result {
	b.Helper()
	for _, r := range rs {
		if r.Resource == sink.Employees {
			return r
		}
	}
	b.Fatal("no employees result")
	return walk.Result{}
}

func decodeEmployees(b *testing.B, raws []json.RawMessage) []v1.Employee {
	b.Helper()
	emps := make([]v1.Employee, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &emps[i]); err != nil {
			b.Fatal(err)
		}
	}
	return emps
}

// stageAll stages the employees page by page, as a walk does, and says how long that took.
func stageAll(b *testing.B, s *sink.Store, emps []v1.Employee) (*sink.Load, time.Duration) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	l, err := s.BeginLoad(ctx, sink.Employees)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(emps); i += client.PerPage {
		if err := l.AddEmployees(ctx, emps[i:min(i+client.PerPage, len(emps))]); err != nil {
			b.Fatal(err)
		}
	}
	// As a walk does after each walk: counted, a walk without duplicates is merged as it is.
	if _, err := l.Distinct(ctx); err != nil {
		b.Fatal(err)
	}
	return l, time.Since(start)
}

// mergeAll stages and merges the employees as a complete walk.
func mergeAll(b *testing.B, s *sink.Store, emps []v1.Employee) {
	b.Helper()
	l, _ := stageAll(b, s, emps)
	defer l.Close()
	if _, err := l.Merge(context.Background(), sink.MergeOptions{Complete: true}); err != nil {
		b.Fatal(err)
	}
}

// benchEmployeeCols are the employee columns the merge writes from the staged walk (sink/load.go,
// employeeCols).
var benchEmployeeCols = []string{"id", "account_id", "first_name", "last_name", "email", "job_title", "status",
	"company_join_date", "job_start_date", "length_of_service_in_months", "age", "full_or_part_time",
	"notice_period", "working_pattern_id", "holiday_allowance_id", "department_id", "line_manager_id",
	"holiday_approver_id", "receives_statutory_holidays", "hr", "created_at", "updated_at", "extra", "nested"}

// listedEmployees reads back the listed employees of a synced warehouse, in id order, as
// statement arguments.
func listedEmployees(b *testing.B, s *sink.Store) [][]any {
	b.Helper()
	rs, err := sinktest.DB(s).Query(`SELECT ` + strings.Join(benchEmployeeCols, ", ") + ` FROM employees WHERE listed ORDER BY id`)
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close()
	var rows [][]any
	for rs.Next() {
		row := make([]any, len(benchEmployeeCols))
		ptrs := make([]any, len(row))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		for i, v := range row {
			if t, ok := v.([]byte); ok {
				row[i] = string(t) // lib/pq would send []byte as bytea
			}
		}
		rows = append(rows, row)
	}
	if err := rs.Err(); err != nil {
		b.Fatal(err)
	}
	if len(rows) != benchEmployees {
		b.Fatalf("read %d listed employees, want %d", len(rows), benchEmployees)
	}
	return rows
}

// copyReferenced copies from the reference warehouse the rows the employees reference and the
// merge would write alongside them.
func copyReferenced(b *testing.B, s *sink.Store, refSchema string) {
	b.Helper()
	ref := pq.QuoteIdentifier(refSchema)
	for _, q := range []string{
		`INSERT INTO working_patterns SELECT * FROM ` + ref + `.working_patterns ON CONFLICT (id) DO NOTHING`,
		`INSERT INTO departments SELECT * FROM ` + ref + `.departments ON CONFLICT (id) DO NOTHING`,
		`INSERT INTO holiday_allowances SELECT * FROM ` + ref + `.holiday_allowances ON CONFLICT (id) DO NOTHING`,
		`INSERT INTO employees SELECT * FROM ` + ref + `.employees WHERE NOT listed`,
	} {
		if _, err := sinktest.DB(s).Exec(q); err != nil {
			b.Fatal(err)
		}
	}
}

// rowByRowSQL is the baseline's statement: one employee upserted. ifChanged adds the merge's
// condition, so that a row that is the same is not written.
func rowByRowSQL(ifChanged bool) string {
	var params, set, old, excluded []string
	for i, c := range benchEmployeeCols {
		params = append(params, fmt.Sprintf("$%d", i+1))
		if i > 0 {
			set = append(set, c+" = excluded."+c)
			old = append(old, "CAST(employees."+c+" AS text)")
			excluded = append(excluded, "CAST(excluded."+c+" AS text)")
		}
	}
	q := `INSERT INTO employees (` + strings.Join(benchEmployeeCols, ", ") + `, listed, origin, deleted_at, synced_at)
VALUES (` + strings.Join(params, ", ") + `, true, 'source', NULL, now())
ON CONFLICT (id) DO UPDATE SET ` + strings.Join(set, ", ") + `,
    listed = true, origin = 'source', deleted_at = NULL, synced_at = excluded.synced_at`
	if ifChanged {
		q += `
WHERE (` + strings.Join(old, ", ") + `) IS DISTINCT FROM (` + strings.Join(excluded, ", ") + `)
    OR employees.origin <> 'source' OR NOT employees.listed OR employees.deleted_at IS NOT NULL`
	}
	return q
}

// upsertRowByRow runs q, prepared, once per row, in one transaction.
func upsertRowByRow(b *testing.B, s *sink.Store, q string, rows [][]any) {
	b.Helper()
	ctx := context.Background()
	tx, err := sinktest.DB(s).BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, q)
	if err != nil {
		b.Fatal(err)
	}
	for _, row := range rows {
		if _, err := stmt.ExecContext(ctx, row...); err != nil {
			b.Fatal(err)
		}
	}
	if err := stmt.Close(); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// assertSameEmployees checks that the warehouse serves the reference warehouse's employees,
// column for column.
func assertSameEmployees(b *testing.B, s *sink.Store, refSchema string) {
	b.Helper()
	var mine, theirs []string
	for _, c := range slices.Concat(benchEmployeeCols, []string{"listed", "origin", "deleted_at"}) {
		mine = append(mine, "CAST(e."+c+" AS text)")
		theirs = append(theirs, "CAST(r."+c+" AS text)")
	}
	var served, differ int64
	err := sinktest.DB(s).QueryRow(`SELECT (SELECT employees_total FROM meta), count(*) FILTER (WHERE (`+
		strings.Join(mine, ", ")+`) IS DISTINCT FROM (`+strings.Join(theirs, ", ")+`))
FROM employees e FULL JOIN `+pq.QuoteIdentifier(refSchema)+`.employees r USING (id)`).Scan(&served, &differ)
	if err != nil {
		b.Fatal(err)
	}
	if served != benchEmployees || differ != 0 {
		b.Fatalf("the baseline serves %d employees, %d differ from the merge's", served, differ)
	}
}
