package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// BenchmarkServeCached measures what the answer cache costs per request once a page is kept:
// the handler itself (no network), a page of 100 employees over SQLite, answered from the cache
// as identity and as gzip, and revalidated with its ETag (a 304). What the ETag and the lookup
// cost shows here, not behind a socket and a warehouse.
func BenchmarkServeCached(b *testing.B) {
	store := sinktest.Store(b, "sqlite", sink.Options{Now: func() time.Time { return fixedNow }})
	for i := 1; i <= 100; i++ {
		var e v1.Employee
		if err := json.Unmarshal([]byte(personalEmployee(i)), &e); err != nil {
			b.Fatal(err)
		}
		if err := store.PutEmployee(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
	h, err := server.NewHandler(store, server.Options{APIKeys: []string{testKey}, ETagSalt: "bench", CacheBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	const path = "/v1/employees?page=1&per_page=100"
	get := func(b *testing.B, header ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("X-API-KEY", testKey)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	first := get(b)
	if first.Code != http.StatusOK {
		b.Fatalf("status %d", first.Code)
	}
	tag := first.Header().Get("ETag")
	for _, c := range []struct {
		name   string
		header []string
		status int
	}{
		{"hit/ae=identity", nil, http.StatusOK},
		{"hit/ae=gzip", []string{"Accept-Encoding", "gzip"}, http.StatusOK},
		{"304", []string{"If-None-Match", tag}, http.StatusNotModified},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if w := get(b, c.header...); w.Code != c.status {
					b.Fatalf("status %d, want %d", w.Code, c.status)
				}
			}
		})
	}
}

// BenchmarkEventsFeed is a full page of the events feed (100 movers, each with its employee's
// record) through the handler (no network), on each backend; the feed is never cached, so each
// request reads the warehouse. warm: one process's requests after its first; cold: a process's
// first (the warehouse opened, its statements prepared, the page read, the warehouse closed).
func BenchmarkEventsFeed(b *testing.B) {
	for _, backend := range sinktest.Backends {
		b.Run("db="+backend, func(b *testing.B) {
			opts := sink.Options{Now: func() time.Time { return fixedNow }}
			store, _, url, schema := sinktest.TwoStores(b, backend, opts)
			people := sinktest.Engineers(100)
			sinktest.WalkEmployees(b, store, slices.Clone(people), 100, sink.MergeOptions{Complete: true})
			for i := range people {
				people[i].JobTitle = "Lead engineer"
			}
			sinktest.WalkEmployees(b, store, slices.Clone(people), 100, sink.MergeOptions{Complete: true})
			get := func(b *testing.B, store server.Store) *httptest.ResponseRecorder {
				h, err := server.NewHandler(store, server.Options{APIKeys: []string{testKey}})
				if err != nil {
					b.Fatal(err)
				}
				req := httptest.NewRequest(http.MethodGet, "/v1/events?per_page=100", nil)
				req.Header.Set("X-API-KEY", testKey)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %.300s", w.Code, w.Body)
				}
				return w
			}
			if w := get(b, store); strings.Count(w.Body.String(), `"type":"mover"`) != 100 {
				b.Fatalf("%d movers: %.300s", strings.Count(w.Body.String(), `"type":"mover"`), w.Body)
			}
			b.Run("warm", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					get(b, store)
				}
			})
			b.Run("cold", func(b *testing.B) {
				opts.Schema = schema
				b.ReportAllocs()
				for b.Loop() {
					s, err := sink.Open(context.Background(), url, opts)
					if err != nil {
						b.Fatal(err)
					}
					get(b, s)
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
