package sinktest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hrsync/hrsync/sink"
)

// Backends are the warehouses every storage behaviour is tested on.
var Backends = []string{"postgres", "sqlite"}

// Store opens a migrated, empty warehouse of the named backend ("postgres": a fresh schema on
// the test server; "sqlite": a file in the test's temp dir) and closes it when the test ends.
func Store(t testing.TB, backend string, opts sink.Options) *sink.Store {
	t.Helper()
	ctx := context.Background()
	var url string
	switch backend {
	case "postgres":
		url, opts.Schema = Postgres(t)
		if _, err := sink.Migrate(ctx, url, opts); err != nil {
			t.Fatalf("migrate: %v", err)
		}
	case "sqlite":
		url = filepath.Join(t.TempDir(), "hrsync.db")
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
