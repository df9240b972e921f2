package account

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/internal/buildinfo"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/budget"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/server"
	"github.com/prometheus/client_golang/prometheus"
)

// ServeOpener opens an account's warehouse for serve and, when its creates are forwarded, its
// client with copts: serve's forwards a create in one attempt, paced like every call to the
// account (on the shared budget, so a replica's creates take their turn beside a running sync);
// a 429 goes straight back to the client, who may retry. The budget's waits are added to waits
// (the account's budget metrics, registered once), whatever the tries to open.
// It opens the warehouse with serve's own ctx, not the request's: the warehouse outlives the
// request, and is interrupted when serve stops (see Open). The function it returns with
// them closes what it opened.
func ServeOpener(serveCtx context.Context, a *config.Account, log *slog.Logger, waits *budgetWaits, copts client.Options) func(context.Context) (*sink.Store, server.Creator, func(), error) {
	alog := a.Logger(log)
	return func(context.Context) (*sink.Store, server.Creator, func(), error) {
		opts := a.SinkOptions()
		opts.Logger = alog
		store, err := sink.Open(serveCtx, a.Warehouse.URL, opts)
		if err != nil {
			return nil, nil, nil, a.Wrap(err)
		}
		if err := store.CheckJournal(serveCtx); err != nil { // serves no one erased since a backup restored
			_ = store.Close()
			return nil, nil, nil, a.Wrap(err)
		}
		stop := context.AfterFunc(serveCtx, func() { time.AfterFunc(StopGrace, store.Interrupt) })
		var b *sink.Budget
		done := func() {
			stop()
			waits.retire(b)
			_ = store.Close()
		}
		if a.Writes != server.WritesForward {
			return store, nil, done, nil
		}
		c, b2, err := NewBudgetedClient(a, alog, store, copts)
		if err != nil {
			done()
			return nil, nil, nil, fmt.Errorf("serve.writes is forward, which needs the source: %w", err)
		}
		b = b2
		waits.add(b)
		return store, c, done, nil
	}
}

// ForwardClientOptions are the options of serve's client that forwards creates.
var ForwardClientOptions = client.Options{MaxAttempts: 1, CreateKind: budget.KindForward}

// serveWaits is the account's budget waits for serve's metrics: registered now, for an account
// whose creates are forwarded on a shared budget; nil otherwise.
func serveWaits(a *config.Account, reg prometheus.Registerer) *budgetWaits {
	if a.Writes != server.WritesForward || !SharesBudget(a) {
		return nil
	}
	w := &budgetWaits{}
	prometheus.WrapRegistererWith(prometheus.Labels{"account": a.Name}, reg).MustRegister(prom.NewBudgetCollector(w))
	return w
}

// CheckParallel is how many warehouses serve checks at once as it starts: a thousand accounts'
// schemas on one Postgres took 27 s checked one after another, each check mostly waiting on a
// connection and two round trips. A few at a time: each holds one session while it checks.
const CheckParallel = 8

// StoreCheck is one account's warehouse as CheckStore found it.
type StoreCheck struct {
	location string
	readOnly bool
}

// CheckStores checks every account's warehouse (CheckStore), CheckParallel at a time, and
// returns what it found in the accounts' order. The first check to fail stops the others and is
// the error returned.
func CheckStores(ctx context.Context, accts []*config.Account, log *slog.Logger) ([]StoreCheck, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]StoreCheck, len(accts))
	sem := make(chan struct{}, CheckParallel)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for i, a := range accts {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			location, readOnly, err := CheckStore(ctx, a, log)
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
					cancel()
				}
				mu.Unlock()
				return
			}
			out[i] = StoreCheck{location, readOnly}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		// Stopped (SIGTERM) before every warehouse was checked.
		return nil, context.Cause(ctx)
	}
	return out, first
}

// CheckStore opens the account's warehouse, which checks that it answers and that its schema
// is current, and closes it again; where it is, without credentials, for the start's line, and
// whether it takes writes (a hot standby takes none: its creates are refused, 405).
func CheckStore(ctx context.Context, a *config.Account, log *slog.Logger) (location string, readOnly bool, _ error) {
	opts := a.SinkOptions()
	opts.Logger = a.Logger(log)
	store, err := sink.Open(ctx, a.Warehouse.URL, opts)
	if err != nil {
		return "", false, a.Wrap(err)
	}
	defer store.Close()
	if err := store.Writable(ctx); errors.Is(err, sink.ErrReadOnly) {
		opts.Logger.Info("the warehouse is read-only (a hot standby): serving reads; creates are refused (405) while it is, whatever serve.writes says",
			"warehouse", store.Location())
		return store.Location(), true, nil
	} else if err != nil {
		return "", false, a.Wrap(err)
	}
	return store.Location(), false, nil
}

// Served is one account's warehouse as serve mode answers it, with what its creates are
// forwarded to (serve.writes: forward).
type Served struct {
	acct     *config.Account
	store    servedStore
	upstream server.Creator
	location string // where the warehouse is, for the start's line (serve)
}

// ReadyAll is /readyz over every account's warehouse: ready when each is, otherwise the reasons
// of those that are not, each naming its account.
type ReadyAll []Served

// ReadOnly reports whether any account's warehouse takes no writes now (a hot standby).
func (r ReadyAll) ReadOnly(ctx context.Context) (bool, error) {
	for _, s := range r {
		if ro, err := s.store.ReadOnly(ctx); err != nil || ro {
			return ro, err
		}
	}
	return false, nil
}

func (r ReadyAll) Ready(ctx context.Context) error {
	var errs []error
	for _, s := range r {
		errs = append(errs, s.acct.Wrap(s.store.Ready(ctx)))
	}
	return errors.Join(errs...)
}

// APIMux is the /v1 interface over the accounts' warehouses, with the health endpoints: each
// key reads its account's data only (serveKeys). It is no http.ServeMux: one would answer a
// path it cleans (//, /v1/../x) with an HTML redirect before the /v1 handler, which answers
// every request in JSON, could.
func APIMux(cfg config.Settings, stores []Served, m *prom.Serve, log *slog.Logger) (http.Handler, error) {
	keys, plain, err := config.ServeKeys(cfg, log)
	if err != nil {
		return nil, err
	}
	hopts := server.Options{Keys: keys, APIKeys: plain, PublicURL: cfg.PublicURL,
		TrustedProxies: cfg.TrustedProxies, AllowedHosts: cfg.Serve.AllowedHosts, CORSOrigins: cfg.Serve.CORSOrigins,
		IdempotencyTTL: cfg.Serve.IdempotencyTTL, CacheBytes: cfg.Serve.CacheBytes, ETagSalt: buildinfo.Get().Short(), ETagSecret: []byte(cfg.Serve.ETagSecret), Logger: log, Observe: m.Observe}
	for _, s := range stores {
		ac := server.Account{Name: s.acct.Name, Store: s.store, Writes: s.acct.Writes, Declarations: s.acct.Declarations}
		if s.upstream != nil {
			ac.Upstream = s.upstream
		}
		hopts.Accounts = append(hopts.Accounts, ac)
		WarnWrites(s.acct, s.acct.Logger(log))
	}
	api, err := server.New(hopts)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if cfg.Serve.CacheBytes > 0 {
		if err := m.RegisterCache(api); err != nil {
			return nil, fmt.Errorf("serve: cache metrics: %w", err)
		}
	}
	return httpserve.GetRoutes(httpserve.Health(ReadyAll(stores), log, false), api), nil
}

// WarnWrites says at start what the account's replica does with creates when that may surprise:
// local writes on a replica of a source (chosen by serve.writes: they never reach the HR
// system), or creates refused because the source's key is not here.
func WarnWrites(a *config.Account, log *slog.Logger) {
	switch {
	case a.Writes == server.WritesLocal && a.Replica():
		log.Warn("serve.writes is local on a replica of a source: employees created through this replica are kept in this warehouse only and will never reach the HR system; "+
			"set serve.writes to forward (create them in the source) or off (refuse them)", "source", sourceHost(a.Source.URL))
	case a.Writes == server.WritesOff && !a.WritesSet:
		log.Info("creates refused (405): this replica of a source has no source API key to forward them with; "+
			"set source.api_key (or source.api_key_file) to forward them to the source, or serve.writes", "source", sourceHost(a.Source.URL))
	}
}

// sourceHost is the host of a source URL, for logs: never its path, query or user.
func sourceHost(raw string) string {
	u, err := config.HTTPURL(raw)
	if err != nil {
		return "(not an http(s) address)"
	}
	return u.Host
}

// writesByAccount is every account's write mode, for the start line: "acme=forward beta=off".
func writesByAccount(accts []*config.Account) string {
	parts := make([]string, len(accts))
	for i, a := range accts {
		parts[i] = a.Name + "=" + string(a.Writes)
	}
	return strings.Join(parts, " ")
}

// APIServer is the /v1 server of serve and run --serve, less its handler: on serve.addr, over
// HTTPS when serve.tls_cert is set (its expiry in hrsync_serve_tls_cert_expiry_timestamp_seconds),
// with cleartext HTTP/2 when serve.h2c is. It loads the certificate, so the commands make it
// before they open any warehouse: a certificate that does not load stops them at once, not after
// every account's warehouse was opened (and, new, migrated).
func APIServer(cfg config.Settings, reg prometheus.Registerer, log *slog.Logger) (httpserve.Server, error) {
	s := httpserve.Server{Name: "serve", Addr: cfg.Serve.Addr, H2C: cfg.Serve.H2C}
	if cfg.Serve.TLSCert == "" {
		return s, nil
	}
	expiry := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hrsync_serve_tls_cert_expiry_timestamp_seconds",
		Help: "When the certificate serve presents expires (Unix time).",
	})
	r, err := httpserve.NewCertReloader(cfg.Serve.TLSCert, cfg.Serve.TLSKey, log, func(t time.Time) { expiry.Set(float64(t.Unix())) })
	if err != nil {
		return httpserve.Server{}, err
	}
	if err := reg.Register(expiry); err != nil {
		return httpserve.Server{}, fmt.Errorf("serve: tls: %w", err)
	}
	s.TLS = r
	return s, nil
}

// Serve is hrsync serve: the replica of every account of cfg, until ctx ends (SIGTERM or
// SIGINT).
func Serve(ctx context.Context, cfg config.Settings, reg *prometheus.Registry, log *slog.Logger) error {
	api, err := APIServer(cfg, reg, log)
	if err != nil {
		return err
	}
	var stores []Served
	open := &OpenStores{max: cfg.Serve.OpenAccounts}
	defer open.Close()
	// Each warehouse is checked now (it opens and its schema is current) and closed again, then
	// opened at its account's first request: see OpenStores.
	checked, err := CheckStores(ctx, cfg.Accounts, log)
	if err != nil {
		return err
	}
	for i, a := range cfg.Accounts {
		location, readOnly := checked[i].location, checked[i].readOnly
		if a.Writes == server.WritesForward {
			if err := CheckSource(a); err != nil {
				return fmt.Errorf("serve.writes is forward, which needs the source: %w", err)
			}
		}
		l := &Lazy{acct: a, set: open, open: ServeOpener(ctx, a, log, serveWaits(a, reg), ForwardClientOptions), readOnly: readOnly}
		s := Served{acct: a, store: l, location: location}
		if a.Writes == server.WritesForward {
			s.upstream = lazyCreator{l}
		}
		stores = append(stores, s)
	}
	mux, err := APIMux(cfg, stores, prom.NewServe(reg), log)
	if err != nil {
		return err
	}
	api.Handler = mux
	if len(stores) == 1 {
		api.Attrs = append(api.Attrs, slog.String("writes", string(stores[0].acct.Writes)), slog.String("warehouse", stores[0].location))
	} else {
		api.Attrs = append(api.Attrs, slog.Any("accounts", config.Names(cfg.Accounts)), slog.String("writes", writesByAccount(cfg.Accounts)))
	}
	metrics := httpserve.Server{Name: "metrics", Addr: ServeMetricsAddr(cfg), Handler: prom.Mux(reg, ReadyAll(stores), log)}
	return metricsInUse(cfg, httpserve.ServeAll(ctx, log, []httpserve.Server{metrics, api}))
}

// ServeMetricsAddr is where serve answers /metrics and the health checks: serve.metrics_addr,
// or metrics.addr when it is not set (serve alone on the host, as before there was one).
func ServeMetricsAddr(cfg config.Settings) string {
	if cfg.Serve.MetricsAddr != "" {
		return cfg.Serve.MetricsAddr
	}
	return cfg.Metrics.Addr
}

// metricsInUse says what to change when serve's metrics address is taken: most often by hrsync
// run started from the same configuration, whose metrics.addr serve falls back to. Nothing else
// is listening by then (ServeAll binds every address first), and the error stays one line.
func metricsInUse(cfg config.Settings, err error) error {
	var le *httpserve.ListenError
	if !errors.As(err, &le) || le.Name != "metrics" || !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	if cfg.Serve.MetricsAddr != "" {
		return fmt.Errorf("serve: metrics address %s is in use: set serve.metrics_addr (HRSYNC_SERVE_METRICS_ADDR) to a free one (%w)", le.Addr, syscall.EADDRINUSE)
	}
	return fmt.Errorf("serve: metrics address %s is in use (by hrsync run?): set serve.metrics_addr (HRSYNC_SERVE_METRICS_ADDR) to another address, or serve from the worker with hrsync run --serve (%w)", le.Addr, syscall.EADDRINUSE)
}

// Replica is the /v1 interface of cfg's first account over store, a warehouse already open (the
// demo's), forwarding creates to upstream when there is one.
func Replica(cfg config.Settings, store *sink.Store, upstream *client.Client, m *prom.Serve, log *slog.Logger) (http.Handler, error) {
	s := Served{acct: cfg.Accounts[0], store: store}
	if upstream != nil { // not a nil *client.Client in the interface
		s.upstream = upstream
	}
	return APIMux(cfg, []Served{s}, m, log)
}

// NewServed is the account's warehouse, store, as the replica serves it.
func NewServed(a *config.Account, store servedStore) Served { return Served{acct: a, store: store} }

// NewLazy is the account's warehouse as serve reads it, one of set's: opened at its first
// request, never checked first, with creates forwarded when the account forwards them.
func NewLazy(ctx context.Context, a *config.Account, set *OpenStores, log *slog.Logger) *Lazy {
	return &Lazy{acct: a, set: set, open: ServeOpener(ctx, a, log, nil, ForwardClientOptions)}
}
