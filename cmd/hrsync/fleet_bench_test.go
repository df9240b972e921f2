package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
)

// benchFleet lists the numbers of accounts BenchmarkFleet runs.
var benchFleet = flag.String("bench.fleet", "20,100", "BenchmarkFleet: numbers of accounts, comma-separated")

// benchFleetMaxSyncs is worker.max_syncs of each of BenchmarkFleet's two workers.
var benchFleetMaxSyncs = flag.Int("bench.fleet.max_syncs", 10, "BenchmarkFleet: worker.max_syncs of each worker")

// BenchmarkFleet is issue 26's run of many accounts: N accounts of fleetEmployees employees
// each, each paced at the real 60 requests a minute against its own fake upstream account (one
// in-process server, each account under its own path with its own rate limit), synced by TWO
// `hrsync run --now` processes (the real binary) sharing the accounts on one Postgres, then one
// `hrsync serve` answering a key of every account. It reports:
//
//   - synced: accounts whose ledger has an ok run of both collections by the workers (N, unless
//     Postgres sessions bound first: then workers-bound-by-sessions is 1, the accounts are
//     synced one after another by `hrsync sync`, and serve is measured all the same);
//   - peak-sessions: most Postgres sessions of the two workers together (pg_stat_activity by
//     application_name, sampled every 250 ms), and peak-sessions-w1, -w2 of each;
//   - peak-rss-MB-w1, -w2: each worker's VmHWM;
//   - wall-s: from starting the workers to the last account's ok run;
//   - serve-start-s, serve-rss-MB, serve-peak-sessions, serve-idle-sessions: serve's start
//     (every warehouse checked), its VmHWM and sessions after answering every account's key
//     once, and its sessions before any request;
//   - max-connections: the server's (reported, not set).
//
// Migrating N schemas (not timed, four at once) takes about 1–2 s each here. Not run by plain go test; see
// docs/benchmarks.md.
func BenchmarkFleet(b *testing.B) {
	bin := buildBinary(b)
	for f := range strings.SplitSeq(*benchFleet, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-bench.fleet %q: want numbers of accounts, comma-separated", *benchFleet)
		}
		b.Run(fmt.Sprintf("accounts=%d/max_syncs=%d", n, *benchFleetMaxSyncs), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runFleet(b, bin, n, *benchFleetMaxSyncs)
			}
		})
	}
}

// fleetEmployees is the size of every account of BenchmarkFleet.
const fleetEmployees = 200

// fleetUpstream serves n fake upstream accounts from one server, account i under /a<i>, each
// its own fakeupstream.Service with its own key and the real 60-requests-a-minute limit.
func fleetUpstream(n int) (*httptest.Server, []string) {
	mux := http.NewServeMux()
	keys := make([]string, n)
	for i := range n {
		keys[i] = fmt.Sprintf("fleet-upstream-key-%04d", i)
		svc := fakeupstream.New(fakeupstream.Options{APIKey: keys[i], Employees: fakeupstream.Generate(fleetEmployees, int64(i+1)), RateLimit: 60})
		prefix := fmt.Sprintf("/a%04d", i)
		mux.Handle(prefix+"/", http.StripPrefix(prefix, svc))
	}
	return httptest.NewServer(mux), keys
}

func runFleet(b *testing.B, bin string, n, maxSyncs int) {
	b.Helper()
	up, upKeys := fleetUpstream(n)
	defer up.Close()
	dbURL, prefix := sinktest.Postgres(b)
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var maxConns int
	if err := db.QueryRow(`SELECT current_setting('max_connections')::int`).Scan(&maxConns); err != nil {
		b.Fatal(err)
	}
	schemas := make([]string, n)
	var cfg, keys strings.Builder
	fmt.Fprintf(&cfg, "source: {rate_limit: 60}\nsync: {resources: [working_patterns, employees]}\nschedule: '0 0 1 1 *'\n")
	fmt.Fprintf(&cfg, "warehouse: {url: %q}\nworker: {max_syncs: %d}\nlog: {level: warn}\naccounts:\n", dbURL, maxSyncs)
	for i := range schemas {
		schemas[i] = fmt.Sprintf("%s_a%04d", prefix, i)
		fmt.Fprintf(&cfg, "  - {name: a%04d, source: {url: %q, api_key: %q}, warehouse: {schema: %s}}\n", i, fmt.Sprintf("%s/a%04d", up.URL, i), upKeys[i], schemas[i])
		fmt.Fprintf(&keys, "    - {name: k%04d, key: %s, account: a%04d, writes: false}\n", i, manyKey(i), i)
	}
	cfg.WriteString("serve:\n  keys:\n" + keys.String())
	b.Cleanup(func() {
		for _, s := range schemas {
			_, _ = db.Exec("DROP SCHEMA IF EXISTS " + pq.QuoteIdentifier(s) + " CASCADE")
		}
	})
	path := filepath.Join(b.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	// Four migrate processes, each a quarter of the accounts: a schema takes seconds, mostly
	// waiting on the server.
	migrated := time.Now()
	var migrations sync.WaitGroup
	errs := make([]error, 4)
	for part := range errs {
		var names []string
		for i := part; i < n; i += len(errs) {
			names = append(names, fmt.Sprintf("a%04d", i))
		}
		if len(names) == 0 {
			continue
		}
		migrations.Go(func() {
			if out, err := exec.Command(bin, "migrate", "--config", path, "--account", strings.Join(names, ",")).CombinedOutput(); err != nil {
				errs[part] = fmt.Errorf("migrate: %v\n%.2000s", err, out)
			}
		})
	}
	migrations.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d schemas migrated in %s; max_connections %d", n, time.Since(migrated).Round(time.Second), maxConns)

	// The ledgers: accounts with an ok run of both collections, and failed runs.
	q := ledgersQuery(schemas, "count(*) FILTER (WHERE ok = 2), coalesce(sum(failed), 0)")
	sessions := func(app string) int {
		var c int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&c); err != nil {
			b.Fatal(err)
		}
		return c
	}
	start := func(app string, args ...string) *process {
		p := &process{stderr: &syncBuffer{}, done: make(chan error, 1)}
		p.cmd = exec.Command(bin, append(args, "--config", path)...)
		p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HRSYNC_WAREHOUSE_URL=" + dbURL + "&application_name=" + app}
		p.cmd.Stderr = p.stderr
		if err := p.cmd.Start(); err != nil {
			b.Fatal(err)
		}
		go func() { p.done <- p.cmd.Wait() }()
		b.Cleanup(func() { _ = p.cmd.Process.Kill() })
		return p
	}
	stop := func(p *process) {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(time.Minute):
			b.Errorf("a process did not stop within a minute of SIGTERM")
		}
	}

	apps := []string{"hrsync_fleet_w1_" + prefix, "hrsync_fleet_w2_" + prefix}
	began := time.Now()
	workers := []*process{start(apps[0], "run", "--now"), start(apps[1], "run", "--now")}
	var peak, peak1, peak2, synced int
	var wall time.Duration
	bound := "" // what stopped the workers, if anything did
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
workers:
	for polls := 0; ; polls++ {
		for _, w := range workers {
			select {
			case err := <-w.done:
				b.Fatalf("a worker exited: %v\n%s", err, w.stderr)
			default:
			}
		}
		<-tick.C
		for _, w := range workers {
			// An account whose warehouse does not open is retried for ever: say what bound,
			// and go on to serve with the accounts synced one after another.
			if strings.Contains(w.stderr.String(), "too many clients") {
				bound = "sessions"
				b.Logf("Postgres sessions bound first: a worker could not open an account's warehouse (max_connections %d; peak sessions %d, %d and %d; %d of %d accounts synced)\n%.600s",
					maxConns, peak, peak1, peak2, synced, n, w.stderr)
				break workers
			}
		}
		if time.Since(began) > 60*time.Minute {
			b.Fatalf("not done within an hour: %d of %d accounts synced\n%s", synced, n, workers[0].stderr)
		}
		s1, s2 := sessions(apps[0]), sessions(apps[1])
		peak, peak1, peak2 = max(peak, s1+s2), max(peak1, s1), max(peak2, s2)
		if polls%4 != 0 {
			continue
		}
		var failed int
		if err := db.QueryRow(q).Scan(&synced, &failed); err != nil {
			b.Fatal(err)
		}
		if failed > 0 {
			b.Fatalf("%d runs failed\n%s\n%s", failed, workers[0].stderr, workers[1].stderr)
		}
		if synced == n {
			wall = time.Since(began)
			break
		}
	}
	rss1, rss2 := procHWM(b, workers[0].cmd.Process.Pid), procHWM(b, workers[1].cmd.Process.Pid)
	for _, w := range workers {
		stop(w)
	}
	if bound != "" {
		// serve is still measured: `hrsync sync` syncs the accounts one after another (unpaced
		// here; each account's upstream still allows 60 a minute), one warehouse open at a time.
		cmd := exec.Command(bin, "sync", "--config", path)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HRSYNC_SOURCE_RATE_LIMIT=0"}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("sync, one account after another: %v\n%.2000s", err, out)
		}
	}

	// serve: every account's key answered once.
	addr := freeAddrB(b)
	serveApp := "hrsync_fleet_serve_" + prefix
	serveBegan := time.Now()
	sp := start(serveApp, "serve", "--addr", addr)
	base := "http://" + addr
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-sp.done:
			b.Fatalf("serve exited: %v\n%s", err, sp.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	serveStart := time.Since(serveBegan)
	idle := sessions(serveApp)
	servePeak := idle
	for i := range n {
		req, _ := http.NewRequest("GET", base+"/v1/employees?per_page=1", nil)
		req.Header.Set("X-API-KEY", manyKey(i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var doc struct {
			Employees []json.RawMessage `json:"employees"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(body, &doc) != nil || len(doc.Employees) != 1 || resp.Header.Get("Total") != strconv.Itoa(fleetEmployees) {
			b.Fatalf("serve, account a%04d: %d Total %q %.200s\n%s", i, resp.StatusCode, resp.Header.Get("Total"), body, sp.stderr)
		}
		if i%10 == 0 {
			servePeak = max(servePeak, sessions(serveApp))
		}
	}
	serveRSS := procHWM(b, sp.cmd.Process.Pid)
	stop(sp)

	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(synced), "synced")
	if bound != "" {
		b.ReportMetric(1, "workers-bound-by-sessions")
	}
	b.ReportMetric(float64(peak), "peak-sessions")
	b.ReportMetric(float64(peak1), "peak-sessions-w1")
	b.ReportMetric(float64(peak2), "peak-sessions-w2")
	b.ReportMetric(rss1, "peak-rss-MB-w1")
	b.ReportMetric(rss2, "peak-rss-MB-w2")
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(serveStart.Seconds(), "serve-start-s")
	b.ReportMetric(serveRSS, "serve-rss-MB")
	b.ReportMetric(float64(idle), "serve-idle-sessions")
	b.ReportMetric(float64(servePeak), "serve-peak-sessions")
	b.ReportMetric(float64(maxConns), "max-connections")
}

// freeAddrB is a loopback address free a moment ago.
func freeAddrB(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
