package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/sink"
)

// TestServeCacheMetrics: serve.cache_bytes reaches the handler, and its hits, misses and bytes
// are exported per account; with 0 there is neither cache nor metric.
func TestServeCacheMetrics(t *testing.T) {
	t.Parallel()
	store, err := sink.Open(context.Background(), filepath.Join(t.TempDir(), "wh.db"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, bytes := range []int64{0, 1 << 20} {
		cfg := config.Defaults()
		cfg.Serve.APIKeys = []string{"k1-4f9a0c7e2b1d8e6f3a5c9b0d"}
		cfg.Serve.CacheBytes = bytes
		s := parsed(t, cfg)
		reg := newRegistry()
		h, err := account.APIMux(s, []account.Served{account.NewServed(s.Accounts[0], store)}, prom.NewServe(reg), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		for range 3 {
			req, _ := http.NewRequest("GET", srv.URL+"/v1/employees", nil)
			req.Header.Set("X-API-KEY", "k1-4f9a0c7e2b1d8e6f3a5c9b0d")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		srv.Close()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetName() != "account" {
					continue
				}
				switch mf.GetName() {
				case "hrsync_serve_cache_hits_total", "hrsync_serve_cache_misses_total":
					got[mf.GetName()] = m.GetCounter().GetValue()
				case "hrsync_serve_cache_bytes":
					got[mf.GetName()] = m.GetGauge().GetValue()
				}
			}
		}
		if bytes == 0 {
			if len(got) != 0 {
				t.Errorf("cache off: cache metrics %v", got)
			}
			continue
		}
		if len(got) != 3 || got["hrsync_serve_cache_hits_total"] != 2 || got["hrsync_serve_cache_misses_total"] != 1 || got["hrsync_serve_cache_bytes"] <= 0 {
			t.Errorf("cache metrics %v, want 2 hits, 1 miss, some bytes", got)
		}
	}
}
