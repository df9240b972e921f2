package main

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/tlstest"
)

// tlsClient trusts ca only; http2 says whether it offers HTTP/2. Each request is on a new
// connection, so it sees the certificate served at that moment.
func tlsClient(ca *tlstest.CA, http2 bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}, DisableKeepAlives: true,
		Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP1(true)
	tr.Protocols.SetHTTP2(http2)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// served answers a GET of url with the key: its protocol, status, and the serial of the
// certificate the server presented.
func served(t *testing.T, c *http.Client, url string) (proto, status int, serial int64) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-API-KEY", "k1-4f9a0c7e2b1d8e6f3a5c9b0d")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.TLS != nil {
		serial = resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	return resp.ProtoMajor, resp.StatusCode, serial
}

// startTLSServe runs hrsync serve with env on a SQLite warehouse and waits until it answers
// over HTTPS (or, with ca nil, over cleartext).
func startTLSServe(t *testing.T, ca *tlstest.CA, env ...string) (base string, logs *syncBuffer) {
	t.Helper()
	addr := freeAddr(t)
	env = append(env, "HRSYNC_SERVE_ADDR="+addr, "HRSYNC_SERVE_API_KEYS=k1-4f9a0c7e2b1d8e6f3a5c9b0d",
		"HRSYNC_WAREHOUSE_URL="+warehouseFile(t, filepath.Join(t.TempDir(), "wh.db")))
	ctx, cancel := context.WithCancel(context.Background())
	logs = &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, env, io.Discard, logs) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(httpserve.ShutdownTimeout + 5*time.Second):
			t.Error("serve did not stop")
		}
	})
	scheme, client := "http", &http.Client{Timeout: 2 * time.Second}
	if ca != nil {
		scheme, client = "https", tlsClient(ca, true)
	}
	base = scheme + "://" + addr
	deadline := time.Now().Add(upWithin)
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			return base, logs
		}
		select {
		case err := <-done:
			t.Fatalf("serve exited: %v; logs:\n%s", err, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not come up: %v; logs:\n%s", err, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeTLS: serve answers over HTTPS with HTTP/2 and HTTP/1.1, and a rotated certificate is
// served without a restart, on SIGHUP and on a change of the files alone; a broken pair leaves
// the previous one serving until it is mended.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	defer func(d time.Duration) { httpserve.CertPollInterval = d }(httpserve.CertPollInterval)
	httpserve.CertPollInterval = 50 * time.Millisecond
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca := tlstest.NewCA(t)
	ca.Issue(t, 2, certFile, keyFile)
	base, logs := startTLSServe(t, ca, "HRSYNC_SERVE_TLS_CERT="+certFile, "HRSYNC_SERVE_TLS_KEY="+keyFile)

	for _, tt := range []struct {
		name  string
		http2 bool
		proto int
	}{{"http2", true, 2}, {"http1", false, 1}} {
		if proto, status, serial := served(t, tlsClient(ca, tt.http2), base+"/v1/employees"); proto != tt.proto || status != 200 || serial != 2 {
			t.Errorf("%s: HTTP/%d, status %d, serial %d", tt.name, proto, status, serial)
		}
	}
	// Cleartext on the TLS port gets Go's 400 ("an HTTP request to an HTTPS server"), no data.
	if resp, err := http.Get(strings.Replace(base, "https:", "http:", 1) + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("cleartext HTTP on the TLS port: %d", resp.StatusCode)
		}
	}

	// waitSerial polls new connections to *at until the server presents serial.
	at := &base
	waitSerial := func(what string, serial int64) {
		t.Helper()
		deadline := time.Now().Add(reloadWithin)
		for {
			_, status, got := served(t, tlsClient(ca, true), *at+"/v1/employees")
			if got == serial && status == 200 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still serving serial %d, want %d; logs:\n%s", what, got, serial, logs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A change of the files alone.
	ca.Issue(t, 3, certFile, keyFile)
	waitSerial("file change", 3)

	// A key that does not match the certificate: the previous pair keeps serving, an error says
	// why; mended, the new pair is served.
	ca.Issue(t, 4, certFile, filepath.Join(dir, "other.key"))
	deadline := time.Now().Add(reloadWithin)
	for !strings.Contains(logs.String(), "certificate not reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no error for a broken pair; logs:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, _, got := served(t, tlsClient(ca, true), base+"/v1/employees"); got != 3 {
		t.Errorf("after a broken pair: serial %d, want 3 (the previous one)", got)
	}
	ca.Issue(t, 5, certFile, keyFile)
	waitSerial("mended pair", 5)

	// SIGHUP, to a server that polls its files too seldom to notice the change by itself.
	httpserve.CertPollInterval = time.Hour
	dir2 := t.TempDir()
	certFile, keyFile = filepath.Join(dir2, "tls.crt"), filepath.Join(dir2, "tls.key")
	ca.Issue(t, 7, certFile, keyFile)
	base, logs = startTLSServe(t, ca, "HRSYNC_SERVE_TLS_CERT="+certFile, "HRSYNC_SERVE_TLS_KEY="+keyFile)
	ca.Issue(t, 8, certFile, keyFile)
	time.Sleep(100 * time.Millisecond)
	if _, _, got := served(t, tlsClient(ca, true), base+"/v1/employees"); got != 7 {
		t.Fatalf("reloaded before SIGHUP: serial %d", got)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitSerial("SIGHUP", 8)
	if !strings.Contains(logs.String(), "reason=SIGHUP") {
		t.Errorf("no reload logged for SIGHUP; logs:\n%s", logs)
	}
	if strings.Contains(logs.String(), "PRIVATE KEY") {
		t.Error("key material in the logs")
	}
}

// TestServeH2C: with serve.h2c, the cleartext port takes HTTP/2 with prior knowledge and
// HTTP/1.1 both; without it, HTTP/2 with prior knowledge is refused.
func TestServeH2C(t *testing.T) {
	t.Parallel()
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	for _, on := range []bool{true, false} {
		env := []string{}
		if on {
			env = append(env, "HRSYNC_SERVE_H2C=true")
		}
		base, _ := startTLSServe(t, nil, env...)
		proto, status, _ := served(t, &http.Client{Timeout: 5 * time.Second}, base+"/v1/employees")
		if proto != 1 || status != 200 {
			t.Errorf("h2c %v: HTTP/1.1 client got HTTP/%d %d", on, proto, status)
		}
		req, _ := http.NewRequest("GET", base+"/v1/employees", nil)
		req.Header.Set("X-API-KEY", "k1-4f9a0c7e2b1d8e6f3a5c9b0d")
		resp, err := (&http.Client{Transport: h2c, Timeout: 5 * time.Second}).Do(req)
		switch {
		case on && err != nil:
			t.Errorf("h2c on: %v", err)
		case on && (resp.ProtoMajor != 2 || resp.StatusCode != 200):
			t.Errorf("h2c on: HTTP/%d %d", resp.ProtoMajor, resp.StatusCode)
		case !on && err == nil && resp.ProtoMajor == 2:
			t.Errorf("h2c off: answered HTTP/2")
		}
		if resp != nil {
			resp.Body.Close()
		}
	}
}

// TestServeTLSConfigErrors: a half-configured or unloadable certificate stops serve before it
// listens, with one line saying what is wrong.
func TestServeTLSConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := tlstest.NewCA(t)
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca.Issue(t, 2, certFile, keyFile)
	ca.Issue(t, 3, filepath.Join(dir, "b.crt"), filepath.Join(dir, "b.key"))
	for _, tt := range []struct {
		name string
		env  []string
		want string
	}{
		{"cert only", []string{"HRSYNC_SERVE_TLS_CERT=" + certFile}, "serve.tls_cert and serve.tls_key go together"},
		{"key only", []string{"HRSYNC_SERVE_TLS_KEY=" + keyFile}, "serve.tls_cert and serve.tls_key go together"},
		{"missing file", []string{"HRSYNC_SERVE_TLS_CERT=" + filepath.Join(dir, "none.crt"), "HRSYNC_SERVE_TLS_KEY=" + keyFile}, "no such file"},
		{"key of another cert", []string{"HRSYNC_SERVE_TLS_CERT=" + certFile, "HRSYNC_SERVE_TLS_KEY=" + filepath.Join(dir, "b.key")}, "private key does not match public key"},
		{"h2c with tls", []string{"HRSYNC_SERVE_TLS_CERT=" + certFile, "HRSYNC_SERVE_TLS_KEY=" + keyFile, "HRSYNC_SERVE_H2C=true"}, "serve.h2c is cleartext HTTP/2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wh := filepath.Join(t.TempDir(), "wh.db")
			env := append(tt.env, "HRSYNC_SERVE_ADDR="+freeAddr(t), "HRSYNC_SERVE_API_KEYS=k1-4f9a0c7e2b1d8e6f3a5c9b0d",
				"HRSYNC_WAREHOUSE_URL="+wh)
			ctx, cancel := context.WithTimeout(context.Background(), upWithin)
			defer cancel()
			err := run(ctx, []string{"serve"}, env, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") || exitCode(err) == 0 {
				t.Errorf("got %v, want one line with %q", err, tt.want)
			}
			// Refused before any warehouse was opened (and, new, made).
			if _, err := os.Stat(wh); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the warehouse was opened before the certificate was checked (stat: %v)", err)
			}
		})
	}
}
