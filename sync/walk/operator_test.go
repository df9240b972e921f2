package walk_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/runner"
	"github.com/hrsync/hrsync/sync/walk"
)

// scheduledRunLogs runs one scheduled sync of c into a new SQLite warehouse, as the worker does,
// and returns what it logged.
func scheduledRunLogs(t *testing.T, ctx context.Context, c *client.Client) string {
	t.Helper()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	store := sinktest.Store(t, "sqlite", sink.Options{})
	syncer := walk.New(c, store, walk.Options{Logger: log})
	trigger, err := runner.Cron("@daily", nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := runner.NewRunner(ctx, runner.RunnerOptions{Lock: store, Logger: log}, syncer.Job(trigger, []sink.Resource{sink.WorkingPatterns, sink.Employees}))
	if err != nil {
		t.Fatal(err)
	}
	jobs.RunNow(runner.SyncJobName)
	return logs.String()
}

// TestStoppedSyncLogsNoError: a sync interrupted because hrsync is stopping is a clean stop:
// one line at INFO, nothing at ERROR, and the job runner adds nothing.
func TestStoppedSyncLogsNoError(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, 300, fakeupstream.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up.setHook(func(_ *fakeupstream.Service, _ int, r *http.Request) {
		if r.URL.Path == "/v1/employees" {
			cancel() // SIGTERM arrives while employees are walked
		}
	})
	logs := scheduledRunLogs(t, ctx, fastClient(t, up, client.Options{}))
	if strings.Contains(logs, "level=ERROR") {
		t.Errorf("a clean stop logged an error:\n%s", logs)
	}
	if n := strings.Count(logs, "sync interrupted"); n != 1 {
		t.Errorf("the stop is said %d times, want once:\n%s", n, logs)
	}
}

// TestFailedScheduledSyncIsLoggedOnce: a failing sync is logged once per collection by the
// sync, not again by the job runner.
func TestFailedScheduledSyncIsLoggedOnce(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, 20, fakeupstream.Options{})
	c, err := client.New(up.URL+"/v1", "not-the-key", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if logs := scheduledRunLogs(t, context.Background(), c); strings.Count(logs, "level=ERROR") != 1 {
		t.Errorf("%d ERROR lines for one refused key, want 1:\n%s", strings.Count(logs, "level=ERROR"), logs)
	}
}
