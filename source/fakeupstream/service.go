// Package fakeupstream is a stand-in for the Employee Records service (UPSTREAM.md): generated
// records in the real service's loose style (Generate), served with the real paging, Total,
// Per-Page and Link headers, error bodies and X-API-KEY, its rate limit when asked for (more
// than Options.RateLimit requests in any window answered 429, as the real service does at 60 a
// minute), and the faults one can switch on (slow, refused or dropped answers; creates stored but
// never answered). It is for hrsync demo, for local development (cmd/fakeupstream serves it in a
// process of its own) and for tests (package sourcetest starts it on httptest).
//
// Beyond employees and working patterns it serves the rest of the API (UPSTREAM.md, "The rest
// of the API") when given their records: the reference data (departments, divisions,
// locations, holiday_allowances, other_leave_reasons, statutory_holiday_countries,
// company_training_types) and the events (absences, sicknesses, leave_requests,
// employee_training_courses). GenerateAccount makes all of them, consistent with its
// employees, as many years of events as asked for. Absences and sicknesses filter by
// start_date/end_date matched by overlap with the record's dates, leave requests by their
// start date, as the real service does; a collection the Options do not hold, or mark
// Unavailable, is answered 404 (or 403) as by an account without that module.
//
// A Service is an http.Handler serving the collections listed in collections.go, with records
// held as raw JSON so that its user controls byte for byte what is served, and with hooks to
// change the records between requests. Server serves one on a listener.
package fakeupstream

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// DefaultAPIKey is the key a Service accepts when Options.APIKey is empty.
const DefaultAPIKey = "sandbox-fakeupstream-0000-key"

// StatusDropped is the status recorded for a request whose connection was dropped unanswered.
const StatusDropped = 0

// Options configures a Service. The zero value serves no employees, the working patterns of
// WorkingPatterns, none of the other collections (404, as an account without them), with
// DefaultAPIKey and no rate limit enforced. GenerateAccount(...).Options() serves them all.
type Options struct {
	// APIKey is the one key accepted in X-API-KEY (default DefaultAPIKey).
	APIKey string
	// Employees are served in this order, as given (see Generate).
	Employees []json.RawMessage
	// WorkingPatterns are served in this order; nil serves WorkingPatterns(), an empty non-nil
	// slice none.
	WorkingPatterns []json.RawMessage
	// Collections holds the records of the collections other than employees and working
	// patterns (see collections.go and GenerateAccount), by name, each served in the order
	// given. A collection not in the map is answered 404, as by an account without the module;
	// an empty non-nil slice is served as an empty collection.
	Collections map[string][]json.RawMessage
	// Unavailable answers every request for the named collections (employees and working
	// patterns included) with the status given, 403 or 404 as accounts without a module do,
	// and the real service's error body ({"error":{"type":"Forbidden"}}). See SetUnavailable.
	Unavailable map[string]int
	// AccountID is written into created records (default 1).
	AccountID int64
	// RateLimit, when positive, is enforced as the real service does: more than RateLimit
	// requests within any Window (sliding) are answered 429 {"error":{"type":"Rate Limit
	// Reached"}} without Retry-After. Every authorized request counts, refused ones included.
	RateLimit int
	// Window is the rate-limit window, also the one MaxInWindow measures (default 60 s).
	Window time.Duration
	// Fault, when set, is asked for the fault of every authorized request; n counts all
	// requests from 1. Faults queued with InjectFaults come first.
	Fault func(n int, r *http.Request) Fault
	// BeforeRequest, when set, is called before request n is served (before authentication),
	// e.g. to add or remove records in the middle of a walk. It may call the Service's methods.
	BeforeRequest func(s *Service, n int, r *http.Request)
	// Now is the server's clock, for the rate-limit window and created records (default
	// time.Now).
	Now func() time.Time
	// DocumentedOnly makes the server implement only what the interface documents: a create
	// must be sent as form fields employee[...] (urlencoded or multipart); a JSON body, which
	// the real service also takes, is refused with 415.
	DocumentedOnly bool
}

// Fault is what to do to one request instead of, or on top of, serving it. The zero Fault
// serves the request normally.
type Fault struct {
	// Delay holds the answer back (a slow upstream); the rest of the fault, or the normal
	// answer, follows.
	Delay time.Duration
	// Status, when set, answers with this status instead of serving the request: 429 with the
	// real service's rate-limit body and no Retry-After, 401 with its 401 body, other statuses
	// with {"error":{"type":<status text>}}.
	Status int
	// Header is added to the answer (e.g. Retry-After with a 429).
	Header http.Header
	// Body replaces the body of a Status answer.
	Body string
	// Drop closes the connection without answering. For a create, nothing is stored.
	Drop bool
	// DropAfterStore, for a create, stores the record (when valid) and then closes the
	// connection without answering: the client cannot know the create happened.
	DropAfterStore bool
	// Reset makes a drop close the connection with a TCP reset instead of an orderly close.
	Reset bool
	// LinkOrigin, e.g. "https://elsewhere.example", replaces the scheme and host of the Link
	// URLs of a collection answer.
	LinkOrigin string
}

// Request is one request as the Service saw it.
type Request struct {
	N          int // from 1
	Method     string
	Path       string
	Query      url.Values
	Status     int // StatusDropped when dropped
	Authorized bool
	RequestID  string
	At         time.Time
	// ContentType is the request's Content-Type header, as sent.
	ContentType string
}

// PathStatus keys Counts.
type PathStatus struct {
	Path   string
	Status int
}

type record struct {
	id    int64
	email string // lower case
	dept  int64  // the nested department's id, 0 when none
	raw   json.RawMessage
}

// Service is the stand-in upstream, an http.Handler; serve it with Server, with an http.Server
// of one's own, or on httptest. Close it when done: that cuts short any delayed answer.
type Service struct {
	opts Options
	done chan struct{}
	stop sync.Once

	mu          sync.Mutex
	n           int
	employees   []record
	patterns    []json.RawMessage
	others      map[string]*held // Options.Collections, as served
	unavailable map[string]int
	maxID       int64
	faults      []Fault
	log         []Request
	counts      map[PathStatus]int
	arrivals    []time.Time // authorized arrivals within the window, oldest first
	maxInWindow int
}

// New returns a Service configured by opts.
func New(opts Options) *Service {
	if opts.APIKey == "" {
		opts.APIKey = DefaultAPIKey
	}
	if opts.AccountID == 0 {
		opts.AccountID = 1
	}
	if opts.Window <= 0 {
		opts.Window = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Service{opts: opts, done: make(chan struct{}), counts: make(map[PathStatus]int),
		others: make(map[string]*held), unavailable: make(map[string]int)}
	s.SetEmployees(opts.Employees)
	for name, raws := range opts.Collections {
		s.SetCollection(name, raws)
	}
	for name, status := range opts.Unavailable {
		s.SetUnavailable(name, status)
	}
	if opts.WorkingPatterns == nil {
		s.SetWorkingPatterns(WorkingPatterns())
	} else {
		s.SetWorkingPatterns(opts.WorkingPatterns)
	}
	return s
}

// Close cuts short any delayed answer, now and from now on: a delayed request is dropped
// unanswered. It does not stop whatever serves the Service.
func (s *Service) Close() {
	s.stop.Do(func() { close(s.done) })
}

// APIKey is the key the server accepts.
func (s *Service) APIKey() string { return s.opts.APIKey }

// SetEmployees replaces the employees served (the records are copied).
func (s *Service) SetEmployees(raws []json.RawMessage) {
	recs := make([]record, len(raws))
	for i, raw := range raws {
		recs[i] = newRecord(raw)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.employees = recs
	for _, r := range recs {
		s.maxID = max(s.maxID, r.id)
	}
}

// AddEmployee appends an employee to the collection.
func (s *Service) AddEmployee(raw json.RawMessage) {
	s.InsertEmployee(-1, raw)
}

// InsertEmployee inserts an employee at index i of the collection (a negative or too large i
// appends), shifting the pages after it.
func (s *Service) InsertEmployee(i int, raw json.RawMessage) {
	r := newRecord(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i > len(s.employees) {
		i = len(s.employees)
	}
	s.employees = slices.Insert(s.employees, i, r)
	s.maxID = max(s.maxID, r.id)
}

// RemoveEmployee removes the employees with the id and reports whether there was one.
func (s *Service) RemoveEmployee(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.employees)
	s.employees = slices.DeleteFunc(s.employees, func(r record) bool { return r.id == id })
	return len(s.employees) < n
}

// Employees returns the employees served, in order.
func (s *Service) Employees() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]json.RawMessage, len(s.employees))
	for i, r := range s.employees {
		out[i] = slices.Clone(r.raw)
	}
	return out
}

// SetWorkingPatterns replaces the working patterns served (the records are copied).
func (s *Service) SetWorkingPatterns(raws []json.RawMessage) {
	ps := make([]json.RawMessage, len(raws))
	for i, raw := range raws {
		ps[i] = slices.Clone(raw)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.patterns = ps
}

// WorkingPatterns returns the working patterns served, in order.
func (s *Service) WorkingPatterns() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]json.RawMessage, len(s.patterns))
	for i, raw := range s.patterns {
		out[i] = slices.Clone(raw)
	}
	return out
}

// InjectFaults queues faults for the next authorized requests, one each, in order.
func (s *Service) InjectFaults(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Requests returns every request seen, in arrival order.
func (s *Service) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.log)
	slices.SortFunc(out, func(a, b Request) int { return a.N - b.N })
	return out
}

// NumRequests is the number of requests seen.
func (s *Service) NumRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Counts returns the number of answered requests by path and status (StatusDropped for
// dropped connections).
func (s *Service) Counts() map[PathStatus]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[PathStatus]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// Count is the number of requests to path answered with status.
func (s *Service) Count(path string, status int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[PathStatus{path, status}]
}

// MaxInWindow is the largest number of authorized requests seen within any one Window.
func (s *Service) MaxInWindow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInWindow
}

// ServeHTTP answers one request as the real service would, or with the fault asked for.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	if s.opts.BeforeRequest != nil {
		s.opts.BeforeRequest(s, n, r)
	}
	id := newRequestID()
	w.Header().Set("X-Request-Id", id)
	req := Request{N: n, Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), RequestID: id, At: s.opts.Now(),
		ContentType: r.Header.Get("Content-Type")}
	a := s.serve(w, r, n, &req.Authorized)
	req.Status = a.status
	// Recorded before the client hears anything, so a test that has its answer sees it counted.
	s.mu.Lock()
	s.log = append(s.log, req)
	s.counts[PathStatus{req.Path, req.Status}]++
	s.mu.Unlock()
	if a.status == StatusDropped {
		drop(w, r, a.reset)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// answer is what serve decided: a status and body, or (StatusDropped) no answer at all.
type answer struct {
	status int
	body   []byte
	reset  bool
}

func reply(status int, body []byte) answer { return answer{status: status, body: body} }

func dropped(f Fault) answer { return answer{status: StatusDropped, reset: f.Reset} }

// serve decides the answer to one request.
func (s *Service) serve(w http.ResponseWriter, r *http.Request, n int, authorized *bool) answer {
	// Header names are case-insensitive: Get finds X-API-KEY, X-Api-Key, x-api-key.
	if r.Header.Get("X-Api-Key") != s.opts.APIKey {
		return reply(http.StatusUnauthorized, v1.ErrorBody(http.StatusUnauthorized, ""))
	}
	*authorized = true
	limited := s.arrive()
	f := s.fault(n, r)
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return dropped(f)
		case <-s.done:
			t.Stop()
			return dropped(f)
		}
	}
	for k, vs := range f.Header {
		w.Header()[http.CanonicalHeaderKey(k)] = vs
	}
	switch {
	case f.Drop:
		return dropped(f)
	case f.Status != 0:
		body := []byte(f.Body)
		if f.Body == "" {
			body = v1.ErrorBody(f.Status, "")
		}
		return reply(f.Status, body)
	case limited:
		return reply(http.StatusTooManyRequests, v1.ErrorBody(http.StatusTooManyRequests, ""))
	}

	path := strings.TrimSuffix(r.URL.Path, "/")
	for _, c := range collections {
		base := "/v1/" + c.name
		if path != base && !strings.HasPrefix(path, base+"/") {
			continue
		}
		if status := s.offered(c); status != 0 {
			return reply(status, v1.ErrorBody(status, ""))
		}
		switch {
		case path == base && r.Method == http.MethodGet:
			return s.list(w, r, c, f)
		case path == base && r.Method == http.MethodPost && c.create != nil:
			return c.create(s, w, r, f)
		case strings.HasPrefix(path, base+"/") && r.Method == http.MethodGet && c.byID != nil:
			return c.byID(s, c.name, strings.TrimPrefix(path, base+"/"))
		}
	}
	return reply(http.StatusNotFound, v1.ErrorBody(http.StatusNotFound, ""))
}

// arrive counts an authorized request in the sliding window and reports whether it is over the
// rate limit.
func (s *Service) arrive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	cut := now.Add(-s.opts.Window)
	i := 0
	for i < len(s.arrivals) && !s.arrivals[i].After(cut) {
		i++
	}
	s.arrivals = append(s.arrivals[:0], s.arrivals[i:]...)
	limited := s.opts.RateLimit > 0 && len(s.arrivals) >= s.opts.RateLimit
	s.arrivals = append(s.arrivals, now)
	s.maxInWindow = max(s.maxInWindow, len(s.arrivals))
	return limited
}

func (s *Service) fault(n int, r *http.Request) Fault {
	s.mu.Lock()
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		s.mu.Unlock()
		return f
	}
	s.mu.Unlock()
	if s.opts.Fault != nil {
		return s.opts.Fault(n, r)
	}
	return Fault{}
}

// list answers one page of a collection as the real service does: Total, Per-Page and, unless
// the collection fits on one page, Link (first, prev, last, next; absolute; the request's other
// parameters kept); per_page cut to 100; a page past the end empty.
func (s *Service) list(w http.ResponseWriter, r *http.Request, c collection, f Fault) answer {
	q := r.URL.Query()
	p, err := v1.ParsePage(q)
	if err != nil {
		return reply(http.StatusBadRequest, v1.ErrorBody(http.StatusBadRequest, err.Error()))
	}
	var m match
	if c.filter != nil {
		if m, err = c.filter(q); err != nil {
			return reply(http.StatusBadRequest, v1.ErrorBody(http.StatusBadRequest, err.Error()))
		}
	}
	items, total := c.page(s, c.name, m, p)
	base := &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
	if r.TLS != nil {
		base.Scheme = "https"
	}
	if f.LinkOrigin != "" {
		if o, err := url.Parse(f.LinkOrigin); err == nil {
			base.Scheme, base.Host = o.Scheme, o.Host
		}
	}
	h := w.Header()
	h.Set("Total", strconv.FormatInt(total, 10))
	h.Set("Per-Page", strconv.FormatInt(p.Size, 10))
	if link := v1.FormatLink(base, q, p, total); link != "" {
		h.Set("Link", link)
	}
	return reply(http.StatusOK, envelope(c.name, items))
}

func (s *Service) employee(_, idText string) answer {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err == nil {
		s.mu.Lock()
		i := slices.IndexFunc(s.employees, func(r record) bool { return r.id == id })
		var raw json.RawMessage
		if i >= 0 {
			raw = s.employees[i].raw
		}
		s.mu.Unlock()
		if raw != nil {
			return reply(http.StatusOK, envelope("employees", []json.RawMessage{raw}))
		}
	}
	return reply(http.StatusNotFound, v1.ErrorBody(http.StatusNotFound, ""))
}

// create answers POST /v1/employees: form fields employee[...] or {"employee":{...}} (form
// fields only when DocumentedOnly); 400 Record Invalid for missing or bad fields and for an
// email already taken; 201 with the stored record in the envelope.
func (s *Service) create(w http.ResponseWriter, r *http.Request, f Fault) answer {
	if s.opts.DocumentedOnly && !isForm(r.Header.Get("Content-Type")) {
		if f.DropAfterStore {
			return dropped(f)
		}
		return reply(http.StatusUnsupportedMediaType, v1.ErrorBody(http.StatusUnsupportedMediaType,
			"send the form fields employee[...] as application/x-www-form-urlencoded or multipart/form-data"))
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	ne, err := v1.ReadNewEmployee(r.Header.Get("Content-Type"), r.Body)
	var verr *v1.ValidationError
	switch {
	case f.DropAfterStore && err != nil:
		return dropped(f)
	case errors.As(err, &verr):
		return reply(http.StatusBadRequest, verr.AppendJSON(nil))
	case errors.Is(err, v1.ErrUnsupportedMediaType):
		return reply(http.StatusUnsupportedMediaType, v1.ErrorBody(http.StatusUnsupportedMediaType, err.Error()))
	case err != nil:
		return reply(http.StatusBadRequest, v1.ErrorBody(http.StatusBadRequest, err.Error()))
	}
	s.mu.Lock()
	email := strings.ToLower(ne.Email)
	if slices.ContainsFunc(s.employees, func(r record) bool { return r.email == email }) {
		s.mu.Unlock()
		if f.DropAfterStore {
			return dropped(f)
		}
		taken := &v1.ValidationError{}
		taken.Add("employee[email]", "has already been taken")
		return reply(http.StatusBadRequest, taken.AppendJSON(nil))
	}
	s.maxID++
	raw := createdRecord(s.maxID, s.opts.AccountID, ne, defaultPattern(s.patterns), s.opts.Now())
	s.employees = append(s.employees, newRecord(raw))
	s.mu.Unlock()
	if f.DropAfterStore {
		return dropped(f)
	}
	return reply(http.StatusCreated, envelope("employees", []json.RawMessage{raw}))
}

// isForm reports whether a Content-Type is one of the form encodings.
func isForm(contentType string) bool {
	ct, _, err := mime.ParseMediaType(contentType)
	return err == nil && (ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data")
}

func envelope(key string, items []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"`)
	b.WriteString(key)
	b.WriteString(`":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// drop closes the connection without an answer, after reading what the client sent (so that
// the client sees the connection end, not a reset caused by unread data) unless reset is asked.
func drop(w http.ResponseWriter, r *http.Request, reset bool) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[:8], h[8:12], h[12:16], h[16:20], h[20:])
}

// newRecord copies raw and reads its id and email, as well as it can: a test may serve
// records that are not valid on purpose.
func newRecord(raw json.RawMessage) record {
	r := record{raw: slices.Clone(raw)}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return r
	}
	r.id = jsonInt(m["id"])
	r.dept = nestedID(m["department"])
	var email string
	if json.Unmarshal(m["email"], &email) == nil {
		r.email = strings.ToLower(email)
	}
	return r
}

// jsonInt reads an integer written as a number or a string; 0 when it is neither.
func jsonInt(raw json.RawMessage) int64 {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
