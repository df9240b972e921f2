package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sync/runner"
)

// TestWorkerSpreadsSchedules: a worker of three accounts on one nightly schedule runs each at
// its own place in its schedule_spread (the default, none, an hour), as
// hrsync_job_next_run_timestamp_seconds says: 02:00 plus the account's offset.
func TestWorkerSpreadsSchedules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	metrics := freeAddr(t)
	path := filepath.Join(dir, "config.yaml")
	config := fmt.Sprintf(`
warehouse: {url: %q}
schedule: "0 2 * * *"
metrics: {addr: %q}
accounts:
  - {name: acme, source: {url: "http://127.0.0.1:1/v1", api_key: k}}
  - {name: globex, source: {url: "http://127.0.0.1:1/v1", api_key: k}, schedule_spread: 0s}
  - {name: initech, source: {url: "http://127.0.0.1:1/v1", api_key: k}, schedule_spread: 1h}
`, filepath.Join(dir, "hrsync.db"), metrics)
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
	started := time.Now()
	go func() { done <- run(ctx, []string{"--config", path, "run"}, nil, io.Discard, logs) }()
	defer func() { cancel(); <-done }()
	next := regexp.MustCompile(`hrsync_job_next_run_timestamp_seconds\{account="([a-z]+)",task="sync"\} (\S+)`)
	got := map[string]int64{}
	for deadline := time.Now().Add(upWithin); len(got) < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("no next runs on /metrics within 30 s (%v):\n%s", got, logs)
		}
		time.Sleep(100 * time.Millisecond)
		resp, err := http.Get("http://" + metrics + "/metrics")
		if err != nil {
			continue // not listening yet
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			for _, m := range next.FindAllStringSubmatch(string(body), -1) {
				v, err := strconv.ParseFloat(m[2], 64)
				if err != nil {
					t.Fatal(err)
				}
				got[m[1]] = int64(v)
			}
		}
	}
	// The first 02:00 UTC after t.
	at2 := func(t time.Time) time.Time {
		d := time.Date(t.Year(), t.Month(), t.Day(), 2, 0, 0, 0, time.UTC)
		if !d.After(t) {
			d = d.AddDate(0, 0, 1)
		}
		return d
	}
	for name, spread := range map[string]time.Duration{"acme": 10 * time.Minute, "globex": 0, "initech": time.Hour} {
		off := runner.Offset(name, spread)
		want := at2(started.UTC().Add(-off)).Add(off).Unix()
		if got[name] != want {
			t.Errorf("%s: next run at %s, want %s (02:00 + %s)", name, time.Unix(got[name], 0).UTC(), time.Unix(want, 0).UTC(), off)
		}
	}
}
