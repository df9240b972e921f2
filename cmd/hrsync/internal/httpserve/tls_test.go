package httpserve

import (
	"bytes"
	"crypto/tls"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/tlstest"
)

// TestServeTLSRefusesWeakClients: the served TLS configuration refuses a client limited to TLS
// 1.1, or to TLS 1.2 with a CBC suite or RSA key exchange; AEAD suites with ECDHE and TLS 1.3
// are served.
func TestServeTLSRefusesWeakClients(t *testing.T) {
	ca := tlstest.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca.Issue(t, 24, certFile, keyFile)
	r, err := NewCertReloader(certFile, keyFile, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	server := r.tlsConfig()
	for _, tt := range []struct {
		name     string
		min, max uint16
		suites   []uint16
		ok       bool
	}{
		{"TLS 1.1", tls.VersionTLS10, tls.VersionTLS11, nil, false},
		{"TLS 1.2 CBC", tls.VersionTLS12, tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA}, false},
		{"TLS 1.2 CBC SHA-256", tls.VersionTLS12, tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256}, false},
		{"TLS 1.2 AES-GCM", tls.VersionTLS12, tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}, true},
		{"TLS 1.2 ChaCha20", tls.VersionTLS12, tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}, true},
		{"TLS 1.3", tls.VersionTLS13, tls.VersionTLS13, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			srvErr := make(chan error, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					srvErr <- err
					return
				}
				defer c.Close()
				srvErr <- tls.Server(c, server).Handshake()
			}()
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			client := tls.Client(conn, &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1",
				MinVersion: tt.min, MaxVersion: tt.max, CipherSuites: tt.suites})
			err = client.Handshake()
			if err != nil {
				_ = conn.Close() // the server's read ends here
			}
			serr := <-srvErr
			if (err == nil && serr == nil) != tt.ok {
				t.Errorf("handshake: client %v, server %v; want ok %v", err, serr, tt.ok)
			}
		})
	}
}

// TestServerErrorLogCut: the HTTP server's own log lines (which may quote a client's handshake)
// are cut to a bounded length, marked with their full one.
func TestServerErrorLogCut(t *testing.T) {
	var buf bytes.Buffer
	l := errorLog(slog.New(slog.NewTextHandler(&buf, nil)))
	l.Printf("http: TLS handshake error from 192.0.2.1:5: tls: client requested unsupported application protocols (%s)", strings.Repeat("x", 60<<10))
	if n := buf.Len(); n > 2*maxServerErrorBytes || !strings.Contains(buf.String(), "cut, ") || !strings.Contains(buf.String(), "level=WARN") {
		t.Errorf("%d bytes: %.300s", n, buf.String())
	}
}
