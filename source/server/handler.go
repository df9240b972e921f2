package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/hrsync/hrsync/source/v1"
)

// Store is what the handler serves the interface over.
type Store interface {
	// Version identifies the store's current contents; it changes whenever they do.
	Version(ctx context.Context) (int64, error)
	// ListEmployees reads a page of listed employees; one kept as the source sent it may carry
	// its ID and Sent only, which is all the handler answers from (AppendJSON).
	ListEmployees(ctx context.Context, p v1.Page) (v1.List[v1.Employee], error)
	// Employee returns one listed employee, or an error wrapping ErrNotFound.
	Employee(ctx context.Context, id int64) (v1.Employee, int64, error)
	// Employees reads the listed employees of ids at once, by id (one not listed is absent).
	Employees(ctx context.Context, ids []int64) (map[int64]v1.Employee, error)
	ListWorkingPatterns(ctx context.Context, p v1.Page) (v1.List[v1.WorkingPattern], error)
	// EmailTaken reports whether a listed employee has the email (case-insensitive).
	EmailTaken(ctx context.Context, email string) (bool, error)
	// CreateEmployee creates an employee locally, as the service would, or fails with
	// ErrEmailTaken.
	CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error)
	// PutEmployee stores an employee as the source answered it.
	PutEmployee(ctx context.Context, e v1.Employee) error
	// ListRecords reads a page of a collection the wire declares (v1.Collections); as
	// ListEmployees, a record kept as sent may carry its ID and Sent only.
	ListRecords(ctx context.Context, collection string, p v1.Page) (v1.List[v1.Record], error)
	// Record reads one listed record of such a collection, or an error wrapping ErrNotFound.
	Record(ctx context.Context, collection string, id int64) (v1.Record, int64, error)
	// Unavailable reports whether the latest sync of such a collection found that the account
	// does not offer it.
	Unavailable(ctx context.Context, collection string) (bool, error)
	// Totals reads the store's version and each collection's Total, by name.
	Totals(ctx context.Context) (version int64, totals map[string]int64, err error)

	// ReadOnly reports whether the store takes no writes now (a hot standby of the warehouse):
	// creates are then refused, whatever serve.writes says, since each needs a local write.
	ReadOnly(ctx context.Context) (bool, error)

	// ReserveIdempotency claims an Idempotency-Key for a create: reserved, or the record found.
	ReserveIdempotency(ctx context.Context, c v1.IdempotencyClaim) (v1.IdempotencyRecord, bool, error)
	// CreateEmployeeOnce is CreateEmployee for a reserved key, noting the employee in its record
	// in the same transaction.
	CreateEmployeeOnce(ctx context.Context, ne v1.NewEmployee, client, key string) (v1.Employee, error)
	// CompleteIdempotency keeps a reserved create's answer; ReleaseIdempotency forgets the
	// reservation of one whose answer is not kept.
	CompleteIdempotency(ctx context.Context, client, key string, rec v1.IdempotencyRecord) error
	ReleaseIdempotency(ctx context.Context, client, key string) error

	// FeedEvents are up to limit published joiner, mover and leaver events after the feed
	// position after, in feed order (GET /v1/events).
	FeedEvents(ctx context.Context, after int64, limit int) ([]v1.Event, error)
}

// Creator creates an employee upstream; *client.Client (the client of the account) is one.
type Creator interface {
	CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error)
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

// account is one account served: its store, its upstream and its routes. Its methods are the
// route handlers, so a request reads no other account's data.
type account struct {
	h        *Handler
	name     string
	store    Store
	upstream Creator
	writes   Writes // resolved: never ""
	mux      *http.ServeMux
	decls    v1.Declarations // Account.Declarations
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
	opts = opts.withDefaults()
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
		w, err := opts.writesOf(ac)
		if err != nil {
			return nil, fmt.Errorf("new handler: %w", err)
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
		a := &account{h: h, name: ac.Name, store: ac.Store, upstream: ac.Upstream, writes: w, decls: ac.Declarations}
		a.mux = a.routes()
		byName[ac.Name] = a
		h.accounts = append(h.accounts, a)
	}

	if err := h.compileKeys(byName); err != nil {
		return nil, err
	}
	return h, nil
}
