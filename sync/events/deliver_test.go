package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/events"
	"github.com/hrsync/hrsync/sync/events/webhook"
)

// TestDeliverOrderDeadAndReplay, on both backends with a clock the test moves: a subscriber
// whose receiver refuses one event keeps that employee's later event back while it is retried
// (the others go), lets it go once the refused one is dead (its retry period past), and gets
// the dead one on replay; every body verifies with the reference library and is the event as
// the subscriber's scope reads it.
func TestDeliverOrderDeadAndReplay(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clock := newMovedClock()
			s := sinktest.Store(t, backend, sink.Options{Now: clock.Now})
			secret, err := webhook.NewSecret()
			if err != nil {
				t.Fatal(err)
			}
			wh, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var got []string // "employee type"
			refuse := atomic.Bool{}
			refuse.Store(true)
			var refusedID atomic.Value
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				// The test's clock is not the receiver's: the timestamp is checked to be the
				// clock's, the signature without the tolerance window.
				if err := wh.VerifyIgnoringTimestamp(body, r.Header); err != nil {
					t.Errorf("signature: %v", err)
				}
				if ts := r.Header.Get("webhook-timestamp"); ts != strconv.FormatInt(clock.Now().Unix(), 10) {
					t.Errorf("webhook-timestamp %s, want the clock's %d", ts, clock.Now().Unix())
				}
				var e struct {
					Type     string         `json:"type"`
					Employee map[string]any `json:"employee"`
				}
				if err := json.Unmarshal(body, &e); err != nil {
					t.Errorf("body: %v", err)
				}
				if e.Employee["email"] != nil {
					t.Errorf("the subscriber, denied identifying data, was sent an email: %s", body)
				}
				// Employee 3's mover is refused until the test stops refusing.
				if e.Employee["id"] == float64(3) && e.Type == sink.EventMover && refuse.Load() {
					refusedID.Store(r.Header.Get("webhook-id"))
					w.WriteHeader(http.StatusInternalServerError)
					return
				}
				mu.Lock()
				got = append(got, string(rune('0'+int(e.Employee["id"].(float64))))+" "+e.Type)
				mu.Unlock()
			}))
			defer recv.Close()
			scope, err := server.NewEventScope(server.Scope{DenyClasses: []v1.Class{v1.Identifying}, ReadOnly: true}, v1.Declarations{})
			if err != nil {
				t.Fatal(err)
			}
			opts := events.DeliverOptions{Subscribers: []events.Subscriber{{Name: "idp", URL: recv.URL, Secret: secret, Payload: scope.Event}},
				RetryFor: time.Hour, RetryBackoff: time.Minute, Now: clock.Now}
			pass := func() {
				t.Helper()
				if _, err := events.Deliver(ctx, s, opts); err != nil {
					t.Fatal(err)
				}
			}
			people := sinktest.Engineers(6)
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			pass()                      // registers the subscriber at the feed's end
			people[2].JobTitle = "Lead" // 3: a mover, refused
			people[4].JobTitle = "Lead" // 5: a mover
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			people[2].LeavingDate = "2026-05-31" // 3: then a leaver, which must wait for 3's mover
			sinktest.WalkEmployees(t, s, slices.Clone(people), 50, sink.MergeOptions{Complete: true})
			pass()
			if want := []string{"5 mover"}; !slices.Equal(got, want) {
				t.Fatalf("first pass: %q, want %q (3's events held back behind the refused one)", got, want)
			}
			// Retried after its backoff, refused again, until the hour has passed: dead.
			for range 8 {
				clock.Add(20 * time.Minute)
				pass()
			}
			dead, err := s.ListDeliveries(ctx, sink.DeliveryFilter{State: sink.DeliveryDead})
			if err != nil || len(dead) != 1 || dead[0].Event.ID != refusedID.Load() || dead[0].Attempts < 2 || dead[0].LastStatus != 500 {
				t.Fatalf("dead letters: %+v (%v)", dead, err)
			}
			if want := []string{"5 mover", "3 leaver.effective"}; !slices.Equal(got, want) {
				t.Errorf("after 3's mover died: %q, want %q", got, want)
			}
			refuse.Store(false)
			if n, err := s.ReplayDeliveries(ctx, sink.DeliveryFilter{Subscriber: "idp", State: sink.DeliveryDead}); err != nil || n != 1 {
				t.Fatalf("replay: %d (%v)", n, err)
			}
			pass()
			if want := []string{"5 mover", "3 leaver.effective", "3 mover"}; !slices.Equal(got, want) {
				t.Errorf("after the replay: %q, want %q", got, want)
			}
			if pending, _ := s.ListDeliveries(ctx, sink.DeliveryFilter{State: sink.DeliveryPending}); len(pending) != 0 {
				t.Errorf("still pending: %+v", pending)
			}
			// One event named (hrsync events replay ID): sent again, delivered as it was.
			first, err := s.ListDeliveries(ctx, sink.DeliveryFilter{State: sink.DeliveryDelivered, Limit: 1000})
			if err != nil || len(first) != 3 {
				t.Fatalf("delivered: %+v (%v)", first, err)
			}
			if n, err := s.ReplayDeliveries(ctx, sink.DeliveryFilter{EventID: first[0].Event.ID}); err != nil || n != 1 {
				t.Fatalf("replay of %s: %d (%v)", first[0].Event.ID, n, err)
			}
			pass()
			if want := fmt.Sprintf("%d %s", first[0].Event.EmployeeID, first[0].Event.Type); len(got) != 4 || got[3] != want {
				t.Errorf("after replaying %s: %q", first[0].Event.ID, got)
			}
		})
	}
}
