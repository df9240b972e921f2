package sinktest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hrsync/hrsync/sink"
)

// Backends are the warehouses every storage behaviour is tested on.
var Backends = []string{"postgres", "sqlite"}

// Store opens a migrated, empty warehouse of the named backend ("postgres": a database of its own on
// the test server, a copy of one migrated: MigratedPostgres; "sqlite": a file in the test's temp dir, a copy of one migrated: SQLiteFile) and closes it when the test ends.
func Store(t testing.TB, backend string, opts sink.Options) *sink.Store {
	t.Helper()
	ctx := context.Background()
	var url string
	switch backend {
	case "postgres":
		url, opts.Schema = MigratedPostgres(t)
	case "sqlite":
		url = filepath.Join(t.TempDir(), "hrsync.db")
		SQLiteFile(t, url)
	default:
		t.Fatalf("unknown backend %q", backend)
	}
	s, err := sink.Open(ctx, url, opts)
	if err != nil {
		t.Fatalf("open %s warehouse: %v", backend, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TwoStores opens one warehouse of the named backend twice, as two processes would (for the
// locks between them), each closed when the test ends; it also returns the warehouse's URL and,
// on Postgres, its schema.
func TwoStores(t testing.TB, backend string, opts sink.Options) (a, b *sink.Store, url, schema string) {
	t.Helper()
	ctx := context.Background()
	if backend == "postgres" {
		url, opts.Schema = MigratedPostgres(t)
	} else {
		url = filepath.Join(t.TempDir(), "w.db")
		SQLiteFile(t, url)
	}
	var stores [2]*sink.Store
	for i := range stores {
		s, err := sink.Open(ctx, url, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	return stores[0], stores[1], url, opts.Schema
}
