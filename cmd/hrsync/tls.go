package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/prometheus/client_golang/prometheus"
)

// apiServer is the /v1 server of serve and run --serve: on serve.addr, over HTTPS when
// serve.tls_cert is set (its expiry in hrsync_serve_tls_cert_expiry_timestamp_seconds), with
// cleartext HTTP/2 when serve.h2c is.
func apiServer(cfg config.Settings, h http.Handler, reg prometheus.Registerer, log *slog.Logger, attrs ...slog.Attr) (httpserve.Server, error) {
	s := httpserve.Server{Name: "serve", Addr: cfg.Serve.Addr, Handler: h, Attrs: attrs, H2C: cfg.Serve.H2C}
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
