package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// keyTrap is a server at another origin that records every API key it is sent.
type keyTrap struct {
	*httptest.Server
	mu   sync.Mutex
	keys []string
	n    int
}

func newKeyTrap(t *testing.T) *keyTrap {
	k := &keyTrap{}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.n++
		if key := r.Header.Get("X-API-KEY"); key != "" {
			k.keys = append(k.keys, key)
		}
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"employees":[]}`))
	}))
	t.Cleanup(k.Close)
	return k
}

func (k *keyTrap) seen() (requests int, keys []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n, append([]string(nil), k.keys...)
}

// redirectingSource is a source that answers every request with a redirect to target, keeping
// the path and adding a query that must never be printed.
func redirectingSource(t *testing.T, target string, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path+"?token=leak", status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const redirectTestKey = "source-key-7f3a9c1e5b2d4f60"

// `hrsync sync` against a source that redirects its pages to another origin fails, naming that
// origin, and the other origin never receives the source key.
func TestSyncRefusesRedirectToAnotherOrigin(t *testing.T) {
	t.Parallel()
	trap := newKeyTrap(t)
	src := redirectingSource(t, trap.URL, http.StatusFound)
	env := []string{"HRSYNC_SOURCE_URL=" + src.URL, "HRSYNC_SOURCE_API_KEY=" + redirectTestKey,
		"HRSYNC_SOURCE_RATE_LIMIT=0", "HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(t.TempDir(), "wh.db"))}
	var out, logs bytes.Buffer
	err := run(context.Background(), []string{"sync"}, env, &out, &logs)
	if err == nil {
		t.Fatalf("sync succeeded; out:\n%s", out.String())
	}
	if _, keys := trap.seen(); len(keys) > 0 {
		t.Fatalf("the other origin received the source key %d times", len(keys))
	}
	all := err.Error() + out.String() + logs.String()
	tu, _ := url.Parse(trap.URL)
	if !strings.Contains(all, "redirected to another origin, http://"+tu.Host) {
		t.Errorf("nothing says the source redirected to %s:\nerr %v\nout %s\nlogs %s", tu.Host, err, out.String(), logs.String())
	}
	for _, leak := range []string{redirectTestKey, "leak"} {
		if strings.Contains(all, leak) {
			t.Errorf("the output holds %q:\nerr %v\nout %s\nlogs %s", leak, err, out.String(), logs.String())
		}
	}
}

// serve's forwarded create (serve.writes: forward) refuses a source redirecting the create to
// another origin: the client gets a 502, the other origin never sees the source key, and the log
// names the origin only.
func TestForwardedCreateRefusesRedirectToAnotherOrigin(t *testing.T) {
	t.Parallel()
	trap := newKeyTrap(t)
	src := redirectingSource(t, trap.URL, http.StatusTemporaryRedirect)
	const serveKey = "serve-key-0b8e2f6a4c1d9e7f3a5b"
	env := []string{"HRSYNC_SOURCE_URL=" + src.URL, "HRSYNC_SOURCE_API_KEY=" + redirectTestKey,
		"HRSYNC_SOURCE_RATE_LIMIT=0", "HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(t.TempDir(), "wh.db")),
		"HRSYNC_SERVE_WRITES=forward", "HRSYNC_SERVE_API_KEYS=" + serveKey}
	if err := run(context.Background(), []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	base, logs, stop := startServe(t, env)
	resp, body := postEmployee(t, base, serveKey, url.Values{"employee[first_name]": {"Ana"}, "employee[last_name]": {"López"}, "employee[email]": {"ana@example.com"}, "employee[join_date]": {"2026-01-05"}})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n, keys := trap.seen(); len(keys) > 0 || n > 0 {
		t.Fatalf("the other origin received %d requests, %d with the source key", n, len(keys))
	}
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502; body %s", resp.StatusCode, body)
	}
	tu, _ := url.Parse(trap.URL)
	got := logs.String()
	if !strings.Contains(got, "redirected to another origin, http://"+tu.Host) {
		t.Errorf("the log does not name the origin %s:\n%s", tu.Host, got)
	}
	for _, leak := range []string{redirectTestKey, "leak"} {
		if strings.Contains(got, leak) || strings.Contains(string(body), leak) {
			t.Errorf("the log or the answer holds %q:\n%s\n%s", leak, got, body)
		}
	}
}

// `hrsync onboard` against a source that lists as usual but redirects its creates to another
// origin creates nobody there: the other origin never receives the source key, and the rows
// fail naming that origin.
func TestOnboardRefusesRedirectedCreates(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	trap := newKeyTrap(t)
	upURL, _ := url.Parse(up.URL)
	proxy := httputil.NewSingleHostReverseProxy(upURL)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Redirect(w, r, trap.URL+r.URL.Path+"?token=leak", http.StatusTemporaryRedirect)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer src.Close()
	dir := t.TempDir()
	csv := filepath.Join(dir, "cohort.csv")
	if err := os.WriteFile(csv, []byte("first_name,last_name,email,job_title,join_date\nAna,López,ana@example.com,Nurse,2026-12-01\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HRSYNC_SOURCE_URL=" + src.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db"))}
	var out, logs bytes.Buffer
	err := run(context.Background(), []string{"onboard", csv}, env, &out, &logs)
	if n, keys := trap.seen(); n > 0 || len(keys) > 0 {
		t.Fatalf("the other origin received %d requests, %d with the source key", n, len(keys))
	}
	if up.Count("/v1/employees", 201) != 0 {
		t.Error("a create reached the source")
	}
	all := out.String() + logs.String()
	if err != nil {
		all += err.Error()
	}
	tu, _ := url.Parse(trap.URL)
	if !strings.Contains(all, "redirected to another origin, http://"+tu.Host) {
		t.Errorf("nothing names the origin %s: err %v\nout %s\nlogs %s", tu.Host, err, out.String(), logs.String())
	}
	if strings.Contains(all, up.APIKey()) || strings.Contains(all, "leak") {
		t.Errorf("the key or the redirect's query is printed:\n%s", all)
	}
	if reports, _ := filepath.Glob(filepath.Join(dir, "*")); len(reports) > 0 {
		for _, r := range reports {
			if b, _ := os.ReadFile(r); strings.Contains(string(b), up.APIKey()) || strings.Contains(string(b), "leak") {
				t.Errorf("%s holds the key or the redirect's query", filepath.Base(r))
			}
		}
	}
}
