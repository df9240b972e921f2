package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
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

// FuzzListQuery: what a list answer is keyed and tagged by (parseListQuery) comes from the
// parse alone: a parameter the interface does not know, added anywhere, or the query's pairs in
// another order, change nothing; and the links' query holds per_page as read, digits only.
func FuzzListQuery(f *testing.F) {
	for _, s := range []string{
		"", "page=2&per_page=10", "per_page=500", "page=01&per_page=0005", "pa%67e=3", "page=1&page=2",
		"per_page=0010;x=1", "x=1&per_page=7&y", "page=99999999999999999999", "per_page=\xff",
	} {
		f.Add(s, "utm=1")
	}
	f.Fuzz(func(t *testing.T, raw, extra string) {
		q, _ := url.ParseQuery(raw)
		lq, err := parseListQuery(q)
		if err != nil {
			return
		}
		if lq.page.Number < 1 || lq.page.Size < 1 || lq.page.Size > 100 {
			t.Fatalf("parseListQuery(%q) = %+v", raw, lq)
		}
		for name, vs := range lq.linkQuery() {
			if name != "per_page" || len(vs) != 1 || strings.Trim(vs[0], "0123456789") != "" || vs[0] != strconv.FormatInt(lq.page.Size, 10) {
				t.Fatalf("parseListQuery(%q).linkQuery() = %v", raw, lq.linkQuery())
			}
		}
		// extra, as one parameter whose name is not the interface's.
		name := "x" + extra
		if name == "page" || name == "per_page" {
			return
		}
		more := url.Values{name: {extra}}.Encode()
		for _, other := range []string{raw + "&" + more, more + "&" + raw, reversed(raw)} {
			q2, _ := url.ParseQuery(other)
			lq2, err := parseListQuery(q2)
			if err != nil || lq2 != lq {
				t.Fatalf("parseListQuery(%q) = %+v, %v; of %q it is %+v", other, lq2, err, raw, lq)
			}
		}
	})
}

// reversed is raw's pairs in the opposite order.
func reversed(raw string) string {
	pairs := strings.Split(raw, "&")
	slices.Reverse(pairs)
	return strings.Join(pairs, "&")
}
