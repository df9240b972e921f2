package httpserve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
)

// openingReady is a warehouse that is ready when open says so: Ready opens it (as a worker's
// probe of an account with no run going does) and closes it again.
type openingReady struct {
	mu   sync.Mutex
	open func(ctx context.Context) error
}

func (r *openingReady) Ready(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.open(ctx)
}

func opening(url string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		s, err := sink.Open(ctx, url, sink.Options{Schema: "hr_schema_xq7"})
		if err != nil {
			return err
		}
		return s.Close()
	}
}

// TestReadyzNamesNoWarehouse: the metrics port's /readyz, which answers anyone, says why it is
// not ready in words that name no warehouse host, port, database, user, schema or file (a real
// driver's failure, a SQLite file that cannot be made, accounts joined); the account and what to
// do are said. The detail goes to the log, once per change of state, never the password.
func TestReadyzNamesNoWarehouse(t *testing.T) {
	const password = "pw-secret-xq7"
	pg := "postgres://hruser_xq7:" + password + "@127.0.0.1:1/payroll_db_xq7?connect_timeout=2"
	file := filepath.Join(t.TempDir(), "no-such-folder-xq7", "warehouse_xq7.db")
	hidden := []string{"hruser_xq7", password, "127.0.0.1", ":1/", "payroll_db_xq7", "hr_schema_xq7", "no-such-folder-xq7", "warehouse_xq7", "postgres://"}
	for _, tc := range []struct {
		name  string
		open  func(ctx context.Context) error
		wants []string
	}{
		{"postgres out of reach", opening(pg), []string{"the warehouse cannot be reached"}},
		{"a sqlite file that cannot be made", opening(file), []string{"the warehouse cannot be reached"}},
		{"accounts joined", func(ctx context.Context) error {
			return errors.Join(
				fmt.Errorf("account acme: %w", &schema.BehindError{Current: 3, Latest: 9}),
				fmt.Errorf("account globex: not started: %w", opening(pg)(ctx)))
		}, []string{"account acme: the warehouse schema is behind", "hrsync migrate", "account globex: not started: the warehouse cannot be reached"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			ready := &openingReady{open: tc.open}
			h := GetRoutes(Health(ready, log, true), nil)
			probe := func() (int, string) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
				b, _ := io.ReadAll(rec.Result().Body)
				return rec.Code, string(b)
			}
			for range 3 {
				code, body := probe()
				if code != http.StatusServiceUnavailable {
					t.Fatalf("/readyz: %d %s, want 503", code, body)
				}
				for _, s := range hidden {
					if strings.Contains(body, s) {
						t.Errorf("/readyz names %q: %s", s, body)
					}
				}
				for _, w := range tc.wants {
					if !strings.Contains(body, w) {
						t.Errorf("/readyz: %s, want it to say %q", body, w)
					}
				}
			}
			if n := strings.Count(logs.String(), "msg=\"not ready\""); n != 1 {
				t.Errorf("three failing probes logged %d lines, want 1 (once per change):\n%s", n, logs.String())
			}
			if strings.Contains(logs.String(), password) {
				t.Errorf("the log holds the password:\n%s", logs.String())
			}
			ready.mu.Lock()
			ready.open = func(context.Context) error { return nil }
			ready.mu.Unlock()
			for range 2 {
				if code, body := probe(); code != http.StatusOK {
					t.Fatalf("/readyz once ready: %d %s", code, body)
				}
			}
			if n := strings.Count(logs.String(), "msg=\"ready again\""); n != 1 {
				t.Errorf("ready again logged %d times, want 1:\n%s", n, logs.String())
			}
		})
	}
}
