package events_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/events"
	"github.com/hrsync/hrsync/sync/events/webhook"
)

// failOnce is a warehouse whose next QueueDeliveries fails, once.
type failOnce struct {
	events.DeliverStore
	fail atomic.Bool
}

func (f *failOnce) QueueDeliveries(ctx context.Context, subscribers []string) (int64, error) {
	if f.fail.CompareAndSwap(true, false) {
		return 0, errors.New("the warehouse went away")
	}
	return f.DeliverStore.QueueDeliveries(ctx, subscribers)
}

// TestDelivererIdle, on both backends with a clock the test moves: the delivery job's firings
// are idle (open nothing) while it knows of no work, and pass when this process published
// events, when a retry comes due, when a pass failed, and at the latest DeliverIdleFor after
// the last pass (what another process published).
func TestDelivererIdle(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clock := newMovedClock()
			s := sinktest.Store(t, backend, sink.Options{Now: clock.Now})
			var sent, refused atomic.Int64
			var refuse atomic.Bool
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if refuse.Load() {
					refused.Add(1)
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				sent.Add(1)
				w.WriteHeader(http.StatusNoContent)
			}))
			defer recv.Close()
			secret, err := webhook.NewSecret()
			if err != nil {
				t.Fatal(err)
			}
			scope, err := server.NewEventScope(server.Scope{}, v1.Declarations{})
			if err != nil {
				t.Fatal(err)
			}
			d := events.NewDeliverer(events.DeliverOptions{Subscribers: []events.Subscriber{{Name: "idp", URL: recv.URL, Secret: secret, Payload: scope.Event}},
				RetryFor: time.Hour, RetryBackoff: 10 * time.Second, Now: clock.Now})
			store := &failOnce{DeliverStore: s}
			job := d.Job(store)
			people := sinktest.Engineers(4)
			move := func(i int, title string) { // a load that publishes a mover
				people[i].JobTitle = title
				sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			}
			step := func(what string, wantIdle bool) {
				t.Helper()
				if got := job.Idle(); got != wantIdle {
					t.Fatalf("%s: idle %v, want %v", what, got, wantIdle)
				}
				if !wantIdle {
					if err := job.Run(ctx); err != nil {
						t.Fatalf("%s: pass: %v", what, err)
					}
				}
			}
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			step("the first firing", false) // registers the subscriber
			step("nothing since", true)
			clock.Add(events.DeliverEvery)
			step("a firing later, nothing since", true)

			move(0, "Lead") // published without telling the deliverer: another process's sync
			clock.Add(events.DeliverEvery)
			step("another process's event, before DeliverIdleFor", true)
			clock.Add(events.DeliverIdleFor)
			step("DeliverIdleFor after the last pass", false)
			if sent.Load() != 1 {
				t.Fatalf("sent %d, want the mover", sent.Load())
			}
			step("after it", true)

			move(1, "Lead")
			d.Published()
			step("this process published", false)
			if sent.Load() != 2 {
				t.Fatalf("sent %d, want 2", sent.Load())
			}

			refuse.Store(true)
			move(2, "Lead")
			d.Published()
			step("published, the receiver refusing", false)
			if refused.Load() != 1 {
				t.Fatalf("refused %d, want 1", refused.Load())
			}
			move(2, "Principal") // a second event of the same person's, queued behind the refused one
			d.Published()
			step("published behind the refused one", false)
			if refused.Load() != 1 {
				t.Fatalf("refused %d, want still 1: the second waits behind the first", refused.Load())
			}
			step("its retry not yet due, the second behind it", true)
			clock.Add(20 * time.Second) // past the first backoff (10 s, jittered by half), within DeliverIdleFor
			refuse.Store(false)
			step("its retry due", false)
			if sent.Load() != 4 {
				t.Fatalf("sent %d after the retry, want 4 (the retried one and the one behind it)", sent.Load())
			}
			step("nothing left", true)

			store.fail.Store(true)
			d.Published()
			if job.Idle() {
				t.Fatal("idle after Published")
			}
			if err := job.Run(ctx); err == nil {
				t.Fatal("a pass on a failing warehouse succeeded")
			}
			step("after a failed pass", false)
			step("after the pass that followed it", true)
		})
	}
}
