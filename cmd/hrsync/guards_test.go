package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// guardWarehouse reads a warehouse the way a test of the load guards needs: a digest of a
// table's rows, one value.
type guardWarehouse struct {
	db     *sql.DB
	schema string // "" on SQLite
}

func (w guardWarehouse) table(name string) string {
	if w.schema == "" {
		return name
	}
	return w.schema + "." + name
}

// digest is a hash of every row of table, in no order the database chooses.
func (w guardWarehouse) digest(t *testing.T, table string) string {
	t.Helper()
	rows, err := w.db.Query(`SELECT * FROM ` + w.table(table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	// Each row's values, as the driver hands them, hashed on their own; the rows' hashes are
	// added, so the digest is the same in whatever order they come, with nothing sorted or
	// formatted (a model's view can be thousands of rows).
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n, sum uint64
	h := sha256.New()
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		h.Reset()
		for _, v := range vals {
			if v == nil {
				h.Write([]byte{0})
				continue
			}
			h.Write([]byte{1})
			h.Write(binary.AppendUvarint(nil, uint64(len(v))))
			h.Write(v)
		}
		sum += binary.BigEndian.Uint64(h.Sum(nil))
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d rows %016x", n, sum)
}

// value is the one value query answers, as text ({t} stands for the schema's prefix).
func (w guardWarehouse) value(t *testing.T, query string) string {
	t.Helper()
	prefix := ""
	if w.schema != "" {
		prefix = w.schema + "."
	}
	var v sql.NullString
	if err := w.db.QueryRow(strings.ReplaceAll(query, "{t}", prefix)).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v.String
}

// visible is what a held load must leave as it was: the tables, their history, the models
// and serve's answer.
func (w guardWarehouse) visible(t *testing.T, tables []string, etag func() string) map[string]string {
	t.Helper()
	out := map[string]string{"etag": etag()}
	for _, table := range tables {
		out[table] = w.digest(t, table)
	}
	return out
}

// withField is raws with member field set to v in each record keep says (nil: every one).
func withField(t *testing.T, raws []json.RawMessage, field string, v any) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(raws))
	for i, raw := range raws {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		m[field] = b
		var err error
		if out[i], err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestLoadGuardsHoldAndAccept is issue 38's done-when, on both backends: a source that blanks
// every employee's job_title is held with nothing visible changed (the tables, their history,
// the models, serve's ETag); the worker's scheduled runs say so once ("load held") and quietly
// after ("load still held"), hrsync_load_held 1 meanwhile; `hrsync sync --accept` publishes it
// recording who and why, and the gauge goes back to 0. The same for employees shrinking by 40%
// (which also lifts by itself when the source is back) and for the financial module's amounts
// going empty (salaries, synced only when named).
func TestLoadGuardsHoldAndAccept(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("syncs a generated account many times on both backends")
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			testLoadGuards(t, backend)
		})
	}
}

func testLoadGuards(t *testing.T, backend string) {
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 200, Seed: 38})
	up := sourcetest.NewServer(acct.Options())
	defer up.Close()
	const key = "k-4f9a0c7e2b1d8e6f3a5c9b0d"
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_SERVE_API_KEYS=" + key, "HRSYNC_SYNC_WINDOW_FULL_WALK_EVERY_DAYS=0"}
	var w guardWarehouse
	var err error
	switch backend {
	case "sqlite":
		path := warehouseFile(t, filepath.Join(t.TempDir(), "hrsync.db"))
		env = append(env, "HRSYNC_WAREHOUSE_URL="+path)
		w.db, err = sql.Open("sqlite", path)
	default:
		url, schemaName := sinktest.Postgres(t)
		env = append(env, "HRSYNC_WAREHOUSE_URL="+url, "HRSYNC_WAREHOUSE_SCHEMA="+schemaName)
		w.db, err = sql.Open("postgres", url)
		w.schema = schemaName
	}
	if err != nil {
		t.Fatal(err)
	}
	defer w.db.Close()
	ctx := context.Background()
	if err := run(ctx, []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	sync := func(args ...string) (stdout, logs string, err error) {
		var out, log bytes.Buffer
		err = run(ctx, append([]string{"sync"}, args...), env, &out, &log)
		return out.String(), log.String(), err
	}
	// The first sync, of the reference data, the employees and the salaries (the events are
	// left out: they cost the most to walk and say nothing more here): no hold on a first load.
	if out, logs, err := sync("--resource", "departments,divisions,locations,holiday_allowances,statutory_holiday_countries,working_patterns,employees,salaries"); err != nil {
		t.Fatalf("first sync: %v\n%s\n%s", err, out, logs)
	}

	base, _, stopServe := startServe(t, env)
	defer func() { _ = stopServe() }()
	etag := func() string {
		req, _ := http.NewRequest("GET", base+"/v1/employees?per_page=100", nil)
		req.Header.Set("X-API-KEY", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("ETag") == "" {
			t.Fatalf("GET /v1/employees: %d, ETag %q", resp.StatusCode, resp.Header.Get("ETag"))
		}
		return resp.Header.Get("ETag")
	}
	// The models: the stored versions every model is made from, and the monthly headcount a
	// reader sees. (Not the daily headcount: a quarter of a million rows of a view, computed
	// afresh at each look, it was most of this test's time and tells nothing the versions do not.)
	tables := []string{"employees", "employees_history", "salaries", "model_employee_versions", "model_headcount_monthly"}
	unchanged := func(what string, before map[string]string) {
		t.Helper()
		for k, v := range w.visible(t, tables, etag) {
			if before[k] != v {
				t.Errorf("%s: %s changed: %s → %s", what, k, before[k], v)
			}
		}
	}
	lastRun := func(resource string) (status, by, reason string) {
		t.Helper()
		q := `SELECT status || '|' || coalesce(accepted_by, '') || '|' || coalesce(accept_reason, '') FROM {t}sync_runs
WHERE resource = '` + resource + `' ORDER BY id DESC LIMIT 1`
		parts := strings.SplitN(w.value(t, q), "|", 3)
		return parts[0], parts[1], parts[2]
	}
	var heldErr string // the last held run's error line
	held := func(what, resource string, args []string, wantKey string) (out string) {
		t.Helper()
		out, logs, err := sync(append([]string{"--resource", resource}, args...)...)
		if err != nil {
			heldErr = "hrsync: " + err.Error()
		}
		hint := "run `hrsync sync --resource " + resource + ` --accept "why"` + "`"
		if err == nil || exitCode(err) != 3 || !strings.Contains(err.Error(), hint) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: %v (exit %d), want exit 3 and one line saying %s\n%s\n%s", what, err, exitCode(err), hint, out, logs)
		}
		if !strings.Contains(out, resource+": held (nothing written)") || !strings.Contains(out, "["+wantKey+"]") {
			t.Errorf("%s: the summary does not say held by %s:\n%s", what, wantKey, out)
		}
		if status, _, _ := lastRun(resource); status != "held" {
			t.Errorf("%s: the ledger says %s", what, status)
		}
		if n := w.value(t, `SELECT count(*) FROM {t}load_holds h JOIN {t}sync_runs r ON r.id = h.run
WHERE r.resource = '`+resource+`' AND h.guard = '`+wantKey+`' AND r.id = (SELECT max(id) FROM {t}sync_runs WHERE resource = '`+resource+`')`); n != "1" {
			t.Errorf("%s: load_holds holds %s rows of %s for the last run", what, n, wantKey)
		}
		return out
	}
	accept := func(what, resource, reason string) string {
		t.Helper()
		out, logs, err := sync("--resource", resource, "--accept", reason, "--by", "tester")
		if err != nil {
			t.Fatalf("%s: accept: %v\n%s\n%s", what, err, out, logs)
		}
		if !strings.Contains(out, `accepted by tester ("`+reason+`")`) {
			t.Errorf("%s: the summary does not say who accepted:\n%s", what, out)
		}
		if status, by, why := lastRun(resource); status != "ok" || by != "tester" || why != reason {
			t.Errorf("%s: the ledger says %s, accepted by %q for %q", what, status, by, why)
		}
		return out
	}

	// 1. job_title blank for everyone: held; nothing visible changes over several scheduled
	// runs of a worker, which says so once; accepted, it is published.
	before := w.visible(t, tables, etag)
	up.SetEmployees(withField(t, acct.Employees, "job_title", ""))
	out := held("blank job titles", "employees", nil, "fill:employees.job_title")
	documented(t, "load-held", "$ hrsync sync --resource employees\n"+out+heldErr+"\n")
	if doc := strings.Join(strings.Fields(readRepoFile(t, "docs/troubleshooting.md")), " "); !strings.Contains(doc, "`3` (a load held by a load guard") ||
		!strings.Contains(doc, "**`sync: employees: load held, nothing written: …`** (exit status `3`)") {
		t.Error("docs/troubleshooting.md no longer says a held sync exits 3")
	}
	unchanged("blank job titles held", before)
	if n := w.value(t, `SELECT count(*) FROM {t}employees WHERE job_title IS NOT NULL AND job_title <> ''`); n == "0" {
		t.Fatal("the held load blanked the job titles")
	}

	metrics := freeAddr(t)
	workerEnv := append(slices.Clone(env), "HRSYNC_SCHEDULE=@every 1s", "HRSYNC_METRICS_ADDR="+metrics, "HRSYNC_SYNC_RESOURCES=employees",
		"HRSYNC_SYNC_RUN_AT_START=true")
	worker := func(until func(page string) bool) (page, logs string) {
		t.Helper()
		wctx, cancel := context.WithCancel(ctx)
		log := &syncBuffer{}
		done := make(chan error, 1)
		go func() { done <- run(wctx, []string{"run"}, workerEnv, io.Discard, log) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		}()
		for deadline := time.Now().Add(upWithin); ; {
			if time.Now().After(deadline) {
				t.Fatalf("the worker's runs did not come:\n%s\n%s", page, log)
			}
			time.Sleep(200 * time.Millisecond)
			resp, err := http.Get("http://" + metrics + "/metrics")
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if page = string(b); until(page) {
				return page, log.String()
			}
		}
	}
	runsHeld := func(page string) float64 {
		return metricValue(t, page, "hrsync_sync_runs_total", "status=held")
	}
	page, logs := worker(func(page string) bool { return runsHeld(page) >= 3 })
	if g := metricValue(t, page, "hrsync_load_held", "resource=employees"); g != 1 {
		t.Errorf("hrsync_load_held{resource=employees} %v while held, want 1", g)
	}
	// The hold began with the `hrsync sync` above: the worker's runs are not news.
	if n, still := strings.Count(logs, `msg="load held`), strings.Count(logs, `msg="load still held`); n != 0 || still < 3 {
		t.Errorf("the worker logged %d \"load held\" and %d \"load still held\", want 0 and 3 or more:\n%s", n, still, logs)
	}
	unchanged("blank job titles held by the worker", before)

	accept("blank job titles", "employees", "checked: titles moved to a custom field")
	if n := w.value(t, `SELECT count(*) FROM {t}employees WHERE job_title IS NOT NULL AND job_title <> ''`); n != "0" {
		t.Errorf("accepted, %s employees keep a job title", n)
	}
	if etag() == before["etag"] || w.digest(t, "employees_history") == before["employees_history"] {
		t.Error("accepted, serve's ETag or the history did not change")
	}
	page, _ = worker(func(page string) bool { return metricValue(t, page, "hrsync_sync_runs_total", "status=ok") >= 1 })
	if g := metricValue(t, page, "hrsync_load_held", "resource=employees"); g != 0 {
		t.Errorf("hrsync_load_held{resource=employees} %v once published, want 0", g)
	}

	// A hold that begins under the worker is said once, at Error, then quietly.
	up.SetEmployees(withField(t, acct.Employees, "email", ""))
	page, logs = worker(func(page string) bool { return runsHeld(page) >= 3 })
	if n, still := strings.Count(logs, `msg="load held`), strings.Count(logs, `msg="load still held`); n != 1 || still < 2 || !strings.Contains(logs, "level=ERROR msg=\"load held") {
		t.Errorf("the worker logged %d \"load held\" and %d \"load still held\", want 1 (at ERROR) and 2 or more:\n%s", n, still, logs)
	}
	if n := strings.Count(logs, "level=ERROR"); n != 1 {
		t.Errorf("the worker logged %d errors over several held runs, want the one:\n%s", n, logs)
	}
	if g := metricValue(t, page, "hrsync_load_held", "resource=employees"); g != 1 {
		t.Errorf("hrsync_load_held %v, want 1", g)
	}

	// 2. Employees shrinking by 40%: held; the source back to normal, the hold lifts by itself;
	// shrinking again, accepted, the 80 are deleted.
	up.SetEmployees(withField(t, acct.Employees, "job_title", ""))
	if out, logs, err := sync("--resource", "employees"); err != nil || !strings.Contains(out, "the hold of the last run lifted") {
		t.Fatalf("the source back: %v\n%s\n%s", err, out, logs)
	}
	before = w.visible(t, tables, etag)
	up.SetEmployees(withField(t, acct.Employees, "job_title", "")[:120])
	held("a 40% shrink", "employees", nil, "shrink:employees")
	unchanged("a 40% shrink held", before)
	up.SetEmployees(withField(t, acct.Employees, "job_title", ""))
	out, logs, err = sync("--resource", "employees")
	if err != nil || !strings.Contains(out, "the hold of the last run lifted") {
		t.Fatalf("the source back: %v\n%s\n%s", err, out, logs)
	}
	unchanged("the source back", before)
	up.SetEmployees(withField(t, acct.Employees, "job_title", "")[:120])
	held("a 40% shrink again", "employees", nil, "shrink:employees")
	out = accept("a 40% shrink", "employees", "80 leavers archived upstream, confirmed with HR")
	if !strings.Contains(out, "80 deleted") {
		t.Errorf("accepted, the shrink deleted other than 80:\n%s", out)
	}

	// 3. The financial module's amounts gone: salaries held (named: sensitive), then accepted.
	before = w.visible(t, tables, etag)
	up.SetCollection("salaries", withField(t, acct.Collections["salaries"], "amount", nil))
	held("salaries' amounts gone", "salaries", nil, "fill:salaries.amount")
	unchanged("salaries' amounts gone, held", before)
	accept("salaries' amounts gone", "salaries", "the amounts moved to payroll")
	amount := "json_extract(extra, '$.amount')"
	if backend == "postgres" {
		amount = "extra->>'amount'"
	}
	if n := w.value(t, `SELECT count(*) FROM {t}salaries WHERE `+amount+` IS NOT NULL`); n != "0" {
		t.Errorf("accepted, %s salaries keep an amount", n)
	}

	// --accept with nothing held accepts nothing, and says so.
	if out, _, err := sync("--resource", "salaries", "--accept", "nothing to see", "--by", "tester"); err != nil ||
		!strings.Contains(out, "--accept: nothing accepted") {
		t.Errorf("accept with nothing held: %v\n%s", err, out)
	}
}

// tookTime is a duration as a summary writes it (34ms, 1.2s, 0.35s).
var tookTime = regexp.MustCompile(`\b\d+(\.\d+)?(µs|ms|s)\b`)

// documented checks that docs/sync.md's text block after <!-- marker --> is what a run printed,
// its times aside.
func documented(t *testing.T, marker, printed string) {
	t.Helper()
	page := readRepoFile(t, "docs/sync.md")
	_, block, ok := strings.Cut(page, "<!-- "+marker+" -->\n```text\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatalf("docs/sync.md has no text block after <!-- %s -->", marker)
	}
	if got, want := tookTime.ReplaceAllString(block, "T"), tookTime.ReplaceAllString(printed, "T"); got != want {
		t.Errorf("docs/sync.md's <!-- %s --> block is not what the run printed:\n%s\nprinted:\n%s", marker, block, printed)
	}
}
