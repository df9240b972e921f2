package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ServeHTTP serves one request: request id, access log, panic recovery, authentication, then the
// route of the key's account.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		id = newRequestID()
	}
	w.Header().Set("X-Request-Id", id)
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	var k *key
	var route string // of a request answered outside the mux (the OpenAPI document)
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.ErrorContext(r.Context(), "panic serving request", "request_id", id, "panic", fmt.Sprint(p))
			if !rec.wrote {
				WriteError(rec, http.StatusInternalServerError, "internal error")
			}
		}
		h.observe(r, id, k, route, rec, time.Since(start))
	}()
	if h.cors != nil && h.cors.handle(rec, r) {
		return // a preflight
	}
	if len(r.URL.RawQuery) > MaxQueryBytes {
		WriteError(rec, http.StatusRequestURITooLong, fmt.Sprintf("query string longer than %d bytes", MaxQueryBytes))
		return
	}
	if r.URL.Path == openAPIPath && r.Method != http.MethodOptions {
		route = openAPIPath
		serveOpenAPI(rec, r) // the contract needs no key
		return
	}
	if k = h.authenticate(r.Header.Get("X-Api-Key")); k == nil {
		// A client refused too often in a row is told to wait, as a right key never is.
		if ok, retry := h.authFails.fail(h.clientOf(r), h.opts.Now()); !ok {
			rec.Header().Set("Retry-After", strconv.FormatInt(int64((retry+time.Second-1)/time.Second), 10))
			WriteError(rec, http.StatusTooManyRequests, "too many requests without a valid X-API-KEY from this client: wait as Retry-After says")
			return
		}
		// The challenge says what to send (RFC 9110 §11.6.1); the interface has no scheme of
		// its own for a key in a header, so it is named for what it is.
		rec.Header().Set("WWW-Authenticate", Challenge)
		WriteError(rec, http.StatusUnauthorized, "")
		return
	}
	if ce := r.Header.Values("Content-Encoding"); len(ce) > 0 && r.ContentLength != 0 && !identityOnly(ce) {
		// The body would be read as what it is not (RFC 9110 §15.5.16): refused before anything
		// is done with it, saying which coding is understood.
		rec.Header().Set("Accept-Encoding", "identity")
		WriteError(rec, http.StatusUnsupportedMediaType, "Content-Encoding is not decoded here: send the body without one (identity)")
		return
	}
	if !isCleanPath(r.URL.Path) {
		// http.ServeMux would answer a redirect to the cleaned path, with an HTML body.
		WriteError(rec, http.StatusNotFound, "no such resource: a path has no empty, . or .. segments")
		return
	}
	if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
		// /v1/employees/ is /v1/employees: answered as it, its links without the slash.
		r = r.WithContext(r.Context()) // a copy: the caller's request is not the handler's to change
		u := *r.URL
		u.Path, u.RawPath = strings.TrimSuffix(p, "/"), ""
		r.URL = &u
	}
	// r itself is replaced, so that the access log reads the pattern the mux sets on it.
	r = r.WithContext(context.WithValue(r.Context(), keyContext{}, k))
	k.account.mux.ServeHTTP(rec, r)
}

// observe tells Options.Observe of a request served and writes its access log line: the key and
// account (none when no key matched), the route (RouteUnmatched for one the mux never routed),
// the status, bytes and duration, and of the client's method, path and query only what
// loggedString and loggedQuery keep.
func (h *Handler) observe(r *http.Request, id string, k *key, route string, rec *recorder, d time.Duration) {
	var keyName, accountName string
	if k != nil {
		keyName, accountName = k.name, k.account.name
	}
	if h.opts.Observe != nil {
		if route == "" {
			route = r.Pattern // set by the mux; empty when the request never reached it
		}
		if route == "" || route == "/" { // "/": the mux's answer to a path no route serves
			route = RouteUnmatched
		}
		h.opts.Observe(accountName, route, rec.status, d)
	}
	query, redacted := loggedQuery(r.URL.RawQuery)
	attrs := []slog.Attr{slog.String("request_id", id)}
	attrs = loggedString(attrs, "method", r.Method, maxLoggedMethod)
	attrs = loggedString(attrs, "path", r.URL.Path, maxLoggedPath)
	attrs = append(attrs, slog.String("query", query))
	if redacted > 0 {
		attrs = append(attrs, slog.Int("query_params_redacted", redacted))
	}
	attrs = append(attrs, slog.String("key", keyName), slog.String("account", accountName),
		slog.Int("status", rec.status), slog.Int64("bytes", rec.bytes), slog.Duration("duration", d))
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
}

// identityOnly reports whether Content-Encoding values name no coding but identity.
func identityOnly(values []string) bool {
	for _, line := range values {
		for c := range strings.SplitSeq(line, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return false
			}
		}
	}
	return true
}

// What the access log keeps of a client's method and path: a longer one is cut, and says so
// with its full length, so a client cannot grow the log by what it sends.
const (
	maxLoggedPath   = 256
	maxLoggedMethod = 16
)

// loggedString appends name=value to attrs, value cut to max bytes (at a character's start);
// a cut one adds name_bytes, its full length, and name_cut=true.
func loggedString(attrs []slog.Attr, name, value string, max int) []slog.Attr {
	if len(value) <= max {
		return append(attrs, slog.String(name, value))
	}
	n := max
	for n > 0 && !utf8.RuneStart(value[n]) {
		n--
	}
	return append(attrs, slog.String(name, value[:n]), slog.Bool(name+"_cut", true), slog.Int(name+"_bytes", len(value)))
}

// MaxQueryBytes bounds a request's query string; a longer one is answered 414. The interface
// has two parameters, page and per_page.
const MaxQueryBytes = 2 << 10

// isCleanPath reports whether http.ServeMux would serve p as it is, rather than redirect to a
// cleaned form: rooted, no empty, . or .. segments (a trailing slash is kept).
func isCleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if p[len(p)-1] == '/' && c != "/" {
		c += "/"
	}
	return c == p
}

// linkParams are the query parameters the interface knows; links carry only these.
var linkParams = [...]string{"page", "per_page"}

// maxLoggedParams bounds the known parameters written to the access log.
const maxLoggedParams = 4

// loggedQuery is what the access log says of a query string: the interface's own parameters
// with numeric values, verbatim; any other parameter, or a known one with another value (a key
// or an email a client put there), only counted as redacted.
func loggedQuery(raw string) (shown string, redacted int) {
	var b strings.Builder
	n := 0
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		name, value, _ := strings.Cut(pair, "=")
		if n < maxLoggedParams && slices.Contains(linkParams[:], name) && value != "" && len(value) <= 20 &&
			strings.Trim(value, "0123456789") == "" {
			if n > 0 {
				b.WriteByte('&')
			}
			b.WriteString(pair)
			n++
			continue
		}
		redacted++
	}
	return b.String(), redacted
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recorder notes what was written, for the access log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
