//go:build unix

package onboard_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/onboard"
)

// wantMode fails the test unless path has mode want (permission bits).
func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Error(err)
		return
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %#o, want %#o", path, got, want)
	}
}

// fileAll files what the tests below drop: named.csv in the folder and other.csv elsewhere, each
// named on its own (reports/ and a report beside other.csv), then the rest of the folder
// (processed/, failed/).
func fileAll(t *testing.T, o *onboard.Onboarder, dir, elsewhere string) {
	t.Helper()
	ctx := context.Background()
	if _, err := o.ProcessPath(ctx, filepath.Join(dir, "named.csv"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := o.ProcessPath(ctx, filepath.Join(elsewhere, "other.csv"), ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "named.csv")); err != nil {
		t.Fatal(err)
	}
	if _, err := o.ProcessDir(ctx, dir, 0); err != nil {
		t.Fatal(err)
	}
}

// filedResults are the files fileAll leaves in the folder: those it moved and the reports.
var filedResults = []string{"processed/good.csv", "processed/good.result.csv", "failed/unreadable.csv", "failed/unreadable.result.csv", "reports/named.csv.result.csv"}

// TestOnboardingFilesArePrivate: under the usual umask 022, the folders onboarding makes
// (processed/, failed/, reports/) are 0700, and the reports and the files it moves 0600, a file
// dropped 0644 included; a report written over an older one is 0600 too.
func TestOnboardingFilesArePrivate(t *testing.T) {
	sinktest.WithUmask(t, 0o022)
	up := newUpstream(t, 0, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"good.csv":       hiresCSV(1, 2),
		"unreadable.csv": []byte("\xff\xfeF\x00i\x00"),
		"named.csv":      hiresCSV(10, 1),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "other.csv"), hiresCSV(20, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// An older report, readable by all, that the new one replaces.
	if err := os.WriteFile(filepath.Join(elsewhere, "other.csv.result.csv"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{Folder: dir})
	fileAll(t, o, dir, elsewhere)
	for _, d := range []string{"processed", "failed", "reports"} {
		wantMode(t, filepath.Join(dir, d), 0o700)
	}
	for _, f := range filedResults {
		wantMode(t, filepath.Join(dir, f), 0o600)
	}
	wantMode(t, filepath.Join(elsewhere, "other.csv.result.csv"), 0o600)
	if n := up.Count("/v1/employees", http.StatusCreated); n != 4 {
		t.Errorf("%d created, want 4", n)
	}
}

// TestOnboardingRefusesLinkedFolders: a processed/, failed/ or reports/ that is a symbolic link
// (here to a folder others may read) is refused with a one-line error before anything is read,
// sent or moved, and nothing lands where the link points.
func TestOnboardingRefusesLinkedFolders(t *testing.T) {
	t.Parallel()
	for _, linked := range []string{"processed", "failed", "reports"} {
		t.Run(linked, func(t *testing.T) {
			up := newUpstream(t, 0, fakeupstream.Options{})
			store := sinktest.Store(t, "sqlite", sink.Options{})
			dir, target := t.TempDir(), t.TempDir()
			if err := os.Symlink(target, filepath.Join(dir, linked)); err != nil {
				t.Fatal(err)
			}
			for name, data := range map[string][]byte{"good.csv": hiresCSV(1, 2), "unreadable.csv": []byte("\xff\xfeF\x00i\x00")} {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{Folder: dir})
			var err error
			if linked == "reports" {
				_, err = o.ProcessPath(context.Background(), filepath.Join(dir, "good.csv"), "")
			} else {
				_, err = o.Pass(context.Background(), onboard.PassOptions{Dir: dir, RetryAll: true})
			}
			var le *onboard.LinkedFolderError
			if !errors.As(err, &le) || !le.Link {
				t.Fatalf("err = %v, want a LinkedFolderError", err)
			}
			want := "onboarding folder: " + filepath.Join(dir, linked) + " is a symbolic link; hrsync does not follow links where it moves files and writes reports: make it a real folder"
			if err.Error() != want || strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("err = %q, want %q", err, want)
			}
			if entries, _ := os.ReadDir(target); len(entries) != 0 {
				t.Errorf("%d entries landed where %s/ points", len(entries), linked)
			}
			if linked != "reports" {
				if n := up.Count("/v1/employees", http.StatusCreated); n != 0 {
					t.Errorf("%d created", n)
				}
				for _, f := range []string{"good.csv", "unreadable.csv"} {
					if !exists(t, filepath.Join(dir, f)) {
						t.Errorf("%s left the drop folder", f)
					}
				}
			}
		})
	}
}

// TestOnboardingReplacesALinkedReport: a link where a report's temporary file or the report
// itself goes is replaced, never written through.
func TestOnboardingReplacesALinkedReport(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "x.result.csv")
	for _, link := range []string{report + ".tmp", report} {
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := onboard.WriteReport(report, onboard.FileResult{Name: "x.csv"}, onboard.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the file a link pointed to was written: %q", b)
	}
	fi, err := os.Lstat(report)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("report: %v %v", fi, err)
	}
	if _, err := os.Lstat(report + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file stays: %v", err)
	}
}

// wantGroup fails the test unless path belongs to the group gid.
func wantGroup(t *testing.T, path string, gid int) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Error(err)
		return
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Gid) != gid {
		t.Errorf("%s: group %v, want %d", path, fi.Sys(), gid)
	}
}

// otherGroup is a group of the process's other than its own (effective) one, when it has one:
// giving files to it shows the group was set, not inherited; else its own.
func otherGroup() int {
	groups, _ := os.Getgroups()
	for _, g := range groups {
		if g != os.Getegid() {
			return g
		}
	}
	return os.Getegid()
}

// TestOnboardingResultsForAGroup: with a group and mode configured (onboarding.group,
// onboarding.mode), under a umask that would take every bit from the group, the folders
// onboarding makes are 0750 and the reports and files it moves 0640, all of the group; a
// processed/ made private before the group was configured opens to it; a report beside a file
// named elsewhere stays private.
func TestOnboardingResultsForAGroup(t *testing.T) {
	sinktest.WithUmask(t, 0o077)
	gid := otherGroup()
	up := newUpstream(t, 0, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "processed"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"good.csv":       hiresCSV(1, 2),
		"unreadable.csv": []byte("\xff\xfeF\x00i\x00"),
		"named.csv":      hiresCSV(10, 1),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "other.csv"), hiresCSV(20, 1), 0o600); err != nil {
		t.Fatal(err)
	}
	access := onboard.Access{Mode: 0o640, Group: gid, SetGroup: true}
	o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{Folder: dir, Access: access})
	fileAll(t, o, dir, elsewhere)
	for _, d := range []string{"processed", "failed", "reports"} {
		wantMode(t, filepath.Join(dir, d), 0o750)
		wantGroup(t, filepath.Join(dir, d), gid)
	}
	for _, f := range filedResults {
		wantMode(t, filepath.Join(dir, f), 0o640)
		wantGroup(t, filepath.Join(dir, f), gid)
	}
	wantMode(t, filepath.Join(elsewhere, "other.csv.result.csv"), 0o600)
}
