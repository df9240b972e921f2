// Package serve is serve mode's HTTP handler: it answers the /v1 interface over a Store (the
// warehouse) per account, each API key reading exactly one account's, with API-key auth, paging
// headers, ETags, request ids, JSON errors and creates (kept locally, or forwarded upstream
// through a Creator). The wire format is package v1's; it imports neither the warehouse nor the
// HTTP client.
package serve

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hrsync/hrsync/source/v1"
)

// Store is what the handler serves the interface over.
type Store interface {
	// Version identifies the store's current contents; it changes whenever they do.
	Version(ctx context.Context) (int64, error)
	ListEmployees(ctx context.Context, p v1.Page) (v1.List[v1.Employee], error)
	// Employee returns one listed employee, or an error wrapping ErrNotFound.
	Employee(ctx context.Context, id int64) (v1.Employee, int64, error)
	ListWorkingPatterns(ctx context.Context, p v1.Page) (v1.List[v1.WorkingPattern], error)
	// EmailTaken reports whether a listed employee has the email (case-insensitive).
	EmailTaken(ctx context.Context, email string) (bool, error)
	// CreateEmployee creates an employee locally, as the service would, or fails with
	// ErrEmailTaken.
	CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error)
	// PutEmployee stores an employee as the source answered it.
	PutEmployee(ctx context.Context, e v1.Employee) error
	// ListRecords reads a page of a collection the wire declares (v1.Collections).
	ListRecords(ctx context.Context, collection string, p v1.Page) (v1.List[v1.Record], error)
	// Record reads one listed record of such a collection, or an error wrapping ErrNotFound.
	Record(ctx context.Context, collection string, id int64) (v1.Record, int64, error)
	// Unavailable reports whether the latest sync of such a collection found that the account
	// does not offer it.
	Unavailable(ctx context.Context, collection string) (bool, error)
	// Totals reads the store's version and each collection's Total, by name.
	Totals(ctx context.Context) (version int64, totals map[string]int64, err error)

	// ReserveIdempotency claims an Idempotency-Key for a create: reserved, or the record found.
	ReserveIdempotency(ctx context.Context, c v1.IdempotencyClaim) (v1.IdempotencyRecord, bool, error)
	// CreateEmployeeOnce is CreateEmployee for a reserved key, noting the employee in its record
	// in the same transaction.
	CreateEmployeeOnce(ctx context.Context, ne v1.NewEmployee, client, key string) (v1.Employee, error)
	// CompleteIdempotency keeps a reserved create's answer; ReleaseIdempotency forgets the
	// reservation of one whose answer is not kept.
	CompleteIdempotency(ctx context.Context, client, key string, rec v1.IdempotencyRecord) error
	ReleaseIdempotency(ctx context.Context, client, key string) error
}

// Creator creates an employee upstream; *source.Client (the client of the account) is one.
type Creator interface {
	CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error)
}

// Writes says what the handler does with POST /v1/employees.
type Writes string

// The write modes.
const (
	WritesLocal   Writes = "local"   // create in the store
	WritesForward Writes = "forward" // create upstream, store and return its answer
	WritesOff     Writes = "off"     // refuse
)

// ParseWrites reads a write mode; "" (not set) stays "", which New resolves per account (see
// Account.Writes).
func ParseWrites(s string) (Writes, error) {
	switch w := Writes(strings.ToLower(strings.TrimSpace(s))); w {
	case WritesLocal, WritesForward, WritesOff, "":
		return w, nil
	}
	return "", fmt.Errorf("writes mode %q: want local, forward or off", s)
}

// forwardTimeout bounds a forwarded create, pacing included, within the server's write timeout.
const forwardTimeout = 30 * time.Second

// Key is a key clients present in X-API-KEY, the account whose data it reads and what it may
// read there.
type Key struct {
	// Name names the key in logs and metrics (never the key itself), and is what its
	// Idempotency-Keys are kept under, so it must stay the same while they are kept.
	Name    string
	Key     string // the key; kept only as its SHA-256, compared in constant time
	Account string // the Account (Options.Accounts) it reads; "" when there is one account
	// SHA256 is the key's SHA-256 in hex, given instead of Key (exactly one of them), so the
	// configuration need not hold the key itself.
	SHA256 string
	Scope  Scope // what it may read and do; the zero Scope is full access
}

// Account is one account's warehouse the handler serves.
type Account struct {
	// Name names the account in keys, logs, metrics and ETags; it may be "" only when it is the
	// one account served.
	Name     string
	Store    Store
	Upstream Creator // receives its creates in WritesForward mode
	// Writes is what the account's creates do; "" takes Options.Writes, and when that is ""
	// too, WritesForward for an account with an Upstream (a replica of a source: a create
	// must reach it) and WritesLocal for one without (a standalone warehouse).
	Writes Writes
}

// Options configures a Handler.
type Options struct {
	// Accounts are the accounts New serves, each over its own store; NewHandler serves one, named
	// "", over its store argument.
	Accounts []Account
	// Keys are the keys clients may present in X-API-KEY, each reading one account's data.
	Keys []Key
	// APIKeys are further keys of the one account served (NewHandler, or New with one account):
	// they are named "key 1", "key 2"… in logs and metrics, and their Idempotency-Keys are kept
	// under an identity derived from their SHA-256, whatever their order. At least one key (here
	// or in Keys) is required; every key has at least MinKeyBits bits (CheckKey).
	APIKeys []string
	// PublicURL is the absolute base address links are built on (scheme, host and an optional
	// path prefix before /v1); nil builds them as linkBase says: from what a trusted proxy
	// forwarded, an allowed Host, or the address the request arrived at.
	PublicURL *url.URL
	// TrustedProxies are the peers whose Forwarded / X-Forwarded-Proto / X-Forwarded-Host
	// headers links are built on (when PublicURL is nil); anyone else's are ignored.
	TrustedProxies []netip.Prefix
	// AllowedHosts are the Host headers (host or host:port) links may be built on; another Host
	// is never echoed into a link. When set, a trusted proxy's forwarded host must be one too.
	AllowedHosts []string
	// CORSOrigins are the origins (scheme://host[:port], or "*") whose scripts may read the
	// answers; empty turns CORS off.
	CORSOrigins []string
	// Writes is what every account's creates do, unless its Account.Writes says otherwise;
	// "" resolves per account (see Account.Writes).
	Writes Writes
	// Upstream is the upstream of NewHandler's one account (New takes each Account's).
	Upstream Creator
	// IdempotencyTTL is how long a create's answer is kept for retries with its Idempotency-Key
	// (default 24 hours).
	IdempotencyTTL time.Duration
	// MaxBodyBytes bounds a create's body (default 64 KiB).
	MaxBodyBytes int64
	// ETagSalt is mixed into every ETag, so a new build's output never matches an old tag.
	ETagSalt string
	// ETagSecret keys the MAC ETags are made with (HMAC-SHA256): at least MinETagSecretBytes,
	// the same on every replica behind one address so that they agree on tags. Empty: a random
	// secret, one per process. Never logged.
	ETagSecret []byte
	// CacheBytes bounds the memory of encoded answers kept for reuse until the store's version
	// moves (all accounts together); 0 keeps none.
	CacheBytes int64
	Logger     *slog.Logger
	// Observe, when set, is told of every request served: the account whose data it read (""
	// when no key matched), its route pattern, status and duration.
	Observe func(account, route string, status int, d time.Duration)
	// Now is the clock failed authentications are paced by (AuthFailureBurst); nil is
	// time.Now.
	Now func() time.Time
}

// Handler serves the /v1 interface over one Store per account, each API key reading exactly one
// account's.
type Handler struct {
	opts     Options
	keys     []key
	accounts []*account
	log      *slog.Logger
	bufs     sync.Pool
	cache    *answerCache // nil when Options.CacheBytes is 0
	// tag is the ETag of an answer's identity representation: tagger.tag (tests may set another).
	tag func(*answerKey) string
	// collections are the names of the collections served, in the index's order.
	collections []string
	// notFound answers a path no route serves.
	notFound string
	cors     *cors // nil: CORS off
	// authFails paces each client's failed authentications.
	authFails *authLimiter
}

// key is one configured key: its SHA-256, the account it reads and its scope (nil: full
// access).
type key struct {
	name string
	// id is the identity its Idempotency-Keys are kept under: its configured name, or for a key
	// of Options.APIKeys (named by position, which a reordering changes) one derived from its
	// SHA-256.
	id      string
	sum     [sha256.Size]byte
	account *account
	scope   *scope
}

// account is one account served: its store, its upstream and its routes. Its methods are the
// route handlers, so a request reads no other account's data.
type account struct {
	h        *Handler
	name     string
	store    Store
	upstream Creator
	writes   Writes // resolved: never ""
	mux      *http.ServeMux
}

// NewHandler builds the /v1 handler over one account's store, named "": Options.APIKeys and
// Options.Keys (their Account "") read it, Options.Upstream receives its forwarded creates.
func NewHandler(store Store, opts Options) (*Handler, error) {
	if len(opts.Accounts) > 0 {
		return nil, errors.New("new handler: Options.Accounts is for New; NewHandler serves its store argument")
	}
	opts.Accounts = []Account{{Store: store, Upstream: opts.Upstream}}
	opts.Upstream = nil
	return New(opts)
}

// New builds the /v1 handler over Options.Accounts, each key of Options.Keys (and, with one
// account, Options.APIKeys) reading its account's data only: its store, its upstream, its
// availability and index, and ETags of its own.
func New(opts Options) (*Handler, error) {
	if opts.Upstream != nil {
		return nil, errors.New("new handler: Options.Upstream is for NewHandler; set each Account's Upstream")
	}
	if len(opts.Accounts) == 0 {
		return nil, errors.New("new handler: no accounts configured")
	}
	if len(opts.APIKeys) > 0 && len(opts.Accounts) > 1 {
		return nil, errors.New("new handler: APIKeys name no account; with several accounts use Keys")
	}
	if _, err := ParseWrites(string(opts.Writes)); err != nil {
		return nil, fmt.Errorf("new handler: %w", err)
	}
	if opts.IdempotencyTTL <= 0 {
		opts.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 64 << 10
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PublicURL != nil {
		u := *opts.PublicURL
		u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
		u.RawQuery, u.Fragment = "", ""
		opts.PublicURL = &u
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &Handler{opts: opts, log: opts.Logger, authFails: newAuthLimiter(maxAuthClients)}
	secret := opts.ETagSecret
	switch {
	case len(secret) == 0:
		secret = processETagSecret()
	case len(secret) < MinETagSecretBytes:
		return nil, fmt.Errorf("new handler: etag secret of %d bytes: want at least %d", len(secret), MinETagSecretBytes)
	}
	h.tag = newTagger(secret, opts.ETagSalt).tag
	h.opts.ETagSecret = nil // kept in the tagger only
	var err error
	if h.cors, err = newCORS(opts.CORSOrigins); err != nil {
		return nil, fmt.Errorf("new handler: cors: %w", err)
	}
	if opts.CacheBytes > 0 {
		h.cache = newAnswerCache(opts.CacheBytes)
	}
	for _, a := range opts.AllowedHosts {
		if !validHost(a) {
			return nil, fmt.Errorf("new handler: allowed host %q: want a host name or address, with an optional :port", a)
		}
	}
	h.bufs.New = func() any { b := make([]byte, 0, 64<<10); return &b }
	h.collections = Collections()
	paths := make([]string, len(h.collections))
	for i, name := range h.collections {
		paths[i] = "/v1/" + name
	}
	h.notFound = "no such resource: see " + strings.Join(paths, ", ") + " (and /v1, the list of them)"

	byName := make(map[string]*account, len(opts.Accounts))
	for i, ac := range opts.Accounts {
		w, err := ParseWrites(string(ac.Writes))
		if err != nil {
			return nil, fmt.Errorf("new handler: account %q: %w", ac.Name, err)
		}
		switch {
		case w != "":
		case opts.Writes != "":
			w = opts.Writes
		case ac.Upstream != nil:
			w = WritesForward
		default:
			w = WritesLocal
		}
		switch {
		case ac.Name == "" && len(opts.Accounts) > 1:
			return nil, fmt.Errorf("new handler: account %d has no name (several accounts need one each)", i+1)
		case byName[ac.Name] != nil:
			return nil, fmt.Errorf("new handler: account %q declared twice", ac.Name)
		case ac.Store == nil:
			return nil, fmt.Errorf("new handler: account %q has no store", ac.Name)
		case w == WritesForward && ac.Upstream == nil:
			if len(opts.Accounts) == 1 {
				return nil, errors.New("new handler: forward writes need an upstream")
			}
			return nil, fmt.Errorf("new handler: account %q: forward writes need an upstream", ac.Name)
		}
		a := &account{h: h, name: ac.Name, store: ac.Store, upstream: ac.Upstream, writes: w}
		a.mux = a.routes()
		byName[ac.Name] = a
		h.accounts = append(h.accounts, a)
	}

	keys := slices.Clone(opts.Keys)
	named := len(keys) // keys[named:] are APIKeys, named by position
	for i, k := range opts.APIKeys {
		keys = append(keys, Key{Name: fmt.Sprintf("key %d", i+1), Key: k})
	}
	if len(keys) == 0 {
		return nil, errors.New("new handler: no API keys configured")
	}
	names := make(map[string]bool, len(keys))
	for i, k := range keys {
		if k.Name == "" {
			return nil, fmt.Errorf("new handler: key %d has no name", i+1)
		}
		if names[k.Name] {
			return nil, fmt.Errorf("new handler: key %q named twice", k.Name)
		}
		names[k.Name] = true
		if err := CheckKey(k); err != nil {
			return nil, fmt.Errorf("new handler: key %q: %w", k.Name, err)
		}
		var a *account
		switch {
		case k.Account == "" && len(h.accounts) == 1:
			a = h.accounts[0]
		case k.Account == "":
			return nil, fmt.Errorf("new handler: key %q names no account (several are served)", k.Name)
		default:
			a = byName[k.Account]
		}
		if a == nil {
			return nil, fmt.Errorf("new handler: key %q reads account %q, which is not declared", k.Name, k.Account)
		}
		var sum [sha256.Size]byte
		if k.SHA256 != "" {
			_, _ = hex.Decode(sum[:], []byte(k.SHA256)) // CheckKey: 64 hex digits
		} else {
			sum = sha256.Sum256([]byte(k.Key))
		}
		sc, err := compileScope(k.Scope, h.collections)
		if err != nil {
			return nil, fmt.Errorf("new handler: key %q: %w", k.Name, err)
		}
		for _, o := range h.keys {
			if o.sum == sum {
				return nil, fmt.Errorf("new handler: keys %q and %q are the same key", o.name, k.Name)
			}
		}
		h.keys = append(h.keys, key{name: k.Name, id: keyIdentity(i < named, k.Name, sum), sum: sum, account: a, scope: sc})
	}
	return h, nil
}

// routes builds an account's mux over eachRoute.
func (a *account) routes() *http.ServeMux {
	mux := http.NewServeMux()
	a.eachRoute(func(pattern string, get, post http.HandlerFunc) { route(mux, pattern, get, post) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, http.StatusNotFound, a.h.notFound)
	})
	return mux
}

// eachRoute calls fn with each route of the interface, its GET handler and its POST one (nil:
// none): the one place the interface's routes are declared. a may be nil when only the
// patterns are wanted (RouteLabels).
func (a *account) eachRoute(fn func(pattern string, get, post http.HandlerFunc)) {
	fn("/v1/employees", a.listEmployees, a.createEmployee)
	fn("/v1/employees/{id}", a.getEmployee, nil)
	fn("/v1/working_patterns", a.listWorkingPatterns, nil)
	for _, c := range v1.Collections {
		fn("/v1/"+c.Name, func(w http.ResponseWriter, r *http.Request) { a.listRecords(w, r, c) }, nil)
		fn("/v1/"+c.Name+"/{id}", func(w http.ResponseWriter, r *http.Request) { a.getRecord(w, r, c) }, nil)
	}
	fn("/v1", a.index, nil)
}

// RouteUnmatched is the route Options.Observe is told of for a request no route answered: one
// refused before it was routed (no or a wrong key, too many refusals, a query too long, a CORS
// preflight, a body in an encoding not accepted) or for a path no route serves (404).
const RouteUnmatched = "unmatched"

// RouteLabels are every route Options.Observe may be told of, the route label of the replica's
// request metrics: each route's pattern ("/v1/employees/{id}"), the OpenAPI document's path,
// and RouteUnmatched. A client's paths never make more.
func RouteLabels() []string {
	var out []string
	(*account)(nil).eachRoute(func(pattern string, _, _ http.HandlerFunc) { out = append(out, pattern) })
	return append(out, openAPIPath, RouteUnmatched)
}

// route registers a path whose GET (and HEAD) and optional POST are served; other methods get a
// JSON 405 with Allow.
func route(mux *http.ServeMux, pattern string, get, post http.HandlerFunc) {
	allow := "GET, HEAD"
	if post != nil {
		allow = "GET, HEAD, POST"
	}
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			get(w, r)
		case r.Method == http.MethodPost && post != nil:
			post(w, r)
		default:
			w.Header().Set("Allow", allow)
			WriteError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here; allowed: "+allow)
		}
	})
}

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
		d := time.Since(start)
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

// keyContext is the context key of the request's authenticated key.
type keyContext struct{}

// keyOf is the key a request was authenticated with (ServeHTTP puts it in the context the
// routes see).
func keyOf(r *http.Request) *key {
	k, _ := r.Context().Value(keyContext{}).(*key)
	return k
}

// CacheControl is what every answer with an ETag says of caching, as the real service does:
// a cache may keep it for this client only (private) and must ask again before reusing it,
// which a 304 then answers cheaply.
const CacheControl = "max-age=0, private, must-revalidate"

// cacheHeaders marks an answer of a key's data: CacheControl, and Vary on the key, since
// another key may read another account's data at the same URL.
func cacheHeaders(h http.Header) {
	h.Set("Cache-Control", CacheControl)
	h.Add("Vary", "X-API-KEY")
	h.Add("Vary", "Accept-Encoding")
}

// Challenge is the WWW-Authenticate header of a 401: the key goes in the X-API-KEY header.
const Challenge = `APIKey realm="hrsync", header="X-API-KEY"`

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

// authenticate finds the configured key presented, or nil: it compares the key's SHA-256 with
// every configured key's in constant time, with no early exit, so the time taken tells nothing
// of which key (or account) matched.
func (h *Handler) authenticate(presented string) *key {
	if presented == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(presented))
	match := 0 // the matching key's index + 1; keys are distinct, so at most one matches
	for i := range h.keys {
		eq := subtle.ConstantTimeCompare(sum[:], h.keys[i].sum[:])
		match = subtle.ConstantTimeSelect(eq, i+1, match)
	}
	if match == 0 {
		return nil
	}
	return &h.keys[match-1]
}

func (a *account) listEmployees(w http.ResponseWriter, r *http.Request) {
	if !readable(w, r, "employees") {
		return
	}
	serveList(a, w, r, "employees", a.store.ListEmployees, projected(r, (*v1.Employee).AppendJSON))
}

func (a *account) listWorkingPatterns(w http.ResponseWriter, r *http.Request) {
	if !readable(w, r, "working_patterns") {
		return
	}
	serveList(a, w, r, "working_patterns", a.store.ListWorkingPatterns, projected(r, (*v1.WorkingPattern).AppendJSON))
}

// serveList answers one page of a collection, with Total, Per-Page, Link and ETag, or a 304 when
// the client's tag is still current (one cheap version read, no page query).
func serveList[T any](a *account, w http.ResponseWriter, r *http.Request, key string,
	fetch func(context.Context, v1.Page) (v1.List[T], error), appendItem func(*T, []byte) []byte) {
	ctx := r.Context()
	lq, err := parseListQuery(r.URL.Query())
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	p := lq.page
	base := a.h.baseURL(r)
	t, done := a.begin(w, r, answerKey{route: routeList, coll: key, page: p, perPage: lq.perPage, base: base.String()})
	if done {
		return
	}
	defer t.end()
	list, err := fetch(ctx, p)
	if errors.Is(err, errNotOffered) {
		WriteError(w, http.StatusNotFound, "the account does not offer "+key+" (its latest sync found it unavailable)")
		return
	}
	if err != nil {
		a.internal(w, r, "list "+key, err)
		return
	}
	hdr := w.Header()
	hdr.Set("Total", strconv.FormatInt(list.Total, 10))
	hdr.Set("Per-Page", strconv.FormatInt(p.Size, 10))
	// Links carry the interface's parameters only, as read: a client's other parameters are not
	// echoed into a header, and the answer is what its key (answerKey) says.
	if link := v1.FormatLink(base, lq.linkQuery(), p, list.Total); link != "" {
		hdr.Set("Link", link)
	}
	bp := a.h.bufs.Get().(*[]byte)
	b := append((*bp)[:0], `{"`...)
	b = append(b, key...)
	b = append(b, `":[`...)
	for i := range list.Items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(&list.Items[i], b)
	}
	b = append(b, "]}\n"...)
	t.write(w, list.Version, b)
	*bp = b
	a.h.bufs.Put(bp)
}

func (a *account) getEmployee(w http.ResponseWriter, r *http.Request) {
	if !readable(w, r, "employees") {
		return
	}
	serveOne(a, w, r, "employees", "employee", a.store.Employee, projected(r, (*v1.Employee).AppendJSON))
}

// index answers GET /v1 (an extension: the source has no such resource) with the collections
// the replica serves, each with its path and Total: {"collections":[{"name":…,"path":…,
// "total":…},…]}, and the store's ETag.
func (a *account) index(w http.ResponseWriter, r *http.Request) {
	t, done := a.begin(w, r, answerKey{route: routeIndex})
	if done {
		return
	}
	defer t.end()
	version, totals, err := a.store.Totals(r.Context())
	if err != nil {
		a.internal(w, r, "read totals", err)
		return
	}
	type entry struct {
		Name  string `json:"name"`
		Path  string `json:"path"`
		Total int64  `json:"total"`
	}
	idx := struct {
		Collections []entry `json:"collections"`
	}{Collections: make([]entry, 0, len(a.h.collections))}
	s := scopeOf(r)
	for _, name := range a.h.collections {
		if s.mayRead(name) {
			idx.Collections = append(idx.Collections, entry{Name: name, Path: "/v1/" + name, Total: totals[name]})
		}
	}
	b, err := json.Marshal(idx)
	if err != nil {
		a.internal(w, r, "encode index", err)
		return
	}
	t.write(w, version, append(b, '\n'))
}

// errNotOffered is a list's answer for a collection the account does not offer: the source's
// 404, not an empty list.
var errNotOffered = errors.New("the account does not offer this collection")

// listRecords answers one page of a collection the wire declares. One the replica holds no
// record of, whose latest sync found the account does not offer it (a module the account lacks),
// is answered 404 as the source answers it, so a client of the replica sees what it would see
// upstream.
func (a *account) listRecords(w http.ResponseWriter, r *http.Request, c *v1.Collection) {
	if !readable(w, r, c.Name) {
		return
	}
	serveList(a, w, r, c.Name,
		func(ctx context.Context, p v1.Page) (v1.List[v1.Record], error) {
			list, err := a.store.ListRecords(ctx, c.Name, p)
			if err != nil || list.Total > 0 {
				return list, err
			}
			// Only an empty collection costs this second read.
			if un, err := a.store.Unavailable(ctx, c.Name); err != nil || un {
				return list, cmp.Or(err, errNotOffered)
			}
			return list, nil
		},
		projected(r, func(rec *v1.Record, b []byte) []byte { return c.AppendJSON(b, rec) }))
}

// getRecord answers one record of a collection the wire declares.
func (a *account) getRecord(w http.ResponseWriter, r *http.Request, c *v1.Collection) {
	if !readable(w, r, c.Name) {
		return
	}
	serveOne(a, w, r, c.Name, "record",
		func(ctx context.Context, id int64) (v1.Record, int64, error) { return a.store.Record(ctx, c.Name, id) },
		projected(r, func(rec *v1.Record, b []byte) []byte { return c.AppendJSON(b, rec) }))
}

// serveOne answers GET /v1/<key>/{id}: the record in the collection's envelope, with its ETag,
// or a 304 when the client's tag is still current; a 404 JSON error for an id that is not a
// listed record.
func serveOne[T any](a *account, w http.ResponseWriter, r *http.Request, key, noun string,
	fetch func(context.Context, int64) (T, int64, error), appendItem func(*T, []byte) []byte) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		WriteError(w, http.StatusNotFound, "no "+noun+" with that id")
		return
	}
	t, done := a.begin(w, r, answerKey{route: routeOne, coll: key, id: id})
	if done {
		return
	}
	defer t.end()
	rec, v, err := fetch(r.Context(), id)
	if errors.Is(err, v1.ErrNotFound) {
		WriteError(w, http.StatusNotFound, "no "+noun+" with that id")
		return
	}
	if err != nil {
		a.internal(w, r, "get "+noun, err)
		return
	}
	b := append([]byte(`{"`), key...)
	b = append(b, `":[`...)
	b = appendItem(&rec, b)
	t.write(w, v, append(b, "]}\n"...))
}

func appendEnvelope(b []byte, e *v1.Employee, appendItem func(*v1.Employee, []byte) []byte) []byte {
	b = append(b, `{"employees":[`...)
	b = appendItem(e, b)
	return append(b, "]}\n"...)
}

func (a *account) createEmployee(w http.ResponseWriter, r *http.Request) {
	if a.writes == WritesOff {
		w.Header().Set("Allow", "GET, HEAD")
		WriteError(w, http.StatusMethodNotAllowed, "this replica does not accept writes (serve.writes is off)")
		return
	}
	if s := scopeOf(r); s != nil && s.readOnly {
		WriteError(w, http.StatusForbidden, "this key may not create employees")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.h.opts.MaxBodyBytes)
	ne, err := v1.ReadNewEmployee(r.Header.Get("Content-Type"), r.Body)
	var verr *v1.ValidationError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", a.h.opts.MaxBodyBytes))
		return
	case errors.As(err, &verr):
		writeJSON(w, http.StatusBadRequest, verr.AppendJSON(nil))
		return
	case errors.Is(err, v1.ErrUnsupportedMediaType):
		WriteError(w, http.StatusUnsupportedMediaType, err.Error())
		return
	case errors.Is(err, v1.ErrUnreadableBody):
		// The reader's error names the connection's addresses: the log has it, the answer not.
		a.h.log.WarnContext(r.Context(), "create: body could not be read", "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "err", err)
		WriteError(w, http.StatusBadRequest, "the request body could not be read to its end")
		return
	case err != nil:
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	a.createOnce(w, r, ne)
}

// DefaultIdempotencyTTL is how long a create's answer is kept for its Idempotency-Key.
const DefaultIdempotencyTTL = 24 * time.Hour

// idempotencyStale is when a create still in progress under an Idempotency-Key is taken for
// dead (its process gone) and a retry runs it again: well past a forwarded create's bound.
const idempotencyStale = 2 * time.Minute

// createOnce runs a create, once per Idempotency-Key when the client sends one: a retry with
// the same key and request gets the first answer (Idempotent-Replayed: true), with another
// request 422, while the first runs 409. Answers that are the request's own (201, 400) are
// kept; any other is not, and the retry runs again.
func (a *account) createOnce(w http.ResponseWriter, r *http.Request, ne v1.NewEmployee) {
	ik, sent := r.Header["Idempotency-Key"]
	if !sent {
		a.create(w, r, ne, "")
		return
	}
	if len(ik) != 1 || !v1.ValidIdempotencyKey(ik[0]) {
		WriteError(w, http.StatusBadRequest, "Idempotency-Key must be one value of 1 to 255 printable ASCII characters")
		return
	}
	ctx := r.Context()
	c := v1.IdempotencyClaim{Client: keyOf(r).id, Key: ik[0], Hash: ne.Hash(), TTL: a.h.opts.IdempotencyTTL, Stale: idempotencyStale}
	rec, reserved, err := a.store.ReserveIdempotency(ctx, c)
	if err != nil {
		a.internal(w, r, "reserve idempotency key", err)
		return
	}
	if !reserved {
		a.replay(w, r, c, rec)
		return
	}
	cw := &capture{ResponseWriter: w}
	a.create(cw, r, ne, c.Key)
	// Kept or released whatever happened to the client's connection.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	switch cw.status {
	case http.StatusCreated, http.StatusBadRequest:
		err = a.store.CompleteIdempotency(sctx, c.Client, c.Key, v1.IdempotencyRecord{
			Status: cw.status, Body: cw.body, Location: w.Header().Get("Location"), EmployeeID: cw.employeeID})
	default:
		err = a.store.ReleaseIdempotency(sctx, c.Client, c.Key)
	}
	if err != nil {
		a.h.log.ErrorContext(ctx, "idempotency key: keep the answer", "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "err", err)
	}
}

// replay answers a retry under an Idempotency-Key already claimed.
func (a *account) replay(w http.ResponseWriter, r *http.Request, c v1.IdempotencyClaim, rec v1.IdempotencyRecord) {
	switch {
	case rec.Hash != c.Hash:
		WriteError(w, http.StatusUnprocessableEntity, "this Idempotency-Key was used with a different request")
	case rec.Status != 0:
		w.Header().Set("Idempotent-Replayed", "true")
		if rec.Location != "" {
			w.Header().Set("Location", rec.Location)
		}
		writeJSON(w, rec.Status, rec.Body)
	case rec.EmployeeID != 0:
		// Created, but the process stopped before it kept the answer: the answer is the
		// employee as created.
		e, _, err := a.store.Employee(r.Context(), rec.EmployeeID)
		if err != nil {
			a.internal(w, r, "replay create", err)
			return
		}
		w.Header().Set("Idempotent-Replayed", "true")
		a.created(w, r, &e)
	default:
		w.Header().Set("Retry-After", "1")
		WriteError(w, http.StatusConflict, "a request with this Idempotency-Key is still being processed; retry later")
	}
}

// create makes the employee as serve.writes says and answers; key is the Idempotency-Key it
// was reserved under, or "".
func (a *account) create(w http.ResponseWriter, r *http.Request, ne v1.NewEmployee, key string) {
	ctx := r.Context()
	var e v1.Employee
	var err error
	switch a.writes {
	case WritesForward:
		taken, err := a.store.EmailTaken(ctx, ne.Email)
		if err != nil {
			a.internal(w, r, "check email", err)
			return
		}
		if taken {
			writeJSON(w, http.StatusBadRequest, emailTaken().AppendJSON(nil))
			return
		}
		fctx, cancel := context.WithTimeout(ctx, forwardTimeout)
		e, err = a.upstream.CreateEmployee(fctx, ne)
		cancel()
		if err != nil {
			a.upstreamFailed(w, r, err)
			return
		}
		// The record exists upstream now: a failure to keep our copy must not turn the answer
		// into an error the client would retry (creating it twice). The next sync converges.
		if err := a.store.PutEmployee(ctx, e); err != nil {
			a.h.log.ErrorContext(ctx, "store forwarded create", "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "employee_id", e.ID, "err", err)
		}
	default:
		if key != "" {
			e, err = a.store.CreateEmployeeOnce(ctx, ne, keyOf(r).id, key)
		} else {
			e, err = a.store.CreateEmployee(ctx, ne)
		}
		if errors.Is(err, v1.ErrEmailTaken) {
			writeJSON(w, http.StatusBadRequest, emailTaken().AppendJSON(nil))
			return
		}
		if err != nil {
			a.internal(w, r, "create employee", err)
			return
		}
	}
	if cw, ok := w.(*capture); ok {
		cw.employeeID = e.ID
	}
	a.created(w, r, &e)
}

// created answers a create: 201, the employee in its envelope, its Location.
func (a *account) created(w http.ResponseWriter, r *http.Request, e *v1.Employee) {
	w.Header().Set("Location", a.h.baseURL(r).JoinPath(strconv.FormatInt(e.ID, 10)).String())
	writeJSON(w, http.StatusCreated, appendEnvelope(nil, e, projected(r, (*v1.Employee).AppendJSON)))
}

// capture notes a create's answer, to keep it for the retries of its Idempotency-Key.
type capture struct {
	http.ResponseWriter
	status     int
	body       []byte
	employeeID int64
}

func (c *capture) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *capture) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body = append(c.body, b...)
	return c.ResponseWriter.Write(b)
}

func emailTaken() *v1.ValidationError {
	v := &v1.ValidationError{}
	v.Add("employee[email]", "has already been taken")
	return v
}

// upstreamFailed answers a forwarded create the upstream did not accept.
func (a *account) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	var verr *v1.ValidationError
	var rl *v1.RateLimitError
	switch {
	case errors.As(err, &verr):
		writeJSON(w, http.StatusBadRequest, verr.AppendJSON(nil))
	case errors.As(err, &rl):
		if rl.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((rl.RetryAfter+time.Second-1)/time.Second)))
		}
		WriteError(w, http.StatusTooManyRequests, "the upstream service's rate limit is reached; retry later")
	case errors.Is(err, v1.ErrUnauthorized):
		a.h.log.ErrorContext(r.Context(), "forward create: upstream refused the configured source API key", "request_id", w.Header().Get("X-Request-Id"), "account", a.name)
		WriteError(w, http.StatusBadGateway, "the upstream service refused this replica's credentials")
	default:
		a.h.log.ErrorContext(r.Context(), "forward create", "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "err", err)
		WriteError(w, http.StatusBadGateway, "the upstream service did not accept the create")
	}
}

func (a *account) internal(w http.ResponseWriter, r *http.Request, op string, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		WriteError(w, http.StatusServiceUnavailable, "request canceled")
		return
	}
	if busy(w, err) {
		return
	}
	a.h.log.ErrorContext(r.Context(), op, "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "err", err)
	WriteError(w, http.StatusInternalServerError, "internal error")
}

// busy answers an error wrapping ErrBusy (the store could not get its write lock in time): 503
// with Retry-After, so a client retries rather than taking it for a failure. It reports whether
// it answered.
func busy(w http.ResponseWriter, err error) bool {
	if !errors.Is(err, v1.ErrBusy) {
		return false
	}
	w.Header().Set("Retry-After", "5")
	WriteError(w, http.StatusServiceUnavailable, "the warehouse is busy with another write; retry later")
	return true
}

// baseURL is the absolute URL of the requested path: the public base when configured, else
// linkBase's scheme and host.
func (h *Handler) baseURL(r *http.Request) *url.URL {
	var u url.URL
	if h.opts.PublicURL != nil {
		u = *h.opts.PublicURL
		u.Path += r.URL.Path
	} else {
		u.Scheme, u.Host = h.linkBase(r)
		u.Path = r.URL.Path
	}
	return &u
}

// etagMatch applies If-None-Match's weak comparison (RFC 9110 13.1.2) to the tag of each
// coding of one answer (codedTag): a client revalidates the tag it got, whichever coding it got.
// It returns the tag matched, "" for none (tag itself for *).
func etagMatch(header, tag string) string {
	if header == "" {
		return ""
	}
	gz := codedTag(tag, "gzip")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		switch t {
		case "*", tag:
			return tag
		case gz:
			return gz
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError answers an error as JSON (see ErrorBody).
func WriteError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, append(v1.ErrorBody(status, message), '\n'))
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
