package server

import (
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"time"

	v1 "github.com/hrsync/hrsync/source/v1"
)

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
	// Declarations are what the account's keys denied classes (Scope.DenyClasses) act by: the
	// code's declarations and the members its configuration classes (v1.Declarations); the
	// zero value is the code's alone, where every member no declaration names is identifying.
	Declarations v1.Declarations
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

// writesOf resolves what an account's creates do (see Account.Writes): never "".
func (o *Options) writesOf(ac Account) (Writes, error) {
	w, err := ParseWrites(string(ac.Writes))
	if err != nil {
		return "", fmt.Errorf("account %q: %w", ac.Name, err)
	}
	switch {
	case w != "":
	case o.Writes != "":
		w = o.Writes
	case ac.Upstream != nil:
		w = WritesForward
	default:
		w = WritesLocal
	}
	return w, nil
}

// withDefaults fills in what Options leaves to its defaults, and reduces PublicURL to the base
// links are built on (no /v1, query or fragment).
func (o Options) withDefaults() Options {
	if o.IdempotencyTTL <= 0 {
		o.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 64 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.PublicURL != nil {
		u := *o.PublicURL
		u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
		u.RawQuery, u.Fragment = "", ""
		o.PublicURL = &u
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
