package source

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Client talks to an Employee Records service's /v1 interface.
type Client struct {
	base   *url.URL // ends in /v1/
	apiKey string
	http   *http.Client
}

// ClientOptions configures a Client.
type ClientOptions struct {
	// HTTPClient defaults to one with a 60 s timeout.
	HTTPClient *http.Client
}

// NewClient returns a client for the service at baseURL (with or without a trailing /v1).
func NewClient(baseURL, apiKey string, opts ClientOptions) (*Client, error) {
	if strings.TrimSpace(baseURL) == "" {
		return nil, errors.New("source URL: not set")
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("source URL: want an absolute http(s) address")
	}
	if apiKey == "" {
		return nil, errors.New("source API key: not set")
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1") + "/v1/"
	u.RawQuery, u.Fragment, u.User = "", "", nil
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	return &Client{base: u, apiKey: apiKey, http: hc}, nil
}

// Response is a service response with its paging headers read.
type Response struct {
	*http.Response
	// Total is the Total header (-1 when absent).
	Total int64
	// PerPage is the Per-Page header (0 when absent).
	PerPage int64
	// Links maps relations of the Link header to URLs.
	Links map[string]string
	// RequestID is the X-Request-Id the service answered with.
	RequestID string
}

// ErrorResponse is an answer the client does not expect: a status other than success.
type ErrorResponse struct {
	Status    int
	Body      ParsedError
	RequestID string
}

func (e *ErrorResponse) Error() string {
	msg := e.Body.Type
	if e.Body.Message != "" {
		msg += ": " + e.Body.Message
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("source answered %d (%s)", e.Status, msg)
}

// RateLimitError is a 429: the account's shared budget is spent. RetryAfter is the wait the
// service asked for, or 0 when it named none (the real service never does).
type RateLimitError struct {
	RetryAfter time.Duration
	RequestID  string
}

func (e *RateLimitError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("source rate limit reached (retry after %s)", e.RetryAfter)
	}
	return "source rate limit reached"
}

// CreateEmployee creates one employee (seed 4.2) with a JSON body. It is not retried: the
// endpoint is not idempotent.
func (c *Client) CreateEmployee(ctx context.Context, ne NewEmployee) (Employee, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.JoinPath("employees").String(), bytes.NewReader(ne.AppendJSON(nil)))
	if err != nil {
		return Employee{}, fmt.Errorf("create employee: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	var env struct {
		Employees []Employee `json:"employees"`
	}
	if _, err := c.do(req, &env); err != nil {
		return Employee{}, fmt.Errorf("create employee: %w", err)
	}
	if len(env.Employees) != 1 {
		return Employee{}, fmt.Errorf("create employee: answer holds %d employees, want 1", len(env.Employees))
	}
	return env.Employees[0], nil
}

// do sends a request with the key, checks the status and decodes a success body into v.
func (c *Client) do(req *http.Request, v any) (*Response, error) {
	req.Header.Set("X-API-KEY", c.apiKey)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := newResponse(resp)
	if err := checkResponse(r); err != nil {
		return r, err
	}
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			return r, fmt.Errorf("decode answer: %w", err)
		}
	}
	return r, nil
}

func newResponse(resp *http.Response) *Response {
	r := &Response{Response: resp, Total: -1, RequestID: resp.Header.Get("X-Request-Id")}
	if n, err := strconv.ParseInt(strings.TrimSpace(resp.Header.Get("Total")), 10, 64); err == nil {
		r.Total = n
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(resp.Header.Get("Per-Page")), 10, 64); err == nil {
		r.PerPage = n
	}
	if l := resp.Header.Get("Link"); l != "" {
		r.Links, _ = ParseLink(l)
	}
	return r
}

// checkResponse maps a non-success status to a typed error: *ValidationError for a refused
// record, ErrUnauthorized, *RateLimitError, and *ErrorResponse for the rest.
func checkResponse(r *Response) error {
	if r.StatusCode >= 200 && r.StatusCode < 300 {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	parsed, _ := ParseErrorBody(body)
	switch {
	case r.StatusCode == http.StatusUnauthorized || r.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w (source answered %d; check the source API key)", ErrUnauthorized, r.StatusCode)
	case r.StatusCode == http.StatusTooManyRequests:
		return &RateLimitError{RetryAfter: retryAfter(r.Header.Get("Retry-After"), time.Now()), RequestID: r.RequestID}
	case r.StatusCode == http.StatusBadRequest || r.StatusCode == http.StatusUnprocessableEntity:
		if len(parsed.Fields) > 0 {
			v := &ValidationError{}
			keys := make([]string, 0, len(parsed.Fields))
			for k := range parsed.Fields {
				keys = append(keys, k)
			}
			sortByCreateOrder(keys)
			for _, k := range keys {
				for _, reason := range parsed.Fields[k] {
					v.Add(k, reason)
				}
			}
			return v
		}
	}
	return &ErrorResponse{Status: r.StatusCode, Body: parsed, RequestID: r.RequestID}
}

// sortByCreateOrder orders employee[...] field names as the create form lists them, others after.
func sortByCreateOrder(keys []string) {
	rank := func(k string) int {
		for i, f := range createFields {
			if k == "employee["+f+"]" {
				return i
			}
		}
		return len(createFields)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
}

// maxRetryAfter caps the wait a server may ask for.
const maxRetryAfter = 24 * time.Hour

// retryAfter reads a Retry-After header: seconds or an HTTP date, capped at maxRetryAfter; 0
// when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseUint(h, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if err != nil || s > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}
