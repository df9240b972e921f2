package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

func TestMain(m *testing.M) { sinktest.Main(m, removeBuilt) }

func TestCommandLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		code     int
		stdout   string
		errorHas string
	}{
		{[]string{"version"}, 0, "hrsync dev", ""},
		{[]string{"--help"}, 0, "usage: hrsync", ""},
		{[]string{"help"}, 0, "usage: hrsync", ""},
		{[]string{"sync", "--help"}, 0, "-allow-mass-delete", ""},
		{[]string{"sync", "--help"}, 0, "-accept REASON", ""},
		{[]string{"sync", "--accept", " "}, 2, "", "--accept is empty"},
		{[]string{"sync", "--accept", "checked\nwith HR"}, 2, "", "--accept must be one line"},
		{[]string{"sync", "--accept", strings.Repeat("x", 301)}, 2, "", "--accept is longer than 300 characters"},
		{[]string{"sync", "--accept", "checked", "--dry-run"}, 2, "", "--dry-run writes nothing"},
		{[]string{"sync", "--by", "tester"}, 2, "", "--by names who accepts, with --accept REASON"},
		{[]string{"onboard", "-h"}, 0, "onboard [flags] [FILE.csv ...]", ""},
		{nil, 2, "", "no command given"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"--nope", "serve"}, 2, "", "flag provided but not defined"},
		{[]string{"migrate", "extra"}, 2, "", "unexpected arguments extra"},
		{[]string{"onboard"}, 2, "", "name CSV files, or set onboarding.dir"},
		{[]string{"demo", "--employees", "0"}, 2, "", "--employees 0: want 1 to"},
		{[]string{"demo", "now"}, 2, "", "unexpected arguments now"},
		{[]string{"demo", "--warehouse", "mysql://db/hr"}, 2, "", "want a SQLite file path or a postgres:// URL"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, nil, &stdout, &stderr)
			code := 0
			if err != nil {
				code = exitCode(err)
			}
			if code != tt.code {
				t.Errorf("exit %d (%v), want %d", code, err, tt.code)
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout %q, want it to contain %q", stdout.String(), tt.stdout)
			}
			if tt.errorHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errorHas)) {
				t.Errorf("error %v, want %q", err, tt.errorHas)
			}
		})
	}
}

// freeAddr returns a loopback address nothing listens on, never the same one twice in this test
// process (the kernel may hand a just-closed port out again at once).
func freeAddr(t *testing.T) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr
		}
	}
}

var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// syncBuffer is a bytes.Buffer safe for the server goroutine to write while the test reads: the
// name this package's tests give sinktest.Buffer.
type syncBuffer = sinktest.Buffer

// upWithin bounds a test's wait for a command to come up (answer /healthz or /metrics). A new
// SQLite warehouse is migrated first, which under -race on a loaded two-core machine has taken
// over ten seconds; a bound, not a measure: a command that is up ends the wait at once. Scaled to
// the machine, as every bound on a hang (internal/slowness).
var upWithin = slowness.Bound(time.Minute)

// reloadWithin bounds a test's wait for a running command to take a change (a certificate's
// files, a signal) that it polls for every 50 ms.
var reloadWithin = slowness.Bound(30 * time.Second)

// warehouseFile writes a migrated, empty SQLite warehouse at path (a copy: sinktest.SQLiteFile)
// and returns path, for a test that is not about making one: migrating a new file takes seconds
// under -race.
func warehouseFile(t testing.TB, path string) string {
	t.Helper()
	sinktest.SQLiteFile(t, path)
	return path
}

// startServe runs `hrsync [args] serve` in the background and waits for /healthz; the returned func
// stops it the way a signal does and returns run's error.
func startServe(t *testing.T, env []string, args ...string) (base string, logs *syncBuffer, stop func() error) {
	t.Helper()
	addr := freeAddr(t)
	env = append(env, "HRSYNC_SERVE_ADDR="+addr)
	ctx, cancel := context.WithCancel(context.Background())
	logs = &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, append(args, "serve"), env, io.Discard, logs) }()
	base = "http://" + addr
	deadline := time.Now().Add(upWithin)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve exited: %v; logs:\n%s", err, logs)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not come up; logs:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(httpserve.ShutdownTimeout + 5*time.Second):
				runErr = errors.New("serve did not stop")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return base, logs, stop
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMigrateThenServePostgres(t *testing.T) {
	t.Parallel()
	url, schemaName := sinktest.Postgres(t)
	env := []string{"HRSYNC_WAREHOUSE_URL=" + url, "HRSYNC_WAREHOUSE_SCHEMA=" + schemaName, "HRSYNC_SERVE_API_KEYS=k1-4f9a0c7e2b1d8e6f3a5c9b0d,k2-4f9a0c7e2b1d8e6f3a5c9b0d"}

	// Before migrate, serve refuses, saying what to do.
	err := run(context.Background(), []string{"serve"}, env, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "run `hrsync migrate`") || exitCode(err) != 1 {
		t.Fatalf("serve on an empty schema: %v", err)
	}

	var out bytes.Buffer
	if err := run(context.Background(), []string{"migrate"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("warehouse %s: applied migrations %v", sink.RedactURL(url), allVersions()); !strings.Contains(out.String(), want) {
		t.Errorf("migrate said %q", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"migrate"}, env, &out, io.Discard); err != nil || !strings.Contains(out.String(), "up to date") {
		t.Errorf("second migrate: %q %v", out.String(), err)
	}

	base, logs, stop := startServe(t, env)
	if code, body := get(t, base+"/readyz", ""); code != 200 {
		t.Errorf("readyz %d %s", code, body)
	}
	if code, _ := get(t, base+"/v1/employees", ""); code != 401 {
		t.Errorf("no key: %d", code)
	}
	code, body := get(t, base+"/v1/working_patterns", "k2-4f9a0c7e2b1d8e6f3a5c9b0d")
	if code != 200 || !strings.Contains(body, `"total_hours":"37.5"`) {
		t.Errorf("working patterns: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	for _, secret := range []string{"k1-4f9a0c7e2b1d8e6f3a5c9b0d", "k2-4f9a0c7e2b1d8e6f3a5c9b0d"} {
		if strings.Contains(logs.String(), "="+secret) || strings.Contains(logs.String(), `"`+secret+`"`) {
			t.Errorf("a key appears in the logs:\n%s", logs)
		}
	}
	if !strings.Contains(logs.String(), "serve shutting down") || !strings.Contains(logs.String(), "status=200") {
		t.Errorf("logs lack the access log or the shutdown:\n%s", logs)
	}
}

func allVersions() []int {
	var v []int
	for i := 1; i <= schema.Latest(schema.Postgres); i++ {
		v = append(v, i)
	}
	return v
}

func TestServeGeneratesAKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "hrsync.key")
	env := []string{"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_SERVE_API_KEY_FILE=" + keyFile}
	base, logs, stop := startServe(t, env)
	fi, err := os.Stat(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(keyFile)
	key := strings.TrimSpace(string(b))
	if code, body := get(t, base+"/v1/employees", key); code != 200 {
		t.Errorf("with the generated key: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), key) {
		t.Error("the generated key was logged")
	}
	// A second start reuses the file.
	base, _, stop = startServe(t, env)
	if code, _ := get(t, base+"/v1/employees", key); code != 200 {
		t.Errorf("after restart: %d", code)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
