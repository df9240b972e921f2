package events_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/events"
	"github.com/hrsync/hrsync/sync/events/webhook"
)

// BenchmarkDeliver is how many events a worker delivers a second to a receiver on this machine
// that answers at once: each round publishes 500 movers (a load of 2,000 employees, a quarter
// changed) and delivers them, signed, four at a time. events/s counts the deliveries alone
// (the load is outside the timer).
//
//	go test -run '^$' -bench BenchmarkDeliver -benchtime 5x ./sync/events/
func BenchmarkDeliver(b *testing.B) {
	for _, backend := range sinktest.Backends {
		b.Run(backend, func(b *testing.B) {
			ctx := context.Background()
			s := sinktest.Store(b, backend, sink.Options{})
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
			defer recv.Close()
			secret, _ := webhook.NewSecret()
			scope, _ := server.NewEventScope(server.Scope{}, v1.Declarations{})
			opts := events.DeliverOptions{Subscribers: []events.Subscriber{{Name: "bench", URL: recv.URL, Secret: secret, Payload: scope.Event}}}
			people := sinktest.Engineers(2000)
			sinktest.WalkEmployees(b, s, slices.Clone(people), 500, sink.MergeOptions{Complete: true})
			if _, err := events.Deliver(ctx, s, opts); err != nil { // registers the subscriber
				b.Fatal(err)
			}
			delivered, round := 0, 0
			for b.Loop() {
				b.StopTimer()
				round++
				for i := 0; i < len(people); i += 4 {
					people[i].JobTitle = "Engineer " + string(rune('A'+round%26))
				}
				sinktest.WalkEmployees(b, s, slices.Clone(people), 500, sink.MergeOptions{Complete: true})
				b.StartTimer()
				for {
					n, err := events.Deliver(ctx, s, opts)
					if err != nil {
						b.Fatal(err)
					}
					if n == 0 {
						break
					}
					delivered += n
				}
			}
			b.ReportMetric(float64(delivered)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
