package sinktest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hrsync/hrsync/sink"
)

// migratedSQLite is a new SQLite warehouse as migrating makes it, kept in memory: the file and
// its -wal (nil when the close left none).
var migratedSQLite struct {
	once    sync.Once
	db, wal []byte
	err     error
}

// SQLiteFile writes at path a migrated, empty SQLite warehouse (0600), a copy of one this test
// binary migrated once. Migrating a new file takes seconds under -race (SQLite reads its whole
// schema again after each of the migrations' ALTER TABLEs: hundreds of times), opening a
// current one milliseconds; tests that are not about migrating or creating the file start from
// a copy. The copy is the file every open of a new path makes: its schema, seed rows and
// migration ledger.
func SQLiteFile(t testing.TB, path string) {
	t.Helper()
	m := &migratedSQLite
	m.once.Do(func() { m.db, m.wal, m.err = migrateSQLite() })
	if m.err != nil {
		t.Fatalf("sinktest: migrate a SQLite warehouse: %v", m.err)
	}
	if err := os.WriteFile(path, m.db, 0o600); err != nil {
		t.Fatal(err)
	}
	if m.wal != nil {
		if err := os.WriteFile(path+"-wal", m.wal, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// migrateSQLite migrates a new SQLite file in a directory of its own and returns its bytes.
func migrateSQLite() (db, wal []byte, err error) {
	dir, err := os.MkdirTemp("", "hrsync-sinktest-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hrsync.db")
	s, err := sink.Open(context.Background(), path, sink.Options{})
	if err != nil {
		return nil, nil, err
	}
	if err := s.Close(); err != nil {
		return nil, nil, fmt.Errorf("close: %w", err)
	}
	if db, err = os.ReadFile(path); err != nil {
		return nil, nil, err
	}
	if wal, err = os.ReadFile(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
		wal, err = nil, nil
	}
	return db, wal, err
}
