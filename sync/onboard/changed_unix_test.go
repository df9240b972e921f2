//go:build unix

package onboard_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/onboard"
)

// TestAFileChangedWhileOnboarded is issue 41's item 3: while a file of the drop folder is
// onboarded (its rows being sent), the program that wrote it saves it again, as Excel and sync
// clients do, writing a new file and renaming it over the old one, or as others do, rewriting
// it in place; the new version has one more person. Nothing is filed unread: what goes to
// processed/ is the version read, private (0600, the umask 022 and the files 0644), with its
// report; the new version stays in the drop folder, and the next pass creates its new person
// (the others already done). A version rewritten in place cannot be kept: its report goes to
// reports/.
func TestAFileChangedWhileOnboarded(t *testing.T) {
	sinktest.WithUmask(t, 0o022)
	read, saved := hiresCSV(1, 2), hiresCSV(1, 3)
	for _, how := range []string{"renamed-over", "rewritten-in-place"} {
		for _, backend := range sinktest.Backends {
			t.Run(how+"/"+backend, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "cohort.csv")
				if err := os.WriteFile(path, read, 0o644); err != nil {
					t.Fatal(err)
				}
				var once sync.Once
				save := func() {
					if how == "rewritten-in-place" {
						if err := os.WriteFile(path, saved, 0o644); err != nil {
							t.Error(err)
						}
						return
					}
					tmp := filepath.Join(dir, ".~cohort.csv") // a name the pass leaves alone
					if err := os.WriteFile(tmp, saved, 0o644); err != nil {
						t.Error(err)
					}
					if err := os.Rename(tmp, path); err != nil {
						t.Error(err)
					}
				}
				up := newUpstream(t, 0, fakeupstream.Options{BeforeRequest: func(_ *fakeupstream.Service, _ int, r *http.Request) {
					if r.Method == http.MethodPost {
						once.Do(save)
					}
				}})
				store := sinktest.Store(t, backend, sink.Options{})
				var logs sinktest.Buffer
				o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{Folder: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				ctx := context.Background()

				results, err := o.ProcessDir(ctx, dir, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(results) != 1 || results[0].Outcome() != onboard.FileDone || results[0].Count(onboard.OutcomeCreated) != 2 {
					t.Fatalf("first pass: %+v", results)
				}
				if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, saved) {
					t.Errorf("the version saved while the file was onboarded is not left in the drop folder (%v): %q", err, b)
				}
				report := filepath.Join(dir, "processed", "cohort.result.csv")
				if how == "renamed-over" {
					if b, err := os.ReadFile(filepath.Join(dir, "processed", "cohort.csv")); err != nil || !bytes.Equal(b, read) {
						t.Errorf("processed/cohort.csv is not the version read (%v): %q", err, b)
					}
					wantMode(t, filepath.Join(dir, "processed", "cohort.csv"), 0o600)
				} else {
					if exists(t, filepath.Join(dir, "processed", "cohort.csv")) {
						t.Errorf("a file rewritten in place is filed in processed/")
					}
					report = filepath.Join(dir, "reports", "cohort.result.csv")
				}
				if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "new1@example.com,created,") {
					t.Errorf("the report of the version read (%s): %v %q", report, err, b)
				}
				if results[0].Report != report {
					t.Errorf("the result's report is %q, want %q", results[0].Report, report)
				}
				if !strings.Contains(logs.String(), "level=INFO msg=\"onboarding: a file changed while it was onboarded") ||
					!strings.Contains(logs.String(), "file=cohort.csv") {
					t.Errorf("not logged:\n%s", logs.String())
				}

				results, err = o.ProcessDir(ctx, dir, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(results) != 1 || results[0].Count(onboard.OutcomeCreated) != 1 || results[0].Count(onboard.OutcomeAlreadyDone) != 2 {
					t.Fatalf("second pass: %+v", results)
				}
				for email, n := range createdPerEmail(up) {
					if n != 1 {
						t.Errorf("%s created %d times", email, n)
					}
				}
				if n := len(createdPerEmail(up)); n != 3 {
					t.Errorf("%d people created, want 3", n)
				}
				if exists(t, path) {
					t.Errorf("the new version is still in the drop folder after the next pass")
				}
				entries, err := os.ReadDir(filepath.Join(dir, "processed"))
				if err != nil {
					t.Fatal(err)
				}
				var got [][]byte
				for _, e := range entries {
					p := filepath.Join(dir, "processed", e.Name())
					wantMode(t, p, 0o600)
					if !strings.HasSuffix(e.Name(), ".result.csv") {
						b, _ := os.ReadFile(p)
						got = append(got, b)
					}
				}
				want := [][]byte{read, saved}
				if how == "rewritten-in-place" {
					want = want[1:]
				}
				if len(got) != len(want) {
					t.Fatalf("processed/ holds %d files, want %d", len(got), len(want))
				}
				for _, w := range want {
					found := false
					for _, g := range got {
						found = found || bytes.Equal(g, w)
					}
					if !found {
						t.Errorf("processed/ lacks the version %q", w)
					}
				}
			})
		}
	}
}
