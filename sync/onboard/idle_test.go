package onboard_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sync/onboard"
)

// TestIdle: Idle is true exactly when a pass would find nothing to do, read from the folder's
// names and dates alone: an empty folder, one holding only what programs keep there while they
// work, subfolders, a file still settling, a link already warned of, and failed/ files whose
// retry is not due. Anything a pass would take, or say something of, makes it false.
func TestIdle(t *testing.T) {
	t.Parallel()
	old := time.Now().Add(-time.Hour)
	write := func(t *testing.T, path string, mod time.Time) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("first_name\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		opts  func(dir string) onboard.PassOptions
		idle  bool
	}{
		{name: "empty", idle: true},
		{name: "only programs' files", idle: true, setup: func(t *testing.T, dir string) {
			for _, n := range []string{".DS_Store", ".~lock.a.csv#", "~$a.xlsx", "Thumbs.db", "a.csv.part", "b.crdownload"} {
				write(t, filepath.Join(dir, n), old)
			}
		}},
		{name: "subfolders and their files", idle: true, setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "processed", "a.csv"), old)
			write(t, filepath.Join(dir, "reports", "a.result.csv"), old)
			write(t, filepath.Join(dir, "elsewhere", "b.csv"), old)
		}},
		{name: "a file settled", idle: false, setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "cohort.csv"), old)
		}},
		{name: "a workbook", idle: false, setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "cohort.xlsx"), old)
		}},
		{name: "a file still settling", idle: true, setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "cohort.csv"), time.Now())
		}, opts: func(dir string) onboard.PassOptions { return onboard.PassOptions{Dir: dir, Settle: time.Hour} }},
		{name: "a link not yet warned of", idle: false, setup: func(t *testing.T, dir string) {
			if err := os.Symlink("/etc/hostname", filepath.Join(dir, "link.csv")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a failed file, first seen: its retry starts a minute later", idle: true, setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "failed", "cohort.csv"), old)
			write(t, filepath.Join(dir, "failed", "cohort.result.csv"), old)
		}, opts: func(dir string) onboard.PassOptions {
			return onboard.PassOptions{Dir: dir, Retries: &onboard.FailedRetries{}}
		}},
		{name: "a failed file, every one retried", idle: false, setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "failed", "cohort.csv"), old)
		}, opts: func(dir string) onboard.PassOptions { return onboard.PassOptions{Dir: dir, RetryAll: true} }},
		{name: "a failed file, retries not kept (one pass)", idle: true, setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "failed", "cohort.csv"), old)
		}},
		{name: "the folder missing", idle: false, setup: func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "failed/ a link", idle: false, setup: func(t *testing.T, dir string) {
			if err := os.Symlink(t.TempDir(), filepath.Join(dir, "failed")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			opts := onboard.PassOptions{Dir: dir}
			if tc.opts != nil {
				opts = tc.opts(dir)
			}
			o := onboard.New(nil, nil, onboard.Options{Logger: slog.New(slog.DiscardHandler)})
			if got := o.Idle(opts); got != tc.idle {
				t.Errorf("Idle = %v, want %v", got, tc.idle)
			}
		})
	}
}

// TestIdleFollowsTheBackoff: a file in failed/ makes the folder busy when its retry is due, and
// not before, and idle again once it is gone; a link makes it busy until a pass has warned of
// it, and idle after.
func TestIdleFollowsTheBackoff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "failed"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "failed", "cohort.csv"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	retries := &onboard.FailedRetries{Now: func() time.Time { return now }}
	opts := onboard.PassOptions{Dir: dir, Retries: retries}
	o := onboard.New(nil, nil, onboard.Options{Logger: slog.New(slog.DiscardHandler)})
	if !o.Idle(opts) {
		t.Error("first seen: busy, want idle until its first retry")
	}
	now = now.Add(onboard.FailedRetryInitial - time.Second)
	if !o.Idle(opts) {
		t.Error("a second before its retry: busy, want idle")
	}
	now = now.Add(time.Second)
	if o.Idle(opts) {
		t.Error("its retry due: idle, want busy")
	}
	if err := os.Remove(filepath.Join(dir, "failed", "cohort.csv")); err != nil {
		t.Fatal(err)
	}
	if !o.Idle(opts) {
		t.Error("the file gone: busy, want idle")
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "link.csv")); err != nil {
		t.Fatal(err)
	}
	if o.Idle(opts) {
		t.Error("a link not yet warned of: idle, want busy (the pass warns of it)")
	}
	if _, err := o.ProcessDir(t.Context(), dir, 0); err != nil {
		t.Fatal(err)
	}
	if !o.Idle(opts) {
		t.Error("a link warned of: busy, want idle")
	}
}
