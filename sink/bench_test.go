package sink_test

// BenchmarkServe measures serve mode end to end: the real /v1 handler (server.NewHandler) over
// the real *sink.Store, behind a real HTTP server on loopback, driven by keep-alive clients, over
// a warehouse of 100,000 employees. Beside it, in the same run, the SQL it replaces: an OFFSET
// page and a COUNT(*) Total. See docs/benchmarks.md for the command and the figures.

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
)

var benchClients = flag.Int("bench.clients", 8, "concurrent keep-alive clients in BenchmarkServe")

const (
	benchEmployees = 100_000
	benchPerPage   = 100
	benchKey       = "bench-key-9f2c4e7a1b3d5f60a8e2"
)

func BenchmarkServe(b *testing.B) {
	b.Run("db=postgres", func(b *testing.B) {
		f := newPostgresBench(b)
		f.serve(b)
		f.serveCached(b)
		f.sqlBaselines(b)
	})
	b.Run("db=sqlite", func(b *testing.B) {
		f := newSQLiteBench(b)
		f.serve(b)
		f.serveCached(b)
	})
}

// serveCached runs page 1 with the answer cache on (server.Options.CacheBytes 64 MiB), as
// identity and as gzip (the repeated page: every request but the first a hit), and cold: every
// request a distinct page (page and per_page; the cache ignores other parameters), so every one
// a miss that is encoded and kept, for the first 50,000.
func (f *benchFixture) serveCached(b *testing.B) {
	h, err := server.NewHandler(f.store, server.Options{APIKeys: []string{benchKey}, ETagSalt: "bench", CacheBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var distinct atomic.Int64
	for _, c := range []struct{ name, ae string }{
		{"page=1/cache=on/ae=identity", ""}, {"page=1/cache=on/ae=gzip", "gzip"}, {"cold/cache=on/ae=identity", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			measure(b, func(context.Context) error {
				url := srv.URL + "/v1/employees?page=1&per_page=" + strconv.Itoa(benchPerPage)
				if strings.HasPrefix(c.name, "cold") {
					n := distinct.Add(1)
					url = srv.URL + "/v1/employees?page=" + strconv.FormatInt(n%1000+1, 10) + "&per_page=" + strconv.FormatInt(benchPerPage-(n/1000)%50, 10)
				}
				req, err := http.NewRequest(http.MethodGet, url, nil)
				if err != nil {
					return err
				}
				req.Header.Set("X-Api-Key", benchKey)
				if c.ae != "" {
					req.Header.Set("Accept-Encoding", c.ae)
				}
				resp, err := f.client.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					return err
				}
				if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != c.ae {
					return fmt.Errorf("status %d, Content-Encoding %q: %.200s", resp.StatusCode, resp.Header.Get("Content-Encoding"), body)
				}
				return nil
			})
		})
	}
}

// benchFixture is one seeded warehouse served over loopback.
type benchFixture struct {
	store  *sink.Store
	srv    *httptest.Server
	client *http.Client
	etags  map[int64]string // page number → the ETag of its first answer
}

func newBenchFixture(b testing.TB, s *sink.Store) *benchFixture {
	b.Helper()
	h, err := server.NewHandler(s, server.Options{APIKeys: []string{benchKey}, ETagSalt: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        4 * *benchClients,
		MaxIdleConnsPerHost: 4 * *benchClients,
		DisableCompression:  true,
	}
	b.Cleanup(tr.CloseIdleConnections)
	f := &benchFixture{store: s, srv: srv, client: &http.Client{Transport: tr}, etags: map[int64]string{}}
	// The first request of each page loads the id cache and gives the tag the 304 runs send;
	// it also checks the page is the one asked for.
	for _, page := range []int64{1, 1000} {
		resp, body, err := f.get(page, "")
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("page %d: status %d: %s", page, resp.StatusCode, body)
		}
		if got := resp.Header.Get("Total"); got != strconv.Itoa(benchEmployees) {
			b.Fatalf("page %d: Total %q, want %d", page, got, benchEmployees)
		}
		first := (page-1)*benchPerPage + 1
		if !strings.HasPrefix(string(body), fmt.Sprintf(`{"employees":[{"id":%d,`, first)) ||
			strings.Count(string(body), `"holiday_allowance":{"id":1,`) != benchPerPage {
			b.Fatalf("page %d: not %d employees from id %d: %.300s", page, benchPerPage, first, body)
		}
		f.etags[page] = resp.Header.Get("ETag")
		b.Logf("page %d: %d bytes, ETag %s, starts %.700s", page, len(body), f.etags[page], body)
	}
	return f
}

// get asks for one page of employees, with If-None-Match when inm is set, and reads the body to
// the end so the connection is kept.
func (f *benchFixture) get(page int64, inm string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/v1/employees?page="+strconv.FormatInt(page, 10)+"&per_page="+strconv.Itoa(benchPerPage), nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("X-Api-Key", benchKey)
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// serve runs the HTTP sub-benchmarks: page 1 and page 1,000, each as a full page and as a
// conditional GET whose tag is current (a 304).
func (f *benchFixture) serve(b *testing.B) {
	for _, page := range []int64{1, 1000} {
		for _, inm := range []bool{false, true} {
			name := fmt.Sprintf("page=%d/inm=no", page)
			tag, want := "", http.StatusOK
			if inm {
				name = fmt.Sprintf("page=%d/inm=yes", page)
				tag, want = f.etags[page], http.StatusNotModified
			}
			b.Run(name, func(b *testing.B) {
				measure(b, func(context.Context) error {
					resp, body, err := f.get(page, tag)
					if err != nil {
						return err
					}
					if resp.StatusCode != want {
						return fmt.Errorf("status %d, want %d: %.200s", resp.StatusCode, want, body)
					}
					return nil
				})
			})
		}
	}
}

// measure runs b.N ops from exactly *benchClients goroutines (each op taken from a shared
// counter) and reports requests per second and the 50th and 99th percentile latency of one op.
// sec/op is then wall time per op at that concurrency: the inverse of the throughput.
func measure(b *testing.B, op func(context.Context) error) {
	b.Helper()
	clients := max(*benchClients, 1)
	var (
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		all    = make([]time.Duration, 0, b.N)
		wg     sync.WaitGroup
	)
	ctx := context.Background()
	b.ResetTimer()
	for range clients {
		wg.Go(func() {
			lat := make([]time.Duration, 0, b.N/clients+1)
			for next.Add(1) <= int64(b.N) && !failed.Load() {
				t0 := time.Now()
				if err := op(ctx); err != nil {
					if !failed.Swap(true) {
						b.Error(err)
					}
					break
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(percentile(all, 0.50))/1e3, "p50-µs")
	b.ReportMetric(float64(percentile(all, 0.99))/1e3, "p99-µs")
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// procTB is a TB whose cleanups we run ourselves, so a short-lived fixture (its store, server
// and client) can be closed mid-benchmark, which also flushes its backend's statistics.
type procTB struct {
	testing.TB
	cleanups []func()
}

func (p *procTB) Cleanup(f func()) { p.cleanups = append(p.cleanups, f) }

func (p *procTB) close() {
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
	p.cleanups = nil
}

// ---- Postgres ----------------------------------------------------------------------------

type postgresBench struct {
	*benchFixture
	url, schema string
}

func newPostgresBench(b *testing.B) *postgresBench {
	b.Helper()
	ctx := context.Background()
	url, schemaName := sinktest.Postgres(b) // dropped when db=postgres ends
	opts := sink.Options{Schema: schemaName, Now: func() time.Time { return fixedNow }}
	if _, err := sink.Migrate(ctx, url, opts); err != nil {
		b.Fatalf("migrate: %v", err)
	}

	// Seed through a store of its own, closed afterwards: its backend's statistics are then
	// flushed and cannot land in the row accounting below.
	start := time.Now()
	func() {
		seedStore := openBenchStore(b, url, schemaName, 1)
		defer seedStore.Close()
		db := sinktest.DB(seedStore).DB
		seed(b, db, pgSeed, true)
		// VACUUM as well as ANALYZE: the steady state of a warehouse autovacuum has seen (hint
		// bits set, visibility map current), not the first read after a bulk load.
		if _, err := db.ExecContext(ctx, `VACUUM (ANALYZE) employees, departments, meta`); err != nil {
			b.Fatalf("vacuum: %v", err)
		}
	}()
	b.Logf("seeded %d employees in %v", benchEmployees, time.Since(start).Round(time.Millisecond))

	f := &postgresBench{url: url, schema: schemaName}
	f.accountRows(b)

	s := openBenchStore(b, url, schemaName, 0)
	b.Cleanup(func() { s.Close() })
	f.benchFixture = newBenchFixture(b, s)
	f.explain(b)
	f.planTimes(b)
	return f
}

func openBenchStore(b *testing.B, url, schemaName string, conns int) *sink.Store {
	b.Helper()
	s, err := sink.Open(context.Background(), url, sink.Options{Schema: schemaName, MaxOpenConns: conns,
		Now: func() time.Time { return fixedNow }})
	if err != nil {
		b.Fatalf("open: %v", err)
	}
	return s
}

// checkSeed fails unless the triggers counted every seeded employee into meta.
func checkSeed(b *testing.B, db *sql.DB) {
	b.Helper()
	var total, counted int64
	if err := db.QueryRowContext(context.Background(),
		`SELECT (SELECT employees_total FROM meta), (SELECT count(*) FROM employees WHERE listed AND deleted_at IS NULL)`).Scan(&total, &counted); err != nil {
		b.Fatal(err)
	}
	if total != benchEmployees || counted != benchEmployees {
		b.Fatalf("after seeding: meta.employees_total %d, counted %d; want %d", total, counted, benchEmployees)
	}
}

// Seed vocabularies, shared by both dialects (joined in by id modulo their length).
var (
	seedFirst = []string{"Ana", "Ben", "Chloé", "Dev", "Emma", "Farid", "Grace", "Hiro", "Isla", "Jonas",
		"Kemi", "Liam", "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sam", "Tomasz",
		"Uma", "Victor", "Wen", "Xavier", "Yara", "Zoë", "Aidan", "Bea", "Carlos", "Dana",
		"Eli", "Fatima", "Gus", "Hannah", "Ivan", "Jade", "Kai", "Lena", "Mateo", "Nina"}
	seedLast = []string{"Smith", "Jones", "Williams", "Taylor", "Brown", "Davies", "Evans", "Wilson", "Thomas", "Johnson",
		"Roberts", "Robinson", "Thompson", "Wright", "Walker", "White", "Edwards", "Hughes", "Green", "Hall",
		"Lewis", "Harris", "Clarke", "Patel", "Jackson", "Wood", "Turner", "Martin", "Cooper", "Hill",
		"Ward", "Morris", "Moore", "Clark", "Lee", "King", "Baker", "Harrison", "Morgan", "Allen",
		"James", "Scott", "Phillips", "Watson", "Davis", "Parker", "Price", "Bennett", "Young", "O'Brien"}
	seedTitles = []string{"Software Engineer", "Senior Software Engineer", "Account Executive", "Nurse", "Care Assistant",
		"Data Analyst", "Product Manager", "HR Business Partner", "Finance Assistant", "Customer Success Manager",
		"Designer", "Warehouse Operative", "Store Manager", "Recruiter", "Office Manager",
		"Marketing Executive", "Support Agent", "Legal Counsel", "Team Lead", "Operations Analyst"}
	seedDepartments = []string{"Engineering", "Sales", "Marketing", "Finance", "People", "Operations", "Support",
		"Legal", "Product", "Design"}
)

// valuesCTE renders a vocabulary as a CTE "name(i, v)" with i from 0.
func valuesCTE(name string, vs []string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s(i, v) AS (VALUES ", name)
	for i, v := range vs {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, '%s')", i, strings.ReplaceAll(v, "'", "''"))
	}
	sb.WriteString(")")
	return sb.String()
}

// seedDialect holds what the seed statement spells differently in Postgres and SQLite.
type seedDialect struct {
	rows    string                   // FROM item of g = 1 … benchEmployees, or a CTE name
	cte     string                   // a leading CTE for rows, if any
	joined  func(days string) string // the date days before 2026-11-22
	addDays func(date, days string) string
	ts      func(minutes string) string // 2019-01-01 09:00 UTC plus minutes, as stored
	quote   func(text string) string    // a JSON string of text, as text
	asJSON  func(text string) string    // JSON text as the column type
	num     func(n string) string       // a JSON number
	true_   string
}

var (
	pgSeed = seedDialect{
		rows:    "generate_series(1, " + strconv.Itoa(benchEmployees) + ") g",
		joined:  func(d string) string { return "date '2026-11-22' - " + d },
		addDays: func(t, d string) string { return "((" + t + ")::date + " + d + ")" },
		ts: func(m string) string {
			return "timestamptz '2019-01-01 09:00:00+00' + (" + m + ") * interval '1 minute'"
		},
		quote:  func(x string) string { return "to_json(" + x + ")::text" },
		asJSON: func(x string) string { return "(" + x + ")::json" },
		num:    func(n string) string { return "to_json(" + n + ")" },
		true_:  "true",
	}
	sqliteSeedDialect = seedDialect{
		rows:    "seq",
		cte:     "RECURSIVE seq(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM seq WHERE g < " + strconv.Itoa(benchEmployees) + "),\n",
		joined:  func(d string) string { return "date('2026-11-22', '-' || " + d + " || ' days')" },
		addDays: func(t, d string) string { return "date(" + t + ", '+' || " + d + " || ' days')" },
		ts: func(m string) string {
			return "strftime('%Y-%m-%dT%H:%M:%SZ', '2019-01-01 09:00:00', '+' || (" + m + ") || ' minutes')"
		},
		quote:  func(x string) string { return "json_quote(" + x + ")" },
		asJSON: func(x string) string { return x },
		num:    func(n string) string { return "CAST(" + n + " AS TEXT)" },
		true_:  "1",
	}
)

// departmentsSeed inserts 40 departments, every third with a field the model does not know.
func departmentsSeed() string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO departments (id, name, extra) VALUES ")
	for g := 1; g <= 40; g++ {
		if g > 1 {
			sb.WriteString(", ")
		}
		name := seedDepartments[(g-1)%10]
		if g > 10 {
			name += " " + strconv.Itoa((g-1)/10+1)
		}
		extra := "NULL"
		if g%3 == 0 {
			extra = fmt.Sprintf(`'{"code":"D%d"}'`, g)
		}
		fmt.Fprintf(&sb, "(%d, '%s', %s)", g, name, extra)
	}
	return sb.String()
}

// employeesSeed inserts the employees in one statement. Per employee g:
//
//	managers: every 100th employee is one (1,000 of them, spread over the ids); 100…1,000
//	          have none, the other managers report to them, everyone else to a manager
//	approver: the line manager, except every 7th employee has none
//	department: one of 40, except every 50th employee has none
//	working pattern 1, holiday allowance 1 (the migration's), account 7
//	joined up to ~21 years before 2026-11-22; extra fields on every 5th and every 11th
//
// nested, when the warehouse has the column, holds the references as a sync stores them: the
// objects the source embedded, compact.
func employeesSeed(d seedDialect, nested bool) string {
	const (
		manager = `CASE WHEN g % 100 = 0 AND g <= 1000 THEN NULL WHEN g % 100 = 0 THEN 100 * (1 + (g / 100) % 10) ELSE 100 * (1 + (g * 31) % 1000) END`
		days    = `((g * 7919) % 7700)` // days of service
	)
	email := func(f, l, id string) string {
		return "lower(" + f + " || '.' || " + l + ") || '.' || " + id + " || '@example.com'"
	}
	person := func(id string) string {
		return `'{"id":' || ` + id + ` || ',"name":' || ` + d.quote("mf.v || ' ' || ml.v") + ` || ',"email":' || ` + d.quote(email("mf.v", "ml.v", id)) + ` || '}'`
	}
	cols := `id, account_id, first_name, last_name, email, job_title, status,
    company_join_date, job_start_date, length_of_service_in_months, age, full_or_part_time,
    notice_period, working_pattern_id, holiday_allowance_id, department_id, line_manager_id,
    holiday_approver_id, receives_statutory_holidays, hr, created_at, updated_at, extra, listed, origin`
	vals := `g, 7, f, l, ` + email("f", "l", "g") + `, title,
    CASE WHEN g % 97 = 0 THEN 'Pending leaver' ELSE 'Current employee' END,
    joined, ` + d.addDays("joined", "((g * 31) % 60)") + `, ` + days + ` * 12 / 365,
    CASE WHEN g % 4 = 0 THEN NULL ELSE ` + d.num("20 + g % 45") + ` END,
    ` + d.asJSON(d.quote("CASE WHEN g % 5 = 0 THEN 'Part Time' ELSE 'Full Time' END")) + `,
    CASE WHEN g % 3 = 0 THEN NULL ELSE ` + d.asJSON(d.quote("(1 + g % 3) || ' months'")) + ` END,
    1, 1, dept, mgr, appr, g % 10 <> 0, g % 53 = 0,
    ` + d.ts("g * 17") + `, ` + d.ts("g * 17 + (g % 400) * 1440") + `,
    ` + d.asJSON(`CASE WHEN g % 5 = 0 THEN '{"custom_fields":{"shoe":"' || (35 + g % 12) || '","team":"T' || (g % 17) || '"},"middle_name":"M"}'
         WHEN g % 11 = 0 THEN '{"dob":"' || `+d.addDays("'1960-01-01'", "((g * 13) % 15000)")+` || '"}' END`) + `,
    ` + d.true_ + `, 'source'`
	if nested {
		cols += ", nested"
		vals += `,
    ` + d.asJSON(`'{' || concat_ws(',',
        CASE WHEN dept IS NOT NULL THEN '"department":{"id":' || dept || ',"name":' || `+d.quote("dp.name")+` || '}' END,
        '"holiday_allowance":{"id":1,"name":"Standard"}',
        CASE WHEN appr IS NOT NULL THEN '"holiday_approver":' || `+person("appr")+` END,
        CASE WHEN mgr IS NOT NULL THEN '"line_manager":' || `+person("mgr")+` END,
        '"working_pattern":{"id":1,"name":"Standard","total_hours":"37.5","default":true}') || '}'`)
	}
	return `WITH ` + d.cte + valuesCTE("fn", seedFirst) + ",\n" + valuesCTE("ln", seedLast) + ",\n" + valuesCTE("jt", seedTitles) + `,
s AS (
    SELECT g, fn.v AS f, ln.v AS l, jt.v AS title, ` + d.joined(days) + ` AS joined,
        CASE WHEN g % 50 = 0 THEN NULL ELSE 1 + g % 40 END AS dept,
        ` + manager + ` AS mgr,
        CASE WHEN g % 7 = 0 THEN NULL ELSE ` + manager + ` END AS appr
    FROM ` + d.rows + `
    JOIN fn ON fn.i = g % 40 JOIN ln ON ln.i = (g * 7) % 50 JOIN jt ON jt.i = (g * 3) % 20
)
INSERT INTO employees (` + cols + `)
SELECT ` + vals + `
FROM s
LEFT JOIN departments dp ON dp.id = s.dept
LEFT JOIN fn mf ON mf.i = s.mgr % 40
LEFT JOIN ln ml ON ml.i = (s.mgr * 7) % 50`
}

// hasColumn reports whether the warehouse's employees table has a column (the schema moves).
func hasColumn(b *testing.B, db *sql.DB, pg bool, column string) bool {
	b.Helper()
	q := `SELECT count(*) FROM pragma_table_info('employees') WHERE name = ?`
	if pg {
		q = `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'employees' AND column_name = $1`
	}
	var n int
	if err := db.QueryRowContext(context.Background(), q, column).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n > 0
}

// seed fills a fresh warehouse and checks the triggers counted every employee into meta.
func seed(b *testing.B, db *sql.DB, d seedDialect, pg bool) {
	b.Helper()
	ctx := context.Background()
	nested := hasColumn(b, db, pg, "nested")
	if !nested {
		b.Logf("employees has no nested column: seeding without it")
	}
	for _, q := range []string{departmentsSeed(), employeesSeed(d, nested)} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatalf("seed: %v\n%s", err, q)
		}
	}
	checkSeed(b, db)
}

func newSQLiteBench(b *testing.B) *benchFixture {
	b.Helper()
	s := openSQLite(b)
	start := time.Now()
	seed(b, sinktest.DB(s).DB, sqliteSeedDialect, false)
	if _, err := sinktest.DB(s).ExecContext(context.Background(), `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d employees in %v", benchEmployees, time.Since(start).Round(time.Millisecond))
	return newBenchFixture(b, s)
}

// BenchmarkOpen opens a migrated Postgres warehouse and closes it: what every command and test
// pays first. The read statements are prepared on first use, not here.
func BenchmarkOpen(b *testing.B) {
	url, schemaName := sinktest.Postgres(b)
	ctx := context.Background()
	opts := sink.Options{Schema: schemaName}
	if _, err := sink.Migrate(ctx, url, opts); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := sink.Open(ctx, url, opts)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Close()
	}
}
