package sink_test

import (
	"context"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// Two stores on one warehouse stand for two processes: one lock holder at a time.
func TestTryLock(t *testing.T) {
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			a, b, _, _ := sinktest.TwoStores(t, backend, sink.Options{})
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
