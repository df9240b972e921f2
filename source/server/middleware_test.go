package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{})
	f.putN(t, 1)
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/v1/nowhere", 404, ""},
		{"GET", "/", 404, ""},
		{"GET", "/v2/employees", 404, ""},
		{"GET", "/v1/employees/", 200, ""}, // as /v1/employees (TestTrailingSlash)
		{"GET", "/v1/employees/1/", 200, ""},
		{"GET", "/v1/employees//", 404, ""},
		{"POST", "/v1/working_patterns/", 405, "GET, HEAD"},
		{"GET", "/v1/employees/abc", 404, ""},
		{"GET", "/v1/employees/0", 404, ""},
		{"GET", "/v1/employees/999", 404, ""},
		{"GET", "/v1/employees/1", 200, ""},
		{"HEAD", "/v1/employees", 200, ""},
		{"DELETE", "/v1/employees", 405, "GET, HEAD, POST"},
		{"PUT", "/v1/employees/1", 405, "GET, HEAD"},
		{"POST", "/v1/working_patterns", 405, "GET, HEAD"},
		{"PATCH", "/v1/departments", 405, "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp, body := f.do(t, tt.method, tt.path, nil)
			assertStatus(t, resp, body, tt.status)
			if resp.Header.Get("Allow") != tt.allow {
				t.Errorf("Allow %q, want %q", resp.Header.Get("Allow"), tt.allow)
			}
			if tt.status >= 400 {
				if pe, err := v1.ParseErrorBody(body); err != nil || pe.Type != http.StatusText(tt.status) {
					t.Errorf("error body %s", body)
				}
			}
		})
	}
}

// Requests net/http's ServeMux would redirect (a 307 with an HTML body) or that carry an
// over-long query get a JSON error with the right status instead.
func TestRequestShapeErrorsAreJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{})
	f.putN(t, 1)
	longQuery := "?page=1&q=" + strings.Repeat("a", 60<<10)
	tests := []struct {
		name, method, target string
		header               []string
		status               int
	}{
		{"dot-dot", "GET", "/v1/../x", nil, 404},
		{"dot-dot to a real path", "GET", "/v1/x/../employees", nil, 404},
		{"escaped dot-dot", "GET", "/v1/%2e%2e/employees", nil, 404},
		{"double slash", "GET", "//", nil, 404},
		{"empty segment", "GET", "/v1//employees", nil, 404},
		{"dot segment", "GET", "/v1/./employees", nil, 404},
		{"trailing dot", "GET", "/v1/employees/.", nil, 404},
		{"unclean, POST", "POST", "/v1/../v1/employees", nil, 404},
		{"unclean, no key", "GET", "//", []string{"X-API-KEY", ""}, 401},
		{"60 KB query", "GET", "/v1/employees" + longQuery, nil, 414},
		{"60 KB query, no key", "GET", "/v1/employees" + longQuery, []string{"X-API-KEY", ""}, 414},
		{"query over the limit by one", "GET", "/v1/employees?q=" + strings.Repeat("a", server.MaxQueryBytes-1), nil, 414},
		{"query at the limit", "GET", "/v1/employees?q=" + strings.Repeat("a", server.MaxQueryBytes-2), nil, 200},
		{"clean path", "GET", "/v1/employees/1", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, tt.method, tt.target, nil, tt.header...)
			if resp.Request.URL.RequestURI() != tt.target {
				t.Fatalf("the client sent %s, not %s", resp.Request.URL.RequestURI(), tt.target)
			}
			if tt.status == 200 {
				assertStatus(t, resp, body, 200)
				return
			}
			assertJSONError(t, resp, body, tt.status)
			if loc := resp.Header.Get("Location"); loc != "" {
				t.Errorf("redirected to %q", loc)
			}
		})
	}
}

// The access log never holds a query string's values beyond the interface's numeric page and
// per_page: a key or an email a client puts there is not written.
func TestAccessLogRedactsTheQuery(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	f := newFixture(t, "sqlite", server.Options{Logger: log})
	f.putN(t, 3)
	secrets := []string{testKey, "ana@example.com", "ana%40example.com", "SECRETVALUE"}
	tests := []struct {
		name, target string
		wantQuery    string
		redacted     int
	}{
		{"paging", "/v1/employees?page=2&per_page=1", `query="page=2&per_page=1"`, 0},
		{"key and email", "/v1/employees?page=1&api_key=" + testKey + "&email=ana%40example.com", `query="page=1"`, 2},
		{"bare email", "/v1/employees?ana@example.com", "query=\"\"", 1},
		{"secret as the page", "/v1/employees?page=SECRETVALUE", "query=\"\"", 1},
		{"secret as a name", "/v1/employees?SECRETVALUE=1&per_page=2", `query="per_page=2"`, 1},
		{"refused as too long", "/v1/employees?email=ana%40example.com&pad=" + strings.Repeat("x", 3000), "query=\"\"", 2},
		{"unknown path", "/v1/nowhere?key=SECRETVALUE", "query=\"\"", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			resp, body := f.do(t, "GET", tt.target, nil)
			_ = body
			line := logs.String()
			if !strings.Contains(line, "msg=request ") || !strings.Contains(line, fmt.Sprintf("status=%d", resp.StatusCode)) {
				t.Fatalf("no access log line: %q", line)
			}
			for _, s := range secrets {
				if strings.Contains(line, s) {
					t.Errorf("the log holds %q: %s", s, line)
				}
			}
			if !strings.Contains(line, " "+tt.wantQuery+" ") {
				t.Errorf("log %q lacks %s", line, tt.wantQuery)
			}
			if got := strings.Contains(line, fmt.Sprintf("query_params_redacted=%d ", tt.redacted)); tt.redacted > 0 && !got ||
				tt.redacted == 0 && strings.Contains(line, "query_params_redacted") {
				t.Errorf("log %q: want %d redacted", line, tt.redacted)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{})
	resp, _ := f.do(t, "GET", "/v1/employees", nil, "X-Request-Id", "abc-123.x_y")
	if resp.Header.Get("X-Request-Id") != "abc-123.x_y" {
		t.Errorf("kept id %q", resp.Header.Get("X-Request-Id"))
	}
	for _, bad := range []string{"", "has space", "quote\"", strings.Repeat("x", 129)} {
		resp, _ = f.do(t, "GET", "/v1/employees", nil, "X-Request-Id", bad)
		if id := resp.Header.Get("X-Request-Id"); len(id) != 32 {
			t.Errorf("for %q: id %q, want a fresh one", bad, id)
		}
	}
}

// panicky is a real store whose one method panics, to check recovery.
type panicky struct{ *sink.Store }

func (panicky) ListRecords(context.Context, string, v1.Page) (v1.List[v1.Record], error) {
	panic("boom")
}

func TestPanicIs500WithoutInternals(t *testing.T) {
	t.Parallel()
	store := sinktest.Store(t, "sqlite", sink.Options{})
	f := fixtureOver(t, store, panicky{store}, server.Options{})
	resp, b := f.do(t, "GET", "/v1/departments", nil)
	assertStatus(t, resp, b, 500)
	if strings.Contains(string(b), "boom") || !strings.Contains(string(b), "Internal Server Error") {
		t.Errorf("body %s", b)
	}
}

// A trailing slash answers as the path without it: the same body, the same headers, and links
// without the slash.
func TestTrailingSlash(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{})
	f.putN(t, 3)
	for _, path := range []string{"/v1/employees?per_page=2", "/v1/employees/2", "/v1", "/v1/working_patterns"} {
		plain, query, _ := strings.Cut(path, "?")
		slashed := plain + "/"
		if query != "" {
			slashed += "?" + query
		}
		want, wantBody := f.do(t, "GET", path, nil)
		got, gotBody := f.do(t, "GET", slashed, nil)
		assertStatus(t, got, gotBody, want.StatusCode)
		if !bytes.Equal(gotBody, wantBody) {
			t.Errorf("%s: body differs from %s's:\n%s\n%s", slashed, path, gotBody, wantBody)
		}
		for _, h := range []string{"Link", "Total", "ETag"} {
			if got.Header.Get(h) != want.Header.Get(h) {
				t.Errorf("%s: %s %q, want %q", slashed, h, got.Header.Get(h), want.Header.Get(h))
			}
		}
	}
}
