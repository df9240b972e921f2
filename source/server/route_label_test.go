package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/source/server"
)

// TestObservedRoutes requests every route the replica serves, the OpenAPI document, a path no
// route serves and a request without a key, and checks the route each is counted under: its
// own pattern, never "unmatched" for a path that is served. Together they give every value of
// serve.RouteLabels (which docs/operations.md lists), and no other.
func TestObservedRoutes(t *testing.T) {
	t.Parallel()
	// Observe is told after the answer is written: each request's route is awaited.
	observed := make(chan string, 16)
	f := newFixture(t, "sqlite", server.Options{Observe: func(_, route string, _ int, _ time.Duration) { observed <- route }})
	f.put(t, `{"id": 1, "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}`)
	seen := map[string]bool{}
	check := func(method, path, key string, want string) {
		t.Helper()
		resp, _ := send(t, method, f.srv.URL+path, key, nil)
		select {
		case got := <-observed:
			if got != want {
				t.Errorf("%s %s (%d): counted as %q, want %q", method, path, resp.StatusCode, got, want)
			}
			seen[got] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("%s %s (%d): never counted", method, path, resp.StatusCode)
		}
	}
	for _, route := range server.RouteLabels() {
		if !strings.HasPrefix(route, "/") {
			continue
		}
		path := strings.ReplaceAll(route, "{id}", "1")
		check(http.MethodGet, path, testKey, route)
		check(http.MethodHead, path, testKey, route)
	}
	check(http.MethodGet, "/v1/openapi.json", "", "/v1/openapi.json") // no key needed
	check(http.MethodGet, "/v1/nowhere", testKey, server.RouteUnmatched)
	check(http.MethodGet, "/", testKey, server.RouteUnmatched)
	check(http.MethodGet, "/v1/employees", "", server.RouteUnmatched) // refused before routing
	check(http.MethodDelete, "/v1/employees/1", testKey, "/v1/employees/{id}")
	for _, route := range server.RouteLabels() {
		if !seen[route] {
			t.Errorf("route %q of RouteLabels was never counted", route)
		}
	}
	if got := len(server.RouteLabels()); got != len(seen) {
		t.Errorf("RouteLabels has %d values, the requests were counted under %d", got, len(seen))
	}
}
