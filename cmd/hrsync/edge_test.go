package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
)

// failingReady is a warehouse that is not ready, with the kind of reason a driver gives.
type failingReady struct{}

func (failingReady) Ready(context.Context) error {
	return errors.New(`account acme: warehouse postgres://hrsync@db.internal:5432/hr: dial tcp 10.0.0.5:5432: connect: connection refused`)
}

// TestReadyzOnTheAPIPort: /readyz on the API port says only that the replica is not ready (it
// used to give the warehouse's address, the account and the driver's error to anyone); the
// metrics port's says why in general words, naming the account and not the warehouse (it asks
// no key either).
func TestReadyzOnTheAPIPort(t *testing.T) {
	t.Parallel()
	api := httpserve.GetRoutes(httpserve.Health(failingReady{}, slog.New(slog.DiscardHandler), false), nil)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
	if w.Code != 503 || strings.TrimSpace(w.Body.String()) != `{"status":"unavailable"}` {
		t.Errorf("API /readyz: %d %s", w.Code, w.Body)
	}
	metrics := prom.Mux(newRegistry(), failingReady{}, slog.New(slog.DiscardHandler))
	w = httptest.NewRecorder()
	metrics.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
	if w.Code != 503 || !strings.Contains(w.Body.String(), "account acme: the warehouse cannot be reached") {
		t.Errorf("metrics /readyz: %d %s", w.Code, w.Body)
	}
	for _, s := range []string{"db.internal", "5432", "10.0.0.5", "hrsync@", "/hr"} {
		if strings.Contains(w.Body.String(), s) {
			t.Errorf("metrics /readyz names %q: %s", s, w.Body)
		}
	}
}
