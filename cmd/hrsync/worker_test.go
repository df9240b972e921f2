package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hrsync/hrsync/internal/releasebuild"
	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// buildBinary is hrsync built for the tests that run it as a process, as a release is built
// (package releasebuild: the binary that ships, and the packages go vet compiled): built once
// per test process, at the first test that asks, into a directory TestMain removes. Each test
// building its own copy cost the package a link of the whole binary per test.
func buildBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "hrsync-test-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		bin := filepath.Join(dir, "hrsync")
		if err := releasebuild.Build(context.Background(), "", ".", bin, ""); err != nil {
			built.err = err
			return
		}
		built.bin = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// built is the binary buildBinary built, shared by every test of the process.
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// removeBuilt removes buildBinary's directory (TestMain, after the tests).
func removeBuilt() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

type process struct {
	cmd     *exec.Cmd
	stderr  *syncBuffer
	metrics string
	done    chan error
}

// startRun starts `hrsync run` with env and its metrics on a free port.
func startRun(t *testing.T, bin string, env []string, args ...string) *process {
	t.Helper()
	metrics := freeAddr(t)
	p := startProcess(t, bin, "", append(env, "HRSYNC_METRICS_ADDR="+metrics), append([]string{"run"}, args...)...)
	p.metrics = metrics
	return p
}

// startProcess starts bin with args in dir ("" for this one) with only env and PATH; the
// process is killed when the test ends.
func startProcess(t *testing.T, bin, dir string, env []string, args ...string) *process {
	t.Helper()
	p := &process{stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(env, "PATH="+os.Getenv("PATH"))
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

// stop sends SIGTERM and waits for a clean exit within the bound.
func (p *process) stop(t *testing.T, within time.Duration) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, p.stderr)
		}
	case <-time.After(within):
		t.Errorf("did not exit within %s of SIGTERM\n%s", within, p.stderr)
	}
}

func (p *process) scrape(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(upWithin)
	for {
		resp, err := http.Get("http://" + p.metrics + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics: %v\n%s", err, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func metricValue(t *testing.T, exposition, name, label string) float64 {
	t.Helper()
	// Legacy names: Prometheus conventions, as promtool checks them.
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	total := 0.0
	if f, ok := families[name]; ok {
		for _, m := range f.GetMetric() {
			match := label == ""
			for _, l := range m.GetLabel() {
				match = match || l.GetName()+"="+l.GetValue() == label
			}
			if match {
				total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return total
}

// TestTwoWorkersNeverSyncAtOnce: two `hrsync run` processes on one warehouse, both scheduled
// every second; the advisory lock lets one sync at a time, the other skips and counts it, and
// the ledger shows no overlapping runs of a resource.
func TestTwoWorkersNeverSyncAtOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs processes for several seconds")
	}
	bin := buildBinary(t)
	// Slow pages make each run last long enough for the other worker's schedule to fire.
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(400, 5),
		Fault: func(int, *http.Request) fakeupstream.Fault { return fakeupstream.Fault{Delay: 250 * time.Millisecond} }})
	defer up.Close()
	url, schemaName := sinktest.Postgres(t)
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + url, "HRSYNC_WAREHOUSE_SCHEMA=" + schemaName, "HRSYNC_SCHEDULE=@every 1s",
		"HRSYNC_SYNC_CONCURRENCY=1", "HRSYNC_SYNC_MAX_DELETE_SHARE=1"}
	if err := run(context.Background(), []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	a, b := startRun(t, bin, env), startRun(t, bin, env)
	time.Sleep(6 * time.Second)
	ma, mb := a.scrape(t), b.scrape(t)
	a.stop(t, 45*time.Second)
	b.stop(t, 45*time.Second)

	locked := metricValue(t, ma, "hrsync_sync_skipped_total", "reason=locked") + metricValue(t, mb, "hrsync_sync_skipped_total", "reason=locked")
	if locked == 0 {
		t.Errorf("no run was skipped for the lock; logs:\n%s\n%s", a.stderr, b.stderr)
	}
	// Each worker says which collections its schedule walks (the default: all of them), for
	// the stale-sync alert.
	for _, page := range []string{ma, mb} {
		if metricValue(t, page, "hrsync_sync_resource_configured", "resource=absences") != 1 ||
			metricValue(t, page, "hrsync_sync_resource_configured", "resource=employees") != 1 {
			t.Errorf("a worker's /metrics does not say absences and employees are configured")
		}
	}
	// Either worker may have won the lock every time; a labelled request series appears at the
	// first request, so the names are looked for on both pages.
	for _, want := range []string{"hrsync_sync_runs_total", "hrsync_source_requests_total", "go_goroutines", "process_resident_memory_bytes", "hrsync_build_info"} {
		if !strings.Contains(ma, want) && !strings.Contains(mb, want) {
			t.Errorf("neither /metrics has %s", want)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		for _, page := range []string{ma, mb} {
			cmd := exec.Command(promtool, "check", "metrics")
			cmd.Stdin = strings.NewReader(page)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("promtool check metrics: %v\n%s", err, out)
			}
		}
	}

	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(fmt.Sprintf(`SELECT resource, started_at, finished_at FROM %s.sync_runs ORDER BY resource, started_at`, schemaName))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var prevRes string
	var prevEnd time.Time
	n := 0
	for rows.Next() {
		var res string
		var start time.Time
		var end sql.NullTime
		if err := rows.Scan(&res, &start, &end); err != nil {
			t.Fatal(err)
		}
		n++
		if res == prevRes && start.Before(prevEnd) {
			t.Errorf("%s: a run started at %s before the previous ended at %s", res, start, prevEnd)
		}
		prevRes, prevEnd = res, end.Time
	}
	if n < 4 {
		t.Errorf("%d ledger rows: expected several runs of both resources", n)
	}
}

// TestRunStopsCleanlyMidSync: SIGTERM during a sync stops fetching, rolls the transaction
// back, stops the servers, and exits 0 quickly; the ledger says the run did not finish.
func TestRunStopsCleanlyMidSync(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	employeesAsked := make(chan struct{})
	var once sync.Once
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(900, 6),
		Fault: func(_ int, r *http.Request) fakeupstream.Fault {
			if r.URL.Path == "/v1/employees" {
				once.Do(func() { close(employeesAsked) })
				return fakeupstream.Fault{Delay: 2 * time.Second}
			}
			return fakeupstream.Fault{}
		}})
	defer up.Close()
	url, schemaName := sinktest.Postgres(t)
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + url, "HRSYNC_WAREHOUSE_SCHEMA=" + schemaName, "HRSYNC_SCHEDULE=@daily",
		"HRSYNC_LOG_FORMAT=json"}
	if err := run(context.Background(), []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	p := startRun(t, bin, env, "--now")
	p.scrape(t)
	select { // working patterns are in; employees' first page is in flight
	case <-employeesAsked:
	case <-time.After(slowness.Bound(60 * time.Second)):
		t.Fatalf("employees never asked for\n%s", p.stderr)
	}
	p.stop(t, 15*time.Second)
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var employees int
	var status, errText string
	if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s.employees`, schemaName)).Scan(&employees); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(fmt.Sprintf(`SELECT status, coalesce(error, '') FROM %s.sync_runs WHERE resource = 'employees' ORDER BY id DESC LIMIT 1`, schemaName)).Scan(&status, &errText); err != nil {
		t.Fatalf("the employees run: %v\n%s", err, p.stderr)
	}
	if employees != 0 || status != "failed" || !strings.Contains(errText, "interrupted") {
		t.Errorf("after SIGTERM: %d employees loaded (want 0), run %s %q", employees, status, errText)
	}
	if !bytes.Contains([]byte(p.stderr.String()), []byte(`"msg":"stopped"`)) {
		t.Errorf("no clean stop in the logs:\n%s", p.stderr)
	}
	// A clean stop is said once, as what it is: not as an error.
	if strings.Contains(p.stderr.String(), `"level":"ERROR"`) {
		t.Errorf("a clean stop logged errors:\n%s", p.stderr)
	}
}
