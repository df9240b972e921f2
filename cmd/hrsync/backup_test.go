package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// TestBackupEraseRestoreAsAnOperatorWould: a cohort onboarded and synced, the warehouse backed
// up, one of the cohort erased on request, then the backup restored as docs/operations.md says
// (SQLite: hrsync restore; Postgres: pg_dump's backup restored with pg_restore, then hrsync
// erase --reapply). The restore brings the warehouse back (what was synced after the backup is
// gone), but not the person: nothing of them is in any column of any table, the erasure is
// listed, a sync from the source that still holds them keeps them erased, and the same file
// dropped again does not create them again (their fingerprints came back with the erasure).
func TestBackupEraseRestoreAsAnOperatorWould(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			backupEraseRestore(t, backend)
		})
	}
}

func backupEraseRestore(t *testing.T, backend string) {
	ctx := context.Background()
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(30, 7)})
	defer up.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_ONBOARDING_DIR=" + in, "HRSYNC_ONBOARDING_SETTLE_SECONDS=0"}
	var opts sink.Options
	var url string
	journal := filepath.Join(dir, "w.db.erasures.jsonl")
	if backend == "postgres" {
		url, opts.Schema = sinktest.Postgres(t)
		journal = filepath.Join(dir, "erasures.jsonl")
		env = append(env, "HRSYNC_WAREHOUSE_URL="+url, "HRSYNC_WAREHOUSE_SCHEMA="+opts.Schema, "HRSYNC_WAREHOUSE_ERASURE_JOURNAL="+journal)
		if err := run(ctx, []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	} else {
		url = warehouseFile(t, filepath.Join(dir, "w.db"))
		env = append(env, "HRSYNC_WAREHOUSE_URL="+url)
	}
	step := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, args, env, &out, io.Discard); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, out.String())
		}
		return out.String()
	}
	markers := []string{"zq-mail@marker.example", "Zorblax", "Quendrith"}
	found := func() []string {
		t.Helper()
		s, err := sink.Open(ctx, url, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return sinktest.MarkersIn(t, s, markers)
	}
	count := func(q string) string {
		t.Helper()
		s, err := sink.Open(ctx, url, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return sinktest.QueryString(t, s, q)
	}

	if err := os.WriteFile(filepath.Join(in, "cohort.csv"), []byte(erasedCohort), 0o600); err != nil {
		t.Fatal(err)
	}
	step("onboard")
	step("sync")
	var zq int64
	for _, raw := range up.Employees() {
		var e struct {
			ID    int64  `json:"id"`
			Email string `json:"email"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if e.Email == "zq-mail@marker.example" {
			zq = e.ID
		}
	}
	if zq == 0 || len(found()) == 0 {
		t.Fatalf("the person (%d) is not in the warehouse before the erasure: the test cannot fail", zq)
	}

	backup := filepath.Join(dir, "backup")
	if backend == "sqlite" {
		out := step("backup", "--out", backup)
		if !strings.Contains(out, "backed up ") || !strings.Contains(out, journal) {
			t.Errorf("backup said %q", out)
		}
		asDocumented(t, out, url, backup)
		if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("backup file: %v %v, want mode 0600", fi, err)
		}
		if err := run(ctx, []string{"backup", "--out", backup}, env, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--force") {
			t.Errorf("a second backup to the same file: %v, want a refusal naming --force", err)
		}
	} else {
		err := run(ctx, []string{"backup", "--out", backup}, env, io.Discard, io.Discard)
		if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "pg_dump --format=custom --schema="+opts.Schema) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("backup of Postgres: %v, want one line naming pg_dump", err)
		}
		pgTool(t, documentedCommand(t, "pg_dump", opts.Schema, url, backup)...)
	}

	// Erased after the backup; a hire synced after it is what the restore takes away.
	step("erase", "--employee", strconv.FormatInt(zq, 10), "--reason", "DSAR 2026-117")
	if got := found(); len(got) > 0 {
		t.Fatalf("after the erase, the warehouse holds %q", got)
	}
	if fi, err := os.Stat(journal); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("journal %s: %v %v, want mode 0600", journal, fi, err)
	}
	before := count(`SELECT count(*) FROM employees`)
	up.AddEmployee(json.RawMessage(`{"id":990001,"first_name":"Late","last_name":"Hire","email":"late@example.com","status":"Active"}`))
	step("sync")
	if count(`SELECT count(*) FROM employees`) == before {
		t.Fatal("the hire after the backup was not synced: the restore cannot be seen to restore")
	}

	if backend == "sqlite" {
		out := step("restore", "--from", backup)
		if !strings.Contains(out, "re-applied 1 erasures and 0 lifts") {
			t.Errorf("restore said %q", out)
		}
		asDocumented(t, out, url, backup)
	} else {
		pgTool(t, documentedCommand(t, "pg_restore", opts.Schema, url, backup)...)
		if len(found()) == 0 {
			t.Fatal("pg_restore did not bring the person back: the re-apply cannot be seen to work")
		}
		// Until the erasures are re-applied, neither a sync nor an onboarding runs on it.
		for _, cmd := range []string{"sync", "onboard"} {
			err := run(ctx, []string{cmd}, env, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "lacks 1 erasures and 0 lifts of its erasure journal") ||
				!strings.Contains(err.Error(), "hrsync erase --reapply") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s on the restored warehouse: %v, want one line saying to run erase --reapply", cmd, err)
			}
		}
		// Nor does the worker run a job of it.
		wctx, cancel := context.WithCancel(ctx)
		var wlogs syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(wctx, []string{"run", "--now"}, append(env, "HRSYNC_SCHEDULE=@daily"), io.Discard, &wlogs)
		}()
		deadline := time.Now().Add(upWithin)
		for !strings.Contains(wlogs.String(), "hrsync erase --reapply") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		if !strings.Contains(wlogs.String(), "hrsync erase --reapply") {
			t.Errorf("the worker did not say why it ran nothing:\n%s", wlogs.String())
		}
		if got := count(`SELECT count(*) FROM employees`); got != before {
			t.Errorf("the worker synced the restored warehouse: %s employees, the backup's %s", got, before)
		}
		// Nor does serve answer with it.
		keyFile := filepath.Join(dir, "hrsync.key")
		base, logs, stop := startServe(t, append(env, "HRSYNC_SERVE_API_KEY_FILE="+keyFile))
		key, err := os.ReadFile(keyFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/v1/employees?per_page=100", "/v1/employees/" + strconv.FormatInt(zq, 10)} {
			if code, body := get(t, base+path, strings.TrimSpace(string(key))); code == 200 || strings.Contains(body, "Zorblax") {
				t.Errorf("serve of the restored warehouse: %s answered %d %.200s", path, code, body)
			}
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "hrsync erase --reapply") {
			t.Errorf("serve did not say why it answered none:\n%s", logs)
		}
		if out := step("erase", "--reapply"); !strings.Contains(out, "re-applied 1 erasures and 0 lifts") {
			t.Errorf("erase --reapply said %q", out)
		}
		// Re-applied, serve answers, without the person.
		base, _, stop = startServe(t, append(env, "HRSYNC_SERVE_API_KEY_FILE="+keyFile))
		if code, body := get(t, base+"/v1/employees?per_page=100", strings.TrimSpace(string(key))); code != 200 || strings.Contains(body, "Zorblax") {
			t.Errorf("serve after the re-apply: %d %.200s", code, body)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
	if got := count(`SELECT count(*) FROM employees`); got != before {
		t.Errorf("after the restore, %s employees, want the backup's %s", got, before)
	}
	if got := found(); len(got) > 0 {
		t.Errorf("after the restore, the warehouse holds %q", got)
	}
	if out := step("erase", "--list"); !strings.Contains(out, "employee "+strconv.FormatInt(zq, 10)) || !strings.Contains(out, "DSAR 2026-117") {
		t.Errorf("erase --list after the restore: %q", out)
	}
	// The source still holds them: a sync keeps them erased; the file dropped again creates no
	// one.
	step("sync")
	if got := found(); len(got) > 0 {
		t.Errorf("after a sync, the warehouse holds %q", got)
	}
	if err := os.WriteFile(filepath.Join(in, "cohort-again.csv"), []byte(erasedReexport), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := step("onboard"); !strings.Contains(out, ", 1 skipped,") {
		t.Errorf("the cohort dropped again: onboard said %q", out)
	}
	if got := found(); len(got) > 0 {
		t.Errorf("after the drop again, the warehouse holds %q", got)
	}
}

// pgTool runs a Postgres client tool, skipping the test where it is not installed.
func pgTool(t *testing.T, command ...string) {
	t.Helper()
	name, args := command[0], command[1:]
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed", name)
	}
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// documentedCommand is the command line of tool (pg_dump, pg_restore) as docs/operations.md's "Backup
// and restore" prints it, for the schema, the database's URL and the dump's file: what the test
// runs is what operators are told to.
func documentedCommand(t *testing.T, tool, schema, url, file string) []string {
	t.Helper()
	for line := range strings.SplitSeq(readRepoFile(t, "docs/operations.md"), "\n") {
		if !strings.HasPrefix(line, tool+" ") {
			continue
		}
		line = strings.ReplaceAll(line, "--schema=hr ", "--schema="+schema+" ")
		line = strings.ReplaceAll(line, `"$DATABASE_URL"`, url)
		line = strings.ReplaceAll(line, "hrsync-hr.dump", file)
		return strings.Fields(line)
	}
	t.Fatalf("docs/operations.md prints no %s command", tool)
	return nil
}

// asDocumented fails the test unless each line printed is one docs/operations.md prints, but
// for the warehouse's and the backup's paths and the numbers.
func asDocumented(t *testing.T, out, warehouse, backup string) {
	t.Helper()
	digits := regexp.MustCompile(`[0-9]+`)
	doc := digits.ReplaceAllString(readRepoFile(t, "docs/operations.md"), "N")
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		line = strings.ReplaceAll(line, backup, "/backups/hrsync-2026-11-29.db")
		line = strings.ReplaceAll(line, warehouse, "hrsync.db")
		if line = digits.ReplaceAllString(line, "N"); !strings.Contains(doc, "\n"+line+"\n") {
			t.Errorf("docs/operations.md does not print\n%s", line)
		}
	}
}
