package events_test

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"sync"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// A receiver of hrsync's webhooks, in Go, with the Standard Webhooks reference library: the
// snippet docs/events.md shows (TestEventsDocSnippets holds it to this file).
func Example_receiver() {
	wh, err := standardwebhooks.NewWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{} // in a real receiver: a table, kept as long as hrsync retries
	http.HandleFunc("POST /hrsync-events", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || wh.Verify(body, r.Header) != nil { // signature, and a timestamp within 5 minutes
			http.Error(w, "not signed by hrsync", http.StatusUnauthorized)
			return
		}
		id := r.Header.Get("webhook-id") // the event's id: the same on every retry
		mu.Lock()
		defer mu.Unlock()
		if !seen[id] {
			var event struct {
				Type     string         `json:"type"`
				Employee map[string]any `json:"employee"`
			}
			if err := json.Unmarshal(body, &event); err != nil {
				http.Error(w, "bad event", http.StatusBadRequest)
				return
			}
			// … act on event.Type for event.Employee, then remember the id.
			seen[id] = true
		}
		w.WriteHeader(http.StatusNoContent) // 2xx: delivered; anything else is retried
	})
}
