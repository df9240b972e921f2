package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source"
	"github.com/hrsync/hrsync/source/serve"
	v1 "github.com/hrsync/hrsync/source/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func TestMain(m *testing.M) { sinktest.Main(m) }

const testKey = "sandbox-test-key-9f2c4e7a1b3d5f60a8e2"

var fixedNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type fixture struct {
	store *sink.Store
	srv   *httptest.Server
}

func newFixture(t *testing.T, backend string, opts serve.Options) *fixture {
	t.Helper()
	store := sinktest.Store(t, backend, sink.Options{Now: func() time.Time { return fixedNow }})
	return fixtureOver(t, store, store, opts)
}

// fixtureOver serves over, a wrapper of store (or store itself), with the test keys unless opts
// names keys.
func fixtureOver(t *testing.T, store *sink.Store, over serve.Store, opts serve.Options) *fixture {
	t.Helper()
	if opts.APIKeys == nil {
		opts.APIKeys = []string{"another-key-9f2c4e7a1b3d5f60a8e2", testKey}
	}
	h, err := serve.NewHandler(over, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{store: store, srv: srv}
}

// do sends a request with the test key (unless a header overrides it) and reads the answer.
func (f *fixture) do(t *testing.T, method, path string, body io.Reader, header ...string) (*http.Response, []byte) {
	t.Helper()
	return send(t, method, f.srv.URL+path, testKey, body, header...)
}

// send sends a request with key in X-API-KEY and the header pairs (an empty value removes the
// header, the key included), and reads the answer.
func send(t *testing.T, method, url, key string, body io.Reader, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", key)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := plainClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func (f *fixture) put(t *testing.T, records ...string) {
	t.Helper()
	for _, r := range records {
		var e v1.Employee
		if err := json.Unmarshal([]byte(r), &e); err != nil {
			t.Fatal(err)
		}
		if err := f.store.PutEmployee(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

// walk loads a complete walk of a collection the wire declares, its records as the source
// sends them.
func (f *fixture) walk(t *testing.T, c *v1.Collection, records ...string) {
	t.Helper()
	ctx := context.Background()
	var recs []v1.Record
	for _, raw := range records {
		r, err := c.Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	l, err := f.store.BeginLoad(ctx, sink.Resource(c.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AddRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Merge(ctx, sink.MergeOptions{Complete: true}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) putN(t *testing.T, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		f.put(t, fmt.Sprintf(`{"id":%d,"first_name":"F%d","last_name":"L","email":"e%d@example.com"}`, i, i, i))
	}
}

func assertStatus(t *testing.T, resp *http.Response, body []byte, want int) {
	t.Helper()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, want, body)
	}
}

func TestAuth(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
	tests := []struct {
		name   string
		header []string
		want   int
	}{
		{"no key", []string{"X-API-KEY", ""}, 401},
		{"wrong key", []string{"X-API-KEY", "sandbox-wrong"}, 401},
		{"prefix of the key", []string{"X-API-KEY", testKey[:5]}, 401},
		{"upper case header", []string{"X-API-KEY", testKey}, 200},
		{"mixed case header", []string{"X-Api-Key", testKey}, 200},
		{"lower case header", []string{"x-api-key", testKey}, 200},
		{"second configured key", []string{"X-API-KEY", "another-key-9f2c4e7a1b3d5f60a8e2"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, "GET", "/v1/employees", nil, tt.header...)
			assertStatus(t, resp, body, tt.want)
			if tt.want == 401 && string(body) != "{\"error\":\"401 Unauthorized\"}\n" {
				t.Errorf("401 body %q", body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); (tt.want == 401) != (got != "") || (got != "" && got != serve.Challenge) {
				t.Errorf("WWW-Authenticate %q on a %d", got, tt.want)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q", ct)
			}
		})
	}
	// Every path needs the key, so a client cannot probe which exist.
	resp, body := f.do(t, "GET", "/v1/nowhere", nil, "X-API-KEY", "")
	assertStatus(t, resp, body, 401)
}

func TestPagingHeaders(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
	f.putN(t, 53)
	base := f.srv.URL + "/v1/employees"
	tests := []struct {
		query   string
		perPage string
		items   int
		link    string
	}{
		{"", "25", 25, `<` + base + `?page=3>; rel="last", <` + base + `?page=2>; rel="next"`},
		{"?page=2", "25", 25, `<` + base + `?page=1>; rel="first", <` + base + `?page=1>; rel="prev", <` + base + `?page=3>; rel="last", <` + base + `?page=3>; rel="next"`},
		{"?page=3", "25", 3, `<` + base + `?page=1>; rel="first", <` + base + `?page=2>; rel="prev"`},
		{"?page=4", "25", 0, `<` + base + `?page=1>; rel="first", <` + base + `?page=3>; rel="prev"`},
		{"?per_page=100", "100", 53, ""},
		{"?per_page=1000", "100", 53, ""},
		{"?per_page=53", "53", 53, ""},
		{"?per_page=52&page=2", "52", 1, `<` + base + `?page=1&per_page=52>; rel="first", <` + base + `?page=1&per_page=52>; rel="prev"`},
		// Parameters the interface does not know are not echoed into links.
		{"?per_page=10&page=2&sort=x&email=ana%40example.com&" + strings.Repeat("z", 1500) + "=1", "10", 10, `<` + base + `?page=1&per_page=10>; rel="first", <` + base + `?page=1&per_page=10>; rel="prev", <` + base + `?page=6&per_page=10>; rel="last", <` + base + `?page=3&per_page=10>; rel="next"`},
	}
	for _, tt := range tests {
		t.Run(tt.query[:min(len(tt.query), 60)], func(t *testing.T) {
			resp, body := f.do(t, "GET", "/v1/employees"+tt.query, nil)
			assertStatus(t, resp, body, 200)
			var env struct {
				Employees []json.RawMessage `json:"employees"`
			}
			if err := json.Unmarshal(body, &env); err != nil || env.Employees == nil {
				t.Fatalf("body %s: %v", body, err)
			}
			if len(env.Employees) != tt.items {
				t.Errorf("%d items, want %d", len(env.Employees), tt.items)
			}
			if got := resp.Header.Get("Total"); got != "53" {
				t.Errorf("Total %q", got)
			}
			if got := resp.Header.Get("Per-Page"); got != tt.perPage {
				t.Errorf("Per-Page %q, want %q", got, tt.perPage)
			}
			if _, present := resp.Header["Link"]; got(resp) != tt.link || (tt.link == "" && present) {
				t.Errorf("Link\n got %s\nwant %s", got(resp), tt.link)
			}
		})
	}
}

func got(resp *http.Response) string { return resp.Header.Get("Link") }

func TestBadPagingIs400(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
	for _, q := range []string{"page=0", "page=-1", "page=abc", "page=1.5", "page=", "per_page=0", "per_page=-5", "per_page=x", "page=1&page=2", "page=99999999999999999999"} {
		for _, path := range []string{"/v1/employees", "/v1/working_patterns", "/v1/departments", "/v1/holiday_allowances"} {
			resp, body := f.do(t, "GET", path+"?"+q, nil)
			assertStatus(t, resp, body, 400)
			pe, err := v1.ParseErrorBody(body)
			if err != nil || pe.Type != "Bad Request" || !strings.Contains(pe.Message, "page") {
				t.Errorf("%s?%s: body %s", path, q, body)
			}
		}
	}
}

func TestPublicURLInLinks(t *testing.T) {
	pub, _ := url.Parse("https://hr.example.com/replica/v1/")
	f := newFixture(t, "sqlite", serve.Options{PublicURL: pub})
	f.putN(t, 3)
	resp, body := f.do(t, "GET", "/v1/employees?per_page=1&page=2", nil)
	assertStatus(t, resp, body, 200)
	want := `<https://hr.example.com/replica/v1/employees?page=1&per_page=1>; rel="first", <https://hr.example.com/replica/v1/employees?page=1&per_page=1>; rel="prev", <https://hr.example.com/replica/v1/employees?page=3&per_page=1>; rel="last", <https://hr.example.com/replica/v1/employees?page=3&per_page=1>; rel="next"`
	if got(resp) != want {
		t.Errorf("Link\n got %s\nwant %s", got(resp), want)
	}
}

// TestWalkFollowsNext walks the collection as a client does, following rel="next", at many
// page sizes, on both backends: every record exactly once, in order, and Total agrees.
func TestWalkFollowsNext(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, backend, serve.Options{})
			const n = 237
			f.putN(t, n)
			for _, size := range []int{1, 2, 3, 7, 10, 25, 50, 99, 100, 236, 237, 238, 1000} {
				next := fmt.Sprintf("%s/v1/employees?per_page=%d", f.srv.URL, size)
				var seen []int64
				requests := 0
				for next != "" {
					requests++
					if requests > n+2 {
						t.Fatalf("size %d: more requests than records", size)
					}
					resp, body := f.do(t, "GET", strings.TrimPrefix(next, f.srv.URL), nil)
					assertStatus(t, resp, body, 200)
					if resp.Header.Get("Total") != fmt.Sprint(n) {
						t.Fatalf("size %d: Total %q", size, resp.Header.Get("Total"))
					}
					var env struct{ Employees []v1.Employee }
					if err := json.Unmarshal(body, &env); err != nil {
						t.Fatal(err)
					}
					for _, e := range env.Employees {
						seen = append(seen, e.ID)
					}
					links, err := v1.ParseLink(resp.Header.Get("Link"))
					if err != nil {
						t.Fatal(err)
					}
					next = links["next"]
				}
				if len(seen) != n || !slices.IsSorted(seen) || slices.Compact(slices.Clone(seen))[n-1] != n {
					t.Errorf("size %d: saw %d records (want %d once each, in order)", size, len(seen), n)
				}
				if want := (n + min(size, 100) - 1) / min(size, 100); requests != want {
					t.Errorf("size %d: %d requests, want %d", size, requests, want)
				}
			}
		})
	}
}

func TestConditionalGet(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
	f.putN(t, 30)
	resp, body := f.do(t, "GET", "/v1/employees?page=2", nil)
	assertStatus(t, resp, body, 200)
	tag := resp.Header.Get("ETag")
	if tag == "" || !strings.HasPrefix(tag, `"`) {
		t.Fatalf("ETag %q", tag)
	}
	for _, inm := range []string{tag, "W/" + tag, `"other", ` + tag, "*"} {
		resp, body = f.do(t, "GET", "/v1/employees?page=2", nil, "If-None-Match", inm)
		assertStatus(t, resp, body, 304)
		if len(body) != 0 || resp.Header.Get("ETag") != tag {
			t.Errorf("If-None-Match %s: body %q, ETag %q", inm, body, resp.Header.Get("ETag"))
		}
	}
	// Another page, or the same page of another size, is another representation.
	for _, path := range []string{"/v1/employees?page=1", "/v1/employees?page=2&per_page=10", "/v1/working_patterns?page=2"} {
		resp, body = f.do(t, "GET", path, nil, "If-None-Match", tag)
		assertStatus(t, resp, body, 200)
	}
	// Any change to the warehouse changes the tag, even one outside the page.
	f.putN(t, 31)
	resp, body = f.do(t, "GET", "/v1/employees?page=2", nil, "If-None-Match", tag)
	assertStatus(t, resp, body, 200)
	if resp.Header.Get("ETag") == tag {
		t.Error("ETag unchanged after a write")
	}
	// A single record has a tag too.
	resp, body = f.do(t, "GET", "/v1/employees/3", nil)
	assertStatus(t, resp, body, 200)
	resp, body = f.do(t, "GET", "/v1/employees/3", nil, "If-None-Match", resp.Header.Get("ETag"))
	assertStatus(t, resp, body, 304)
}

func TestRoutingErrors(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
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
	f := newFixture(t, "sqlite", serve.Options{})
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
		{"query over the limit by one", "GET", "/v1/employees?q=" + strings.Repeat("a", serve.MaxQueryBytes-1), nil, 414},
		{"query at the limit", "GET", "/v1/employees?q=" + strings.Repeat("a", serve.MaxQueryBytes-2), nil, 200},
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
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	f := newFixture(t, "sqlite", serve.Options{Logger: log})
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
	f := newFixture(t, "sqlite", serve.Options{})
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

func form(fields map[string]string) (io.Reader, string) {
	v := url.Values{}
	for k, val := range fields {
		v.Set("employee["+k+"]", val)
	}
	return strings.NewReader(v.Encode()), "application/x-www-form-urlencoded"
}

func TestCreate(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
	valid := map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024/02/29", "job_title": "Engineer"}

	body, ct := form(valid)
	resp, b := f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
	assertStatus(t, resp, b, 201)
	var env struct{ Employees []v1.Employee }
	if err := json.Unmarshal(b, &env); err != nil || len(env.Employees) != 1 {
		t.Fatalf("body %s: %v", b, err)
	}
	e := env.Employees[0]
	if e.CompanyJoinDate != "2024-02-29" || e.JobStartDate != "2024-02-29" || e.Status != "Current employee" ||
		e.WorkingPattern == nil || e.WorkingPattern.ID != 1 || e.HolidayAllowance == nil || e.LineManager != nil ||
		e.Department != nil || *e.HR || *e.ReceivesStatutoryHolidays || *e.LengthOfServiceInMonths != 32 {
		t.Errorf("created %s", b)
	}
	if loc := resp.Header.Get("Location"); loc != f.srv.URL+fmt.Sprintf("/v1/employees/%d", e.ID) {
		t.Errorf("Location %q", loc)
	}
	resp, b2 := f.do(t, "GET", fmt.Sprintf("/v1/employees/%d", e.ID), nil)
	assertStatus(t, resp, b2, 200)
	if !bytes.Equal(b, b2) {
		t.Errorf("GET differs from the create's answer:\n%s\n%s", b, b2)
	}

	// JSON, with the ISO date form.
	resp, b = f.do(t, "POST", "/v1/employees", strings.NewReader(`{"employee":{"first_name":"Bo","last_name":"Ek","email":"bo@example.com","join_date":"2025-01-31"}}`), "Content-Type", "application/json")
	assertStatus(t, resp, b, 201)

	// Multipart.
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	for k, v := range map[string]string{"first_name": "Cy", "last_name": "Do", "email": "cy@example.com", "join_date": "2025/01/31"} {
		_ = w.WriteField("employee["+k+"]", v)
	}
	_ = w.Close()
	resp, b = f.do(t, "POST", "/v1/employees", &mp, "Content-Type", w.FormDataContentType())
	assertStatus(t, resp, b, 201)

	resp, b = f.do(t, "GET", "/v1/employees", nil)
	if resp.Header.Get("Total") != "3" {
		t.Errorf("Total after 3 creates: %s", resp.Header.Get("Total"))
	}
	_ = b
}

func TestCreateRefusals(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{MaxBodyBytes: 4096})
	f.put(t, `{"id":7,"first_name":"Taken","last_name":"T","email":"taken@example.com"}`)
	tests := []struct {
		name, ct, body string
		status         int
		want           string
	}{
		{"missing all", "application/x-www-form-urlencoded", "", 400,
			`{"error":{"type":"Record Invalid","employee[first_name]":["missing"],"employee[last_name]":["missing"],"employee[email]":["missing"],"employee[join_date]":["missing"]}}`},
		{"bad email and date", "application/json", `{"employee":{"first_name":"A","last_name":"B","email":"nope","join_date":"2023/02/29"}}`, 400,
			`{"error":{"type":"Record Invalid","employee[email]":["is not a valid email address"],"employee[join_date]":["is not a valid date (use YYYY/MM/DD or YYYY-MM-DD)"]}}`},
		{"email taken, other case", "application/json", `{"employee":{"first_name":"A","last_name":"B","email":"TAKEN@example.com","join_date":"2023/02/28"}}`, 400,
			`{"error":{"type":"Record Invalid","employee[email]":["has already been taken"]}}`},
		{"unknown field", "application/json", `{"employee":{"first_name":"A","last_name":"B","email":"a@example.com","join_date":"2023/02/28","salary":"1"}}`, 400,
			`{"error":{"type":"Record Invalid","employee[salary]":["is not a supported field"]}}`},
		{"no employee", "application/json", `{"person":{}}`, 400,
			`{"error":{"type":"Record Invalid","employee":["missing"]}}`},
		{"not json", "application/json", `{"employee":`, 400, ""},
		{"xml", "application/xml", `<employee/>`, 415, ""},
		{"too large", "application/json", `{"employee":{"first_name":"` + strings.Repeat("a", 5000) + `"}}`, 413, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := f.do(t, "POST", "/v1/employees", strings.NewReader(tt.body), "Content-Type", tt.ct)
			assertStatus(t, resp, b, tt.status)
			if tt.want != "" && strings.TrimSpace(string(b)) != tt.want {
				t.Errorf("body\n got %s\nwant %s", b, tt.want)
			}
			if _, err := v1.ParseErrorBody(b); err != nil {
				t.Errorf("not a JSON error: %s", b)
			}
		})
	}
	resp, _ := f.do(t, "GET", "/v1/employees", nil)
	if resp.Header.Get("Total") != "1" {
		t.Errorf("refused creates wrote something: Total %s", resp.Header.Get("Total"))
	}
}

// A form body over the limit is 413 and a malformed one 400 naming it, never "every field
// missing"; each answer is a JSON error. Nothing is created.
func TestCreateBodyErrors(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
	big := strings.Repeat("x", 65<<10)
	urlencoded := "employee[first_name]=Ana&employee[last_name]=Lopez&employee[email]=ana%40example.com&employee[join_date]=2024%2F02%2F29&employee[job_title]=" + big
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	_ = mw.WriteField("employee[first_name]", "Ana")
	_ = mw.WriteField("employee[job_title]", big)
	_ = mw.Close()
	var mpBad bytes.Buffer
	mwBad := multipart.NewWriter(&mpBad)
	_ = mwBad.WriteField("employee[first_name]", "Ana")
	mpBad.WriteString("--" + mwBad.Boundary() + "\r\nno headers end here")
	tests := []struct {
		name, ct, body string
		status         int
		message        string
	}{
		{"urlencoded over 64 KiB", "application/x-www-form-urlencoded", urlencoded, 413, "body larger than 65536 bytes"},
		{"multipart over 64 KiB", mw.FormDataContentType(), mp.String(), 413, "body larger than 65536 bytes"},
		{"JSON over 64 KiB", "application/json", `{"employee":{"job_title":"` + big + `"}}`, 413, "body larger than 65536 bytes"},
		{"urlencoded bad escape", "application/x-www-form-urlencoded", "employee[first_name]=%zz", 400, "malformed body"},
		{"multipart cut short", mwBad.FormDataContentType(), mpBad.String(), 400, "malformed body"},
		{"multipart without boundary", "multipart/form-data", "--x\r\n", 400, "malformed body"},
		{"JSON cut short", "application/json", `{"employee":`, 400, "malformed body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := f.do(t, "POST", "/v1/employees", strings.NewReader(tt.body), "Content-Type", tt.ct)
			assertStatus(t, resp, b, tt.status)
			assertJSONError(t, resp, b, tt.status)
			if pe, _ := v1.ParseErrorBody(b); !strings.Contains(pe.Message, tt.message) {
				t.Errorf("message %q, want it to say %q", pe.Message, tt.message)
			}
		})
	}
	// The query string is not the body: a malformed one does not spoil a good form.
	body, ct := form(map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024/02/29"})
	resp, b := f.do(t, "POST", "/v1/employees?x=%zz", body, "Content-Type", ct)
	assertStatus(t, resp, b, 201)
}

// assertJSONError checks an error answer: the status, a JSON Content-Type and a body that is
// valid JSON in the service's error shape.
func assertJSONError(t *testing.T, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d; body %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if !json.Valid(body) {
		t.Errorf("body is not JSON: %q", body)
	}
	want := http.StatusText(status)
	if status == http.StatusUnauthorized {
		want = "401 Unauthorized" // the service's own 401 body
	}
	if pe, err := v1.ParseErrorBody(body); err != nil || pe.Type != want {
		t.Errorf("error body %s: %+v %v", body, pe, err)
	}
}

func TestWritesOff(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{Writes: serve.WritesOff})
	body, ct := form(map[string]string{"first_name": "A", "last_name": "B", "email": "a@example.com", "join_date": "2024/01/01"})
	resp, b := f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
	assertStatus(t, resp, b, 405)
	if resp.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(string(b), "does not accept writes") {
		t.Errorf("Allow %q body %s", resp.Header.Get("Allow"), b)
	}
}

// upstreamCreated is what a real service answers a create with: nested objects and extra fields.
const upstreamCreated = `{"employees":[{"id":5001,"account_id":77,"first_name":"Ana","last_name":"Lopez","email":"ana@example.com","job_title":null,"status":"Current employee","company_join_date":"2024-02-29","job_start_date":"2024-02-29","length_of_service_in_months":0,"age":null,"full_or_part_time":null,"notice_period":null,"working_pattern":{"id":31,"name":"Office hours","total_hours":"37.5","default":true},"holiday_allowance":{"id":12,"name":"Standard 25 days"},"line_manager":null,"holiday_approver":null,"department":null,"receives_statutory_holidays":false,"hr":false,"created_at":"2026-11-22T12:00:01Z","updated_at":"2026-11-22T12:00:01Z","middle_name":null}]}`

func TestForwardWrites(t *testing.T) {
	var gotKey, gotBody, gotCT string
	status, answer := http.StatusCreated, upstreamCreated
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/v1/employees" {
			http.Error(w, "unexpected", 500)
			return
		}
		gotKey, gotCT = r.Header.Get("X-Api-Key"), r.Header.Get("Content-Type")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	defer upstream.Close()
	client, err := source.NewClient(upstream.URL, "prod-upstream-key", source.ClientOptions{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, "sqlite", serve.Options{Writes: serve.WritesForward, Upstream: client})
	body, ct := form(map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024-02-29"})
	resp, b := f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
	assertStatus(t, resp, b, 201)
	if gotKey != "prod-upstream-key" || gotCT != "application/x-www-form-urlencoded" ||
		gotBody != "employee%5Bfirst_name%5D=Ana&employee%5Blast_name%5D=Lopez&employee%5Bemail%5D=ana%40example.com&employee%5Bjob_title%5D=&employee%5Bjoin_date%5D=2024%2F02%2F29" {
		t.Errorf("upstream saw key %q, type %q, body %s", gotKey, gotCT, gotBody)
	}
	var env struct{ Employees []v1.Employee }
	if err := json.Unmarshal(b, &env); err != nil || env.Employees[0].ID != 5001 {
		t.Fatalf("answer %s", b)
	}
	// The replica serves the upstream's record at once, as upstream sent it.
	resp, b2 := f.do(t, "GET", "/v1/employees/5001", nil)
	assertStatus(t, resp, b2, 200)
	if !bytes.Equal(b, b2) {
		t.Errorf("stored copy differs:\n%s\n%s", b, b2)
	}
	if !strings.Contains(string(b2), `"working_pattern":{"id":31,"name":"Office hours"`) {
		t.Errorf("nested pattern not kept: %s", b2)
	}

	tests := []struct {
		name         string
		status       int
		answer       string
		header       string
		want         int
		bodyContains string
	}{
		{"upstream refuses the record", 400, `{"error":{"type":"Record Invalid","employee[email]":["is invalid"]}}`, "", 400, `"employee[email]":["is invalid"]`},
		{"upstream refuses our key", 401, `{"error":"401 Unauthorized"}`, "", 502, "credentials"},
		{"upstream rate limit", 429, `{"error":{"type":"Rate Limit Reached"}}`, "", 429, "Rate Limit Reached"},
		{"upstream down", 503, `oops`, "", 502, "did not accept"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, answer = tt.status, tt.answer
			body, ct := form(map[string]string{"first_name": "X", "last_name": "Y", "email": fmt.Sprintf("x%d@example.com", i), "join_date": "2024-01-01"})
			resp, b := f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
			assertStatus(t, resp, b, tt.want)
			if !strings.Contains(string(b), tt.bodyContains) || strings.Contains(string(b), "prod-upstream-key") {
				t.Errorf("body %s", b)
			}
		})
	}
	// An email the replica already holds is refused before anything is sent.
	gotBody = ""
	body, ct = form(map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024-02-29"})
	resp, b = f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
	assertStatus(t, resp, b, 400)
	if gotBody != "" {
		t.Error("a taken email was forwarded")
	}
}

// panicky is a real store whose one method panics, to check recovery.
type panicky struct{ *sink.Store }

func (panicky) ListRecords(context.Context, string, v1.Page) (v1.List[v1.Record], error) {
	panic("boom")
}

func TestPanicIs500WithoutInternals(t *testing.T) {
	store := sinktest.Store(t, "sqlite", sink.Options{})
	f := fixtureOver(t, store, panicky{store}, serve.Options{})
	resp, b := f.do(t, "GET", "/v1/departments", nil)
	assertStatus(t, resp, b, 500)
	if strings.Contains(string(b), "boom") || !strings.Contains(string(b), "Internal Server Error") {
		t.Errorf("body %s", b)
	}
}

// TestGolden pins the exact bytes served, identical on both backends. Run with -update to
// rewrite testdata/golden after a deliberate change.
func TestGolden(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, serve.Options{})
			ctx := context.Background()
			if _, err := sinktest.DB(f.store).ExecContext(ctx, `UPDATE working_patterns SET created_at = '2020-01-01T00:00:00Z', updated_at = '2021-06-30T23:59:59Z'`); err != nil {
				t.Fatal(err)
			}
			// Departments are walked (one the employees name, one they do not); holiday
			// allowances are not, so only the seeded one is served, not those employees name.
			f.walk(t, v1.Departments, `{"id":5,"name":"R&D","code":"RD"}`, `{"id":8,"name":"Sales & <Growth>","cost_centre":null}`)
			f.put(t, goldenEmployees...)
			if _, err := f.store.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Łukasz", LastName: "O'Brien \"Jr\"", Email: "lukasz@example.com", JobTitle: "Chef <de> partie", JoinDate: "2026-01-15"}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct{ name, path string }{
				{"employees", "/v1/employees"},
				{"employees_page2", "/v1/employees?per_page=2&page=2"},
				{"employee_42", "/v1/employees/42"},
				{"working_patterns", "/v1/working_patterns"},
				{"departments", "/v1/departments"},
				{"holiday_allowances", "/v1/holiday_allowances"},
				{"not_found", "/v1/employees/900"},
			} {
				resp, body := f.do(t, "GET", c.path, nil)
				if ce := resp.Header.Get("Content-Encoding"); ce != "" || resp.Uncompressed {
					t.Fatalf("%s: a client sending no Accept-Encoding got Content-Encoding %q (decompressed by its transport: %v)", c.path, ce, resp.Uncompressed)
				}
				var out bytes.Buffer
				fmt.Fprintf(&out, "%d\n", resp.StatusCode)
				for _, h := range []string{"Content-Type", "Total", "Per-Page", "Link"} {
					if v := resp.Header.Get(h); v != "" {
						fmt.Fprintf(&out, "%s: %s\n", h, strings.ReplaceAll(v, f.srv.URL, "http://replica"))
					}
				}
				out.WriteString("\n")
				out.Write(body)
				golden(t, c.name, out.Bytes())
			}
		})
	}
}

var goldenEmployees = []string{
	`{"id":42,"account_id":7,"first_name":"Ana","middle_name":"María","last_name":"López","email":"ana@example.com","job_title":"Engineer","status":"Pending leaver","join_date":"2019/03/01","job_start_date":"2019-03-04","length_of_service_in_months":92,"age":null,"full_or_part_time":"Full Time","notice_period":"","working_pattern":{"id":9,"name":"Four day week","total_hours":"30.0","default":false},"holiday_allowance":{"id":3,"name":"Senior"},"line_manager":{"id":900,"name":"Gone Boss","email":"boss@example.com"},"holiday_approver":{"id":43,"first_name":"Bea","last_name":"Ng"},"department":{"id":5,"name":"R&D","code":"RD"},"receives_statutory_holidays":true,"hr":false,"created_at":"2019-02-20T09:00:00+01:00","updated_at":"2026-01-02T03:04:05Z","custom_fields":{"shoe":"42"},"dob":"1990-01-01"}`,
	`{"id":43,"account_id":"7","first_name":"Bea","last_name":"Ng","email":"bea@example.com","job_title":"","status":"Current employee","company_join_date":"2015-06-01","job_start_date":null,"length_of_service_in_months":"137","age":41,"full_or_part_time":null,"notice_period":{"weeks":4},"working_pattern":{"id":1,"name":"Standard","total_hours":"37.5","default":true},"holiday_allowance":{"id":1,"name":"Standard"},"line_manager":null,"holiday_approver":null,"department":{"id":5,"name":"R&D","code":"RD"},"receives_statutory_holidays":"true","hr":1,"created_at":"2015-05-20T10:00:00Z","updated_at":"2026-10-01T00:00:00-05:00"}`,
}

// updated notes the golden files rewritten in this run: the first backend writes them, the
// others must then match what it wrote.
var updated = map[string]bool{}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update && !updated[path] {
		updated[path] = true
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s:\n got %s\nwant %s", name, path, got, want)
	}
}

// TestDeclaredCollections: a collection the wire declares is served at its path with the same
// paging, Link, Total, ETag and errors as employees, each record as the source's normal form,
// and one record by id.
func TestDeclaredCollections(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, serve.Options{})
			ctx := context.Background()
			var recs []v1.Record
			for i := 1; i <= 7; i++ {
				r, err := v1.Absences.Decode([]byte(fmt.Sprintf(`{"id":%d,"employee":{"id":%d,"first_name":"A&B"},`+
					`"start_date":"2026-03-0%d","end_date":"2026-03-0%d","deducted":"1.0","notes":"","type":"Holiday",`+
					`"created_at":"2026-02-20T09:15:00+01:00","kept":[%d]}`, 100+i, i, i, i, i)))
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
			l, err := f.store.BeginLoad(ctx, sink.Resource("absences"))
			if err != nil {
				t.Fatal(err)
			}
			if err := l.AddRecords(ctx, recs); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Merge(ctx, sink.MergeOptions{Complete: true}); err != nil {
				t.Fatal(err)
			}
			_ = l.Close()

			resp, body := f.do(t, "GET", "/v1/absences?per_page=3&page=3", nil)
			assertStatus(t, resp, body, 200)
			base := f.srv.URL + "/v1/absences"
			if got, want := resp.Header.Get("Link"), `<`+base+`?page=1&per_page=3>; rel="first", <`+base+`?page=2&per_page=3>; rel="prev"`; got != want {
				t.Errorf("Link\n got %s\nwant %s", got, want)
			}
			if resp.Header.Get("Total") != "7" || resp.Header.Get("Per-Page") != "3" {
				t.Errorf("Total %q, Per-Page %q", resp.Header.Get("Total"), resp.Header.Get("Per-Page"))
			}
			if want := `{"absences":[` + string(v1.Absences.AppendJSON(nil, &recs[6])) + "]}\n"; string(body) != want {
				t.Errorf("page 3\n got %s\nwant %s", body, want)
			}
			resp2, body2 := f.do(t, "GET", "/v1/absences?per_page=3&page=3", nil, "If-None-Match", resp.Header.Get("ETag"))
			assertStatus(t, resp2, body2, 304)

			resp, body = f.do(t, "GET", "/v1/absences/102", nil)
			assertStatus(t, resp, body, 200)
			if want := `{"absences":[` + string(v1.Absences.AppendJSON(nil, &recs[1])) + "]}\n"; string(body) != want {
				t.Errorf("absence 102\n got %s\nwant %s", body, want)
			}
			for _, tc := range []struct {
				method, path string
				status       int
			}{
				{"GET", "/v1/absences/999", 404},
				{"GET", "/v1/absences/x", 404},
				{"POST", "/v1/absences", 405},
				{"GET", "/v1/sicknesses", 200}, // declared, none synced: an empty page
			} {
				resp, body := f.do(t, tc.method, tc.path, nil)
				assertStatus(t, resp, body, tc.status)
				if tc.status >= 400 {
					if pe, err := v1.ParseErrorBody(body); err != nil || pe.Type != http.StatusText(tc.status) {
						t.Errorf("%s %s: error body %s", tc.method, tc.path, body)
					}
				}
			}
		})
	}
}

// TestIndex: GET /v1 lists the collections the replica serves, with their paths and Totals, and
// answers a current ETag with 304.
func TestIndex(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
	f.putN(t, 3)
	resp, body := f.do(t, "GET", "/v1", nil)
	assertStatus(t, resp, body, 200)
	var idx struct {
		Collections []struct {
			Name, Path string
			Total      int64
		}
	}
	if err := json.Unmarshal(body, &idx); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	got := map[string]int64{}
	for _, c := range idx.Collections {
		if c.Path != "/v1/"+c.Name {
			t.Errorf("%s at %s", c.Name, c.Path)
		}
		got[c.Name] = c.Total
	}
	if len(got) != 4+len(v1.Collections)-2 {
		t.Errorf("%d collections listed: %s", len(got), body)
	}
	for name, want := range map[string]int64{"employees": 3, "working_patterns": 1, "holiday_allowances": 1, "absences": 0} {
		if n, ok := got[name]; !ok || n != want {
			t.Errorf("%s: total %d (listed %v), want %d", name, n, ok, want)
		}
	}
	resp, body = f.do(t, "GET", "/v1", nil, "If-None-Match", resp.Header.Get("ETag"))
	assertStatus(t, resp, body, 304)
	resp, body = f.do(t, "POST", "/v1", nil)
	assertStatus(t, resp, body, 405)
}

// TestUnavailableCollectionIs404: a declared collection the replica holds no record of, whose
// latest sync found the account does not offer it, is answered 404 as the source answers it; one
// never synced, one offered again, and one that still holds records from before are answered
// as lists.
func TestUnavailableCollectionIs404(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, backend, serve.Options{})
			ctx := context.Background()
			run := func(resource, status string) {
				t.Helper()
				id, err := f.store.StartRun(ctx, "r-"+resource+"-"+status, sink.Resource(resource), fixedNow)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.store.FinishRun(ctx, sink.Run{ID: id, Status: status, FinishedAt: fixedNow, TotalReported: -1}); err != nil {
					t.Fatal(err)
				}
			}
			f.walk(t, v1.OtherLeaveReasons, `{"id":41,"name":"Jury service"}`)
			run("sicknesses", sink.RunUnavailable)
			run("other_leave_reasons", sink.RunUnavailable)
			run("company_training_types", sink.RunUnavailable)
			run("company_training_types", sink.RunOK)

			resp, body := f.do(t, "GET", "/v1/sicknesses", nil)
			assertStatus(t, resp, body, 404)
			if !strings.HasPrefix(string(body), `{"error":{"type":"Not Found"`) || resp.Header.Get("Total") != "" || resp.Header.Get("ETag") != "" {
				t.Errorf("sicknesses: Total %q, ETag %q, body %s", resp.Header.Get("Total"), resp.Header.Get("ETag"), body)
			}
			for path, want := range map[string]string{
				"/v1/absences":               `{"absences":[]}`,               // never synced
				"/v1/company_training_types": `{"company_training_types":[]}`, // offered again
				"/v1/other_leave_reasons":    `{"other_leave_reasons":[{"id":41,"name":"Jury service"}]}`,
			} {
				resp, body := f.do(t, "GET", path, nil)
				assertStatus(t, resp, body, 200)
				if strings.TrimSpace(string(body)) != want {
					t.Errorf("%s: %s, want %s", path, body, want)
				}
			}
		})
	}
}

// A trailing slash answers as the path without it: the same body, the same headers, and links
// without the slash.
func TestTrailingSlash(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
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

// Every answer with an ETag says how it may be cached, as the real service does, and that it
// varies with the key (another key may read another account); a 304 says the same.
func TestCacheHeaders(t *testing.T) {
	f := newFixture(t, "sqlite", serve.Options{})
	f.putN(t, 2)
	for _, path := range []string{"/v1/employees", "/v1/employees/1", "/v1", "/v1/working_patterns", "/v1/departments"} {
		resp, body := f.do(t, "GET", path, nil)
		assertStatus(t, resp, body, 200)
		tag := resp.Header.Get("ETag")
		again, body := f.do(t, "GET", path, nil, "If-None-Match", tag)
		assertStatus(t, again, body, 304)
		for _, r := range []*http.Response{resp, again} {
			if got := r.Header.Get("Cache-Control"); got != "max-age=0, private, must-revalidate" {
				t.Errorf("%s (%d): Cache-Control %q", path, r.StatusCode, got)
			}
			if got := r.Header.Values("Vary"); !slices.Contains(got, "X-API-KEY") {
				t.Errorf("%s (%d): Vary %q, want X-API-KEY", path, r.StatusCode, got)
			}
		}
	}
}

// plainClient sends no Accept-Encoding of its own (http.DefaultClient asks for gzip and
// decompresses behind the test's back): a test sees the bytes served to a client that asked
// for what the test asked for.
var plainClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}
