package server

import (
	"net/http"

	"github.com/hrsync/hrsync/source/v1"
)

// routes builds an account's mux over eachRoute.
func (a *account) routes() *http.ServeMux {
	mux := http.NewServeMux()
	a.eachRoute(func(pattern string, get, post http.HandlerFunc) { route(mux, pattern, get, post) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, http.StatusNotFound, a.h.notFound)
	})
	return mux
}

// eachRoute calls fn with each route of the interface, its GET handler and its POST one (nil:
// none): the one place the interface's routes are declared. a may be nil when only the
// patterns are wanted (RouteLabels).
func (a *account) eachRoute(fn func(pattern string, get, post http.HandlerFunc)) {
	fn("/v1/employees", a.listEmployees, a.createEmployee)
	fn("/v1/employees/{id}", a.getEmployee, nil)
	fn("/v1/working_patterns", a.listWorkingPatterns, nil)
	for _, c := range v1.Collections {
		fn("/v1/"+c.Name, func(w http.ResponseWriter, r *http.Request) { a.listRecords(w, r, c) }, nil)
		fn("/v1/"+c.Name+"/{id}", func(w http.ResponseWriter, r *http.Request) { a.getRecord(w, r, c) }, nil)
	}
	fn(eventsPath, a.listEvents, nil)
	fn("/v1", a.index, nil)
}

// RouteUnmatched is the route Options.Observe is told of for a request no route answered: one
// refused before it was routed (no or a wrong key, too many refusals, a query too long, a CORS
// preflight, a body in an encoding not accepted) or for a path no route serves (404).
const RouteUnmatched = "unmatched"

// RouteLabels are every route Options.Observe may be told of, the route label of the replica's
// request metrics: each route's pattern ("/v1/employees/{id}"), the OpenAPI document's path,
// and RouteUnmatched. A client's paths never make more.
func RouteLabels() []string {
	var out []string
	(*account)(nil).eachRoute(func(pattern string, _, _ http.HandlerFunc) { out = append(out, pattern) })
	return append(out, openAPIPath, RouteUnmatched)
}

// route registers a path whose GET (and HEAD) and optional POST are served; other methods get a
// JSON 405 with Allow.
func route(mux *http.ServeMux, pattern string, get, post http.HandlerFunc) {
	allow := "GET, HEAD"
	if post != nil {
		allow = "GET, HEAD, POST"
	}
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			get(w, r)
		case r.Method == http.MethodPost && post != nil:
			post(w, r)
		default:
			w.Header().Set("Allow", allow)
			WriteError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here; allowed: "+allow)
		}
	})
}
