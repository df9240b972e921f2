package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

var updateGolden = flag.Bool("update-metrics-golden", false, "rewrite testdata/metrics.golden from this build's /metrics")

// goldenSeries is what TestWorkerMetricsGolden compares of an exposition: every hrsync_ family's
// HELP and TYPE lines and its series, names and labels without their values (times and counts
// vary from run to run), sorted. hrsync_build_info is left out (its label is the build's version).
var goldenSeries = regexp.MustCompile(`^(# (HELP|TYPE) )?hrsync_`)

func goldenLines(exposition string) []string {
	var out []string
	for line := range strings.SplitSeq(exposition, "\n") {
		if !goldenSeries.MatchString(line) || strings.Contains(line, "hrsync_build_info") {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			line = line[:strings.LastIndexByte(line, ' ')] // the value
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// TestWorkerMetricsGolden: the metrics a worker exposes on /metrics (text format) once its
// accounts have worked, each family's name, help and type and each series' labels, are those of
// its golden file in testdata, taken from the worker before the accounts' series were kept in one
// collector per family. Two cases: two accounts, one syncing two collections, the other
// onboarding a file and with a retention rule, both on the shared request budget (metrics-2.golden);
// one account without accounts: (metrics-1.golden; its series carry account="default" too).
// Dashboards, alert rules and scripts (deploy/) read these names: a rename, a label changed or a
// histogram's buckets changed fails here. (-update-metrics-golden rewrites the files from this
// build.)
func TestWorkerMetricsGolden(t *testing.T) {
	t.Parallel()
	t.Run("two accounts", func(t *testing.T) {
		dir := t.TempDir()
		up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(5, 7)})
		defer up.Close()
		in := filepath.Join(dir, "in")
		if err := os.MkdirAll(in, 0o700); err != nil {
			t.Fatal(err)
		}
		csv := "First Name,Last Name,Email,Start Date\r\nAna,Lima,ana.lima@example.com,2026-12-01\r\n"
		if err := os.WriteFile(filepath.Join(in, "cohort.csv"), []byte(csv), 0o600); err != nil {
			t.Fatal(err)
		}
		// acme syncs at start (and a year later); globex only onboards and has a retention
		// rule (retention runs under the sync's lock, so not beside a sync of its own: which
		// of the two took the lock first would change which series exist).
		config := fmt.Sprintf(`
source: {rate_limit: 6000}
accounts:
  - {name: acme, source: {url: %q, api_key: %q}, schedule: '0 0 1 1 *', sync: {resources: [working_patterns, employees], run_at_start: true}}
  - name: globex
    source: {url: %q, api_key: %q}
    onboarding: {dir: %q, poll_seconds: 1, settle_seconds: 0}
    retention: {leavers: {identifying: 6y}}
`, up.URL, up.APIKey(), up.URL, up.APIKey(), in)
		// Worked: acme's sync of both collections ok, its events job run (5 s after the
		// start: acme's place in the minute), globex's file onboarded (its retention is not
		// due at start: its series are those at zero). A job's duration and last success
		// exist once it has run: the test waits for every job that runs, or which of them had
		// would change the series.
		checkMetricsGolden(t, dir, config, "metrics-2.golden",
			`hrsync_sync_last_success_timestamp_seconds{account="acme",resource="employees"}`,
			`hrsync_sync_last_success_timestamp_seconds{account="acme",resource="working_patterns"}`,
			`hrsync_job_last_success_timestamp_seconds{account="acme",task="sync"}`,
			`hrsync_job_duration_seconds_count{account="acme",task="sync"}`, // observed after the success
			`hrsync_job_last_success_timestamp_seconds{account="acme",task="events"}`,
			`hrsync_job_duration_seconds_count{account="acme",task="events"}`,
			`hrsync_job_last_success_timestamp_seconds{account="globex",task="onboarding"}`, // the pass that took the file
			`hrsync_job_duration_seconds_count{account="globex",task="onboarding"}`,
			`hrsync_onboarding_files_total{account="globex",outcome="done"} 1`,
			`hrsync_onboarding_rows_total{account="globex",outcome="created"} 1`)
	})
	t.Run("one account", func(t *testing.T) {
		dir := t.TempDir()
		up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(5, 7)})
		defer up.Close()
		config := fmt.Sprintf(`
source: {url: %q, api_key: %q, rate_limit: 6000}
schedule: '0 0 1 1 *'
sync: {resources: [working_patterns, employees], run_at_start: true}
`, up.URL, up.APIKey())
		checkMetricsGolden(t, dir, config, "metrics-1.golden",
			`hrsync_sync_last_success_timestamp_seconds{account="default",resource="employees"}`,
			`hrsync_sync_last_success_timestamp_seconds{account="default",resource="working_patterns"}`,
			`hrsync_job_last_success_timestamp_seconds{account="default",task="sync"}`,
			`hrsync_job_duration_seconds_count{account="default",task="sync"}`,
			`hrsync_job_last_success_timestamp_seconds{account="default",task="events"}`, // at start
			`hrsync_job_duration_seconds_count{account="default",task="events"}`)
	})
}

// checkMetricsGolden runs a worker of config (its warehouse and metrics address added) in dir,
// waits for /metrics to hold every line of worked, and compares it with testdata/golden.
func checkMetricsGolden(t *testing.T, dir, config, golden string, worked ...string) {
	t.Helper()
	metrics := freeAddr(t)
	path := filepath.Join(dir, "config.yaml")
	config = fmt.Sprintf("warehouse: {url: %q}\nmetrics: {addr: %q}\nlog: {level: warn}\n", filepath.Join(dir, "hrsync.db"), metrics) + config
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, []string{"--config", path, "migrate"}, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--config", path, "run"}, nil, io.Discard, logs) }()
	defer func() { cancel(); <-done }()
	var page string
	for deadline := time.Now().Add(3 * time.Minute); ; { // a bound on a hang: under load a worked account once took 56 s
		if time.Now().After(deadline) {
			t.Fatalf("the accounts had not worked within 3 minutes:\n%s\n%s", page, logs)
		}
		time.Sleep(100 * time.Millisecond)
		resp, err := http.Get("http://" + metrics + "/metrics")
		if err != nil {
			continue // not listening yet
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page = string(body)
		all := resp.StatusCode == 200
		for _, w := range worked {
			all = all && strings.Contains(page, w)
		}
		if all {
			break
		}
	}
	got := goldenLines(page)
	golden = filepath.Join("testdata", golden)
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	have := map[string]bool{}
	for _, l := range got {
		have[l] = true
	}
	wanted := map[string]bool{}
	for _, l := range want {
		wanted[l] = true
		if !have[l] {
			t.Errorf("missing from /metrics: %s", l)
		}
	}
	for _, l := range got {
		if !wanted[l] {
			t.Errorf("not in %s: %s", golden, l)
		}
	}
}
