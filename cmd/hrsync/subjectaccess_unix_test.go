//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSubjectAccessFilesArePrivate: under umask 022 the export's files are 0600 and the output
// folder it makes 0700, replaced with --force as well.
func TestSubjectAccessFilesArePrivate(t *testing.T) {
	env := subjectWarehouse(t, "sqlite")
	old := syscall.Umask(0o022) // the process's: this test does not run in parallel
	t.Cleanup(func() { syscall.Umask(old) })
	out := filepath.Join(t.TempDir(), "made")
	for _, extra := range [][]string{nil, {"--force"}} {
		args := append([]string{"subject-access", "--employee", "100", "--out", out}, extra...)
		if err := run(context.Background(), args, env, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		mode := func(path string, want os.FileMode) {
			t.Helper()
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s is %#o, want %#o", path, got, want)
			}
		}
		mode(out, 0o700)
		for _, ext := range []string{".html", ".json", ".csv"} {
			mode(filepath.Join(out, "subject-access-100"+ext), 0o600)
		}
	}
}
