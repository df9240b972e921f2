package server

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
)

// OpenAPI is the OpenAPI 3.1 document of what the handler answers, served at
// /v1/openapi.json without a key. It is generated from the declared collections by the
// package's tests (go test -run TestOpenAPIFileIsGenerated -update) and checked there against
// every answer the tests see.
//
//go:embed openapi.json
var OpenAPI []byte

// openAPIPath is where the document is served.
const openAPIPath = "/v1/openapi.json"

// openAPITag is the document's ETag: it changes only with the document.
var openAPITag = func() string {
	sum := sha256.Sum256(OpenAPI)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()

// serveOpenAPI answers GET and HEAD of the document, 304 to its ETag.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		WriteError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here; allowed: GET, HEAD")
		return
	}
	w.Header().Set("ETag", openAPITag)
	w.Header().Set("Cache-Control", CacheControl)
	if etagMatch(r.Header.Get("If-None-Match"), openAPITag) != "" {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, http.StatusOK, OpenAPI)
}
