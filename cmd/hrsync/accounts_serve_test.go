package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// TestAccountsSyncAndServe: two accounts in one configuration on the SQLite default. sync
// --account syncs the one named, sync every one; serve answers each key with its account's
// employees only, and an id only the other account has is 404 to it; onboard with files and no
// --account refuses to guess.
func TestAccountsSyncAndServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ups := map[string]*sourcetest.Server{
		"acme":   sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(120, 3)}),
		"globex": sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(260, 4)}),
	}
	for _, up := range ups {
		defer up.Close()
	}
	keyFile := filepath.Join(dir, "globex-dashboard.key")
	if err := os.WriteFile(keyFile, []byte("globex-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`
warehouse: {url: %s}
source: {rate_limit: 0}
sync: {resources: [working_patterns, employees]}
accounts:
  - name: acme
    source: {url: %q, api_key: %q}
  - name: globex
    source: {url: %q, api_key: %q}
serve:
  keys:
    - {name: acme-dashboard, key: acme-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d, account: acme}
    - {name: globex-dashboard, key_file: %s, account: globex}
`, filepath.Join(dir, "hrsync.db"), ups["acme"].URL, ups["acme"].APIKey(), ups["globex"].URL, ups["globex"].APIKey(), keyFile)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"--config", path, "sync", "--account", "globex"}, nil, &out, io.Discard); err != nil {
		t.Fatalf("sync --account globex: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "account globex: employees: ok") || strings.Contains(out.String(), "acme") {
		t.Errorf("sync --account globex said:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "hrsync-acme.db")); err == nil {
		t.Error("sync --account globex touched acme's warehouse")
	}
	out.Reset()
	if err := run(ctx, []string{"--config", path, "sync"}, nil, &out, io.Discard); err != nil {
		t.Fatalf("sync: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "account acme: employees: ok — 120 records") || !strings.Contains(out.String(), "account globex: employees: ok — 260 records") {
		t.Errorf("sync said:\n%s", out.String())
	}

	base, logs, stop := startServe(t, nil, "--config", path)
	names := func(up *sourcetest.Server) []string {
		var ns []string
		for _, raw := range up.Employees() {
			var e struct {
				FirstName string `json:"first_name"`
				LastName  string `json:"last_name"`
			}
			_ = json.Unmarshal(raw, &e)
			ns = append(ns, e.FirstName+" "+e.LastName)
		}
		slices.Sort(ns)
		return ns
	}
	for _, tt := range []struct{ account, key string }{{"acme", "acme-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d"}, {"globex", "globex-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d"}} {
		var got []string
		for page := 1; ; page++ {
			code, body := get(t, fmt.Sprintf("%s/v1/employees?page=%d&per_page=100", base, page), tt.key)
			if code != 200 {
				t.Fatalf("%s page %d: %d %s", tt.account, page, code, body)
			}
			var doc struct {
				Employees []struct {
					FirstName string `json:"first_name"`
					LastName  string `json:"last_name"`
				} `json:"employees"`
			}
			if err := json.Unmarshal([]byte(body), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Employees) == 0 {
				break
			}
			for _, e := range doc.Employees {
				got = append(got, e.FirstName+" "+e.LastName)
			}
		}
		slices.Sort(got)
		if want := names(ups[tt.account]); !slices.Equal(got, want) {
			t.Errorf("%s's key read %d employees, not its account's %d", tt.account, len(got), len(want))
		}
	}
	// An employee only globex has: found with its key, not with acme's.
	ids := func(up *sourcetest.Server) []int64 {
		var out []int64
		for _, raw := range up.Employees() {
			out = append(out, mustEmployeeID(t, raw))
		}
		return out
	}
	acmeIDs := ids(ups["acme"])
	only := int64(-1)
	for _, id := range ids(ups["globex"]) {
		if !slices.Contains(acmeIDs, id) {
			only = id
			break
		}
	}
	if only < 0 {
		t.Fatal("no employee only globex has")
	}
	if code, _ := get(t, fmt.Sprintf("%s/v1/employees/%d", base, only), "acme-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d"); code != 404 {
		t.Errorf("acme's key reading globex's employee %d: %d, want 404", only, code)
	}
	if code, _ := get(t, fmt.Sprintf("%s/v1/employees/%d", base, only), "globex-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d"); code != 200 {
		t.Errorf("globex's key reading its employee %d: %d", only, code)
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
	if !strings.Contains(logs.String(), "key=acme-dashboard account=acme") || strings.Contains(logs.String(), "serve-key-4f9a0c7e2b1d8e6f3a5c9b0d") {
		t.Errorf("the access log should name keys, never show them:\n%s", logs)
	}

	err := run(ctx, []string{"--config", path, "onboard", filepath.Join(dir, "hires.csv")}, nil, io.Discard, io.Discard)
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--account") {
		t.Errorf("onboard of a file with two accounts and no --account: %v", err)
	}
}

func mustEmployeeID(t *testing.T, raw json.RawMessage) int64 {
	t.Helper()
	var e struct{ ID int64 }
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// TestAccountWaitsForItsWarehouse: a worker of two accounts whose second schema is not migrated
// yet (an account just added to the configuration) runs the first, says on /readyz which one
// waits and why, and starts the second once `hrsync migrate --account` has made its schema.
func TestAccountWaitsForItsWarehouse(t *testing.T) {
	saved := account.RetryOpen
	account.RetryOpen.First, account.RetryOpen.Most = 200*time.Millisecond, time.Second
	t.Cleanup(func() { account.RetryOpen = saved })
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(50, 5)})
	defer up.Close()
	url, first := sinktest.Postgres(t)
	_, second := sinktest.Postgres(t)
	metrics := freeAddr(t)
	path := filepath.Join(t.TempDir(), "config.yaml")
	config := fmt.Sprintf(`
warehouse: {url: %q}
source: {rate_limit: 0}
sync: {resources: [working_patterns, employees]}
schedule: "@every 1s"
metrics: {addr: %q}
accounts:
  - {name: old, source: {url: %q, api_key: %q}, warehouse: {schema: %s}}
  - {name: new, source: {url: %q, api_key: %q}, warehouse: {schema: %s}}
`, url, metrics, up.URL, up.APIKey(), first, up.URL, up.APIKey(), second)
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, []string{"--config", path, "migrate", "--account", "old"}, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--config", path, "run"}, nil, io.Discard, logs) }()
	synced := func(account string) bool {
		code, body := get(t, "http://"+metrics+"/metrics", "")
		return code == 200 && strings.Contains(body, `hrsync_sync_runs_total{account="`+account+`",resource="employees",status="ok"}`) &&
			!strings.Contains(body, `hrsync_sync_runs_total{account="`+account+`",resource="employees",status="ok"} 0`)
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		slowness.Wait{For: 60 * time.Second, Every: 100 * time.Millisecond, Ended: done, Detail: logs.String}.Until(t, what, cond)
	}
	waitUntil("sync of the old account", func() bool { _, err := net.Dial("tcp", metrics); return err == nil && synced("old") })
	code, body := get(t, "http://"+metrics+"/readyz", "")
	if code != 503 || !strings.Contains(body, "account new: not started") || !strings.Contains(body, "migrate") {
		t.Errorf("readyz while an account waits: %d %s", code, body)
	}
	if !strings.Contains(logs.String(), "account not started") {
		t.Errorf("the log does not say an account did not start:\n%s", logs)
	}
	if err := run(ctx, []string{"--config", path, "migrate", "--account", "new"}, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	waitUntil("sync of the new account", func() bool { return synced("new") })
	if code, body := get(t, "http://"+metrics+"/readyz", ""); code != 200 {
		t.Errorf("readyz once both run: %d %s", code, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(45 * time.Second):
		t.Error("run did not stop")
	}
}
