package sink_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// Two stores on one warehouse stand for two processes: one lock holder at a time.
func TestTryLock(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			a, b := twoStores(t, backend)
			_, release, ok, err := a.TryLock(ctx, "sync")
			if err != nil || !ok {
				t.Fatalf("first lock: %v %v", ok, err)
			}
			if _, _, ok, err := b.TryLock(ctx, "sync"); err != nil || ok {
				t.Fatalf("second holder got the lock: %v %v", ok, err)
			}
			if _, rel, ok, err := b.TryLock(ctx, "other"); err != nil || !ok {
				t.Fatalf("another name is another lock: %v %v", ok, err)
			} else {
				rel()
			}
			release()
			_, release2, ok, err := b.TryLock(ctx, "sync")
			if err != nil || !ok {
				t.Fatalf("after release: %v %v", ok, err)
			}
			release2()
		})
	}
}

// twoStores opens one warehouse twice, as two processes would.
func twoStores(t *testing.T, backend string) (*sink.Store, *sink.Store) {
	t.Helper()
	a, b, _, _ := twoStoresAt(t, backend, sink.Options{})
	return a, b
}

// twoStoresAt is twoStores with options, also returning the warehouse's URL and (Postgres) schema.
func twoStoresAt(t *testing.T, backend string, opts sink.Options) (a, b *sink.Store, url, schema string) {
	t.Helper()
	ctx := context.Background()
	if backend == "postgres" {
		url, opts.Schema = sinktest.Postgres(t)
		if _, err := sink.Migrate(ctx, url, opts); err != nil {
			t.Fatal(err)
		}
	} else {
		url = filepath.Join(t.TempDir(), "w.db")
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
