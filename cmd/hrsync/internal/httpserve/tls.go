package httpserve

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// CertPollInterval is how often a served certificate's files are checked for a change.
var CertPollInterval = 5 * time.Second

// CertReloader serves serve.tls_cert/tls_key and replaces them, without a restart, when the
// files change or the process gets SIGHUP. A pair that does not load (half written, key and
// certificate not matching) leaves the one in use serving, and is tried again at the next
// change.
type CertReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	cert              atomic.Pointer[tls.Certificate]

	mu   sync.Mutex // one reload at a time; guards seen
	seen [2]fileStamp
	// expiry, when set, is told each loaded certificate's NotAfter.
	expiry func(time.Time)
}

// fileStamp is what tells that a file changed: its modification time and size.
type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{fi.ModTime(), fi.Size()}
}

// NewCertReloader loads the pair once: a pair that cannot be loaded at start is the
// operator's error, reported before anything listens.
func NewCertReloader(certFile, keyFile string, log *slog.Logger, expiry func(time.Time)) (*CertReloader, error) {
	r := &CertReloader{certFile: certFile, keyFile: keyFile, log: log, expiry: expiry}
	r.seen = [2]fileStamp{stampOf(certFile), stampOf(keyFile)}
	c, err := loadPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serve: tls: %w", err)
	}
	r.store(c)
	return r, nil
}

// loadPair reads a PEM certificate (chain) and its key; it fails when they do not match or the
// certificate has expired.
func loadPair(certFile, keyFile string) (*tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		// The error names the files or says what does not match; it holds no key material.
		return nil, fmt.Errorf("load %s and %s: %w", certFile, keyFile, err)
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse %s: %w", certFile, err)
		}
	}
	if time.Now().After(c.Leaf.NotAfter) {
		return nil, fmt.Errorf("%s expired at %s", certFile, c.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return &c, nil
}

func (r *CertReloader) store(c *tls.Certificate) {
	r.cert.Store(c)
	if r.expiry != nil {
		r.expiry(c.Leaf.NotAfter)
	}
}

// getCertificate is tls.Config.GetCertificate: the pair loaded last.
func (r *CertReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cert.Load(), nil
}

// tlsCipherSuites are the TLS 1.2 suites served: forward secret (ECDHE) and authenticated
// encryption (AES-GCM, ChaCha20-Poly1305) only; no CBC, no RSA key exchange. TLS 1.3's suites
// are all of that kind and not configurable.
var tlsCipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// tlsConfig is the served TLS configuration: TLS 1.2 (tlsCipherSuites) and 1.3, the reloaded
// certificate.
func (r *CertReloader) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: tlsCipherSuites, GetCertificate: r.getCertificate}
}

// reload loads the pair again when force is set or the files changed since they were last
// read; it reports whether a new certificate is being served.
func (r *CertReloader) reload(why string, force bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := [2]fileStamp{stampOf(r.certFile), stampOf(r.keyFile)}
	if !force && now == r.seen {
		return false
	}
	r.seen = now
	c, err := loadPair(r.certFile, r.keyFile)
	if err != nil {
		r.log.Error("tls: certificate not reloaded; still serving the previous one", "reason", why, "err", err)
		return false
	}
	old := r.cert.Load()
	if old != nil && bytes.Equal(old.Certificate[0], c.Certificate[0]) {
		return false
	}
	r.store(c)
	r.log.Info("tls: certificate reloaded", "reason", why, "subject", c.Leaf.Subject.String(),
		"serial", c.Leaf.SerialNumber.String(), "not_after", c.Leaf.NotAfter.UTC().Format(time.RFC3339))
	return true
}

// watch reloads on SIGHUP and on a change of the files, until ctx ends. SIGHUP is taken from
// the moment it returns (so one sent once the server answers is never the default's exit) until
// ctx ends.
func (r *CertReloader) watch(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go r.loop(ctx, hup)
}

func (r *CertReloader) loop(ctx context.Context, hup chan os.Signal) {
	defer signal.Stop(hup)
	t := time.NewTicker(CertPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			r.reload("SIGHUP", true)
		case <-t.C:
			r.reload("files changed", false)
		}
	}
}
