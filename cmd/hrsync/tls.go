package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/prometheus/client_golang/prometheus"
)

// apiServer is the /v1 server of serve and run --serve, less its handler: on serve.addr, over
// HTTPS when serve.tls_cert is set (its expiry in hrsync_serve_tls_cert_expiry_timestamp_seconds),
// with cleartext HTTP/2 when serve.h2c is. It loads the certificate, so the commands make it
// before they open any warehouse: a certificate that does not load stops them at once, not after
// every account's warehouse was opened (and, new, migrated).
func apiServer(cfg config.Settings, reg prometheus.Registerer, log *slog.Logger) (httpserve.Server, error) {
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
