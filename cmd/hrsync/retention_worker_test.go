package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestWorkerRunsRetention: a worker with a retention rule runs retention at start, through its
// job runner (hrsync_job_runs_total{task="retention"}), counts what it erased and its success;
// restarted within the day, it finds the last run in the warehouse's log and runs nothing, the
// check uncounted, the last success exported from the log.
func TestWorkerRunsRetention(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + path, "HRSYNC_SCHEDULE=0 0 1 1 *", "HRSYNC_RETENTION_LEAVERS_IDENTIFYING=1y"}
	if err := run(ctx, []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	s, err := sink.Open(ctx, path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var e v1.Employee
	if err := e.UnmarshalJSON([]byte(`{"id":42,"first_name":"Zorblax","last_name":"Quendrith","status":"Ex-employee","leaving_date":"2001-01-31","department":{"id":2,"name":"Kitchen"}}`)); err != nil {
		t.Fatal(err)
	}
	sinktest.WalkEmployees(t, s, []v1.Employee{e}, 10, sink.MergeOptions{})
	s.Close()

	p := startRun(t, bin, env)
	p.waitFor(t, "the retention run counted", func() bool {
		return metricValue(t, p.scrape(t), "hrsync_job_runs_total", "task=retention") >= 1
	})
	m := p.scrape(t)
	if n, _ := seriesValue(t, m, "hrsync_job_runs_total", "task=retention", "outcome=ok"); n != 1 {
		t.Errorf("retention runs ok: %v, want 1\n%s", n, p.stderr)
	}
	if n, _ := seriesValue(t, m, "hrsync_retention_erased_total", "class=identifying"); n != 1 {
		t.Errorf("hrsync_retention_erased_total{class=identifying} = %v, want 1", n)
	}
	first := metricValue(t, m, "hrsync_retention_last_success_timestamp_seconds", "")
	if first == 0 {
		t.Error("no last success")
	}
	p.stop(t, account.StopTimeout)
	s, err = sink.Open(ctx, path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if found := sinktest.MarkersIn(t, s, []string{"Zorblax", "Quendrith"}); len(found) > 0 {
		t.Errorf("after the worker's retention, found %v", found)
	}
	s.Close()

	p = startRun(t, bin, append(env, "HRSYNC_LOG_LEVEL=debug"))
	p.waitFor(t, "the check", func() bool { return strings.Contains(p.stderr.String(), "job not due yet") })
	m = p.scrape(t)
	if n := metricValue(t, m, "hrsync_job_runs_total", "task=retention"); n != 0 {
		t.Errorf("a check not due was counted as a run: %v", n)
	}
	if last := metricValue(t, m, "hrsync_retention_last_success_timestamp_seconds", ""); last < first-1 {
		t.Errorf("after a restart, the last success is %v, want %v from the log", last, first)
	}
	p.stop(t, account.StopTimeout)
}
