package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// newRegistry is the process's Prometheus registry, with the Go and process collectors and the
// build's version.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "hrsync_build_info", Help: "The running build; always 1."}, []string{"version"})
	info.WithLabelValues(version).Set(1)
	reg.MustRegister(info)
	return reg
}

// serveMetrics are the replica's request metrics.
type serveMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newServeMetrics(reg prometheus.Registerer) *serveMetrics {
	m := &serveMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hrsync_serve_requests_total", Help: "Requests to the /v1 replica by route and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hrsync_serve_request_duration_seconds", Help: "Time to answer /v1 requests by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// observe is source.HandlerOptions.Observe. Routes are the mux's patterns, so cardinality stays
// low whatever paths clients send.
func (m *serveMetrics) observe(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

// readier is what /readyz asks.
type readier interface {
	Ready(ctx context.Context) error
}

// addHealth registers /healthz (alive) and /readyz (warehouse reachable, schema current); they
// need no key.
func addHealth(mux *http.ServeMux, store readier, log *slog.Logger) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeHealth(w, http.StatusOK, "ok", "")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		rctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := store.Ready(rctx); err != nil {
			log.WarnContext(r.Context(), "not ready", "err", err)
			writeHealth(w, http.StatusServiceUnavailable, "unavailable", oneLine(err.Error()))
			return
		}
		writeHealth(w, http.StatusOK, "ok", "")
	})
}

// metricsMux serves /metrics and the health endpoints.
func metricsMux(reg *prometheus.Registry, store readier, log *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}))
	addHealth(mux, store, log)
	return mux
}
