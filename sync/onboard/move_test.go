package onboard

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMoveReadPutsBackAReplacement: a new version renamed over a file after the check that its
// name still names it, before its move (which takes the new version), is put back into the drop
// folder, and the move says the file read was replaced, so that its copy is filed instead:
// nothing is filed unread.
func TestMoveReadPutsBackAReplacement(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("x.csv", "read")
	if err := os.Mkdir(filepath.Join(dir, processedDir), 0o700); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f, err := root.Open("x.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write("new.csv", "saved")
	if err := os.Rename(filepath.Join(dir, "new.csv"), filepath.Join(dir, "x.csv")); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(processedDir, "x.csv")
	change, err := moveRead(root, f, "x.csv", target)
	if err != nil || change != replaced {
		t.Errorf("moveRead: %v %v, want replaced", change, err)
	}
	if _, err := root.Lstat(target); err == nil {
		t.Errorf("%s: a version nobody read is filed", target)
	}
	if b, err := root.ReadFile("x.csv"); err != nil || string(b) != "saved" {
		t.Errorf("x.csv: %q %v, want the new version put back", b, err)
	}
}

// TestProcessPathHoldsAFileSavedSinceListed: a file of the drop folder changed within the settle
// period when it is opened (saved again since the pass listed it as settled) is held for a later
// pass, unread.
func TestProcessPathHoldsAFileSavedSinceListed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.csv")
	if err := os.WriteFile(path, []byte("First name,Last name,Join date,Email\nAnn,Lee,2026-12-01,ann@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := New(nil, nil, Options{DryRun: true})
	r, held, err := o.processPath(context.Background(), path, dir, time.Hour)
	if err != nil || !held || len(r.Rows) != 0 {
		t.Errorf("processPath: %+v held %v, %v; want it held unread", r, held, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the file is not left in place: %v", err)
	}
}
