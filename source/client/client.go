// Package source is the client of an Employee Records account: it lists pages and creates
// employees over /v1 (the wire format is package v1's), paced to the account's budget, retried
// where that is safe, mapping answers to typed errors and counting per-run stats.
package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hrsync/hrsync/source/budget"
	"github.com/hrsync/hrsync/source/v1"
)

// Client talks to an Employee Records service's /v1 interface. It is safe for concurrent use,
// and meant to be shared: every request it makes, from any goroutine, draws on one request
// budget (ClientOptions.RateLimit), as the upstream's limit is per account.
type Client struct {
	base   *url.URL // ends in /v1/
	apiKey string
	http   *http.Client
	opts   Options // defaults filled in
	clock  clock
	pacer  *pacer
	log    *slog.Logger
}

// Options configures a Client. The zero value is an unpaced client with the default
// retries.
type Options struct {
	// HTTPClient defaults to one with a 60 s timeout. The client uses a copy of it that refuses
	// redirects to another origin (RedirectError).
	HTTPClient *http.Client
	// RateLimit is the request budget in requests per minute; 0 leaves requests unpaced.
	// Requests are spaced evenly (a token bucket of burst 1), 2% wider than the budget allows,
	// so that network jitter cannot push one request too many into the upstream's window.
	RateLimit int
	// Budget, when set, gives every request its slot instead of RateLimit's in-process pacing,
	// e.g. a budget shared with the account's other processes (sink.Budget). RateLimit is then
	// only what the caller built the Budget with.
	Budget budget.Budget
	// CreateKind is the Kind a create is drawn from the Budget as (default KindCreate; serve's
	// forwarding client says KindForward). Lists are KindWalk.
	CreateKind budget.Kind
	// RateLimitWindow is how long a 429 without Retry-After is waited out (default 60 s, the
	// real service's window).
	RateLimitWindow time.Duration
	// MaxAttempts bounds the attempts of one call, the first included (default 6; 1 disables
	// retries).
	MaxAttempts int
	// MaxElapsed bounds the time from a call's first attempt to its last retry, waits included
	// (default 5 minutes).
	MaxElapsed time.Duration
	// RetryInitial and RetryMax shape the exponential backoff between retries after a 5xx or a
	// transport failure: the first wait is about RetryInitial (default 1 s), each next one half
	// as long again, none longer than about RetryMax (default 30 s); each is jittered by ±50%.
	RetryInitial time.Duration
	RetryMax     time.Duration
	// Logger receives a warning for every retry, with the upstream's X-Request-Id (default:
	// discard). Neither the key nor record data are logged.
	Logger *slog.Logger
	// Observe, when set, is called once per HTTP attempt, possibly from several goroutines.
	Observe func(RequestEvent)

	// clock replaces the time source of pacing and retries, in tests.
	clock clock
}

// New returns a client for the service at baseURL (with or without a trailing /v1).
func New(baseURL, apiKey string, opts Options) (*Client, error) {
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
	switch {
	case opts.RateLimit < 0:
		return nil, errors.New("source rate limit: must not be negative")
	case opts.MaxAttempts < 0:
		return nil, errors.New("source max attempts: must not be negative")
	case opts.RateLimitWindow < 0, opts.MaxElapsed < 0, opts.RetryInitial < 0, opts.RetryMax < 0:
		return nil, errors.New("source retry timing: durations must not be negative")
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1") + "/v1/"
	u.RawQuery, u.Fragment, u.User = "", "", nil
	hc := opts.HTTPClient
	if hc == nil {
		hc = NewHTTPClient()
	}
	// The key goes to the source's origin only: a redirect elsewhere fails (RedirectError).
	hc = guardRedirects(hc)
	opts.CreateKind = cmp.Or(opts.CreateKind, budget.KindCreate)
	opts.RateLimitWindow = cmp.Or(opts.RateLimitWindow, DefaultRateLimitWindow)
	opts.MaxAttempts = cmp.Or(opts.MaxAttempts, DefaultMaxAttempts)
	opts.MaxElapsed = cmp.Or(opts.MaxElapsed, DefaultMaxElapsed)
	opts.RetryInitial = cmp.Or(opts.RetryInitial, DefaultRetryInitial)
	opts.RetryMax = max(cmp.Or(opts.RetryMax, DefaultRetryMax), opts.RetryInitial)
	if opts.clock == nil {
		opts.clock = budget.SystemClock{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	warnCleartext(log, u)
	return &Client{
		base:   u,
		apiKey: apiKey,
		http:   hc,
		opts:   opts,
		clock:  opts.clock,
		pacer:  newPacer(opts.RateLimit, opts.Budget, opts.clock),
		log:    log,
	}, nil
}

// NewHTTPClient is the HTTP client New uses when Options.HTTPClient is nil: a 60 s timeout, and
// a transport of its own that keeps up to 16 idle connections a host. A process of many
// accounts gives one to all their clients (Options.HTTPClient): the accounts of one source
// share its host, so they share its idle connections (at most 16, each closed after 90 s
// unused) rather than each keep its own, with their buffers and goroutines, after its walk.
func NewHTTPClient() *http.Client {
	// Keep enough idle connections for a concurrent walk: the default transport keeps 2 a host,
	// below sync.concurrency, so pages would keep reconnecting (a TLS handshake each).
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return &http.Client{Timeout: 60 * time.Second, Transport: t}
}

// PerPage is the page size the client asks for: the most the service gives.
const PerPage = v1.MaxPerPage

// ListEmployees reads one page (from 1) of employees, PerPage records a page (seed 4.1). The
// Response carries Total, Per-Page and the Link relations; a page past the end is empty.
func (c *Client) ListEmployees(ctx context.Context, page int64) ([]v1.Employee, *Response, error) {
	return listPage(ctx, c, "employees", page, nil, unmarshal[v1.Employee])
}

// ListWorkingPatterns reads one page (from 1) of working patterns (seed 4.3).
func (c *Client) ListWorkingPatterns(ctx context.Context, page int64) ([]v1.WorkingPattern, *Response, error) {
	return listPage(ctx, c, "working_patterns", page, nil, unmarshal[v1.WorkingPattern])
}

// ListRecords reads one page (from 1) of a collection the wire declares (v1.Collections), each
// record read leniently by its declaration. filter, when not nil, is sent with the page (the
// source's filters, such as v1.WindowQuery); the pages are then the filtered collection's.
func (c *Client) ListRecords(ctx context.Context, coll *v1.Collection, page int64, filter url.Values) ([]v1.Record, *Response, error) {
	return listPage(ctx, c, coll.Name, page, filter, coll.Decode)
}

// unmarshal decodes one record of a hand-written wire type. The envelope checked the whole body
// once; each record decodes itself from its slice of it (json.Unmarshal would check the
// record's bytes again first).
func unmarshal[T any](raw []byte) (T, error) {
	var t T
	err := any(&t).(json.Unmarshaler).UnmarshalJSON(raw)
	return t, err
}

// listPage reads page of the collection key: GET {base}/v1/{key}?page=N&per_page=100 (and the
// filter's parameters), its envelope {"key":[...]} and each record leniently (decode).
func listPage[T any](ctx context.Context, c *Client, key string, page int64, filter url.Values, decode func([]byte) (T, error)) ([]T, *Response, error) {
	op := "list " + strings.ReplaceAll(key, "_", " ") + " page " + strconv.FormatInt(page, 10)
	if page < 1 || page > v1.MaxPage {
		return nil, nil, fmt.Errorf("%s: page must be from 1 to %d", op, int64(v1.MaxPage))
	}
	u := c.base.JoinPath(key)
	q := url.Values{"page": {strconv.FormatInt(page, 10)}, "per_page": {strconv.Itoa(PerPage)}}
	for k, vs := range filter {
		if k != "page" && k != "per_page" {
			q[k] = vs
		}
	}
	u.RawQuery = q.Encode()
	resp, body, err := c.do(ctx, call{method: http.MethodGet, route: "/v1/" + key, url: u.String(), kind: budget.KindWalk})
	if err != nil {
		if page == 1 && resp != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound) {
			err = &NotOfferedError{Collection: key, Status: resp.StatusCode, Err: err}
		}
		return nil, resp, fmt.Errorf("%s: %w", op, err)
	}
	raws, err := v1.Envelope(key, body)
	if err != nil {
		return nil, resp, fmt.Errorf("%s: %w", op, err)
	}
	items := make([]T, len(raws))
	for i, raw := range raws {
		if items[i], err = decode(raw); err != nil {
			return nil, resp, fmt.Errorf("%s: record %d: %w", op, i+1, err)
		}
	}
	return items, resp, nil
}

// SameOrigin reports whether target, an absolute URL such as a Link relation, has the scheme,
// host and port of the client's base address, so that following it sends the API key nowhere
// else. Relative, unreadable and user-info-carrying targets are not.
func (c *Client) SameOrigin(target string) bool {
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.User != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Scheme, c.base.Scheme) &&
		strings.EqualFold(u.Hostname(), c.base.Hostname()) &&
		effectivePort(u) == effectivePort(c.base)
}

// effectivePort is the URL's port, or its scheme's default.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
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
//
// Its text names the status and the body's length, never the body: a source (or a gateway
// before it) may echo the request into its error body, the API key and a new hire's name and
// email with it, and the text of an error is logged. Body is the body as parsed, for a caller
// that keeps it somewhere private.
type ErrorResponse struct {
	Status    int
	Body      v1.ParsedError
	BodyBytes int // the body's length as read (at most 64 KiB)
	RequestID string
}

func (e *ErrorResponse) Error() string {
	msg := http.StatusText(e.Status)
	if msg == "" {
		msg = "status " + strconv.Itoa(e.Status)
	}
	if e.BodyBytes > 0 {
		msg += fmt.Sprintf(", a body of %d bytes, not shown", e.BodyBytes)
	}
	return fmt.Sprintf("source answered %d (%s)", e.Status, msg)
}

// RefusedError is a 400 or 422 whose body names fields and their problems (Record Invalid):
// errors.As finds the *v1.ValidationError, whose reasons are the source's own words and may
// quote the values sent (a name, an email), for a private report (onboarding's). Its text, which
// is logged, counts the fields only.
type RefusedError struct {
	Status     int
	Validation *v1.ValidationError
	BodyBytes  int
	RequestID  string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("source answered %d (%s: the record is invalid in %d field(s); a body of %d bytes, not shown)",
		e.Status, http.StatusText(e.Status), len(e.Validation.Problems), e.BodyBytes)
}

func (e *RefusedError) Unwrap() error { return e.Validation }

// NotOfferedError is a collection's first page answered 403 or 404: how an account answers a
// collection whose module it does not have, where an empty collection answers 200 with an empty
// list. The same answer to a later page is not this error (the collection was there a page
// ago). Err is the answer's own error, so a 403 still matches v1.ErrUnauthorized and a 404 is an
// *ErrorResponse: a caller that does not care which collections an account offers sees what it
// saw before.
type NotOfferedError struct {
	Collection string // the collection's key, e.g. "working_patterns"
	Status     int    // 403 or 404
	Err        error
}

func (e *NotOfferedError) Error() string {
	return fmt.Sprintf("the account does not offer %s (source answered %d)", e.Collection, e.Status)
}

func (e *NotOfferedError) Unwrap() error { return e.Err }

// CreateEmployee creates one employee (seed 4.2) with the documented body: the form fields
// employee[...], urlencoded (NewEmployee.AppendForm). The endpoint is not
// idempotent, so a create is retried only when the service certainly did not act on it: after a
// 429, or when the connection was refused. After any other failure (a 5xx, a timeout, a dropped
// connection) the record may or may not exist; the caller resolves that.
func (c *Client) CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error) {
	cl := call{
		method:      http.MethodPost,
		route:       "/v1/employees",
		url:         c.base.JoinPath("employees").String(),
		body:        ne.AppendForm(nil),
		contentType: v1.FormContentType,
		kind:        c.opts.CreateKind,
	}
	_, body, err := c.do(ctx, cl)
	if err != nil {
		return v1.Employee{}, fmt.Errorf("create employee: %w", err)
	}
	raws, err := v1.Envelope("employees", body)
	if err != nil {
		return v1.Employee{}, fmt.Errorf("create employee: %w", err)
	}
	if len(raws) != 1 {
		return v1.Employee{}, fmt.Errorf("create employee: answer holds %d employees, want 1", len(raws))
	}
	var e v1.Employee
	if err := json.Unmarshal(raws[0], &e); err != nil {
		return v1.Employee{}, fmt.Errorf("create employee: %w", err)
	}
	return e, nil
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
		r.Links, _ = v1.ParseLink(l)
	}
	return r
}

// checkResponse maps a non-success status to a typed error: *RefusedError (a *ValidationError)
// for a refused record, ErrUnauthorized, *RateLimitError, and *ErrorResponse for the rest.
func checkResponse(r *Response) error {
	if r.StatusCode >= 200 && r.StatusCode < 300 {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	parsed, _ := v1.ParseErrorBody(body)
	switch {
	case r.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w: the source refused the API key", v1.ErrUnauthorized)
	case r.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w (source answered 403; check the source API key)", v1.ErrUnauthorized)
	case r.StatusCode == http.StatusTooManyRequests:
		return &v1.RateLimitError{RetryAfter: retryAfter(r.Header.Get("Retry-After"), time.Now()), RequestID: r.RequestID}
	case r.StatusCode == http.StatusBadRequest || r.StatusCode == http.StatusUnprocessableEntity:
		if len(parsed.Fields) > 0 {
			v := &v1.ValidationError{}
			keys := make([]string, 0, len(parsed.Fields))
			for k := range parsed.Fields {
				keys = append(keys, k)
			}
			v1.SortByCreateOrder(keys)
			for _, k := range keys {
				for _, reason := range parsed.Fields[k] {
					v.Add(k, reason)
				}
			}
			return &RefusedError{Status: r.StatusCode, Validation: v, BodyBytes: len(body), RequestID: r.RequestID}
		}
	}
	return &ErrorResponse{Status: r.StatusCode, Body: parsed, BodyBytes: len(body), RequestID: r.RequestID}
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
