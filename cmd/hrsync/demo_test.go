package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/demo"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/personal"
	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// The demo's numbers for n generated employees and deploy/examples/new-hires.csv: six hires
// created, one skipped (an employee of the generated set), two rejected (no last name; a date
// written month first, which the day-first default refuses, naming the setting that reads it).
func wantDemoLines(n int) []string {
	return []string{
		"employees: ok — " + strconv.Itoa(n) + " records: " + strconv.Itoa(n) + " new, 0 changed, 0 unchanged, 0 deleted",
		"new-hires.csv: 6 created, 0 already done, 1 skipped, 2 rejected, 0 unresolved",
		"line 8   skipped   Grace.Ozturk1002@example.com       an employee with this email already exists",
		"line 9   rejected  mateus.silva@example.com           last_name: missing",
		`line 10  rejected  soren.norgaard@example.com         join_date: "07/20/2026" is not a date read day first, as UK and European Excel write dates (25/12/2026); if the file's dates are month first (12/25/2026), set onboarding.date_layout: 01/02/2006`,
		"employees: ok — " + strconv.Itoa(n+6) + " records: 0 new, 0 changed, " + strconv.Itoa(n+6) + " unchanged, 0 deleted",
		"6 more: the new hires, found just as onboarding stored them",
		"department", "Engineering",
		"Days of absence by department this year (2026", "department", "absences", "days",
		"absences: ok — ", "sicknesses: ok — ", "leave_requests: ok — ", "employee_training_courses: ok — ",
		"The people report (hrsync report: headcount, starters and leavers, absence, Bradford): ",
	}
}

func checkDemoOutput(t *testing.T, out string, n int) {
	t.Helper()
	for _, want := range wantDemoLines(n) {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

// TestDemoSQLite runs the demo as CI would (--no-serve), twice on the same file: each run starts
// from a new warehouse and reports the same numbers.
func TestDemoSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.db")
	args := []string{"demo", "--employees", "150", "--no-serve", "--warehouse", db}
	var lastOut string
	for i := range 2 {
		var out, logs bytes.Buffer
		if err := run(context.Background(), args, nil, &out, &logs); err != nil {
			t.Fatalf("run %d: %v\n%s\n%s", i+1, err, out.String(), logs.String())
		}
		checkDemoOutput(t, out.String(), 150)
		lastOut = out.String()
		// Run from cmd/hrsync, the example is not at deploy/examples/: the built-in copy is used.
		for _, want := range []string{"the built-in copy of deploy/examples/new-hires.csv (not found here)", "sqlite3 -header -column " + db, "HRSYNC_WAREHOUSE_URL=" + db + " hrsync serve"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("run %d: the report lacks %q:\n%s", i+1, want, out.String())
			}
		}
	}
	store, err := sink.Open(context.Background(), db, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	list, err := store.ListEmployees(context.Background(), v1.Page{Number: 1, Size: 1})
	if err != nil || list.Total != 156 {
		t.Errorf("the warehouse serves %d employees (%v), want 156", list.Total, err)
	}
	checkDemoPrivacy(t, store, dir, lastOut)
	checkDemoReport(t, filepath.Join(dir, demo.ReportName), lastOut)
}

// checkDemoReport: the demo says where its people report is, and it is there, private, with
// the headcount chart of the generated employees.
func checkDemoReport(t *testing.T, path, out string) {
	t.Helper()
	if !strings.Contains(out, "Bradford): "+path+"\n") {
		t.Errorf("the demo does not say its report is at %s:\n%s", path, out)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("report %s: %v (mode %v), want a 0600 file", path, err, info)
	}
	b, _ := os.ReadFile(path)
	if !bytes.Contains(b, []byte(`id="chart-headcount"`)) || !bytes.Contains(b, []byte("Engineering")) {
		t.Errorf("the demo's report has no headcount chart of its departments:\n%.2000s", b)
	}
}

// checkDemoPrivacy checks the demo's step 6 over its warehouse and the folder beside it: the
// leaver it names was exported first (their name is in the export, 0600) and then erased (not
// in the warehouse, the erasure listed).
func checkDemoPrivacy(t *testing.T, store *sink.Store, dir, out string) {
	t.Helper()
	m := regexp.MustCompile(`6\. Privacy +employee (\d+), a leaver`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the report has no step 6 naming a leaver:\n%s", out)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	doc := filepath.Join(dir, "subject-access-"+m[1]+".json")
	info, err := os.Stat(doc)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("export %s: %v (mode %v), want a 0600 file", doc, err, info)
	}
	var export personal.Subject
	b, _ := os.ReadFile(doc)
	if err := json.Unmarshal(b, &export); err != nil {
		t.Fatal(err)
	}
	var name string
	for _, c := range export.Categories {
		if c.Key == "employees" && len(c.Records) == 1 {
			for _, m := range c.Records[0].Members {
				if m.Name == "last_name" {
					name = m.Value
				}
			}
		}
	}
	if _, err := os.Stat(strings.TrimSuffix(doc, ".json") + ".html"); err != nil {
		t.Errorf("the demo wrote no subject-access document to read: %v", err)
	}
	// A whole document: the demo states why, on what basis and to whom, each an example.
	for what, says := range map[string][]string{"purposes": export.Purposes, "lawful basis": export.LawfulBasis, "recipients": recipientNames(export.Recipients)} {
		if len(says) == 0 || !strings.HasSuffix(says[0], "(example)") {
			t.Errorf("the demo's document states %s %q, want example statements", what, says)
		}
	}
	if name == "" {
		t.Fatalf("the export of employee %d holds no last name: %s", id, b)
	}
	var got sql.NullString
	if err := sinktest.DB(store).QueryRowContext(context.Background(), "SELECT last_name FROM employees WHERE id = "+m[1]).Scan(&got); err != nil || got.Valid {
		t.Errorf("employee %d's last name in the warehouse after the demo: %v (%v), want NULL", id, got, err)
	}
	erasures, err := store.Erasures(context.Background())
	if err != nil || len(erasures) != 1 || erasures[0].SubjectID != id {
		t.Errorf("erasures %+v (%v), want the one of employee %d", erasures, err, id)
	}
}

func TestDemoHiresFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	example := filepath.Join("..", "..", demo.HiresPath)
	var out bytes.Buffer
	err := run(context.Background(), []string{"demo", "--employees", "20", "--no-serve", "--warehouse", filepath.Join(dir, "d.db"), "--hires", example}, nil, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "4. Onboarding  "+example+", each row") || !strings.Contains(out.String(), "6 created, 0 already done, 1 skipped, 2 rejected") {
		t.Errorf("report:\n%s", out.String())
	}
	err = run(context.Background(), []string{"demo", "--no-serve", "--warehouse", filepath.Join(dir, "d.db"), "--hires", filepath.Join(dir, "none.csv")}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--hires") {
		t.Errorf("a missing --hires file: %v", err)
	}
}

// The demo removes only a warehouse it made: a real one, or any other file, is left alone.
func TestDemoRefusesAFileItDidNotMake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "hrsync.db")
	store, err := sink.Open(context.Background(), real, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{real, notes} {
		before, _ := os.ReadFile(path)
		err := run(context.Background(), []string{"demo", "--employees", "5", "--no-serve", "--warehouse", path}, nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "is not a warehouse hrsync demo made") || exitCode(err) != 1 {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
		if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
			t.Errorf("%s was changed (%v)", filepath.Base(path), err)
		}
		// Nothing beside it either: the mark is read from the file's header, not by opening it
		// as a database, which would leave a -wal and a -shm.
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Lstat(path + suffix); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s%s was left beside it (%v)", filepath.Base(path), suffix, err)
			}
		}
	}
}

// TestDemoServesUntilCanceled is the demo as a person runs it: the report, then the replica,
// which answers with the printed key and ETag until Ctrl-C, then a clean exit.
func TestDemoServesUntilCanceled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--employees", "120", "--addr", addr, "--warehouse", filepath.Join(dir, "d.db")}, nil, &out, &logs)
	}()
	// A bound on a hang, not a speed check: under -race on a two-core machine also compiling
	// the rest of the suite from a cold cache, a fresh warehouse and the sync of 120 employees
	// once took 150 s, and did not serve within the 3 minutes this allowed.
	waitServing(t, &out, &logs, done, 6*time.Minute)
	report := out.String()
	checkDemoOutput(t, report, 120)
	key := regexp.MustCompile(`API key is (demo-[0-9a-f]+)`).FindStringSubmatch(report)
	etag := regexp.MustCompile(`If-None-Match: ("[^"]+")`).FindStringSubmatch(report)
	if key == nil || etag == nil || !strings.Contains(report, "http://"+addr+"/v1/employees/") {
		t.Fatalf("the report lacks the key, the ETag or the address:\n%s", report)
	}
	do := func(path, inm string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		req.Header.Set("X-API-KEY", key[1])
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if resp := do("/v1/employees?per_page=100", ""); resp.StatusCode != 200 || resp.Header.Get("Total") != "126" {
		t.Errorf("employees: %d, Total %q", resp.StatusCode, resp.Header.Get("Total"))
	}
	if resp := do("/v1/employees?per_page=2", etag[1]); resp.StatusCode != http.StatusNotModified {
		t.Errorf("with the printed ETag: %d", resp.StatusCode)
	}
	// The replica is one of the in-process upstream's: a create is forwarded to it, and kept
	// with its answer (origin source), never created here alone.
	form := url.Values{"employee[first_name]": {"Ida"}, "employee[last_name]": {"Em"}, "employee[email]": {"ida.em@example.com"}, "employee[join_date]": {"2026-01-05"}}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/employees", strings.NewReader(form.Encode()))
	req.Header.Set("X-API-KEY", key[1])
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("create: %d %s", resp.StatusCode, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("demo after Ctrl-C: %v", err)
		}
	case <-time.After(httpserve.ShutdownTimeout + 5*time.Second):
		t.Fatal("demo did not stop")
	}
	if !strings.Contains(logs.String(), "replica shutting down") {
		t.Errorf("logs:\n%s", logs.String())
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("the replica still accepts connections")
	}
	if strings.Contains(logs.String(), key[1]) {
		t.Error("the replica's key appears in the logs")
	}
	if got := originOf(t, filepath.Join(dir, "d.db"), "ida.em@example.com"); got != "source" {
		t.Errorf("the created employee's origin is %q, want source (forwarded to the upstream)", got)
	}
}

// TestDemoPostgres runs the demo into Postgres, twice: its schema is dropped and made again.
// A schema the demo did not make is never dropped.
func TestDemoPostgres(t *testing.T) {
	t.Parallel()
	url, schemaName := sinktest.Postgres(t)
	f := demoCommand{demo.Options{Employees: 150, NoServe: true, UpstreamAddr: "127.0.0.1:0", Hires: demo.HiresPath,
		Warehouse: url, Set: map[string]bool{"warehouse": true}, Schema: schemaName}}
	for i := range 2 {
		var out, logs bytes.Buffer
		if err := f.run(context.Background(), parsed(t, config.Defaults()), &out, &logs); err != nil {
			t.Fatalf("run %d: %v\n%s\n%s", i+1, err, out.String(), logs.String())
		}
		checkDemoOutput(t, out.String(), 150)
		if want := "psql " + sink.ShellQuote(sink.WithoutPassword(url)); !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "HRSYNC_WAREHOUSE_SCHEMA="+schemaName) {
			t.Errorf("run %d: the report lacks %q:\n%s", i+1, want, out.String())
		}
	}

	other, otherSchema := sinktest.Postgres(t)
	db, err := sql.Open("postgres", other)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE SCHEMA ` + otherSchema + `; CREATE TABLE ` + otherSchema + `.precious (id int)`); err != nil {
		t.Fatal(err)
	}
	f.opts.Warehouse, f.opts.Schema = other, otherSchema
	err = f.run(context.Background(), parsed(t, config.Defaults()), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "hrsync demo did not make it") {
		t.Errorf("a schema the demo did not make: %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'precious'`, otherSchema).Scan(&n); err != nil || n != 1 {
		t.Errorf("the other schema's table: %d %v", n, err)
	}
}

// Ctrl-C before the replica is up ends the demo as cleanly as after.
func TestDemoStoppedEarlyIsClean(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx, []string{"demo", "--employees", "5", "--no-serve", "--warehouse", filepath.Join(t.TempDir(), "d.db")}, nil, io.Discard, io.Discard)
	if err != nil {
		t.Errorf("demo stopped at once: %v", err)
	}
}

// waitServing waits until the demo writing its report to out says it is serving the replica.
// The test fails when the demo ends first (done), or does not say so within timeout; logs is
// shown beside the report.
func waitServing(t *testing.T, out, logs *syncBuffer, done <-chan error, timeout time.Duration) {
	t.Helper()
	timeout = slowness.Bound(timeout)
	deadline := time.After(timeout)
	for !strings.Contains(out.String(), "Serving until Ctrl-C.") {
		select {
		case err := <-done:
			t.Fatalf("the demo ended before serving: %v\n%s\n%s", err, out.String(), logs.String())
		case <-deadline:
			t.Fatalf("the demo did not start serving:\n%s\n%s", out.String(), logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func recipientNames(rs []personal.Recipient) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}
