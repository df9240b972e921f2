package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

const unreachableKey = "k1-4f9a0c7e2b1d8e6f3a5c9b0d"

// want503 asserts the replica's answer to a warehouse out of reach: 503, Retry-After, and the
// API's JSON error body.
func want503(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503; body %s", resp.StatusCode, body)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "5" {
		t.Errorf("Retry-After %q, want 5", ra)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	var e struct {
		Error struct{ Type, Message string }
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Type != "Service Unavailable" || e.Error.Message == "" {
		t.Errorf("body %s: not the API's error (%v)", body, err)
	}
}

func do(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-API-KEY", unreachableKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// lazyMux is the replica of one account whose warehouse is at url, opened at the first request
// as serve opens it (serveOpener), never checked first: as if it went away after serve started.
func lazyMux(t *testing.T, url, schemaName string) http.Handler {
	t.Helper()
	cfg := config.Defaults()
	cfg.Warehouse.URL, cfg.Warehouse.Schema = url, schemaName
	cfg.Warehouse.MaxConnections = 2
	cfg.Serve.APIKeys = []string{unreachableKey}
	cfg.Serve.Writes = "off"
	s := parsed(t, cfg)
	a := s.Accounts[0]
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	open := &account.OpenStores{}
	t.Cleanup(open.Close)
	l := account.NewLazy(ctx, a, open, slog.New(slog.DiscardHandler))
	h, err := account.APIMux(s, []account.Served{account.NewServed(a, l)}, prom.NewServe(newRegistry()), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A warehouse that cannot be reached is answered 503 with Retry-After, not 500: a Postgres on a
// port nobody listens on, a SQLite file that cannot be opened. The replica's /readyz says so
// too. A fault of a statement on a warehouse that answers is still a 500.
func TestServeAnswers503WhenWarehouseUnreachable(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, url string }{
		{"postgres on a closed port", "postgres://postgres@127.0.0.1:1/hrsync?sslmode=disable&connect_timeout=5"},
		{"sqlite file that cannot be opened", filepath.Join(notDir, "wh.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(lazyMux(t, tt.url, ""))
			defer srv.Close()
			for _, path := range []string{"/v1/employees", "/v1/employees/1", "/v1"} {
				resp, body := do(t, srv.URL+path)
				want503(t, resp, body)
			}
			if code, body := get(t, srv.URL+"/readyz", ""); code != 503 {
				t.Errorf("readyz %d %s, want 503", code, body)
			}
		})
	}

	t.Run("back once the warehouse is", func(t *testing.T) {
		dir := t.TempDir()
		gone := filepath.Join(dir, "volume")
		if err := os.WriteFile(gone, nil, 0o600); err != nil { // not a folder yet: nothing opens
			t.Fatal(err)
		}
		srv := httptest.NewServer(lazyMux(t, filepath.Join(gone, "wh.db"), ""))
		defer srv.Close()
		resp, body := do(t, srv.URL+"/v1/employees")
		want503(t, resp, body)
		if code, body := get(t, srv.URL+"/readyz", ""); code != 503 {
			t.Fatalf("readyz %d %s, want 503", code, body)
		}
		// The volume is mounted: the next probe opens the warehouse and is ready again.
		if err := os.Remove(gone); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(gone, 0o700); err != nil {
			t.Fatal(err)
		}
		warehouseFile(t, filepath.Join(gone, "wh.db"))
		if code, body := get(t, srv.URL+"/readyz", ""); code != 200 {
			t.Errorf("readyz once the warehouse is back: %d %s", code, body)
		}
		if resp, body := do(t, srv.URL+"/v1/employees"); resp.StatusCode != 200 {
			t.Errorf("once the warehouse is back: %d %s", resp.StatusCode, body)
		}
	})

	// A rolling upgrade: a newer build migrated the warehouse; this replica cannot serve it,
	// one of the newer build can, and the client is told to retry.
	t.Run("a schema a newer build migrated", func(t *testing.T) {
		url, schemaName := sinktest.Postgres(t)
		if _, err := sink.Migrate(context.Background(), url, sink.Options{Schema: schemaName}); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("postgres", url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`INSERT INTO ` + schemaName + `.schema_migrations (version, name, applied_at) VALUES (9999, 'from_the_future', now())`); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(lazyMux(t, url, schemaName))
		defer srv.Close()
		resp, body := do(t, srv.URL+"/v1/employees")
		want503(t, resp, body)
	})

	t.Run("a SQL error is still 500", func(t *testing.T) {
		url, schemaName := sinktest.Postgres(t)
		if _, err := sink.Migrate(context.Background(), url, sink.Options{Schema: schemaName}); err != nil {
			t.Fatal(err)
		}
		store, err := sink.Open(context.Background(), url, sink.Options{Schema: schemaName})
		if err != nil {
			t.Fatal(err)
		}
		sinktest.DB(store).MustExec(fmt.Sprintf(`DROP TABLE %q.employees CASCADE`, schemaName))
		store.Close()
		srv := httptest.NewServer(lazyMux(t, url, schemaName))
		defer srv.Close()
		resp, body := do(t, srv.URL+"/v1/employees")
		if resp.StatusCode != 500 || resp.Header.Get("Retry-After") != "" {
			t.Errorf("status %d Retry-After %q, want 500 without; body %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	})
}

// A Postgres that goes away under a running serve (its port closed, every session dropped):
// the replica answered 200, and now answers 503 with Retry-After, and its /readyz 503.
func TestServeAnswers503WhenPostgresStops(t *testing.T) {
	url, schemaName := sinktest.Postgres(t)
	proxy, purl := sinktest.ProxyURL(t, url)
	env := []string{"HRSYNC_WAREHOUSE_URL=" + purl, "HRSYNC_WAREHOUSE_SCHEMA=" + schemaName, "HRSYNC_SERVE_API_KEYS=" + unreachableKey}
	if err := run(context.Background(), []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	base, logs, _ := startServe(t, env)
	if resp, body := do(t, base+"/v1/employees"); resp.StatusCode != 200 {
		t.Fatalf("before: %d %s", resp.StatusCode, body)
	}
	proxy.Close()
	for i := range 3 {
		resp, body := do(t, base+"/v1/employees?page="+fmt.Sprint(i+1))
		want503(t, resp, body)
	}
	if code, body := get(t, base+"/readyz", ""); code != 503 {
		t.Errorf("readyz %d %s, want 503", code, body)
	}
	if !strings.Contains(logs.String(), "the warehouse cannot be reached") {
		t.Errorf("the log does not say why:\n%s", logs)
	}
}
