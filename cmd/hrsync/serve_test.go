package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/sink"
)

// The serve port answers every request in JSON with the right status, health endpoints and
// paths an http.ServeMux would redirect included.
func TestServePortAnswersJSON(t *testing.T) {
	t.Parallel()
	store, err := sink.Open(context.Background(), filepath.Join(t.TempDir(), "wh.db"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := config.Defaults()
	cfg.Serve.APIKeys = []string{"k1-4f9a0c7e2b1d8e6f3a5c9b0d"}
	cfg.Serve.Writes = "local"
	s := parsed(t, cfg)
	h, err := account.APIMux(s, []account.Served{account.NewServed(s.Accounts[0], store)}, prom.NewServe(newRegistry()), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	tests := []struct {
		method, target string
		status         int
	}{
		{"GET", "/healthz", 200},
		{"HEAD", "/healthz", 200},
		{"GET", "/readyz", 200},
		{"POST", "/healthz", 405},
		{"DELETE", "/readyz", 405},
		{"GET", "//", 404},
		{"GET", "/v1/../x", 404},
		{"GET", "/healthz/../readyz", 404},
		{"GET", "//healthz", 404},
		{"GET", "/nowhere", 404},
		{"GET", "/v1/employees", 200},
		{"GET", "/v1/employees?q=" + strings.Repeat("a", 60<<10), 414},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target[:min(len(tt.target), 40)], func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-API-KEY", "k1-4f9a0c7e2b1d8e6f3a5c9b0d")
			resp, err := noRedirects.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if tt.method != "HEAD" && !json.Valid(body) {
				t.Errorf("body is not JSON: %q", body)
			}
		})
	}
}

// TestMetricsPortAnswersJSON: the metrics port serves the exposition on /metrics and answers
// everything else it refuses in JSON, never a redirect or a text 404.
func TestMetricsPortAnswersJSON(t *testing.T) {
	t.Parallel()
	store, err := sink.Open(context.Background(), filepath.Join(t.TempDir(), "wh.db"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv := httptest.NewServer(prom.Mux(newRegistry(), store, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	tests := []struct {
		method, target string
		status         int
		json           bool
	}{
		{"GET", "/metrics", 200, false},
		{"GET", "/healthz", 200, true},
		{"GET", "/readyz", 200, true},
		{"POST", "/metrics", 405, true},
		{"GET", "//metrics", 404, true},
		{"GET", "/metrics/../healthz", 404, true},
		{"GET", "/", 404, true},
		{"GET", "/v1/employees", 404, true},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, srv.URL+tt.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s: status %d, want %d; body %s", tt.method, tt.target, resp.StatusCode, tt.status, body)
		}
		if tt.json && (!json.Valid(body) || resp.Header.Get("Content-Type") != "application/json; charset=utf-8") {
			t.Errorf("%s %s: not a JSON answer: %q %q", tt.method, tt.target, resp.Header.Get("Content-Type"), body)
		}
		if !tt.json && !strings.Contains(string(body), "hrsync_build_info") {
			t.Errorf("%s %s: no exposition", tt.method, tt.target)
		}
	}
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
