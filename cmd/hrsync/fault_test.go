package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// silentWarehouse migrates a Postgres warehouse and puts a fault-injection proxy in front of it:
// the worker's environment points at the proxy; direct reaches the warehouse itself.
func silentWarehouse(t *testing.T, up *sourcetest.Server, extra ...string) (proxy *sinktest.Proxy, env []string, direct *sql.DB, schemaName string) {
	t.Helper()
	url, schemaName := sinktest.Postgres(t)
	base := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + url, "HRSYNC_WAREHOUSE_SCHEMA=" + schemaName, "HRSYNC_LOG_FORMAT=json"}
	if err := run(context.Background(), []string{"migrate"}, base, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	proxy, proxied := sinktest.ProxyURL(t, url)
	env = append(append(base, "HRSYNC_WAREHOUSE_URL="+proxied), extra...) // the later wins
	direct, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = direct.Close() })
	return proxy, env, direct, schemaName
}

func waitSilenced(t *testing.T, proxy *sinktest.Proxy, p *process) {
	t.Helper()
	select {
	case <-proxy.Silenced():
	case <-time.After(slowness.Bound(3 * time.Minute)): // a hang: reaching the merge took 49 s once in CI
		t.Fatalf("the merge never reached the warehouse\n%s", p.stderr)
	}
}

// With the warehouse silent mid-merge (and the default, long statement timeout), /readyz says
// 503 within its own timeout, and SIGTERM stops the worker within 30 s, exit status 0.
func TestWorkerStopsWhileTheWarehouseIsSilent(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(300, 7)})
	defer up.Close()
	proxy, env, _, _ := silentWarehouse(t, up, "HRSYNC_SCHEDULE=@daily")
	proxy.SilenceOn("UPDATE employees SET")
	p := startRun(t, bin, env, "--now")
	p.scrape(t)
	waitSilenced(t, proxy, p)

	client := &http.Client{Timeout: 30 * time.Second}
	asked := time.Now()
	resp, err := client.Get("http://" + p.metrics + "/readyz")
	if err != nil {
		t.Fatalf("/readyz did not answer: %v\n%s", err, p.stderr)
	}
	// Its own timeout is 3 s; the bound leaves room for a loaded machine, and is far below the
	// statement timeout (5 min) a check without its own bound would wait for.
	if d := time.Since(asked); d > 15*time.Second {
		t.Errorf("/readyz answered after %s, want within its own timeout", d)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz: %d %s, want 503", resp.StatusCode, body)
	}

	p.stop(t, 30*time.Second) // exit 0, within 30 s
}

// A run that meets a silent warehouse gives up after the statement timeout and lets the
// schedule go on: once the warehouse is back, the next scheduled run syncs.
func TestWorkerRunsAgainOnceTheWarehouseIsBack(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(300, 8)})
	defer up.Close()
	proxy, env, direct, schemaName := silentWarehouse(t, up, "HRSYNC_SCHEDULE=@every 2s", "HRSYNC_WAREHOUSE_STATEMENT_TIMEOUT=2s")
	proxy.SilenceOn("UPDATE employees SET")
	p := startRun(t, bin, env, "--now")
	waitSilenced(t, proxy, p)
	deadline := time.Now().Add(slowness.Bound(90 * time.Second))
	for !strings.Contains(p.stderr.String(), "the warehouse did not answer") {
		if time.Now().After(deadline) {
			t.Fatalf("the run never gave up on the silent warehouse\n%s", p.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	proxy.Resume()
	for {
		var ok int
		if err := direct.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s.sync_runs WHERE resource = 'employees' AND status = 'ok'`, schemaName)).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scheduled run synced after the warehouse came back\n%s", p.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.stop(t, 30*time.Second)
}

// Asked to stop while the warehouse is silent mid-merge, `hrsync sync` returns within 30 s of
// the request, far inside the 5-minute statement timeout it must not wait for.
func TestSyncCommandStopsWhileTheWarehouseIsSilent(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(300, 9)})
	defer up.Close()
	proxy, env, _, _ := silentWarehouse(t, up)
	proxy.SilenceOn("UPDATE employees SET")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"sync"}, env, io.Discard, io.Discard) }()
	// Reaching the merge is the sync's usual work, which a loaded machine makes slow (49 s once,
	// in CI): the wait for it is a bound on a hang. The test times what it is about, from the
	// request to stop on.
	select {
	case <-proxy.Silenced():
	case err := <-done:
		t.Fatalf("sync ended before the merge reached the warehouse: %v", err)
	case <-time.After(slowness.Bound(3 * time.Minute)):
		t.Fatal("the merge never reached the warehouse")
	}
	cancel() // SIGTERM
	asked := time.Now()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "interrupted") && !strings.Contains(err.Error(), "canceled") {
			t.Errorf("sync stopped with %v, want it to say it was stopped", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("sync was still waiting on the silent warehouse %s after it was asked to stop", time.Since(asked).Round(time.Second))
	}
}
