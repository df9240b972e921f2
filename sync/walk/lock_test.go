package walk_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/walk"
)

// The lock's lease expires while a sync walks (as when its process stalls longer than the
// lease's TTL); a second process takes the lock and syncs. The first one must stop before it commits, saying
// why, and the ledger must never show two ok runs of one resource at once.
func TestLostLockStopsTheSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, url, schema := sinktest.TwoStores(t, "postgres", sink.Options{})
	// Two sources that differ, so the replica shows whose sync committed.
	up1 := newUpstream(t, 0, fakeupstream.Options{Employees: fakeupstream.Generate(250, 7)})
	up2 := newUpstream(t, 180, fakeupstream.Options{})
	// The first sync stops before the last page of employees (3 of 3), once page 2 is staged:
	// nothing of it is in flight when its lock goes.
	reached, staged, resume := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once, stagedOnce sync.Once
	up1.setHook(func(_ *fakeupstream.Service, _ int, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/employees") && r.URL.Query().Get("page") == "3" {
			once.Do(func() { close(reached) })
			select {
			case <-resume:
			case <-time.After(30 * time.Second):
			}
		}
	})
	c1, c2 := fastClient(t, up1, client.Options{}), fastClient(t, up2, client.Options{})

	var first []walk.Result
	done := make(chan error, 1)
	go func() {
		done <- walk.WithLock(ctx, a, func(ctx context.Context) error {
			var err error
			first, err = walk.New(c1, a, walk.Options{Concurrency: 1, Progress: func(p walk.Progress) {
				if p.Resource == sink.Employees && p.PagesDone == 2 {
					stagedOnce.Do(func() { close(staged) })
				}
			}}).Run(ctx, seeds)
			return err
		})
	}()
	for _, ch := range []chan struct{}{reached, staged} {
		select {
		case <-ch:
		case <-time.After(slowness.Bound(30 * time.Second)):
			t.Fatal("the first sync never reached employees page 3")
		}
	}
	if n := sinktest.ExpireLock(t, url, schema, walk.LockName); n != 1 {
		t.Fatalf("expired %d leases of the lock, want 1", n)
	}
	err := walk.WithLock(ctx, b, func(ctx context.Context) error {
		_, err := walk.New(c2, b, walk.Options{}).Run(ctx, seeds)
		return err
	})
	if err != nil {
		t.Fatalf("second sync: %v", err)
	}
	close(resume)
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the first sync did not stop within 30 s")
	}
	if !errors.Is(err, sink.ErrLockLost) {
		t.Fatalf("first sync: %v, want ErrLockLost", err)
	}
	if r := result(t, first, sink.Employees); r.Status != sink.RunFailed || !strings.Contains(r.Error, "lost the sync lock") {
		t.Errorf("first sync's employees: %s %q", r.Status, r.Error)
	}
	assertReplica(t, up2, b, true)

	runs, err := b.Runs(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range runs {
		if x.Status == sink.RunRunning {
			t.Errorf("run %d still running", x.ID)
		}
		for _, y := range runs[i+1:] {
			if x.Resource == y.Resource && x.Status == sink.RunOK && y.Status == sink.RunOK &&
				x.StartedAt.Before(y.FinishedAt) && y.StartedAt.Before(x.FinishedAt) {
				t.Errorf("two ok runs of %s overlap: %+v and %+v", x.Resource, x, y)
			}
		}
	}
}
