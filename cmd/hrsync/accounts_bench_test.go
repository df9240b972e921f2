package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// BenchmarkWorkerAccounts measures one `hrsync run` process (the real binary, built once) working
// several accounts into one Postgres warehouse, every account due at the same moment (--now, a
// schedule a year away). Each account has its own schema and reads the employees and working
// patterns of a fake upstream of benchAccountEmployees employees (one in-process server shared by
// every account, unlimited, so the fake's CPU is not the worker's). An iteration ends when every
// account's ledger has an ok run of both collections; it reports, averaged over the iterations:
//
//   - peak-conns: most Postgres sessions of the worker at once (pg_stat_activity by
//     application_name, polled every 100 ms), and peak-busy-conns of them not idle;
//   - end-conns: its sessions when the last run ended; idle-conns: its sessions once the
//     worker has been idle for twice the pools' idle time and a second (benchIdleWait), when
//     every account is idle;
//   - peak-rss-MB: the worker's VmHWM;
//   - wall-s: from the start of the process to the last ok run (the schemas are migrated
//     before the process starts);
//   - cpu-s: the worker's user and system CPU time by then.
//
// rate=0 is unpaced (stresses the warehouse), rate=60 the real service's 60 requests a minute per
// account on the shared budget. -bench.accounts lists the unpaced sizes. Run with -benchtime 1x (each iteration starts a process and
// takes seconds to minutes); see docs/benchmarks.md.
func BenchmarkWorkerAccounts(b *testing.B) {
	bin := buildBinary(b)
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(benchAccountEmployees, 7)})
	defer up.Close()
	type config struct{ accounts, maxSyncs, rate int }
	var configs []config
	for f := range strings.SplitSeq(*benchAccounts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 99 {
			b.Fatalf("-bench.accounts %q: want numbers of accounts from 1 to 99, comma-separated", *benchAccounts)
		}
		configs = append(configs, config{n, 0, 0})
	}
	configs = append(configs, config{20, 4, 0}, config{1, 0, 60}, config{20, 0, 60})
	for _, c := range configs {
		b.Run(fmt.Sprintf("accounts=%d/max_syncs=%d/rate=%d", c.accounts, c.maxSyncs, c.rate), func(b *testing.B) {
			var sum benchWorkerResult
			for i := 0; i < b.N; i++ {
				r := runWorkerAccounts(b, bin, up, c.accounts, c.maxSyncs, c.rate)
				sum.peakConns += r.peakConns
				sum.peakBusy += r.peakBusy
				sum.endConns += r.endConns
				sum.idleConns += r.idleConns
				sum.rssMB += r.rssMB
				sum.wall += r.wall
				sum.cpu += r.cpu
			}
			n := float64(b.N)
			b.ReportMetric(0, "ns/op") // the process's figures below are the measure
			b.ReportMetric(float64(sum.peakConns)/n, "peak-conns")
			b.ReportMetric(float64(sum.peakBusy)/n, "peak-busy-conns")
			b.ReportMetric(float64(sum.endConns)/n, "end-conns")
			b.ReportMetric(float64(sum.idleConns)/n, "idle-conns")
			b.ReportMetric(sum.rssMB/n, "peak-rss-MB")
			b.ReportMetric(sum.wall.Seconds()/n, "wall-s")
			b.ReportMetric(sum.cpu.Seconds()/n, "cpu-s")
		})
	}
}

// benchAccounts lists the unpaced sizes BenchmarkWorkerAccounts measures, besides 20 accounts
// with worker.max_syncs 4 and 1 and 20 accounts paced at 60 a minute. Each account syncing holds
// up to two Postgres connections (three paced): 50 unpaced accounts at once need a server with
// max_connections above 100.
var benchAccounts = flag.String("bench.accounts", "1,5,20,40", "BenchmarkWorkerAccounts: numbers of accounts of the unpaced runs, comma-separated")

// benchIdleWait is how long after the last run idle-conns is counted: the pools close a
// connection between one and two idle times after its last use.
const benchIdleWait = 2*sink.DefaultConnMaxIdleTime + time.Second

// benchAccountEmployees is the size of every account of BenchmarkWorkerAccounts.
const benchAccountEmployees = 2000

type benchWorkerResult struct {
	peakConns, peakBusy, endConns, idleConns int
	rssMB                                    float64
	wall, cpu                                time.Duration
}

// runWorkerAccounts runs one worker of n accounts until every account has synced once.
func runWorkerAccounts(b *testing.B, bin string, up *sourcetest.Server, n, maxSyncs, rate int) benchWorkerResult {
	b.Helper()
	url, prefix := sinktest.Postgres(b)
	poll, err := sql.Open("postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	defer poll.Close()
	poll.SetMaxOpenConns(1)
	schemas := make([]string, n)
	var cfg strings.Builder
	app := "hrsync_bench_" + prefix
	fmt.Fprintf(&cfg, "source: {rate_limit: %d}\nsync: {resources: [working_patterns, employees]}\n", rate)
	fmt.Fprintf(&cfg, "warehouse: {url: %q}\nworker: {max_syncs: %d}\nlog: {level: warn}\naccounts:\n", url+"&application_name="+app, maxSyncs)
	for i := range schemas {
		schemas[i] = fmt.Sprintf("%s_a%02d", prefix, i)
		fmt.Fprintf(&cfg, "  - {name: a%02d, source: {url: %q, api_key: %q}, warehouse: {schema: %s}, schedule: '0 0 1 1 *'}\n",
			i, up.URL, up.APIKey(), schemas[i])
	}
	b.Cleanup(func() {
		db, err := sql.Open("postgres", url)
		if err != nil {
			return
		}
		defer db.Close()
		for _, s := range schemas {
			_, _ = db.Exec("DROP SCHEMA IF EXISTS " + pq.QuoteIdentifier(s) + " CASCADE")
		}
	})
	path := filepath.Join(b.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	// Done when every account has an ok run of both collections; a failed run fails the bench.
	q := ledgersQuery(schemas, "coalesce(sum(ok), 0), coalesce(sum(failed), 0)")
	connQ := `SELECT count(*), count(*) FILTER (WHERE state <> 'idle') FROM pg_stat_activity WHERE application_name = $1`

	// Migrated beforehand, as an operator does: the measure is the worker's.
	if out, err := exec.Command(bin, "migrate", "--config", path).CombinedOutput(); err != nil {
		b.Fatalf("migrate: %v\n%s", err, out)
	}
	p := &process{stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, "run", "--now", "--config", path)
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	p.cmd.Stderr = p.stderr
	start := time.Now()
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	defer func() { _ = p.cmd.Process.Kill() }()

	var r benchWorkerResult
	ctx := context.Background()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-p.done:
			b.Fatalf("the worker exited: %v\n%s", err, p.stderr)
		case <-tick.C:
		}
		if time.Since(start) > 20*time.Minute {
			b.Fatalf("not done within 20 minutes\n%s", p.stderr)
		}
		var conns, busy int
		if err := poll.QueryRowContext(ctx, connQ, app).Scan(&conns, &busy); err != nil {
			b.Fatal(err)
		}
		r.peakConns, r.peakBusy = max(r.peakConns, conns), max(r.peakBusy, busy)
		var ok, failed int
		if err := poll.QueryRowContext(ctx, q).Scan(&ok, &failed); err != nil {
			continue // a schema not migrated yet
		}
		if failed > 0 {
			b.Fatalf("a run failed\n%s", p.stderr)
		}
		if ok == 2*n {
			r.wall = time.Since(start)
			r.endConns = conns
			break
		}
	}
	r.cpu = procCPU(b, p.cmd.Process.Pid)
	r.rssMB = procHWM(b, p.cmd.Process.Pid)
	b.StopTimer()
	time.Sleep(benchIdleWait)
	if err := poll.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&r.idleConns); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		b.Errorf("the worker did not stop within a minute of SIGTERM")
	}
	return r
}

// procCPU is the user and system CPU time of process pid so far (/proc/pid/stat, 100 ticks a
// second as on Linux/amd64).
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which is in parentheses: utime and stime are the 12th
	// and 13th of them.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procHWM is the peak resident set of process pid in MiB (VmHWM).
func procHWM(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// ledgersQuery selects what over the sync ledgers of schemas, one row per schema: ok (the
// resources with an ok run) and failed (runs neither ok nor running).
func ledgersQuery(schemas []string, what string) string {
	var q strings.Builder
	q.WriteString("SELECT " + what + " FROM (")
	for i, s := range schemas {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&q, "SELECT count(DISTINCT resource) FILTER (WHERE status = 'ok') AS ok, count(*) FILTER (WHERE status NOT IN ('ok', 'running')) AS failed FROM %s.sync_runs", pq.QuoteIdentifier(s))
	}
	q.WriteString(") r")
	return q.String()
}
