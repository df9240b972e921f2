//go:build unix

package sink_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// modes are the permission bits of path and its -wal, -shm and -journal, those that exist.
func modes(t *testing.T, path string) map[string]os.FileMode {
	got := map[string]os.FileMode{}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if fi, err := os.Stat(p); err == nil {
			got[filepath.Base(p)] = fi.Mode().Perm()
		}
	}
	return got
}

// Under umask 022 a new SQLite warehouse, its -wal and its -shm are 0600, not 0644.
func TestSQLiteFilesArePrivate(t *testing.T) {
	sinktest.WithUmask(t, 0o022)
	path := filepath.Join(t.TempDir(), "hrsync.db")
	s, err := sink.Open(context.Background(), path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A write, so the WAL holds something and both -wal and -shm are there.
	if _, err := sinktest.DB(s).Exec(`UPDATE meta SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	got := modes(t, path)
	for _, name := range []string{"hrsync.db", "hrsync.db-wal", "hrsync.db-shm"} {
		if m, ok := got[name]; !ok || m != 0o600 {
			t.Errorf("%s: mode %#o (present %v), want 0600; all: %v", name, m, ok, got)
		}
	}
	for name, m := range got {
		if m&0o077 != 0 {
			t.Errorf("%s is %#o", name, m)
		}
	}
	if _, err := os.Stat(path + ".sync.lock"); err == nil {
		t.Error("opening took the sync lock")
	}
}

// An existing warehouse readable by others (made under umask 022 by an older hrsync, or copied)
// is tightened to 0600 when opened, with one warning; the next open says nothing.
func TestSQLiteFileReadableByOthersIsTightened(t *testing.T) {
	sinktest.WithUmask(t, 0o022)
	path := filepath.Join(t.TempDir(), "hrsync.db")
	s, err := sink.Open(context.Background(), path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sinktest.DB(s).Exec(`UPDATE meta SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	// Another process holds it open (its -wal and -shm stay) while the files are loosened.
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s2, err := sink.Open(context.Background(), path, sink.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range modes(t, path) {
		if m != 0o600 {
			t.Errorf("%s: %#o after open, want 0600", name, m)
		}
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 3 || !strings.Contains(logs.String(), "made private") || !strings.Contains(logs.String(), "mode=0644") {
		t.Errorf("logs:\n%s\nwant a warning for each of the 3 files", logs.String())
	}
	_ = s2.Close()
	_ = s.Close()
	logs.Reset()
	s3, err := sink.Open(context.Background(), path, sink.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	_ = s3.Close()
	if logs.Len() > 0 {
		t.Errorf("a private file was warned about again:\n%s", logs.String())
	}
}

// CreateSQLiteFile makes a file 0600 even under a umask that would take the owner's write
// bit, and leaves an existing file as it is.
func TestCreateSQLiteFile(t *testing.T) {
	sinktest.WithUmask(t, 0o277)
	path := filepath.Join(t.TempDir(), "d.db")
	if err := sink.CreateSQLiteFile(path); err != nil {
		t.Fatal(err)
	}
	if m := modes(t, path)["d.db"]; m != 0o600 {
		t.Errorf("mode %#o, want 0600", m)
	}
	if err := os.WriteFile(path, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sink.CreateSQLiteFile(path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "kept" {
		t.Errorf("an existing file was replaced: %q", b)
	}
	if err := sink.CreateSQLiteFile(filepath.Join(t.TempDir(), "missing", "d.db")); err == nil {
		t.Error("a file in a missing folder was created")
	}
}
