package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
)

// A serve process beside a process that holds a SQLite warehouse's write lock (a sync merging):
// reads answer at once; a create it cannot write in time answers 503 JSON with Retry-After, not
// a 500.
func TestServeBesideASQLiteWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	writer, err := sink.Open(ctx, path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	tx, err := sinktest.DB(writer).BeginTx(ctx, nil) // IMMEDIATE: takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET version = version + 1`); err != nil {
		t.Fatal(err)
	}

	store, err := sink.Open(ctx, path, sink.Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("open beside a writer: %v", err)
	}
	defer store.Close()
	h, err := server.NewHandler(store, server.Options{APIKeys: []string{testKey}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method, body string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/v1/employees", strings.NewReader(body))
		req.Header.Set("X-API-KEY", testKey)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatalf("%s: body is not JSON: %v", method, err)
		}
		return resp, got
	}

	if resp, _ := do("GET", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET beside a writer: %d", resp.StatusCode)
	}
	resp, body := do("POST", `{"employee":{"first_name":"Bo","last_name":"Ek","email":"bo@example.com","join_date":"2025-01-31"}}`)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("POST beside a writer: %d, Retry-After %q, Content-Type %q, body %v", resp.StatusCode,
			resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), body)
	}

	// Once the writer is done, the same create succeeds.
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if resp, body := do("POST", `{"employee":{"first_name":"Bo","last_name":"Ek","email":"bo@example.com","join_date":"2025-01-31"}}`); resp.StatusCode != http.StatusCreated {
		t.Errorf("POST after the writer: %d %v", resp.StatusCode, body)
	}
}
