package sink

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlyFileErr: a SQLite file hrsync may not write fails with what to do about it, the
// driver's error kept; other errors pass unchanged.
func TestReadOnlyFileErr(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ro.db")
	rw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec(`CREATE TABLE t (x integer)`); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	// Root reads and writes any file whatever its mode: the driver's read-only mode stands in.
	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, werr := ro.Exec(`INSERT INTO t VALUES (1)`)
	if werr == nil {
		t.Fatal("a write to a read-only file succeeded")
	}
	got := readOnlyFileErr(werr)
	if !errors.Is(got, werr) || !strings.Contains(got.Error(), "read-only to hrsync") || strings.Contains(got.Error(), "\n") {
		t.Errorf("read-only file: %v", got)
	}
	other := errors.New("disk I/O error")
	if got := readOnlyFileErr(other); got != other {
		t.Errorf("another error: %v", got)
	}
}
