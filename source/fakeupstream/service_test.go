package fakeupstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/source/v1"
)

// get sends a GET with the server's key (or the given one) and returns the answer and its body.
func get(t *testing.T, srv *sourcetest.Server, target string, header ...string) (*http.Response, []byte) {
	t.Helper()
	return getFrom(t, srv.Client(), srv.URL, srv.APIKey(), target, header...)
}

// getFrom is get of base+target through client, with key.
func getFrom(t *testing.T, client *http.Client, base, key, target string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", key)
	for i := 0; i < len(header); i += 2 {
		req.Header.Del("X-API-KEY")
		req.Header[header[i]] = []string{header[i+1]}
	}
	return sourcetest.Do(t, client, req)
}

// items returns the records of an envelope.
func items(t *testing.T, key string, body []byte) []json.RawMessage {
	t.Helper()
	var env map[string][]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	got, ok := env[key]
	if !ok || len(env) != 1 {
		t.Fatalf("body %s: want one member %q", body, key)
	}
	return got
}

func TestListHeadersAsTheRealService(t *testing.T) {
	emps := fakeupstream.Generate(250, 1)
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: emps})
	defer srv.Close()
	u := srv.URL + "/v1/employees"
	tests := []struct {
		query     string
		total     string
		perPage   string
		link      string // exactly
		from, n   int    // the records served: emps[from:from+n]
		wantLinks map[string]int64
	}{
		{"?page=1&per_page=100", "250", "100",
			`<` + u + `?page=3&per_page=100>; rel="last", <` + u + `?page=2&per_page=100>; rel="next"`,
			0, 100, map[string]int64{"last": 3, "next": 2}},
		{"?page=2&per_page=100", "250", "100",
			`<` + u + `?page=1&per_page=100>; rel="first", <` + u + `?page=1&per_page=100>; rel="prev", <` + u + `?page=3&per_page=100>; rel="last", <` + u + `?page=3&per_page=100>; rel="next"`,
			100, 100, map[string]int64{"first": 1, "prev": 1, "last": 3, "next": 3}},
		{"?page=3&per_page=100", "250", "100",
			`<` + u + `?page=1&per_page=100>; rel="first", <` + u + `?page=2&per_page=100>; rel="prev"`,
			200, 50, map[string]int64{"first": 1, "prev": 2}},
		{"?page=4&per_page=100", "250", "100", // past the end: 200 and an empty page
			`<` + u + `?page=1&per_page=100>; rel="first", <` + u + `?page=3&per_page=100>; rel="prev"`,
			0, 0, map[string]int64{"first": 1, "prev": 3}},
		{"?per_page=500&page=3", "250", "100", // cut to 100
			`<` + u + `?page=1&per_page=500>; rel="first", <` + u + `?page=2&per_page=500>; rel="prev"`,
			200, 50, nil},
		{"", "250", "25", // defaults: page 1, 25 a page
			`<` + u + `?page=10>; rel="last", <` + u + `?page=2>; rel="next"`,
			0, 25, nil},
		{"?page=2&per_page=100&sort=id&fields=a,b", "250", "100", // other parameters kept
			`<` + u + `?fields=a%2Cb&page=1&per_page=100&sort=id>; rel="first", <` + u + `?fields=a%2Cb&page=1&per_page=100&sort=id>; rel="prev", ` +
				`<` + u + `?fields=a%2Cb&page=3&per_page=100&sort=id>; rel="last", <` + u + `?fields=a%2Cb&page=3&per_page=100&sort=id>; rel="next"`,
			100, 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp, body := get(t, srv, "/v1/employees"+tt.query)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			h := resp.Header
			if h.Get("Total") != tt.total || h.Get("Per-Page") != tt.perPage || h.Get("Link") != tt.link {
				t.Errorf("headers Total %q Per-Page %q Link\n %s\nwant %q %q\n %s", h.Get("Total"), h.Get("Per-Page"), h.Get("Link"), tt.total, tt.perPage, tt.link)
			}
			if len(h.Values("Link")) > 1 {
				t.Errorf("Link in %d header lines", len(h.Values("Link")))
			}
			if h.Get("X-Request-Id") == "" || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("headers %v", h)
			}
			links, err := v1.ParseLink(h.Get("Link"))
			if err != nil {
				t.Fatal(err)
			}
			for rel, page := range tt.wantLinks {
				if got := v1.PageOf(links[rel]); got != page || !strings.HasPrefix(links[rel], srv.URL+"/") {
					t.Errorf("rel %s = %q, want page %d on %s", rel, links[rel], page, srv.URL)
				}
			}
			if tt.wantLinks != nil && len(links) != len(tt.wantLinks) {
				t.Errorf("links %v", links)
			}
			got := items(t, "employees", body)
			if want := emps[tt.from : tt.from+tt.n]; !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("served %d records, not emps[%d:%d] as given", len(got), tt.from, tt.from+tt.n)
			}
		})
	}
}

// Start serves on the listener given, with links on its address, and Close closes it.
func TestServerOnAListenerOfOurOwn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeupstream.Start(ln, fakeupstream.Options{Employees: fakeupstream.Generate(150, 1)})
	defer srv.Close()
	if srv.URL != "http://"+ln.Addr().String() {
		t.Errorf("URL %s, listener on %s", srv.URL, ln.Addr())
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, body := getFrom(t, client, srv.URL, srv.APIKey(), "/v1/employees?per_page=100")
	if resp.StatusCode != 200 || len(items(t, "employees", body)) != 100 || !strings.Contains(resp.Header.Get("Link"), srv.URL+"/v1/employees?page=2") {
		t.Errorf("status %d, Link %q", resp.StatusCode, resp.Header.Get("Link"))
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("the listener still accepts after Close")
	}
}

func TestListOnOnePage(t *testing.T) {
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(5, 1)})
	defer srv.Close()
	for _, target := range []string{"/v1/employees?page=1&per_page=100", "/v1/working_patterns?per_page=100", "/v1/working_patterns"} {
		resp, body := get(t, srv, target)
		if resp.StatusCode != 200 || resp.Header.Get("Total") != "5" || resp.Header.Values("Link") != nil {
			t.Errorf("%s: status %d, Total %q, Link %q", target, resp.StatusCode, resp.Header.Get("Total"), resp.Header.Values("Link"))
		}
		if n := len(items(t, strings.Split(strings.TrimPrefix(target, "/v1/"), "?")[0], body)); n != 5 {
			t.Errorf("%s: %d records", target, n)
		}
	}
	// Working patterns page like employees.
	resp, _ := get(t, srv, "/v1/working_patterns?per_page=2")
	want := `<` + srv.URL + `/v1/working_patterns?page=3&per_page=2>; rel="last", <` + srv.URL + `/v1/working_patterns?page=2&per_page=2>; rel="next"`
	if got := resp.Header.Get("Link"); got != want || resp.Header.Get("Per-Page") != "2" {
		t.Errorf("Link %s\nwant %s", got, want)
	}

	empty := sourcetest.NewServer(fakeupstream.Options{WorkingPatterns: []json.RawMessage{}})
	defer empty.Close()
	for _, target := range []string{"/v1/employees?page=1&per_page=100", "/v1/working_patterns"} {
		resp, body := get(t, empty, target)
		if resp.StatusCode != 200 || resp.Header.Get("Total") != "0" || resp.Header.Values("Link") != nil || !bytes.HasSuffix(body, []byte(`[]}`)) {
			t.Errorf("%s: status %d, headers %v, body %s", target, resp.StatusCode, resp.Header, body)
		}
	}
}

func TestAuthentication(t *testing.T) {
	srv := sourcetest.NewServer(fakeupstream.Options{APIKey: "sandbox-k1"})
	defer srv.Close()
	tests := []struct {
		name   string
		header []string
		want   int
	}{
		{"X-API-KEY", nil, 200},
		{"X-Api-Key", []string{"X-Api-Key", "sandbox-k1"}, 200},
		{"lower case name", []string{"x-api-key", "sandbox-k1"}, 200},
		{"no key", []string{"X-Other", "sandbox-k1"}, 401},
		{"wrong key", []string{"X-Api-Key", "sandbox-k2"}, 401},
		{"key in another case", []string{"X-Api-Key", "SANDBOX-K1"}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Header names written raw, as a client may send them.
			resp, body := get(t, srv, "/v1/employees", tt.header...)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want == 401 && string(body) != `{"error":"401 Unauthorized"}` {
				t.Errorf("body %s", body)
			}
			if resp.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
	if n := srv.Count("/v1/employees", 401); n != 3 {
		t.Errorf("Count 401 = %d", n)
	}
}

// fakeNow is a settable clock for the rate-limit window.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) Set(d time.Duration) {
	f.mu.Lock()
	f.t = time.Unix(1_700_000_000, 0).Add(d)
	f.mu.Unlock()
}

func TestRateLimitWindow(t *testing.T) {
	var clock fakeNow
	srv := sourcetest.NewServer(fakeupstream.Options{RateLimit: 3, Window: time.Minute, Now: clock.Now})
	defer srv.Close()
	steps := []struct {
		at   time.Duration
		want int
	}{
		{0, 200}, {time.Second, 200}, {2 * time.Second, 200},
		{3 * time.Second, 429},  // a fourth within 60 s
		{60 * time.Second, 429}, // (0s, 60s] still holds 1s, 2s and the refused 3s
		{63 * time.Second, 200}, // (3s, 63s] holds the refused 60s: refused requests count too
		{63 * time.Second, 200},
		{63 * time.Second, 429},
		{200 * time.Second, 200},
	}
	for _, s := range steps {
		clock.Set(s.at)
		resp, body := get(t, srv, "/v1/employees")
		if resp.StatusCode != s.want {
			t.Fatalf("at %v: status %d, want %d", s.at, resp.StatusCode, s.want)
		}
		if s.want == 429 {
			if string(body) != `{"error":{"type":"Rate Limit Reached"}}` || resp.Header.Get("Retry-After") != "" || resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("429 body %s, headers %v", body, resp.Header)
			}
		}
	}
	// Unauthorized requests are not the account's.
	get(t, srv, "/v1/employees", "X-Api-Key", "wrong")
	if got := srv.MaxInWindow(); got != 4 {
		t.Errorf("MaxInWindow = %d, want 4", got)
	}
	if got := srv.Count("/v1/employees", 429); got != 3 {
		t.Errorf("429s = %d", got)
	}
}

func TestFaults(t *testing.T) {
	plain := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(150, 2)})
	defer srv.Close()
	do := func(target string) (*http.Response, []byte, error) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+target, nil)
		req.Header.Set("X-Api-Key", srv.APIKey())
		resp, err := plain.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}

	srv.InjectFaults(
		fakeupstream.Fault{Status: 503},
		fakeupstream.Fault{Status: 429, Header: http.Header{"Retry-After": {"5"}}},
		fakeupstream.Fault{Drop: true},
		fakeupstream.Fault{Drop: true, Reset: true},
		fakeupstream.Fault{Status: 500, Body: "<html>oops</html>"},
		fakeupstream.Fault{LinkOrigin: "https://elsewhere.example:8443"},
		fakeupstream.Fault{Delay: 100 * time.Millisecond},
	)
	resp, body, err := do("/v1/employees")
	if err != nil || resp.StatusCode != 503 || string(body) != `{"error":{"type":"Service Unavailable"}}` {
		t.Errorf("503 fault: %v %v %s", err, resp, body)
	}
	resp, body, err = do("/v1/employees")
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "5" || string(body) != `{"error":{"type":"Rate Limit Reached"}}` {
		t.Errorf("429 fault: %v %v %s", err, resp, body)
	}
	if _, _, err := do("/v1/employees"); err == nil {
		t.Error("drop: the request succeeded")
	}
	if _, _, err := do("/v1/employees"); err == nil {
		t.Error("reset: the request succeeded")
	}
	resp, body, err = do("/v1/employees")
	if err != nil || resp.StatusCode != 500 || string(body) != "<html>oops</html>" {
		t.Errorf("500 fault: %v %v %s", err, resp, body)
	}
	resp, _, err = do("/v1/employees?page=1&per_page=100")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("link fault: %v %v", err, resp)
	}
	want := `<https://elsewhere.example:8443/v1/employees?page=2&per_page=100>; rel="last", <https://elsewhere.example:8443/v1/employees?page=2&per_page=100>; rel="next"`
	if got := resp.Header.Get("Link"); got != want {
		t.Errorf("Link %s\nwant %s", got, want)
	}
	start := time.Now()
	resp, _, err = do("/v1/employees")
	if err != nil || resp.StatusCode != 200 || time.Since(start) < 100*time.Millisecond {
		t.Errorf("delay fault: %v %v after %v", err, resp, time.Since(start))
	}
	if resp, _, err := do("/v1/employees"); err != nil || resp.StatusCode != 200 {
		t.Errorf("after the faults: %v %v", err, resp)
	}

	want2 := map[fakeupstream.PathStatus]int{
		{Path: "/v1/employees", Status: 503}: 1, {Path: "/v1/employees", Status: 429}: 1,
		{Path: "/v1/employees", Status: fakeupstream.StatusDropped}: 2, {Path: "/v1/employees", Status: 500}: 1,
		{Path: "/v1/employees", Status: 200}: 3,
	}
	if got := srv.Counts(); !reflect.DeepEqual(got, want2) {
		t.Errorf("Counts = %v, want %v", got, want2)
	}
	log := srv.Requests()
	if len(log) != 8 || srv.NumRequests() != 8 {
		t.Fatalf("%d requests logged", len(log))
	}
	for i, r := range log {
		if r.N != i+1 || r.Method != "GET" || r.Path != "/v1/employees" || !r.Authorized || r.RequestID == "" {
			t.Errorf("request %d: %+v", i, r)
		}
	}
	if log[5].Query.Get("per_page") != "100" {
		t.Errorf("query %v", log[5].Query)
	}
}

func TestFaultHookAndMutations(t *testing.T) {
	emps := fakeupstream.Generate(200, 3)
	var firstID int64
	{
		var e v1.Employee
		if err := json.Unmarshal(emps[0], &e); err != nil {
			t.Fatal(err)
		}
		firstID = e.ID
	}
	srv := sourcetest.NewServer(fakeupstream.Options{
		Employees: emps,
		Fault: func(n int, r *http.Request) fakeupstream.Fault {
			if n == 3 {
				return fakeupstream.Fault{Status: 502}
			}
			return fakeupstream.Fault{}
		},
		BeforeRequest: func(s *fakeupstream.Service, n int, r *http.Request) {
			if n == 2 { // between page 1 and page 2: the first record goes, pages shift
				if !s.RemoveEmployee(firstID) {
					t.Error("RemoveEmployee found nothing")
				}
			}
		},
	})
	defer srv.Close()
	resp, body := get(t, srv, "/v1/employees?page=1&per_page=100")
	if resp.Header.Get("Total") != "200" || !bytes.Equal(items(t, "employees", body)[0], emps[0]) {
		t.Errorf("page 1: Total %s", resp.Header.Get("Total"))
	}
	resp, body = get(t, srv, "/v1/employees?page=2&per_page=100")
	page2 := items(t, "employees", body)
	// Record 101 moved to page 1: the walk never sees it.
	if resp.Header.Get("Total") != "199" || len(page2) != 99 || !bytes.Equal(page2[0], emps[101]) {
		t.Errorf("page 2 after the removal: Total %s, %d records", resp.Header.Get("Total"), len(page2))
	}
	if resp, _ := get(t, srv, "/v1/employees"); resp.StatusCode != 502 {
		t.Errorf("request 3: status %d", resp.StatusCode)
	}

	// The collection can be changed between requests in every way.
	extra := json.RawMessage(`{"id":"5","first_name":"Ünal","email":"UNAL@example.com","company_join_date":""}`)
	srv.InsertEmployee(0, extra)
	srv.AddEmployee(json.RawMessage(`{"id":999999}`))
	got := srv.Employees()
	if len(got) != 201 || !bytes.Equal(got[0], extra) || string(got[200]) != `{"id":999999}` {
		t.Errorf("Employees after insert and add: %d", len(got))
	}
	_, body = get(t, srv, "/v1/employees?per_page=1")
	if !bytes.Equal(items(t, "employees", body)[0], extra) {
		t.Errorf("the inserted record is not served first: %s", body)
	}
	if !srv.RemoveEmployee(5) || srv.RemoveEmployee(5) {
		t.Error("RemoveEmployee with a string id")
	}
	srv.SetEmployees(nil)
	if len(srv.Employees()) != 0 {
		t.Error("SetEmployees(nil) left records")
	}
	srv.SetWorkingPatterns(fakeupstream.WorkingPatterns()[:2])
	if resp, _ := get(t, srv, "/v1/working_patterns"); resp.Header.Get("Total") != "2" {
		t.Errorf("Total %s after SetWorkingPatterns", resp.Header.Get("Total"))
	}
}

func TestCloseCutsDelays(t *testing.T) {
	srv := sourcetest.NewServer(fakeupstream.Options{})
	srv.InjectFaults(fakeupstream.Fault{Delay: time.Hour})
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/employees", nil)
		req.Header.Set("X-Api-Key", srv.APIKey())
		if resp, err := srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for srv.NumRequests() == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	srv.Close()
	<-done
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
}

func post(t *testing.T, srv *sourcetest.Server, contentType, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/employees", strings.NewReader(body))
	req.Header.Set("X-Api-Key", srv.APIKey())
	req.Header.Set("Content-Type", contentType)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return nil, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestCreate(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 30, 0, 0, time.UTC)
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(3, 1), AccountID: 77, Now: func() time.Time { return now }})
	defer srv.Close()
	var maxID int64
	for _, raw := range srv.Employees() {
		var e v1.Employee
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		maxID = max(maxID, e.ID)
	}

	resp, body := post(t, srv, "application/json", `{"employee":{"first_name":"Ana","last_name":"López","email":"ana@example.com","job_title":"Engineer","join_date":"2024/02/29"}}`)
	if resp == nil || resp.StatusCode != 201 {
		t.Fatalf("JSON create: %v %s", resp, body)
	}
	recs := items(t, "employees", body)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	var e v1.Employee
	if err := json.Unmarshal(recs[0], &e); err != nil {
		t.Fatal(err)
	}
	if e.ID != maxID+1 || *e.AccountID != 77 || e.FirstName != "Ana" || e.LastName != "López" || e.CompanyJoinDate != "2024-02-29" ||
		e.Status != "Current employee" || e.WorkingPattern == nil || e.WorkingPattern.ID != 31 || !*e.WorkingPattern.Default ||
		e.HolidayAllowance == nil || e.LineManager != nil || e.Department != nil || *e.HR || *e.ReceivesStatutoryHolidays ||
		e.CreatedAt != "2026-11-22T12:30:00Z" {
		t.Errorf("created %+v", e)
	}
	if all := srv.Employees(); len(all) != 4 || !bytes.Equal(all[3], recs[0]) {
		t.Error("the created record is not stored last, as answered")
	}

	form := url.Values{"employee[first_name]": {"Zoë"}, "employee[last_name]": {"Ng"}, "employee[email]": {"zoe@example.com"}, "employee[join_date]": {"2025/01/06"}}
	resp, body = post(t, srv, "application/x-www-form-urlencoded", form.Encode())
	if resp == nil || resp.StatusCode != 201 || !strings.Contains(string(body), `"company_join_date":"2025-01-06"`) {
		t.Fatalf("form create: %v %s", resp, body)
	}

	tests := []struct {
		name, contentType, body string
		status                  int
		want                    string
	}{
		{"missing fields", "application/json", `{"employee":{"first_name":"A","email":"b@example.com"}}`, 400,
			`{"error":{"type":"Record Invalid","employee[last_name]":["missing"],"employee[join_date]":["missing"]}}`},
		{"email taken, in another case", "application/json", `{"employee":{"first_name":"A","last_name":"B","email":"ANA@Example.com","join_date":"2024-01-01"}}`, 400,
			`{"error":{"type":"Record Invalid","employee[email]":["has already been taken"]}}`},
		{"bad date", "application/x-www-form-urlencoded", "employee[first_name]=A&employee[last_name]=B&employee[email]=c%40example.com&employee[join_date]=2023%2F02%2F29", 400,
			`{"error":{"type":"Record Invalid","employee[join_date]":["is not a valid date (use YYYY/MM/DD or YYYY-MM-DD)"]}}`},
		{"not a form", "text/plain", "hello", 415, ""},
	}
	for _, tt := range tests {
		resp, body := post(t, srv, tt.contentType, tt.body)
		if resp == nil || resp.StatusCode != tt.status || (tt.want != "" && string(body) != tt.want) {
			t.Errorf("%s: %v %s", tt.name, resp, body)
		}
	}
	if n := len(srv.Employees()); n != 5 {
		t.Errorf("%d employees after the refused creates", n)
	}
}

// A server that implements only the documented interface takes the form and refuses JSON; the
// client's creates go through it, sent as the form.
func TestDocumentedOnlyCreates(t *testing.T) {
	srv := sourcetest.NewServer(fakeupstream.Options{DocumentedOnly: true})
	defer srv.Close()
	form := url.Values{"employee[first_name]": {"Zoë"}, "employee[last_name]": {"Ng"}, "employee[email]": {"zoe@example.com"}, "employee[join_date]": {"2025/01/06"}}
	tests := []struct {
		name, contentType, body string
		status                  int
	}{
		{"JSON", "application/json", `{"employee":{"first_name":"A","last_name":"B","email":"a@example.com","join_date":"2024/01/01"}}`, 415},
		{"no type", "", form.Encode(), 415},
		{"urlencoded", "application/x-www-form-urlencoded", form.Encode(), 201},
	}
	for _, tt := range tests {
		resp, body := post(t, srv, tt.contentType, tt.body)
		if resp == nil || resp.StatusCode != tt.status {
			t.Errorf("%s: %v %s", tt.name, resp, body)
		}
	}
	c, err := client.New(srv.URL, srv.APIKey(), client.Options{HTTPClient: srv.Client(), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ne := v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"}
	e, err := c.CreateEmployee(context.Background(), ne)
	if err != nil {
		t.Fatalf("the client's create: %v", err)
	}
	if e.FirstName != "Ana" || e.LastName != "López" || e.JobTitle != "Engineer" || e.CompanyJoinDate != "2024-02-29" {
		t.Errorf("created %+v", e)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.ContentType != "application/x-www-form-urlencoded" || last.Status != 201 {
		t.Errorf("the client sent %q, answered %d", last.ContentType, last.Status)
	}
	if n := len(srv.Employees()); n != 2 {
		t.Errorf("%d employees, want the form's and the client's", n)
	}
}

// DropAfterStore: the record is created, but the client never hears of it.
func TestCreateDropAfterStore(t *testing.T) {
	srv := sourcetest.NewServer(fakeupstream.Options{})
	defer srv.Close()
	srv.InjectFaults(fakeupstream.Fault{DropAfterStore: true})
	c, err := client.New(srv.URL, srv.APIKey(), client.Options{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ne := v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JoinDate: "2024-02-29"}
	if _, err := c.CreateEmployee(context.Background(), ne); err == nil {
		t.Fatal("the create succeeded")
	}
	if got := srv.Count("/v1/employees", fakeupstream.StatusDropped); got != 1 || srv.NumRequests() != 1 {
		t.Errorf("dropped %d of %d requests, want the one", got, srv.NumRequests())
	}
	if all := srv.Employees(); len(all) != 1 || !strings.Contains(string(all[0]), `"email":"ana@example.com"`) {
		t.Errorf("stored %d records", len(all))
	}
	// Sending it again is refused: the record exists.
	_, err = c.CreateEmployee(context.Background(), ne)
	var verr *v1.ValidationError
	if !errors.As(err, &verr) || verr.Problems[0].Field != "employee[email]" {
		t.Errorf("second create: %v", err)
	}
	// A plain Drop stores nothing.
	srv.InjectFaults(fakeupstream.Fault{Drop: true})
	ne.Email = "other@example.com"
	if _, err := c.CreateEmployee(context.Background(), ne); err == nil {
		t.Fatal("the create succeeded")
	}
	if n := len(srv.Employees()); n != 1 {
		t.Errorf("%d records after a dropped create", n)
	}
}

func TestGetOneAndUnknownPaths(t *testing.T) {
	emps := fakeupstream.Generate(3, 1)
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: emps})
	defer srv.Close()
	var e v1.Employee
	if err := json.Unmarshal(emps[1], &e); err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, srv, "/v1/employees/"+strconv.FormatInt(e.ID, 10))
	if resp.StatusCode != 200 || !bytes.Equal(items(t, "employees", body)[0], emps[1]) {
		t.Errorf("one employee: %d %s", resp.StatusCode, body)
	}
	for _, target := range []string{"/v1/employees/1", "/v1/employees/x", "/v1/departments", "/v2/employees", "/"} {
		if resp, body := get(t, srv, target); resp.StatusCode != 404 || string(body) != `{"error":{"type":"Not Found"}}` {
			t.Errorf("%s: %d %s", target, resp.StatusCode, body)
		}
	}
}

func TestGenerate(t *testing.T) {
	const n = 600
	a, b := fakeupstream.Generate(n, 42), fakeupstream.Generate(n, 42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("Generate is not deterministic")
	}
	if reflect.DeepEqual(a, fakeupstream.Generate(n, 43)) {
		t.Fatal("Generate ignores the seed")
	}
	patterns := map[int64]v1.WorkingPattern{}
	for _, raw := range fakeupstream.WorkingPatterns() {
		var wp v1.WorkingPattern
		if err := json.Unmarshal(raw, &wp); err != nil {
			t.Fatalf("working pattern %s: %v", raw, err)
		}
		patterns[wp.ID] = wp
	}
	if len(patterns) < 3 {
		t.Fatalf("%d working patterns", len(patterns))
	}

	ids := map[int64]int{} // id → index
	emails := map[string]bool{}
	emps := make([]v1.Employee, n)
	for i, raw := range a {
		if err := json.Unmarshal(raw, &emps[i]); err != nil {
			t.Fatalf("record %d %s: %v", i, raw, err)
		}
		e := emps[i]
		if _, dup := ids[e.ID]; dup || emails[strings.ToLower(e.Email)] || !v1.ValidEmail(e.Email) {
			t.Fatalf("record %d: duplicate or bad id %d / email %q", i, e.ID, e.Email)
		}
		ids[e.ID], emails[strings.ToLower(e.Email)] = i, true
		if e.CompanyJoinDate == "" || e.WorkingPattern == nil || e.CreatedAt == "" {
			t.Errorf("record %d lacks basics: %+v", i, e)
		}
		if wp, ok := patterns[e.WorkingPattern.ID]; !ok || wp.Name != e.WorkingPattern.Name || wp.TotalHours != e.WorkingPattern.TotalHours {
			t.Errorf("record %d embeds working pattern %+v, not one of WorkingPatterns", i, e.WorkingPattern)
		}
	}
	// The quirks of the real service are all there.
	var all bytes.Buffer
	for _, raw := range a {
		all.Write(raw)
		all.WriteByte('\n')
	}
	text := all.String()
	for _, quirk := range []string{
		`"account_id":"77"`, `"join_date":"`, `"company_join_date":"`, `+01:00"`, `.000Z"`, `"line_manager":""`,
		`"department":""`, `"middle_name":null`, `"middle_name":""`, `"dob":`, `"custom_fields":{`, `"custom_fields":[]`,
		`"total_hours":"40.0"`, `"length_of_service_in_months":"`, `"id":"1`, `"job_title":""`, `"status":"Pending leaver"`,
		`"status":"Ex-employee"`, `\u0026`, `"line_manager":{"id":`, `"holiday_approver":null`, `"name":"`,
	} {
		if !strings.Contains(text, quirk) {
			t.Errorf("no record has %s", quirk)
		}
	}
	if !slices.ContainsFunc(emps, func(e v1.Employee) bool {
		return strings.ContainsAny(e.FirstName+e.LastName, "éøłüöåñçšřő")
	}) {
		t.Error("no accented names")
	}
	var outside, across int
	for i, e := range emps {
		if e.LineManager == nil {
			continue
		}
		j, in := ids[e.LineManager.ID]
		switch {
		case !in:
			outside++
		case j/100 != i/100:
			across++
		}
	}
	if outside == 0 || across == 0 {
		t.Errorf("%d managers outside the collection, %d on other pages; want some of each", outside, across)
	}
}
