package sink_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestHoldsEmployee: an id the warehouse holds or names anywhere is held (their own rows, a
// person only named in others' records, one known only to the onboarding ledger); an id no row
// holds is not.
func TestHoldsEmployee(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		m := sinktest.LoadSubject(t, s)
		if err := s.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: "f2", FileName: "april.csv", Line: 2,
			Email: "only.onboarded@example.com", Status: sink.RowCreated, EmployeeID: 77}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			id   int64
			want bool
		}{{m.P, true}, {m.A, true}, {m.Q, true}, {77, true}, {42, false}, {1 << 40, false}} {
			got, err := s.HoldsEmployee(ctx, tc.id)
			if err != nil || got != tc.want {
				t.Errorf("HoldsEmployee(%d) = %v, %v; want %v", tc.id, got, err, tc.want)
			}
		}
	})
}

// TestOpenExistingMakesNoWarehouse: where there is no warehouse (no SQLite file, an empty one, a
// Postgres schema never migrated) OpenExisting says so and makes none; an existing one opens.
func TestOpenExistingMakesNoWarehouse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	url, schemaName := sinktest.Postgres(t) // a fresh schema, not migrated
	for _, tc := range []struct {
		name, url, schema, says string
	}{
		{"no file", missing, "", "no such file"},
		{"an empty file", empty, "", "the file is empty"},
		{"a folder", dir, "", "a folder"},
		{"a schema never migrated", url, schemaName, "not set up"},
	} {
		s, err := sink.OpenExisting(ctx, tc.url, sink.Options{Schema: tc.schema})
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, sink.ErrNoWarehouse) || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line wrapping ErrNoWarehouse saying %q", tc.name, err, tc.says)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExisting of a missing file made it: %v", err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("OpenExisting of an empty file wrote it: %v", err)
	}
	var tables int
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, schemaName).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("OpenExisting of a schema never migrated: %d tables in it (%v), want none", tables, err)
	}

	path := filepath.Join(dir, "w.db")
	sinktest.SQLiteFile(t, path)
	s, err := sink.OpenExisting(ctx, path, sink.Options{})
	if err != nil {
		t.Fatalf("an existing warehouse: %v", err)
	}
	s.Close()
}
