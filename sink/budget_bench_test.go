package sink_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/budget"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
)

// BenchmarkBudgetOverhead is the cost of the shared budget per request: the requests a minute
// one process achieves paced at 6,000 a minute (10.2 ms apart), in process against on the
// warehouse, with sync.concurrency's 4 requests in flight, against an unlimited upstream. The
// pacer's ideal is 5,882 a minute; what the shared budget loses to it is its statement's cost.
//
//	go test -run '^$' -bench BudgetOverhead -benchtime 600x ./sink
func BenchmarkBudgetOverhead(b *testing.B) {
	const perMinute, concurrency = 6000, 4
	up := fakeupstream.New(fakeupstream.Options{})
	srv := httptest.NewServer(up)
	b.Cleanup(func() { up.Close(); srv.Close() })
	for _, backend := range sinktest.Backends {
		for _, shared := range []bool{false, true} {
			name := backend + "/in-process"
			if shared {
				name = backend + "/shared"
			}
			b.Run(name, func(b *testing.B) {
				var bud budget.Budget
				if shared {
					url, sopts := budgetWarehouse(b, backend)
					bud = openBudget(b, url, sopts, sink.BudgetOptions{PerMinute: perMinute})
				}
				c, err := client.New(srv.URL, fakeupstream.DefaultAPIKey, client.Options{
					HTTPClient: srv.Client(), RateLimit: perMinute, Budget: bud, MaxAttempts: 1})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				next := make(chan struct{})
				var wg sync.WaitGroup
				for range concurrency {
					wg.Go(func() {
						for range next {
							if _, _, err := c.ListEmployees(ctx, 1); err != nil {
								b.Error(err)
							}
						}
					})
				}
				b.ResetTimer()
				start := time.Now()
				for range b.N {
					next <- struct{}{}
				}
				close(next)
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Minutes(), "req/min")
			})
		}
	}
}

// BenchmarkReserveRequest is one reservation's statement alone, one at a time: its latency is
// what each request of a shared budget adds before its slot (the slots themselves are spaced by
// the rate, which hides it while the rate is the bound).
func BenchmarkReserveRequest(b *testing.B) {
	for _, backend := range sinktest.Backends {
		b.Run(backend, func(b *testing.B) {
			s := sinktest.Store(b, backend, sink.Options{})
			ctx := context.Background()
			for b.Loop() {
				if _, err := s.ReserveRequest(ctx, "default", time.Microsecond); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
