// Package prom is hrsync's own Prometheus metrics, those no package of the sync registers: the
// process's registry (the Go and process collectors, the build's version), the /v1 replica's
// request metrics and its answer cache's, the shared request budget's waits, and the mux that
// serves /metrics beside the health endpoints (docs/operations.md lists the metrics).
package prom

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/hrsync/hrsync/internal/buildinfo"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/budget"
	"github.com/hrsync/hrsync/source/server"
)

// NewRegistry is the process's Prometheus registry, with the Go and process collectors and the
// build (hrsync_build_info: its version, its commit, the Go that built it).
func NewRegistry(build buildinfo.Info) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "hrsync_build_info", Help: "The running build; always 1."},
		[]string{"version", "revision", "goversion"})
	info.WithLabelValues(build.Version, build.Commit, build.GoVersion).Set(1)
	reg.MustRegister(info)
	return reg
}

// Serve are the /v1 replica's request metrics, registered on one registerer.
type Serve struct {
	reg      prometheus.Registerer
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewServe registers the replica's request metrics on reg.
func NewServe(reg prometheus.Registerer) *Serve {
	m := &Serve{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_serve_requests_total", Help: "Requests to the /v1 replica by account, route and status code.",
		}, []string{"account", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hrsync_serve_request_duration_seconds", Help: "Time to answer /v1 requests by account and route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"account", "route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// Observe is server.Options.Observe. Routes are the mux's patterns and accounts the configured
// ones ("" when no key matched), so cardinality stays low whatever paths and keys clients send.
func (m *Serve) Observe(account, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(account, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(account, route).Observe(d.Seconds())
}

// RegisterCache registers, beside the request metrics, the answer cache's of h per account
// (server.Handler.CacheStatsByAccount); a nil h only describes them.
func (m *Serve) RegisterCache(h *server.Handler) error { return m.reg.Register(newCacheCollector(h)) }

// cacheCollector exports the replica's answer cache per account: answers served from it,
// answers encoded on a miss, and the bytes it keeps.
type cacheCollector struct {
	h                   *server.Handler
	hits, misses, bytes *prometheus.Desc
}

func newCacheCollector(h *server.Handler) *cacheCollector {
	return &cacheCollector{
		h:      h,
		hits:   prometheus.NewDesc("hrsync_serve_cache_hits_total", "Answers the /v1 replica served from its answer cache.", []string{"account"}, nil),
		misses: prometheus.NewDesc("hrsync_serve_cache_misses_total", "Answers the /v1 replica read and encoded while its answer cache was on.", []string{"account"}, nil),
		bytes:  prometheus.NewDesc("hrsync_serve_cache_bytes", "Bytes of answers kept in the /v1 replica's answer cache (serve.cache_bytes bounds all accounts together).", []string{"account"}, nil),
	}
}

func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.hits
	ch <- c.misses
	ch <- c.bytes
}

func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	for name, st := range c.h.CacheStatsByAccount() {
		ch <- prometheus.MustNewConstMetric(c.hits, prometheus.CounterValue, float64(st.Hits), name)
		ch <- prometheus.MustNewConstMetric(c.misses, prometheus.CounterValue, float64(st.Misses), name)
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(st.Bytes), name)
	}
}

// Mux serves /metrics (reg) and the health endpoints (httpserve.Health of store).
func Mux(reg *prometheus.Registry, store httpserve.Readier, log *slog.Logger) http.Handler {
	routes := httpserve.Health(store, log, true)
	routes["/metrics"] = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)})
	return httpserve.GetRoutes(routes, nil)
}

// budgetCollector exports the shared request budget's waits per kind of request (walk, create,
// forward): how long each kind waits for its turn on the account's budget; of one account, or
// with the account label of many (Budgets).
type budgetCollector struct {
	waited   *prometheus.Desc
	granted  *prometheus.Desc
	labelled bool // the account label first

	mu       sync.Mutex
	accounts []budgetAccount
}

type budgetAccount struct {
	name   string
	budget BudgetWaits
}

// BudgetWaits is what the budget's metrics read: a *sink.Budget, or the waits of an account's
// budgets one after another (a worker opens one for each run).
type BudgetWaits interface {
	Waits() map[budget.Kind]sink.KindWaits
}

func newBudgetCollector(labelled bool) *budgetCollector {
	labels := []string{"kind"}
	if labelled {
		labels = []string{"account", "kind"}
	}
	return &budgetCollector{
		waited: prometheus.NewDesc("hrsync_source_budget_wait_seconds_total",
			"Seconds requests to the source waited for their slot of the shared request budget, by kind.", labels, nil),
		granted: prometheus.NewDesc("hrsync_source_budget_granted_total",
			"Slots of the shared request budget granted to requests to the source, by kind.", labels, nil),
		labelled: labelled,
	}
}

// NewBudgetCollector exports the waits of b (sink.Store.NewBudget); nil only describes them.
func NewBudgetCollector(b BudgetWaits) prometheus.Collector {
	c := newBudgetCollector(false)
	if b != nil {
		c.accounts = []budgetAccount{{budget: b}}
	}
	return c
}

// Budgets exports the waits of the shared budgets of many accounts, each labelled account with
// its name: one collector for all the accounts of a process.
type Budgets struct{ c *budgetCollector }

// NewBudgets registers the budgets' metrics on reg, for the accounts Add adds.
func NewBudgets(reg prometheus.Registerer) *Budgets {
	c := newBudgetCollector(true)
	reg.MustRegister(c)
	return &Budgets{c}
}

// Add exports the waits of the account's budget b.
func (bs *Budgets) Add(account string, b BudgetWaits) {
	bs.c.mu.Lock()
	defer bs.c.mu.Unlock()
	bs.c.accounts = append(bs.c.accounts, budgetAccount{account, b})
}

func (c *budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.waited
	ch <- c.granted
}

func (c *budgetCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	accounts := c.accounts[:len(c.accounts):len(c.accounts)]
	c.mu.Unlock()
	lvs := make([]string, 0, 2)
	for _, a := range accounts {
		for kind, w := range a.budget.Waits() {
			lvs = lvs[:0]
			if c.labelled {
				lvs = append(lvs, a.name)
			}
			lvs = append(lvs, string(kind))
			ch <- prometheus.MustNewConstMetric(c.waited, prometheus.CounterValue, w.Waited.Seconds(), lvs...)
			ch <- prometheus.MustNewConstMetric(c.granted, prometheus.CounterValue, float64(w.Granted), lvs...)
		}
	}
}
