package main

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// TestWritesDefault: serve.writes left out is local only for a standalone warehouse; a replica of
// a source forwards its creates when this process holds the source's key, and refuses them when
// it does not; a mode that is set is taken as set, for every account.
func TestWritesDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "source.key")
	if err := os.WriteFile(keyFile, []byte("# the key\nsrc-key-4f9a0c7e2b1d8e6f\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const src = "HRSYNC_SOURCE_URL=https://api.example.com/v1"
	tests := []struct {
		name string
		file string
		env  []string
		want map[string]server.Writes // by account
		set  bool
	}{
		{"standalone", "", nil, map[string]server.Writes{"default": server.WritesLocal}, false},
		{"replica with its key", "", []string{src, "HRSYNC_SOURCE_API_KEY=k"}, map[string]server.Writes{"default": server.WritesForward}, false},
		{"replica with its key file", "", []string{src, "HRSYNC_SOURCE_API_KEY_FILE=" + keyFile}, map[string]server.Writes{"default": server.WritesForward}, false},
		{"replica without its key", "", []string{src}, map[string]server.Writes{"default": server.WritesOff}, false},
		{"replica, local chosen", "", []string{src, "HRSYNC_SOURCE_API_KEY=k", "HRSYNC_SERVE_WRITES=local"}, map[string]server.Writes{"default": server.WritesLocal}, true},
		{"replica, local chosen in the file", "serve:\n  writes: local\n", []string{src, "HRSYNC_SOURCE_API_KEY=k"}, map[string]server.Writes{"default": server.WritesLocal}, true},
		{"standalone, off chosen", "", []string{"HRSYNC_SERVE_WRITES=off"}, map[string]server.Writes{"default": server.WritesOff}, true},
		{"empty is not set", "", []string{src, "HRSYNC_SOURCE_API_KEY=k", "HRSYNC_SERVE_WRITES="}, map[string]server.Writes{"default": server.WritesForward}, false},
		{"accounts, each its own", "accounts:\n  - name: acme\n    source: {url: https://a.example.com, api_key: k}\n  - name: beta\n    source: {url: https://b.example.com}\n  - name: solo\n",
			nil, map[string]server.Writes{"acme": server.WritesForward, "beta": server.WritesOff, "solo": server.WritesLocal}, false},
		{"accounts, one mode for all", "serve:\n  writes: forward\naccounts:\n  - name: acme\n    source: {url: https://a.example.com, api_key: k}\n  - name: solo\n",
			nil, map[string]server.Writes{"acme": server.WritesForward, "solo": server.WritesForward}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := config.Load(path, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]server.Writes{}
			for _, a := range s.Accounts {
				got[a.Name] = a.Writes
				if a.WritesSet != tt.set {
					t.Errorf("account %s: writesSet %v, want %v", a.Name, a.WritesSet, tt.set)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("accounts %v, want %v", got, tt.want)
			}
			for name, w := range tt.want {
				if got[name] != w {
					t.Errorf("account %s: writes %q, want %q", name, got[name], w)
				}
			}
		})
	}
}

// TestReplicaCreates: a create POSTed to `hrsync serve` over a replica of a source is forwarded
// to the source by default (and kept with the source's answer, origin source), refused when
// the source's key is not there, and kept locally only when serve.writes says local, with a
// warning at start that such employees never reach the HR system. A standalone warehouse
// creates locally, without a warning.
func TestReplicaCreates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		source     bool // source.url set
		key        bool // source.api_key set
		writes     string
		status     int
		upstream   bool   // the source received the create
		origin     string // of the row kept; "" for none
		log        string // a line the start logs
		notLog     string
		startWrite string // the writes= of the listening line
	}{
		{"replica: forwarded", true, true, "", http.StatusCreated, true, "source", "", "never reach", "writes=forward"},
		{"replica without its key: refused", true, false, "", http.StatusMethodNotAllowed, false, "", "creates refused (405)", "never reach", "writes=off"},
		{"replica, local chosen: kept, with a warning", true, true, "local", http.StatusCreated, false, "local",
			"level=WARN msg=\"serve.writes is local on a replica of a source: employees created through this replica are kept in this warehouse only and will never reach the HR system", "", "writes=local"},
		{"standalone: local", false, false, "", http.StatusCreated, false, "local", "", "level=WARN", "writes=local"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := sourcetest.NewServer(fakeupstream.Options{})
			defer up.Close()
			wh := filepath.Join(t.TempDir(), "wh.db")
			const serveKey = "serve-key-0b8e2f6a4c1d9e7f3a5b"
			env := []string{"HRSYNC_WAREHOUSE_URL=" + wh, "HRSYNC_SERVE_API_KEYS=" + serveKey, "HRSYNC_SOURCE_RATE_LIMIT=0"}
			if tt.source {
				env = append(env, "HRSYNC_SOURCE_URL="+up.URL+"/v1")
			}
			if tt.key {
				env = append(env, "HRSYNC_SOURCE_API_KEY="+up.APIKey())
			}
			if tt.writes != "" {
				env = append(env, "HRSYNC_SERVE_WRITES="+tt.writes)
			}
			if err := run(context.Background(), []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			base, logs, stop := startServe(t, env)
			const email = "ida.em@example.com"
			resp, body := postEmployee(t, base, serveKey, url.Values{"employee[first_name]": {"Ida"}, "employee[last_name]": {"Em"}, "employee[email]": {email}, "employee[join_date]": {"2026-01-05"}})
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			if got := up.Count("/v1/employees", http.StatusCreated) > 0; got != tt.upstream {
				t.Errorf("the source received the create: %v, want %v", got, tt.upstream)
			}
			if got := originOf(t, wh, email); got != tt.origin {
				t.Errorf("the warehouse's row: origin %q, want %q", got, tt.origin)
			}
			l := logs.String()
			if tt.log != "" && !strings.Contains(l, tt.log) {
				t.Errorf("the log lacks %q:\n%s", tt.log, l)
			}
			if tt.notLog != "" && strings.Contains(l, tt.notLog) {
				t.Errorf("the log holds %q:\n%s", tt.notLog, l)
			}
			if !strings.Contains(l, tt.startWrite) {
				t.Errorf("the listening line does not say %s:\n%s", tt.startWrite, l)
			}
			if strings.Contains(l, up.APIKey()) {
				t.Error("the log holds the source key")
			}
		})
	}
}

// originOf is the origin of the warehouse's employee with the email; "" when there is none.
func originOf(t *testing.T, path, email string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var origin string
	switch err := db.QueryRow(`SELECT origin FROM employees WHERE email = ?`, email).Scan(&origin); err {
	case nil:
		return origin
	case sql.ErrNoRows:
		return ""
	default:
		t.Fatal(err)
		return ""
	}
}

// postEmployee creates an employee through the replica at base as a form, sent with key,
// and returns the answer and its body.
func postEmployee(t *testing.T, base, key string, form url.Values) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/employees", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-API-KEY", key)
	return sourcetest.Do(t, nil, req)
}
