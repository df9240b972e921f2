package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// startPlain starts `hrsync run` the way an operator would at a shell: in a directory of its
// own (so the warehouse is the default hrsync.db there), with only the variables given: no
// metrics address, no --serve.
func startPlain(t *testing.T, bin, dir string, env []string) *process {
	t.Helper()
	return startProcess(t, bin, dir, append(env, "HOME="+dir), "run")
}

// waitFor waits, within a bound generous enough for a loaded machine, until cond holds; it
// fails the test at once if the process exits first.
func (p *process) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	slowness.Wait{For: 60 * time.Second, Every: 100 * time.Millisecond, Ended: p.done, Detail: p.stderr.String}.Until(t, what, cond)
}

// stopWithin30s sends SIGTERM and wants exit status 0 within 30 s.
func (p *process) stopWithin30s(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v (want status 0)\n%s", err, p.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("still running 30 s after SIGTERM\n%s", p.stderr)
	}
}

// TestRunWithOnlyASchedule: `HRSYNC_SCHEDULE='@every 1s' hrsync run`, no metrics address, no
// --serve, the default SQLite warehouse: the worker keeps running and syncs on its schedule
// (more than once) until SIGTERM, then exits 0. It used to log "sync scheduled" and exit 0 at
// once, never syncing.
func TestRunWithOnlyASchedule(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(30, 7)})
	defer up.Close()
	dir := t.TempDir()
	p := startPlain(t, bin, dir, []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(),
		"HRSYNC_SCHEDULE=@every 1s"})
	p.waitFor(t, "second scheduled sync", func() bool {
		n := 0
		for line := range strings.Lines(p.stderr.String()) {
			if strings.Contains(line, `msg="sync finished" resource=employees`) && strings.Contains(line, "status=ok") {
				n++
			}
		}
		return n >= 2
	})
	if _, err := os.Stat(filepath.Join(dir, "hrsync.db")); err != nil {
		t.Errorf("the default warehouse: %v", err)
	}
	p.stopWithin30s(t)
	if !strings.Contains(p.stderr.String(), `msg=stopped`) {
		t.Errorf("no clean stop in the logs:\n%s", p.stderr)
	}
}

// TestRunWithOnlyAnOnboardingFolder: a worker given only a drop folder (no schedule, no
// servers) watches it until SIGTERM: a file dropped after it started is onboarded.
func TestRunWithOnlyAnOnboardingFolder(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	p := startPlain(t, bin, dir, []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(),
		"HRSYNC_ONBOARDING_DIR=" + in, "HRSYNC_ONBOARDING_POLL_SECONDS=1", "HRSYNC_ONBOARDING_SETTLE_SECONDS=0"})
	p.waitFor(t, "the folder watched", func() bool { return strings.Contains(p.stderr.String(), "onboarding folder watched") })
	// Dropped after start, so only a worker still running can pick it up.
	time.Sleep(1500 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(in, "cohort.csv"), []byte(spreadsheet), 0o600); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "the file onboarded", func() bool { return up.Count("/v1/employees", 201) == 3 })
	p.stopWithin30s(t)
}
