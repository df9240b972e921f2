package source

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

const clientTestKey = "sandbox-SECRET-4b1d-key"

func TestNewClient(t *testing.T) {
	tests := []struct {
		base string
		want string
	}{
		{"https://api.breathehr.com/v1", "https://api.breathehr.com/v1/"},
		{"https://api.breathehr.com/v1/", "https://api.breathehr.com/v1/"},
		{"https://api.breathehr.com", "https://api.breathehr.com/v1/"},
		{"https://api.breathehr.com/", "https://api.breathehr.com/v1/"},
		{" https://api.sandbox.breathehr.info/v1 \n", "https://api.sandbox.breathehr.info/v1/"},
		{"http://localhost:8080/hr", "http://localhost:8080/hr/v1/"},
		{"http://localhost:8080/hr/v1/", "http://localhost:8080/hr/v1/"},
		{"https://user:pw@api.example.com/v1?x=1#frag", "https://api.example.com/v1/"},
	}
	for _, tt := range tests {
		c, err := NewClient(tt.base, clientTestKey, ClientOptions{})
		if err != nil {
			t.Errorf("NewClient(%q): %v", tt.base, err)
			continue
		}
		if got := c.base.String(); got != tt.want {
			t.Errorf("NewClient(%q) base = %q, want %q", tt.base, got, tt.want)
		}
		if c.http == nil || c.http.Timeout <= 0 {
			t.Errorf("NewClient(%q) has no default HTTP client with a timeout", tt.base)
		}
	}

	hc := &http.Client{}
	if c, err := NewClient("https://api.breathehr.com", clientTestKey, ClientOptions{HTTPClient: hc}); err != nil || c.http != hc {
		t.Errorf("NewClient did not use the given HTTP client: %v", err)
	}

	for _, base := range []string{
		"", "api.breathehr.com/v1", "/v1", "ftp://api.breathehr.com/v1", "mailto:hr@example.com",
		"https://", "http:///v1", "://api.breathehr.com", "https://api breathehr.com", "https://api.breathehr.com/%zz",
	} {
		if c, err := NewClient(base, clientTestKey, ClientOptions{}); err == nil {
			t.Errorf("NewClient(%q) = %v, want an error", base, c.base)
		}
	}
	if _, err := NewClient("https://api.breathehr.com/v1", "", ClientOptions{}); err == nil {
		t.Error("NewClient with an empty key succeeded")
	}
}

// createdAnswer is a 201 the way the real service answers a create.
const createdAnswer = `{"employees":[{"id":5001,"account_id":"77","first_name":"Ana","last_name":"López","email":"ana@example.com",` +
	`"job_title":"","status":"Current employee","join_date":"2024/02/29","job_start_date":"2024-02-29",` +
	`"length_of_service_in_months":0,"age":null,"full_or_part_time":null,"notice_period":null,` +
	`"working_pattern":{"id":31,"name":"Office hours","total_hours":"37.5","default":true},` +
	`"holiday_allowance":{"id":12,"name":"Standard 25 days"},"line_manager":null,"holiday_approver":null,` +
	`"department":null,"receives_statutory_holidays":false,"hr":false,"created_at":"2026-11-22T13:00:01+01:00",` +
	`"updated_at":"2026-11-22T12:00:01Z","middle_name":null}]}`

// recorded is what a test server saw of one request.
type recorded struct {
	method, path, rawQuery, key, contentType, accept string
	body                                             []byte
}

// answerServer serves every request with the status, headers and body, recording the last
// request.
func answerServer(t *testing.T, status int, header http.Header, body string) (*httptest.Server, func() recorded) {
	t.Helper()
	var mu sync.Mutex
	var last recorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Api-Key"), r.Header.Get("Content-Type"), r.Header.Get("Accept"), b}
		mu.Unlock()
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() recorded {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

func TestCreateEmployee(t *testing.T) {
	ne := NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"}
	var env struct {
		Employees []Employee `json:"employees"`
	}
	if err := json.Unmarshal([]byte(createdAnswer), &env); err != nil {
		t.Fatal(err)
	}
	want := env.Employees[0]
	if want.CompanyJoinDate != "2024-02-29" || want.CreatedAt != "2026-11-22T12:00:01Z" || *want.AccountID != 77 {
		t.Fatalf("the answer decodes unexpectedly: %#v", want)
	}

	srv, last := answerServer(t, http.StatusCreated, http.Header{"Content-Type": {"application/json"}}, createdAnswer)
	tests := []struct{ base, path string }{
		{srv.URL, "/v1/employees"},
		{srv.URL + "/", "/v1/employees"},
		{srv.URL + "/v1", "/v1/employees"},
		{srv.URL + "/v1/", "/v1/employees"},
		{srv.URL + "/hr", "/hr/v1/employees"},
		{srv.URL + "/hr/v1/", "/hr/v1/employees"},
	}
	for _, tt := range tests {
		c, err := NewClient(tt.base, clientTestKey, ClientOptions{HTTPClient: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.CreateEmployee(context.Background(), ne)
		if err != nil {
			t.Errorf("base %q: CreateEmployee: %v", tt.base, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("base %q: got %#v\nwant %#v", tt.base, got, want)
		}
		req := last()
		wantReq := recorded{http.MethodPost, tt.path, "", clientTestKey, "application/json", "application/json", ne.AppendJSON(nil)}
		if !reflect.DeepEqual(req, wantReq) {
			t.Errorf("base %q: request\n %+v\nwant\n %+v", tt.base, req, wantReq)
		}
		if !json.Valid(req.body) {
			t.Errorf("body is not JSON: %s", req.body)
		}
	}
}

func TestCreateEmployeeUnexpectedSuccessBodies(t *testing.T) {
	ne := NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JoinDate: "2024-02-29"}
	tests := []struct {
		name   string
		status int
		body   string
		field  string // a FieldError expected for this field
	}{
		{"no employee", http.StatusCreated, `{"employees":[]}`, ""},
		{"two employees", http.StatusCreated, `{"employees":[{"id":1},{"id":2}]}`, ""},
		{"no envelope", http.StatusCreated, `{"id":1}`, ""},
		{"not JSON", http.StatusOK, `<html>ok</html>`, ""},
		{"empty body", http.StatusCreated, ``, ""},
		{"unreadable record", http.StatusCreated, `{"employees":[{"id":1,"company_join_date":"2023-02-29"}]}`, "company_join_date"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := answerServer(t, tt.status, nil, tt.body)
			c, err := NewClient(srv.URL, clientTestKey, ClientOptions{HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.CreateEmployee(context.Background(), ne)
			if err == nil {
				t.Fatalf("CreateEmployee succeeded with %#v", got)
			}
			if tt.field != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != tt.field {
					t.Errorf("error %v, want a FieldError for %s", err, tt.field)
				}
			}
			if strings.Contains(err.Error(), clientTestKey) {
				t.Errorf("error %q contains the API key", err)
			}
		})
	}
}

func TestCreateEmployeeErrorMapping(t *testing.T) {
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	reqID := http.Header{"X-Request-Id": {"req-123"}}
	withID := func(kv ...string) http.Header {
		h := reqID.Clone()
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		check  func(t *testing.T, err error)
	}{
		{"400 Record Invalid", http.StatusBadRequest, reqID,
			`{"error":{"type":"Record Invalid","employee[zeta]":["bad"],"employee[email]":["is invalid","has already been taken"],"employee[last_name]":["missing"],"base":"oops"}}`,
			wantValidation([]FieldProblem{
				{"employee[last_name]", []string{"missing"}},
				{"employee[email]", []string{"is invalid", "has already been taken"}},
				{"base", []string{"oops"}},
				{"employee[zeta]", []string{"bad"}},
			})},
		{"422 Record Invalid", http.StatusUnprocessableEntity, nil,
			`{"error":{"type":"Record Invalid","employee[join_date]":["is not a date"],"employee[first_name]":["missing"]}}`,
			wantValidation([]FieldProblem{
				{"employee[first_name]", []string{"missing"}},
				{"employee[join_date]", []string{"is not a date"}},
			})},
		{"400 without fields", http.StatusBadRequest, reqID, `{"error":{"type":"Bad Request","message":"unreadable body"}}`,
			wantErrorResponse(ErrorResponse{Status: 400, Body: ParsedError{Type: "Bad Request", Message: "unreadable body"}, RequestID: "req-123"},
				"source answered 400 (Bad Request: unreadable body)")},
		{"401 string body", http.StatusUnauthorized, reqID, `{"error":"401 Unauthorized"}`, wantUnauthorized},
		{"401 empty body", http.StatusUnauthorized, nil, ``, wantUnauthorized},
		{"403", http.StatusForbidden, nil, `<html>Forbidden</html>`, wantUnauthorized},
		{"429 without Retry-After", http.StatusTooManyRequests, reqID, `{"error":{"type":"Rate Limit Reached"}}`,
			wantRateLimit(func(d time.Duration) bool { return d == 0 }, "req-123")},
		{"429 Retry-After seconds", http.StatusTooManyRequests, withID("Retry-After", "30"), `{"error":{"type":"Rate Limit Reached"}}`,
			wantRateLimit(func(d time.Duration) bool { return d == 30*time.Second }, "req-123")},
		{"429 Retry-After HTTP-date", http.StatusTooManyRequests, withID("Retry-After", future), ``,
			wantRateLimit(func(d time.Duration) bool { return d > 0 && d <= time.Hour }, "req-123")},
		{"429 Retry-After in the past", http.StatusTooManyRequests, withID("Retry-After", past), ``,
			wantRateLimit(func(d time.Duration) bool { return d == 0 }, "req-123")},
		{"429 Retry-After unreadable", http.StatusTooManyRequests, withID("Retry-After", "soon"), ``,
			wantRateLimit(func(d time.Duration) bool { return d == 0 }, "req-123")},
		{"404", http.StatusNotFound, nil, `{"error":{"type":"Not Found"}}`,
			wantErrorResponse(ErrorResponse{Status: 404, Body: ParsedError{Type: "Not Found"}}, "source answered 404 (Not Found)")},
		{"500 with a body", http.StatusInternalServerError, reqID, `{"error":{"type":"Internal Server Error","message":"boom"}}`,
			wantErrorResponse(ErrorResponse{Status: 500, Body: ParsedError{Type: "Internal Server Error", Message: "boom"}, RequestID: "req-123"},
				"source answered 500 (Internal Server Error: boom)")},
		{"502 HTML", http.StatusBadGateway, nil, `<html>Bad Gateway</html>`,
			wantErrorResponse(ErrorResponse{Status: 502}, "source answered 502 (Bad Gateway)")},
	}
	ne := NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JoinDate: "2024-02-29"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := answerServer(t, tt.status, tt.header, tt.body)
			c, err := NewClient(srv.URL, clientTestKey, ClientOptions{HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.CreateEmployee(context.Background(), ne)
			if err == nil {
				t.Fatalf("CreateEmployee succeeded with %#v", got)
			}
			if strings.Contains(err.Error(), clientTestKey) {
				t.Errorf("error %q contains the API key", err)
			}
			tt.check(t, err)
		})
	}
}

func wantValidation(want []FieldProblem) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var verr *ValidationError
		if !errors.As(err, &verr) {
			t.Fatalf("error %v (%T), want a *ValidationError", err, err)
		}
		if !reflect.DeepEqual(verr.Problems, want) {
			t.Errorf("problems\n %q\nwant\n %q", verr.Problems, want)
		}
	}
}

func wantErrorResponse(want ErrorResponse, msg string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var er *ErrorResponse
		if !errors.As(err, &er) {
			t.Fatalf("error %v (%T), want an *ErrorResponse", err, err)
		}
		if !reflect.DeepEqual(*er, want) {
			t.Errorf("ErrorResponse %#v, want %#v", *er, want)
		}
		if er.Error() != msg {
			t.Errorf("Error() = %q, want %q", er.Error(), msg)
		}
		var verr *ValidationError
		if errors.As(err, &verr) || errors.Is(err, ErrUnauthorized) {
			t.Errorf("error %v is also another kind", err)
		}
	}
}

func wantUnauthorized(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrUnauthorized) {
		t.Errorf("error %v, want ErrUnauthorized", err)
	}
	var er *ErrorResponse
	if errors.As(err, &er) {
		t.Errorf("error %v is also an ErrorResponse", err)
	}
}

func wantRateLimit(okWait func(time.Duration) bool, requestID string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var rl *RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("error %v (%T), want a *RateLimitError", err, err)
		}
		if !okWait(rl.RetryAfter) {
			t.Errorf("RetryAfter = %v", rl.RetryAfter)
		}
		if rl.RequestID != requestID {
			t.Errorf("RequestID = %q, want %q", rl.RequestID, requestID)
		}
	}
}

func TestClientErrorsNeverShowTheKey(t *testing.T) {
	srv, _ := answerServer(t, http.StatusCreated, nil, createdAnswer)
	c, err := NewClient(srv.URL, clientTestKey, ClientOptions{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // the connection is refused
	_, err = c.CreateEmployee(context.Background(), NewEmployee{FirstName: "Ana", LastName: "L", Email: "a@b.c", JoinDate: "2024-01-01"})
	if err == nil {
		t.Fatal("CreateEmployee against a closed server succeeded")
	}
	if strings.Contains(err.Error(), clientTestKey) {
		t.Errorf("error %q contains the API key", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.CreateEmployee(ctx, NewEmployee{}); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateEmployee with a canceled context = %v, want context.Canceled", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		h    string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"1", time.Second},
		{"120", 2 * time.Minute},
		{" 5 ", 5 * time.Second},
		{"-1", 0},
		{"1.5", 0},
		{"soon", 0},
		{"Sun, 22 Nov 2026 12:01:30 GMT", 90 * time.Second},
		{"Sunday, 22-Nov-26 12:00:10 GMT", 10 * time.Second}, // RFC 850
		{"Sun Nov 22 12:00:05 2026", 5 * time.Second},        // asctime
		{"Sun, 22 Nov 2026 12:00:00 GMT", 0},                 // now
		{"Sun, 22 Nov 2026 11:00:00 GMT", 0},                 // past
	}
	for _, tt := range tests {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestRetryAfterHugeSeconds(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, h := range []string{"9223372037", "18446744073"} {
		if got := retryAfter(h, now); got <= 0 {
			t.Errorf("retryAfter(%q) = %v, want a positive wait", h, got)
		}
	}
}

func TestNewResponse(t *testing.T) {
	link := `<https://api.example.com/v1/employees?page=1&per_page=10>; rel="first", <https://api.example.com/v1/employees?page=4&per_page=10>; rel="prev"`
	resp := &http.Response{StatusCode: 200, Header: http.Header{
		"Total": {" 45 "}, "Per-Page": {"10"}, "Link": {link}, "X-Request-Id": {"r-1"},
	}}
	r := newResponse(resp)
	wantLinks := map[string]string{
		"first": "https://api.example.com/v1/employees?page=1&per_page=10",
		"prev":  "https://api.example.com/v1/employees?page=4&per_page=10",
	}
	if r.Response != resp || r.Total != 45 || r.PerPage != 10 || r.RequestID != "r-1" || !reflect.DeepEqual(r.Links, wantLinks) {
		t.Errorf("newResponse = %+v", r)
	}

	r = newResponse(&http.Response{StatusCode: 200, Header: http.Header{"Total": {"many"}, "Link": {"garbage"}}})
	if r.Total != -1 || r.PerPage != 0 || r.Links != nil || r.RequestID != "" {
		t.Errorf("newResponse without usable headers = %+v", r)
	}
}

func TestClientErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&RateLimitError{}, "source rate limit reached"},
		{&RateLimitError{RetryAfter: 90 * time.Second}, "source rate limit reached (retry after 1m30s)"},
		{&ErrorResponse{Status: 503}, "source answered 503 (Service Unavailable)"},
		{&ErrorResponse{Status: 500, Body: ParsedError{Type: "Oops"}}, "source answered 500 (Oops)"},
		{&ErrorResponse{Status: 400, Body: ParsedError{Type: "Bad Request", Message: "x"}}, "source answered 400 (Bad Request: x)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
