package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/sync/events/webhook"
)

// receiverEnv, set, makes the test binary the webhook receiver of TestWebhooksSurviveSIGKILL:
// its own process, as a subscriber's would be.
const receiverEnv = "HRSYNC_TEST_WEBHOOK_RECEIVER"

// TestWebhookReceiverProcess is the receiver when the test binary runs as one (receiverEnv:
// its directory); otherwise it does nothing. It verifies each delivery's signature with the
// Standard Webhooks reference library, answers a quarter of them 500 and a tenth only after
// the worker's timeout, and appends each one it accepts (200) to received: its id, employee
// and seq, so the test can count each event once after deduplicating by id.
func TestWebhookReceiverProcess(t *testing.T) {
	dir := os.Getenv(receiverEnv)
	if dir == "" {
		return
	}
	wh, err := standardwebhooks.NewWebhook(os.Getenv("HRSYNC_TEST_WEBHOOK_SECRET"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(filepath.Join(dir, "received"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	tries := map[string]int{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "addr.tmp"), []byte(ln.Addr().String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Rename(filepath.Join(dir, "addr.tmp"), filepath.Join(dir, "addr"))
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := wh.Verify(body, r.Header); err != nil {
			mu.Lock()
			fmt.Fprintf(out, "badsig %s\n", r.Header.Get("webhook-id"))
			mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id := r.Header.Get("webhook-id")
		mu.Lock()
		tries[id]++
		n := tries[id]
		mu.Unlock()
		// The same faults for the same attempt of the same id, whatever the run.
		h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", id, n))
		switch {
		case h[0] < 64:
			mu.Lock()
			fmt.Fprintf(out, "500 %s\n", id)
			mu.Unlock()
			w.WriteHeader(http.StatusInternalServerError)
			return
		case h[0] < 90:
			mu.Lock()
			fmt.Fprintf(out, "slow %s\n", id)
			mu.Unlock()
			time.Sleep(1500 * time.Millisecond) // past the worker's 1 s timeout
		}
		var e struct {
			Seq      int64 `json:"seq"`
			Employee struct {
				ID int64 `json:"id"`
			} `json:"employee"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		fmt.Fprintf(out, "ok %s %d %d\n", id, e.Employee.ID, e.Seq)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
}

// TestWebhooksSurviveSIGKILL is issue 39's done-when for delivery: the worker (`hrsync run`,
// syncing every second) is killed with SIGKILL at random moments over several rounds of
// changes upstream, while the receiver (its own process) answers 500s and times out; in the
// end the receiver has every published event, each counted once after deduplicating by id,
// each employee's in the order of the feed, every signature verified by the specification's
// reference library.
func TestWebhooksSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills and restarts a worker for a minute; -short")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	recv := exec.Command(os.Args[0], "-test.run=^TestWebhookReceiverProcess$")
	recv.Env = append(os.Environ(), receiverEnv+"="+dir, "HRSYNC_TEST_WEBHOOK_SECRET="+secret)
	recv.Stderr = os.Stderr
	if err := recv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = recv.Process.Kill(); _ = recv.Wait() })
	var addr []byte
	for deadline := time.Now().Add(slowness.Bound(30 * time.Second)); ; {
		if addr, err = os.ReadFile(filepath.Join(dir, "addr")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the receiver did not start in time")
		}
		time.Sleep(50 * time.Millisecond)
	}

	raws := fakeupstream.Generate(30, 11)
	up := sourcetest.NewServer(fakeupstream.Options{Employees: raws})
	defer up.Close()
	db := filepath.Join(dir, "w.db")
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `source: {url: %q, api_key: %q, rate_limit: 0}
warehouse: {url: %q}
schedule: "@every 1s"
sync: {resources: [employees]}
log: {level: info}
events:
  timeout: 1s
  retry_for: 1h
  retry_backoff: 200ms
  webhooks:
    - {name: idp, url: "http://%s/hook", secret: %q}
`, up.URL, up.APIKey(), warehouseFile(t, db), addr, secret), 0o600); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	start := func() *process { return startProcess(t, bin, dir, []string{"HOME=" + dir}, "run", "--config", cfg) }

	// The first sync is the events' baseline; then five rounds of changes, each killed.
	p := start()
	p.waitFor(t, "the first sync", func() bool {
		return strings.Contains(p.stderr.String(), "events: the first load of employees is their baseline")
	})
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	next := slices.Clone(raws)
	kills := 0
	for round := 1; round <= 5; round++ {
		for _, i := range rng.Perm(len(next))[:4] {
			next[i] = setMember(t, next[i], "job_title", fmt.Sprintf("Title %d-%d", round, i))
		}
		if i := rng.IntN(len(next)); round%2 == 0 {
			next[i] = setMember(t, next[i], "leaving_date", "2026-01-31")
		}
		up.SetEmployees(next)
		p := start()
		time.Sleep(time.Duration(500+rng.IntN(3500)) * time.Millisecond)
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		kills++
	}

	// Left running: every published event reaches the receiver.
	p = start()
	published := func() []string {
		conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		rows, err := conn.QueryContext(context.Background(), `SELECT id FROM events WHERE state = 'published' ORDER BY seq`)
		if err != nil {
			return nil
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			var id string
			_ = rows.Scan(&id)
			ids = append(ids, id)
		}
		return ids
	}
	type receipt struct {
		id            string
		employee, seq int64
	}
	faults := map[string]int{}
	read := func() (ok []receipt, bad int) {
		f, err := os.Open(filepath.Join(dir, "received"))
		if err != nil {
			return nil, 0
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		clear(faults)
		for sc.Scan() {
			var r receipt
			if kind, _, _ := strings.Cut(sc.Text(), " "); kind == "500" || kind == "slow" {
				faults[kind]++
			} else if strings.HasPrefix(sc.Text(), "badsig") {
				bad++
			} else if _, err := fmt.Sscanf(sc.Text(), "ok %s %d %d", &r.id, &r.employee, &r.seq); err == nil {
				ok = append(ok, r)
			}
		}
		return ok, bad
	}
	var want []string
	p.waitFor(t, "every published event delivered", func() bool {
		want = published()
		got, _ := read()
		seen := map[string]bool{}
		for _, r := range got {
			seen[r.id] = true
		}
		if len(want) < 10 {
			return false
		}
		for _, id := range want {
			if !seen[id] {
				return false
			}
		}
		return true
	})
	p.stop(t, 30*time.Second)

	got, bad := read()
	if bad > 0 {
		t.Errorf("%d deliveries failed the reference library's signature check", bad)
	}
	unique := map[string]receipt{}
	last := map[int64]int64{} // employee → seq of their last event first received
	for _, r := range got {
		if _, dup := unique[r.id]; dup {
			continue
		}
		unique[r.id] = r
		if r.seq <= last[r.employee] {
			t.Errorf("employee %d: event #%d arrived after #%d", r.employee, r.seq, last[r.employee])
		}
		last[r.employee] = r.seq
	}
	for _, id := range want {
		if _, ok := unique[id]; !ok {
			t.Errorf("event %s never arrived", id)
		}
	}
	if len(unique) != len(want) {
		t.Errorf("the receiver has %d distinct events, the warehouse published %d", len(unique), len(want))
	}
	t.Logf("%d events published, %d distinct received in %d deliveries accepted (%d duplicates); %d kills, %d answers 500, %d past the timeout",
		len(want), len(unique), len(got), len(got)-len(unique), kills, faults["500"], faults["slow"])
}
