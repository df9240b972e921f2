package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hrsync/hrsync/source/server"
)

// browserPage walks every page of the replica's employees as a dashboard would, following the
// Link header and reading Total, then tries a replica that does not allow its origin, and posts
// what it saw to its own origin.
const browserPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>hrsync CORS test</title></head><body><script>
async function walk(base, key) {
  let url = base + "/v1/employees?per_page=100", count = 0, pages = 0, total = null;
  while (url) {
    const r = await fetch(url, {headers: {"X-API-KEY": key}});
    if (!r.ok) throw new Error("status " + r.status);
    total = r.headers.get("Total");
    const body = await r.json();
    count += body.employees.length;
    pages++;
    const m = (r.headers.get("Link") || "").match(/<([^>]+)>;\s*rel="next"/);
    url = m ? m[1] : null;
  }
  return {count: count, pages: pages, total: total};
}
(async () => {
  const out = {};
  try { Object.assign(out, await walk(%q, %q)); } catch (e) { out.error = String(e); }
  try { await walk(%q, %q); out.blocked = false; } catch (e) { out.blocked = true; out.blocked_error = String(e); }
  await fetch("/result", {method: "POST", body: JSON.stringify(out)});
})();
</script></body></html>`

type browserResult struct {
	Count        int    `json:"count"`
	Pages        int    `json:"pages"`
	Total        string `json:"total"`
	Error        string `json:"error"`
	Blocked      bool   `json:"blocked"`
	BlockedError string `json:"blocked_error"`
}

// TestCORSInABrowser: a page served from one origin walks every page of a replica on another
// origin with its key, in headless Chromium: the preflight is answered, Link and Total are
// readable, every employee is counted. A replica that does not list the page's origin is
// blocked by the browser.
func TestCORSInABrowser(t *testing.T) {
	t.Parallel()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" || os.Geteuid() == 0 {
			t.Fatal("chromium not found: scripts/test.sh installs it (apt-get install chromium)")
		}
		t.Skip("chromium not found: apt-get install chromium to run the browser test")
	}

	results := make(chan browserResult, 1)
	var page atomic.Pointer[string] // set once the replicas' addresses are known
	pageSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, *page.Load())
		case "/result":
			var res browserResult
			b, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(b, &res); err != nil {
				res.Error = "result: " + err.Error() + ": " + string(b)
			}
			select {
			case results <- res:
			default:
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(pageSrv.Close)

	const employees = 250
	replica := newFixture(t, "sqlite", server.Options{CORSOrigins: []string{pageSrv.URL}})
	other := newFixture(t, "sqlite", server.Options{CORSOrigins: []string{"https://elsewhere.example"}})
	var recs []string
	for i := 1; i <= employees; i++ {
		recs = append(recs, fmt.Sprintf(`{"id":%d,"first_name":"E%d","last_name":"Test","email":"e%d@example.com"}`, i, i, i))
	}
	replica.put(t, recs...)
	other.put(t, recs[:3]...)
	html := fmt.Sprintf(browserPage, replica.srv.URL, testKey, other.srv.URL, testKey)
	page.Store(&html)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(), pageSrv.URL+"/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()

	var res browserResult
	select {
	case res = <-results:
	case err := <-exited:
		t.Fatalf("chromium exited before the page reported: %v\n%s", err, tail(stderr.String()))
	case <-ctx.Done():
		t.Fatalf("no result from the page within 60 s; chromium said:\n%s", tail(stderr.String()))
	}
	if res.Error != "" || res.Count != employees || res.Total != fmt.Sprint(employees) || res.Pages != 3 {
		t.Errorf("the page saw %+v, want %d employees in 3 pages, Total %d", res, employees, employees)
	}
	if !res.Blocked {
		t.Errorf("a replica that does not list the page's origin was readable: %+v", res)
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}
