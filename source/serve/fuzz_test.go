package serve

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzLoggedQuery: the access log's account of a query holds nothing but the interface's own
// parameters with numeric values, each taken verbatim from the query, and counts every other
// parameter as redacted.
func FuzzLoggedQuery(f *testing.F) {
	for _, s := range []string{
		"", "page=2&per_page=10", "page=1&api_key=sandbox-SECRET&email=ana%40example.com", "ana@example.com",
		"page=SECRET", "page=&per_page", "&&page=1&&", "page=1&page=2&page=3&page=4&page=5&per_page=6",
		"per_page=0010;x=1", "page%3D1=2", "PAGE=1", "page=1=2", "page=\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		shown, redacted := loggedQuery(raw)
		pairs := 0
		for p := range strings.SplitSeq(raw, "&") {
			if p != "" {
				pairs++
			}
		}
		kept := 0
		if shown != "" {
			for p := range strings.SplitSeq(shown, "&") {
				kept++
				name, value, ok := strings.Cut(p, "=")
				if !ok || (name != "page" && name != "per_page") || value == "" || strings.Trim(value, "0123456789") != "" {
					t.Fatalf("loggedQuery(%q) shows %q", raw, p)
				}
			}
		}
		if kept > maxLoggedParams || kept+redacted != pairs {
			t.Fatalf("loggedQuery(%q) = %q, %d redacted; %d pairs", raw, shown, redacted, pairs)
		}
	})
}

// FuzzIsCleanPath: a path is clean exactly when http.ServeMux would serve it rather than
// redirect to a cleaned form, so the handler answers every path ServeMux would redirect.
func FuzzIsCleanPath(f *testing.F) {
	for _, s := range []string{"/", "//", "/v1/../x", "/v1/./employees", "/v1//employees", "/v1/employees/", "/v1/employees/.", "/..", "/a/b/..", "", "x", "/a/", "/.a", "/a..b/"} {
		f.Add(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	f.Fuzz(func(t *testing.T, p string) {
		if p == "" || p[0] != '/' {
			// Not a path net/http hands a handler (a request line's target is rooted, or "*",
			// or absolute); the handler refuses it all the same.
			if isCleanPath(p) {
				t.Fatalf("isCleanPath(%q) = true", p)
			}
			return
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, &http.Request{Method: http.MethodGet, URL: &url.URL{Path: p}, Host: "example.com", Header: http.Header{}})
		served := w.Code == http.StatusTeapot
		if isCleanPath(p) != served {
			t.Fatalf("isCleanPath(%q) = %v, but ServeMux answered %d", p, isCleanPath(p), w.Code)
		}
	})
}
