package onboard_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/runner"
)

// A file as a spreadsheet exports it: BOM, CRLF, human headers, accents, quoted commas, a
// formula, a bad date and a bad email.
const spreadsheet = "\ufeffFirst Name;Last Name;E-mail;Job Title;Start Date\r\n" +
	"Zoë;Ødegård;zoe@example.com;\"Chef, Pastry\";2026/12/01\r\n" +
	"José;\"O'Brien, Jr.\";jose@example.com;Engineer;2026-12-02\r\n" +
	"=cmd|' /C calc'!A0;Evil;evil@example.com;;2026/12/03\r\n" +
	"Ann;Lee;ann@example;Nurse;2026/12/04\r\n" +
	"Bo;Ek;bo@example.com;Nurse;12/31/2026\r\n" + // month first, under the day-first default
	";;;;\r\n"

// panicOnce is a source whose first create panics.
type panicOnce struct {
	onboard.Upstream
	done atomic.Bool
}

func (p *panicOnce) CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error) {
	if p.done.CompareAndSwap(false, true) {
		panic("boom")
	}
	return p.Upstream.CreateEmployee(ctx, ne)
}

// TestOnboardingPollSurvivesAPanic: a pass of the folder, run as the worker runs it (Job under
// the job runner), that panics is logged and counted on hrsync_job_panics_total{task="onboarding"},
// and the next pass onboards the file.
func TestOnboardingPollSurvivesAPanic(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	c, err := client.New(up.URL+"/v1", up.APIKey(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cohort.csv"), []byte(spreadsheet), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	var logs sinktest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	o := onboard.New(&panicOnce{Upstream: c}, store, onboard.Options{Metrics: onboard.NewMetrics(reg), Logger: log})
	jobs, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Lock: store, Metrics: runner.NewMetrics(reg), Logger: log},
		o.Job(time.Second, onboard.PassOptions{Dir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	jobs.Start()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := jobs.Stop(ctx); err != nil {
			t.Error(err)
		}
	}
	defer stop()
	deadline := time.Now().Add(slowness.Bound(30 * time.Second))
	for !exists(t, filepath.Join(dir, "processed", "cohort.csv")) {
		if time.Now().After(deadline) {
			t.Fatal("the file was not onboarded in time after the panic")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := up.Count("/v1/employees", http.StatusCreated); n != 3 {
		t.Errorf("%d created, want 3", n)
	}
	stop()
	if !strings.Contains(logs.String(), `msg="job panicked; it runs again at its next time" task=onboarding`) {
		t.Errorf("the panic was not logged:\n%s", logs.String())
	}
	if got := counterValue(t, reg, "hrsync_job_panics_total", "task", "onboarding"); got != 1 {
		t.Errorf("hrsync_job_panics_total{task=\"onboarding\"} = %v, want 1", got)
	}
}

// counterValue reads one series of a counter from reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("%s{%s=%q} not found", name, label, value)
	return 0
}

// TestWorkerRetriesFailedFilesWithBackoff: a file that went to failed/ in a source outage is
// retried by the worker's folder pass on its own once its backoff is due, and finished.
func TestWorkerRetriesFailedFilesWithBackoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cohort.csv"), []byte(spreadsheet), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	_ = ln.Close()
	fast := client.Options{RetryInitial: time.Millisecond, RetryMax: 5 * time.Millisecond}
	down, err := client.New(closed, fakeupstream.DefaultAPIKey, fast)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	pass := onboard.PassOptions{Dir: dir, Retries: &onboard.FailedRetries{Now: func() time.Time { return now }}}
	if _, err := onboard.New(down, store, onboard.Options{}).Pass(ctx, pass); err != nil {
		t.Fatal(err)
	}
	if !exists(t, filepath.Join(dir, "failed", "cohort.csv")) {
		t.Fatal("the file did not go to failed/ in the outage")
	}

	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	c, err := client.New(up.URL+"/v1", up.APIKey(), fast)
	if err != nil {
		t.Fatal(err)
	}
	o := onboard.New(c, store, onboard.Options{})
	for _, step := range []struct {
		after    time.Duration
		finished bool
	}{
		{0, false}, // just failed: not retried at once
		{onboard.FailedRetryInitial - time.Second, false}, // not yet
		{time.Second, true}, // due: retried and finished
	} {
		now = now.Add(step.after)
		if _, err := o.Pass(ctx, pass); err != nil {
			t.Fatal(err)
		}
		if got := exists(t, filepath.Join(dir, "processed", "cohort.csv")); got != step.finished {
			t.Fatalf("after %s more: finished %v, want %v", step.after, got, step.finished)
		}
	}
	if n := up.Count("/v1/employees", http.StatusCreated); n != 3 {
		t.Errorf("%d created, want 3", n)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "failed")); len(entries) != 0 {
		t.Errorf("failed/ still holds %d entries", len(entries))
	}
}
