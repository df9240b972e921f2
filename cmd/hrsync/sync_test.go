package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// writes reads the rows inserted, updated and deleted in the warehouse tables, as Postgres
// counts them (pg_stat_user_tables), leaving out the run ledger (sync_runs, and each run's load
// profile and holds) and the locks' leases: bookkeeping, not data.
func writes(t *testing.T, url, schemaName string) int64 {
	t.Helper()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	err = db.QueryRow(`SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables
WHERE schemaname = $1 AND relname NOT IN ('sync_runs', 'load_profiles', 'load_holds', 'locks')`, schemaName).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSyncThenServe is the done-when of the sync: `hrsync sync` loads a source exactly, `hrsync
// serve` then answers every record as the source did, and a second sync of the unchanged source
// writes no row (pg_stat_user_tables says so).
func TestSyncThenServe(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(1234, 3)})
	defer up.Close()
	url, schemaName := sinktest.Postgres(t)
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL + "/v1/", "HRSYNC_SOURCE_API_KEY=" + up.APIKey(),
		"HRSYNC_SOURCE_RATE_LIMIT=0", "HRSYNC_WAREHOUSE_URL=" + url, "HRSYNC_WAREHOUSE_SCHEMA=" + schemaName,
		"HRSYNC_SERVE_API_KEYS=k-4f9a0c7e2b1d8e6f3a5c9b0d"}
	ctx := context.Background()
	if err := run(ctx, []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	var out, logs bytes.Buffer
	// A first sync retires the warehouse's seeded pattern: no deletion, nothing to allow.
	if err := run(ctx, []string{"sync"}, env, &out, &logs); err != nil {
		t.Fatalf("sync: %v\n%s", err, logs.String())
	}
	if !strings.Contains(out.String(), "employees: ok — 1234 records: 1234 new, 0 changed, 0 unchanged, 0 deleted; 13 pages") {
		t.Errorf("summary:\n%s", out.String())
	}
	if strings.Contains(logs.String(), up.APIKey()) {
		t.Error("the source key appears in the logs")
	}

	base, _, stop := startServe(t, env)
	defer func() { _ = stop() }()
	served := map[int64]string{}
	for page := 1; ; page++ {
		code, body := get(t, fmt.Sprintf("%s/v1/employees?per_page=100&page=%d", base, page), "k-4f9a0c7e2b1d8e6f3a5c9b0d")
		if code != 200 {
			t.Fatalf("page %d: %d %s", page, code, body)
		}
		var env struct{ Employees []json.RawMessage }
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Fatal(err)
		}
		if len(env.Employees) == 0 {
			break
		}
		for _, raw := range env.Employees {
			var id struct{ ID int64 }
			_ = json.Unmarshal(raw, &id)
			served[id.ID] = string(raw)
		}
	}
	if len(served) != 1234 {
		t.Errorf("served %d employees, want 1234", len(served))
	}
	for _, raw := range up.Employees() {
		var e v1.Employee
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		if want := string(e.AppendJSON(nil)); served[e.ID] != want {
			t.Fatalf("employee %d\n served %s\n source %s", e.ID, served[e.ID], want)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Again, unchanged: nothing is written. (The store closes its connections when the
	// command ends, which flushes their statistics.)
	before := settledWrites(t, url, schemaName)
	out.Reset()
	if err := run(ctx, []string{"sync"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "employees: ok — 1234 records: 0 new, 0 changed, 1234 unchanged, 0 deleted") {
		t.Errorf("second summary:\n%s", out.String())
	}
	if after := settledWrites(t, url, schemaName); after != before {
		t.Fatalf("an unchanged sync wrote %d rows (pg_stat_user_tables)", after-before)
	}
}

// settledWrites waits for the statistics to settle: backends flush theirs as they exit, a
// moment after the pool that held them closed.
func settledWrites(t *testing.T, url, schemaName string) int64 {
	t.Helper()
	last, stable := writes(t, url, schemaName), 0
	for stable < 10 {
		time.Sleep(100 * time.Millisecond)
		n := writes(t, url, schemaName)
		if n == last {
			stable++
		} else {
			last, stable = n, 0
		}
	}
	return last
}

// TestSyncExitsThreeWhenHeld: a load the shrink guard holds ends the command with exit status 3,
// one line saying what to run, and --allow-mass-delete still accepts it.
func TestSyncExitsThreeWhenHeld(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(50, 1)})
	defer up.Close()
	url, schemaName := sinktest.Postgres(t)
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + url, "HRSYNC_WAREHOUSE_SCHEMA=" + schemaName}
	ctx := context.Background()
	if err := run(ctx, []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"sync", "--allow-mass-delete"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	up.SetEmployees(fakeupstream.Generate(50, 1)[:30])
	var out bytes.Buffer
	err := run(ctx, []string{"sync", "--resource", "employees"}, env, &out, io.Discard)
	if err == nil || exitCode(err) != 3 || !strings.Contains(err.Error(), `run `+"`"+`hrsync sync --resource employees --accept "why"`+"`") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(out.String(), "employees: held (nothing written)") || !strings.Contains(out.String(), "20 deletions refused") {
		t.Errorf("summary %s", out.String())
	}
	// Dry run: the same hold, said as what would be, and the same exit status.
	out.Reset()
	err = run(ctx, []string{"sync", "--resource", "employees", "--dry-run"}, env, &out, io.Discard)
	if err == nil || exitCode(err) != 3 || !strings.Contains(err.Error(), "employees: the load would be held: employees: 50 → 30 records") ||
		!strings.Contains(out.String(), "employees: would be held (dry run: nothing written)") ||
		!strings.Contains(out.String(), "  would be held: employees: 50 → 30 records (20, 40%, would be deleted; at most 10% allowed) [shrink:employees]") {
		t.Errorf("dry run: %v (exit %d)\n%s", err, exitCode(err), out.String())
	}
	// Dry run: reports, writes nothing, and the guard still speaks.
	out.Reset()
	err = run(ctx, []string{"sync", "--resource", "employees", "--dry-run", "--allow-mass-delete"}, env, &out, io.Discard)
	if err != nil || !strings.Contains(out.String(), "dry run: nothing written") || !strings.Contains(out.String(), "20 deleted") {
		t.Errorf("dry run: %v %s", err, out.String())
	}
	if err := run(ctx, []string{"sync", "--resource", "nope"}, env, io.Discard, io.Discard); err == nil || exitCode(err) != 2 {
		t.Errorf("bad --resource: %v", err)
	}
}

func TestSyncWithoutSourceSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"sync"}, []string{"HRSYNC_WAREHOUSE_URL=" + t.TempDir() + "/w.db"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "HRSYNC_SOURCE_URL") {
		t.Errorf("err %v", err)
	}
}

// TestSyncSkipsCollectionsNotOffered: an account without the working patterns module answers
// them 404; `hrsync sync` reports them unavailable, in its summary, its log and the ledger, syncs
// the employees, and exits 0. sync.resources picks the collections and --resource wins over it;
// a run whose every collection is unavailable fails.
func TestSyncSkipsCollectionsNotOffered(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(150, 4),
		Fault: func(_ int, r *http.Request) fakeupstream.Fault {
			if r.URL.Path == "/v1/working_patterns" {
				return fakeupstream.Fault{Status: http.StatusNotFound}
			}
			return fakeupstream.Fault{}
		}})
	defer up.Close()
	db := filepath.Join(t.TempDir(), "w.db")
	base := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + db}
	// The seed's two collections: the rest of the API is not served here at all.
	env := append(slices.Clone(base), "HRSYNC_SYNC_RESOURCES=working_patterns,employees")
	ctx := context.Background()
	var out, logs bytes.Buffer
	if err := run(ctx, []string{"sync"}, env, &out, &logs); err != nil {
		t.Fatalf("sync: %v (exit %d)\n%s", err, exitCode(err), logs.String())
	}
	if want := "working_patterns: unavailable — skipped: the account does not offer working_patterns (source answered 404)\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("summary does not start with %q:\n%s", want, out.String())
	}
	if !strings.Contains(out.String(), "employees: ok — 150 records: 150 new") {
		t.Errorf("summary:\n%s", out.String())
	}
	if !strings.Contains(logs.String(), "status=unavailable") || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("log:\n%s", logs.String())
	}
	store, err := sink.Open(ctx, db, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ledger := func() []string {
		t.Helper()
		runs, err := store.Runs(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := len(runs) - 1; i >= 0; i-- {
			got = append(got, string(runs[i].Resource)+":"+runs[i].Status)
		}
		return got
	}
	if got, want := ledger(), []string{"working_patterns:unavailable", "employees:ok"}; !slices.Equal(got, want) {
		t.Errorf("ledger %v, want %v", got, want)
	}

	// sync.resources: employees only; --resource wins over it.
	only := append(slices.Clone(base), "HRSYNC_SYNC_RESOURCES=employees")
	out.Reset()
	if err := run(ctx, []string{"sync"}, only, &out, io.Discard); err != nil || strings.Contains(out.String(), "working_patterns") {
		t.Errorf("sync with sync.resources=employees: %v\n%s", err, out.String())
	}
	// Only the one collection asked for, and the account does not offer it: nothing synced is a
	// failure.
	out.Reset()
	err = run(ctx, []string{"sync", "--resource", "working_patterns"}, only, &out, io.Discard)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "offered none of the collections") ||
		strings.Contains(out.String(), "employees") || !strings.Contains(out.String(), "working_patterns: unavailable") {
		t.Errorf("sync --resource working_patterns: %v\n%s", err, out.String())
	}
	want := []string{"working_patterns:unavailable", "employees:ok", "employees:ok", "working_patterns:unavailable"}
	if got := ledger(); !slices.Equal(got, want) {
		t.Errorf("ledger %v, want %v", got, want)
	}
}

// TestRunSyncsTheConfiguredResources: the worker's scheduled sync walks sync.resources, and
// nothing else.
func TestRunSyncsTheConfiguredResources(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(40, 5)})
	defer up.Close()
	db := filepath.Join(t.TempDir(), "w.db")
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + db, "HRSYNC_SCHEDULE=@daily", "HRSYNC_SYNC_RESOURCES=employees"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"run", "--now"}, env, io.Discard, &logs) }()
	deadline := time.Now().Add(upWithin)
	for !strings.Contains(logs.String(), `msg="sync finished" resource=employees`) {
		select {
		case err := <-done:
			t.Fatalf("run ended (%v) before syncing:\n%s", err, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sync within %v:\n%s", upWithin, logs.String())
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run still going 30 s after its context ended")
	}
	if up.Count("/v1/working_patterns", http.StatusOK) != 0 || strings.Contains(logs.String(), "resource=working_patterns") {
		t.Errorf("the worker walked working_patterns, which sync.resources leaves out:\n%s", logs.String())
	}
}
