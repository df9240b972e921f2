package sink_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
)

var coldPlans = flag.Bool("bench.plans", false, "BenchmarkServeCold logs each read statement's planning and execution time first")

// The warehouse BenchmarkServeCold serves: the size the issue measured cold pages at.
const (
	coldEmployees = 20_000
	coldRecords   = 5_000
)

// BenchmarkServeCold serves every declared collection cold: the answer cache off and every
// request a page not asked before (page and per_page vary), from a warehouse filled as a sync
// fills it (walks merged through a Load, statistics as the merges and autovacuum leave them,
// nothing analyzed by hand), through the real handler on loopback, 8 clients. The first pages
// asked of each collection are its page 1, as clients start. See docs/benchmarks.md.
func BenchmarkServeCold(b *testing.B) {
	for _, backend := range sinktest.Backends {
		b.Run("db="+backend, func(b *testing.B) {
			s := coldStore(b, backend)
			if backend == "postgres" && *coldPlans {
				// Where a cold page's database time goes, per collection, on a connection of
				// the store's pool: a fresh store's first request of each statement is page 1.
				plans := readPlans(b, s, 10, 5)
				for _, st := range sink.ReadStatements(s) {
					key := st.Table + " " + st.Name
					p := plans[key]
					b.Logf("%-45s planning %8.3f ms, execution %8.3f ms", key, p.planning, p.execution)
				}
			}
			h, err := server.NewHandler(s, server.Options{APIKeys: []string{benchKey}, ETagSalt: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			tr := &http.Transport{MaxIdleConnsPerHost: 4 * *benchClients, DisableCompression: true}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			for _, r := range sink.Loadable() {
				total := int64(coldRecords)
				switch r {
				case sink.Employees:
					total = coldEmployees
				}
				b.Run("collection="+string(r), func(b *testing.B) {
					var n atomic.Int64
					measure(b, func(ctx context.Context) error {
						i := n.Add(1) - 1
						// Every request a page not asked before: pages 1, 2, … of 100, then of 99…
						perPage := 100 - (i/max(total/100, 1))%50
						page := i%max(total/perPage, 1) + 1
						req, err := http.NewRequestWithContext(ctx, http.MethodGet,
							fmt.Sprintf("%s/v1/%s?page=%d&per_page=%d", srv.URL, r, page, perPage), nil)
						if err != nil {
							return err
						}
						req.Header.Set("X-Api-Key", benchKey)
						resp, err := client.Do(req)
						if err != nil {
							return err
						}
						defer resp.Body.Close()
						body, err := io.ReadAll(resp.Body)
						if err != nil {
							return err
						}
						if resp.StatusCode != http.StatusOK {
							return fmt.Errorf("%s page %d: status %d: %.200s", r, page, resp.StatusCode, body)
						}
						return nil
					})
				})
			}
		})
	}
}

// coldStore is a warehouse of the backend filled as a sync fills it (syncedPostgres on
// Postgres), and a store on it whose pool has served nothing yet.
func coldStore(b *testing.B, backend string) *sink.Store {
	b.Helper()
	start := time.Now()
	defer func() { b.Logf("filled in %v", time.Since(start).Round(time.Millisecond)) }()
	if backend == "postgres" {
		return syncedPostgres(b, coldEmployees, coldRecords)
	}
	s := sinktest.Store(b, backend, sink.Options{Now: func() time.Time { return fixedNow }})
	fillAsSyncedN(b, s, coldEmployees, coldRecords)
	return s
}
