// Package serve is serve mode's HTTP handler: it answers the /v1 interface over a Store (the
// warehouse) per account, each API key reading exactly one account's, with API-key auth, paging
// headers, ETags, request ids, JSON errors and creates (kept locally, or forwarded upstream
// through a Creator). The wire format is package v1's; it imports neither the warehouse nor the
// HTTP client.
//
// Where each concern lives:
//
//   - handler.go: the Store and Creator it serves over, the Handler, and New (checking the
//     options, building each account).
//   - options.go: what a caller configures: Options, Account, Key, the write modes (Writes),
//     their defaults and what an account's writes resolve to.
//   - routes.go: the one table of the interface's routes (eachRoute), each account's mux, the
//     route labels of the metrics.
//   - middleware.go: what every request goes through around its route (ServeHTTP): request
//     id, panic recovery, refusals of a query too long, an encoded body or an unclean path, and
//     after it the metrics and access log (observe: its redacted query, its cut path).
//   - auth.go: the keys compiled from Options, finding the key presented in constant time, and
//     carrying it in the request's context; keys.go: what a configured key must be (CheckKey, its strength); authlimit.go:
//     pacing a client's failed authentications; scope.go: what a key may read (Scope);
//     projection.go: the fields of an answer it sees (a streaming JSON projection).
//   - reads.go: the GET routes: a page of a collection, one record, the index (/v1).
//   - creates.go: POST /v1/employees, kept locally or forwarded upstream; idempotency.go: the
//     Idempotency-Key claims, replays and the capture of an answer to keep.
//   - respond.go: JSON answers and errors (WriteError), internal and busy (503) failures.
//   - tag.go: ETags and caching headers; cache.go: the answers kept until the store's version
//     moves, and the begin/write of every read; encoding.go: gzip negotiation.
//   - edge.go: CORS, and the address links are built on behind proxies (baseURL, Forwarded).
//   - openapi.go: the OpenAPI document served at /v1/openapi.json.
package server
