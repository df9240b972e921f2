package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// hrsync run and hrsync serve started from one config.yaml: without serve.metrics_addr, serve
// finds run's metrics.addr taken and stops at once with the line docs/serve.md prints, having
// bound nothing (and run started second beside serve stops with its own line); with it, both
// run side by side, each answering on its own ports.
func TestServeBesideRunFromOneConfig(t *testing.T) {
	src := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(5, 1)})
	defer src.Close()
	dir := t.TempDir()
	wh := warehouseFile(t, filepath.Join(dir, "hrsync.db"))
	runMetrics, serveAddr, serveMetrics := freeAddr(t), freeAddr(t), freeAddr(t)
	write := func(extra string) string {
		path := filepath.Join(dir, "config.yaml")
		text := fmt.Sprintf(`
source: {url: %q, api_key: %q, rate_limit: 0}
warehouse: {url: %q}
schedule: "@every 1h"
metrics: {addr: %q}
serve: {addr: %q, api_keys: [%q]%s}
`, src.URL, src.APIKey(), wh, runMetrics, serveAddr, unreachableKey, extra)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write("")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--config", path, "run"}, nil, io.Discard, logs) }()
	deadline := time.Now().Add(upWithin)
	for {
		if answers200("http://" + runMetrics + "/healthz") {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("run ended: %v\n%s", err, logs)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("run did not come up:\n%s", logs)
		}
	}

	// The second fails fast, with one line naming the setting, and binds nothing.
	sctx, scancel := context.WithTimeout(context.Background(), upWithin)
	defer scancel()
	started := time.Now()
	err := run(sctx, []string{"--config", path, "serve"}, nil, io.Discard, io.Discard)
	if err == nil || sctx.Err() != nil {
		t.Fatalf("serve beside run: %v (after %v)", err, time.Since(started))
	}
	want := fmt.Sprintf("serve: metrics address %s is in use (by hrsync run?): set serve.metrics_addr (HRSYNC_SERVE_METRICS_ADDR) to another address, or serve from the worker with hrsync run --serve (address already in use)", runMetrics)
	if err.Error() != want || strings.Contains(err.Error(), "\n") || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("serve said %q,\nwant %q", err, want)
	}
	if c, err := net.Dial("tcp", serveAddr); err == nil {
		c.Close()
		t.Errorf("serve's API port %s was bound by a serve that failed", serveAddr)
	}
	doc := strings.Join(strings.Fields(readRepoFile(t, "docs/serve.md")), " ")
	if !strings.Contains(doc, strings.ReplaceAll(want, runMetrics, ":9090")) {
		t.Errorf("docs/serve.md does not print the line serve says: %q", want)
	}

	// With serve.metrics_addr, both run.
	path = write(fmt.Sprintf(", metrics_addr: %q", serveMetrics))
	base, slogs, stop := startServe(t, nil, "--config", path)
	if code, body := get(t, base+"/v1/employees", unreachableKey); code != 200 {
		t.Errorf("serve's API: %d %s", code, body)
	}
	if code, body := get(t, "http://"+serveMetrics+"/metrics", ""); code != 200 || !strings.Contains(body, "hrsync_serve_requests_total") {
		t.Errorf("serve's metrics on serve.metrics_addr: %d", code)
	}
	if code, body := get(t, "http://"+runMetrics+"/metrics", ""); code != 200 || strings.Contains(body, "hrsync_serve_requests_total") {
		t.Errorf("run's metrics: %d, or serve's series on them", code)
	}
	if err := stop(); err != nil {
		t.Errorf("serve stop: %v\n%s", err, slogs)
	}
	select {
	case err := <-done:
		t.Fatalf("run ended beside serve: %v\n%s", err, logs)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}

	// The other way round: serve first, without serve.metrics_addr, holds metrics.addr; run then
	// fails fast with one line naming the settings.
	path = write("")
	_, _, stop = startServe(t, nil, "--config", path)
	defer stop()
	rctx, rcancel := context.WithTimeout(context.Background(), upWithin)
	defer rcancel()
	err = run(rctx, []string{"--config", path, "run"}, nil, io.Discard, io.Discard)
	want = fmt.Sprintf("run: metrics address %s is in use (by hrsync serve?): set serve.metrics_addr (HRSYNC_SERVE_METRICS_ADDR) for serve, or metrics.addr (HRSYNC_METRICS_ADDR) to another address (address already in use)", runMetrics)
	if err == nil || rctx.Err() != nil || err.Error() != want {
		t.Errorf("run beside serve said %v,\nwant %q", err, want)
	}
}

// The configuration docs/serve.md shows for serve beside the worker gives each its own port.
func TestServeBesideRunDocExample(t *testing.T) {
	section := readRepoFile(t, "docs/serve.md")
	_, section, _ = strings.Cut(section, "## Serve beside the worker")
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok {
		t.Fatal("docs/serve.md: no yaml block under Serve beside the worker")
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Metrics.Addr == "" || account.ServeMetricsAddr(s) == s.Metrics.Addr || account.ServeMetricsAddr(s) == s.Serve.Addr {
		t.Errorf("run's metrics %q, serve's %q, serve's API %q: not three ports", s.Metrics.Addr, account.ServeMetricsAddr(s), s.Serve.Addr)
	}
}

// answers200 reports whether url answers 200.
func answers200(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}
