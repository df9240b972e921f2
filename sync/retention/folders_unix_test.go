//go:build unix

package retention_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/sync/retention"
)

// oldFile writes name under dir, modified three months ago, or now unless old.
func oldFile(t *testing.T, dir, name string, old bool) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("first_name,email\nX,x@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if old {
		at := time.Now().AddDate(0, -3, 0)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestOnboardingFilesReachReports is issue 41's item 6f: retention of the onboarding files
// deletes the old reports of the drop folder's reports/ (those of the files named to hrsync
// onboard that lie in it) as it does those of processed/ and failed/; recent ones stay.
func TestOnboardingFilesReachReports(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := sinktest.Store(t, backend, sink.Options{})
			dir := t.TempDir()
			files := map[string]bool{ // name → due
				"reports/old.csv.result.csv": true, "reports/old.csv.dry-run.csv": true, "processed/old.csv": true,
				"reports/new.csv.result.csv": false, "processed/new.csv": false,
			}
			for name, due := range files {
				oldFile(t, dir, name, due)
			}
			rules := retention.Rules{OnboardingFiles: retention.Period{Months: 1}, OnboardingDir: dir}
			res, err := retention.Run(context.Background(), s, rules, retention.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rules) != 1 || res.Rules[0].Files != 3 {
				t.Errorf("result %+v, want 3 files deleted", res)
			}
			for name, due := range files {
				_, err := os.Lstat(filepath.Join(dir, name))
				if gone := os.IsNotExist(err); gone != due {
					t.Errorf("%s: gone %v, want %v", name, gone, due)
				}
			}
		})
	}
}

// TestOnboardingFilesFollowNoLink is issue 41's item 4: a processed/, failed/ or reports/ of the
// drop folder that is a symbolic link, to a folder outside it or to one inside it, is refused:
// nothing is deleted through it, it is logged once a run at WARN naming the folder, and the old
// files of the other folders are deleted as usual. A link inside processed/ to an old file is
// never followed.
func TestOnboardingFilesFollowNoLink(t *testing.T) {
	for _, linked := range []string{"processed", "failed", "reports"} {
		for _, to := range []string{"outside", "inside"} {
			for _, backend := range sinktest.Backends {
				t.Run(linked+"/"+to+"/"+backend, func(t *testing.T) {
					s := sinktest.Store(t, backend, sink.Options{})
					dir, outside := t.TempDir(), t.TempDir()
					target := outside
					if to == "inside" {
						target = filepath.Join(dir, "archive")
					}
					kept := oldFile(t, target, "kept.csv", true)
					if err := os.Symlink(target, filepath.Join(dir, linked)); err != nil {
						t.Fatal(err)
					}
					var deleted []string
					for _, sub := range []string{"processed", "failed", "reports"} {
						if sub != linked {
							deleted = append(deleted, oldFile(t, dir, sub+"/old.csv", true))
						}
					}
					real := "processed"
					if linked == real {
						real = "failed"
					}
					linkedFile := oldFile(t, outside, "linked.csv", true)
					if err := os.Symlink(linkedFile, filepath.Join(dir, real, "link.csv")); err != nil {
						t.Fatal(err)
					}
					rules := retention.Rules{OnboardingFiles: retention.Period{Months: 1}, OnboardingDir: dir}
					for _, dry := range []bool{true, false} {
						var logs sinktest.Buffer
						res, err := retention.Run(context.Background(), s, rules, retention.Options{DryRun: dry, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
						if err != nil {
							t.Fatal(err)
						}
						if len(res.Rules) != 1 || res.Rules[0].Files != len(deleted) {
							t.Errorf("dry run %v: %+v, want %d files", dry, res, len(deleted))
						}
						var warned []string
						for line := range strings.Lines(logs.String()) {
							if strings.Contains(line, "level=WARN") {
								warned = append(warned, line)
							}
						}
						want := "folder=" + filepath.Join(dir, linked)
						if len(warned) != 1 || !strings.Contains(warned[0], want) || !strings.Contains(warned[0], "symbolic link") {
							t.Errorf("dry run %v: warned %q, want one line with %s", dry, warned, want)
						}
					}
					for _, p := range []string{kept, linkedFile, filepath.Join(dir, real, "link.csv")} {
						if _, err := os.Lstat(p); err != nil {
							t.Errorf("%s: %v", p, err)
						}
					}
					for _, p := range deleted {
						if _, err := os.Lstat(p); !os.IsNotExist(err) {
							t.Errorf("%s is not deleted: %v", p, err)
						}
					}
				})
			}
		}
	}
}
