//go:build unix

package personal

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestExportIsPrivate: under umask 022 the export's files are 0600 and the folder it
// makes 0700, replaced as well.
func TestExportIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022) // the process's: this test does not run in parallel
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "made")
	ex := NewExport(dir, 7)
	for _, replace := range []bool{false, true} {
		if err := ex.Write(Subject{EmployeeID: 7}, replace); err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]os.FileMode{
			dir: 0o700, filepath.Join(dir, "subject-access-7.html"): 0o600,
			filepath.Join(dir, "subject-access-7.json"): 0o600, filepath.Join(dir, "subject-access-7.csv"): 0o600,
		} {
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("replace %v: %s is %#o, want %#o", replace, path, got, want)
			}
		}
	}
}
