package account

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/hrsync/hrsync/internal/slowness"
)

// TestIdleWebhooksOpenNoWarehouse: an account with a webhook subscriber and nothing to send
// opens its warehouse for the webhooks job's first pass, and not for the firings after it, which
// count as ok runs (events.Deliverer). Before, every firing (every 5 s) opened the warehouse:
// half a core for a worker of 100 idle SQLite accounts.
func TestIdleWebhooksOpenNoWarehouse(t *testing.T) {
	t.Parallel()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a delivery with nothing published: %s", r.URL)
	}))
	defer recv.Close()
	c := startCountingWorker(t, fmt.Sprintf(`warehouse: {url: %q}
source: {url: "http://127.0.0.1:1", api_key: k}
schedule: "0 3 * * *"
events:
  webhooks:
    - {name: idp, url: %q, secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}
`, filepath.Join(t.TempDir(), "hrsync.db"), recv.URL+"/hook"), nil, WorkerOptions{DeliverEvery: 20 * time.Millisecond})
	okRuns := func() float64 { return c.okRuns(t, "webhooks") }
	wait := slowness.Wait{For: 30 * time.Second, Every: 5 * time.Millisecond}

	// The first pass (and the events job's run at start) open it.
	wait.Until(t, "the webhooks job's first pass", func() bool { return okRuns() >= 1 && c.closed() })
	first := c.opens.Load()
	if first == 0 {
		t.Fatal("the first pass opened no warehouse")
	}
	seen := okRuns()
	wait.Until(t, "twenty firings after it", func() bool { return okRuns() >= seen+20 })
	if n := c.opens.Load() - first; n != 0 {
		t.Errorf("%d firings with nothing to send opened the warehouse %d times, want none", int(okRuns()-seen), n)
	}
}
