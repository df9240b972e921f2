package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// testAccount is one account of a process test's configuration: its upstream and its schema.
type testAccount struct {
	name, url, key, schema string
	employees              []json.RawMessage // what its upstream serves; nil for one that is down
}

// accountsConfig writes a configuration naming accts on the Postgres database at url, each in
// its own schema, and migrates every account's schema with it.
func accountsConfig(t *testing.T, url, common string, accts []testAccount) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "warehouse: {url: %q}\n%saccounts:\n", url, common)
	for _, a := range accts {
		fmt.Fprintf(&b, "  - {name: %s, source: {url: %q, api_key: %q}, warehouse: {schema: %s}}\n", a.name, a.url, a.key, a.schema)
	}
	path := sinktest.ConfigFile(t, b.String())
	var stderr strings.Builder
	if err := run(context.Background(), []string{"--config", path, "migrate"}, nil, io.Discard, &stderr); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr.String())
	}
	return path
}

// ledgerRow is one row of an account's sync_runs.
type ledgerRow struct {
	id                             int64
	account, resource, status, err string
	started                        time.Time
	finished                       sql.NullTime
}

// leftRunning reports whether a worker's log says it left the account's ledger row id running
// (its lock lost, or the warehouse silent: walk's "the ledger row is left running").
func leftRunning(log, account string, id int64) bool {
	for line := range strings.Lines(log) {
		fields := strings.Fields(line)
		if strings.Contains(line, "the ledger row is left running") && slices.Contains(fields, "account="+account) &&
			slices.Contains(fields, "ledger_id="+strconv.FormatInt(id, 10)) {
			return true
		}
	}
	return false
}

func ledger(t *testing.T, db *sql.DB, schema string) []ledgerRow {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf(`SELECT id, coalesce(account, ''), resource, status, coalesce(error, ''), started_at, finished_at
FROM %s.sync_runs ORDER BY resource, started_at, id`, schema))
	if err != nil {
		t.Fatalf("ledger of %s: %v", schema, err)
	}
	defer rows.Close()
	var out []ledgerRow
	for rows.Next() {
		var r ledgerRow
		if err := rows.Scan(&r.id, &r.account, &r.resource, &r.status, &r.err, &r.started, &r.finished); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// seriesValue sums the samples of the family name that carry every label of labels
// ("account=acme"); found says whether any did.
func seriesValue(t *testing.T, exposition, name string, labels ...string) (total float64, found bool) {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	f, ok := families[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		have := map[string]bool{}
		for _, l := range m.GetLabel() {
			have[l.GetName()+"="+l.GetValue()] = true
		}
		all := true
		for _, l := range labels {
			all = all && have[l]
		}
		if all {
			found = true
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total, found
}

// employeeKeys are the employees of raws as id → "first last <email>".
func employeeKeys(t *testing.T, raws []json.RawMessage) map[int64]string {
	t.Helper()
	out := make(map[int64]string, len(raws))
	for _, raw := range raws {
		var e struct {
			ID    int64  `json:"id"`
			First string `json:"first_name"`
			Last  string `json:"last_name"`
			Email string `json:"email"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		out[e.ID] = e.First + " " + e.Last + " <" + e.Email + ">"
	}
	return out
}

// warehouseEmployees are the employees of the warehouse schema as id → "first last <email>":
// the listed ones, or those only referenced (managers from outside the list).
func warehouseEmployees(t *testing.T, db *sql.DB, schema string, listed bool) map[int64]string {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf(`SELECT id, coalesce(first_name, ''), coalesce(last_name, ''), coalesce(email, '')
FROM %s.employees WHERE listed = $1`, schema), listed)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var first, last, email string
		if err := rows.Scan(&id, &first, &last, &email); err != nil {
			t.Fatal(err)
		}
		out[id] = first + " " + last + " <" + email + ">"
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOneWorkerThreeAccountsOneDown: one `hrsync run` works three accounts, each on its own
// upstream and schema; the third upstream is down (answering 503 to everything, or refusing
// connections). The two others sync their own employees, and only theirs, on schedule, before
// and after the down account's runs fail; the down account's failures show in its ledger, the
// metrics and the log, and never stop the others.
func TestOneWorkerThreeAccountsOneDown(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a worker for several seconds")
	}
	bin := buildBinary(t)
	outages := []struct {
		name string
		// down starts the down account's upstream and returns its URL.
		down func(t *testing.T) string
	}{
		{"every request answered 503", func(t *testing.T) string {
			up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(10, 99),
				Fault: func(int, *http.Request) fakeupstream.Fault {
					return fakeupstream.Fault{Status: http.StatusServiceUnavailable}
				}})
			t.Cleanup(up.Close)
			return up.URL
		}},
		{"connections refused", func(t *testing.T) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			if err := ln.Close(); err != nil {
				t.Fatal(err)
			}
			return "http://" + addr
		}},
	}
	for _, outage := range outages {
		t.Run(outage.name, func(t *testing.T) {
			t.Parallel() // most of each is waiting out the down upstream's retries
			accts := []testAccount{
				{name: "acme", employees: fakeupstream.Generate(40, 101)},
				{name: "globex", employees: fakeupstream.Generate(75, 202)},
				{name: "initech"},
			}
			var url string
			for i := range accts {
				a := &accts[i]
				url, a.schema = sinktest.Postgres(t)
				if a.employees == nil {
					a.url, a.key = outage.down(t), fakeupstream.DefaultAPIKey
					continue
				}
				up := sourcetest.NewServer(fakeupstream.Options{Employees: a.employees})
				t.Cleanup(up.Close)
				a.url, a.key = up.URL, up.APIKey()
			}
			healthy, down := accts[:2], accts[2]
			// Serve mode beside the worker: a key for each account.
			keys := "serve:\n  keys:\n"
			for _, a := range accts {
				keys += fmt.Sprintf("    - {name: %s-dashboard, key: %s-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d, account: %s}\n", a.name, a.name, a.name)
			}
			cfg := accountsConfig(t, url, "source: {rate_limit: 0}\nsync: {resources: [employees]}\nschedule: \"@every 2s\"\n"+keys, accts)
			db, err := sql.Open("postgres", url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()

			serveAddr := freeAddr(t)
			p := startRun(t, bin, []string{"HRSYNC_SERVE_ADDR=" + serveAddr}, "--config", cfg, "--now", "--serve")
			// The down account's first run fails once its retries run out (some seconds);
			// each healthy account has synced more than once, and once since that failure.
			p.waitFor(t, "the healthy accounts syncing after the down one failed", func() bool {
				var downFailed time.Time
				for _, r := range ledger(t, db, down.schema) {
					if r.status == "failed" && r.finished.Valid && (downFailed.IsZero() || r.finished.Time.Before(downFailed)) {
						downFailed = r.finished.Time
					}
				}
				if downFailed.IsZero() {
					return false
				}
				for _, a := range healthy {
					ok, after := 0, false
					for _, r := range ledger(t, db, a.schema) {
						if r.status == "ok" {
							ok++
							after = after || r.started.After(downFailed)
						}
					}
					if ok < 2 || !after {
						return false
					}
				}
				return true
			})
			var page string
			p.waitFor(t, "the down account's failure counted", func() bool {
				page = p.scrape(t)
				v, _ := seriesValue(t, page, "hrsync_sync_runs_total", "account="+down.name, "status=failed")
				return v > 0
			})

			for _, a := range healthy {
				oks := 0
				for _, r := range ledger(t, db, a.schema) {
					if r.account != a.name {
						t.Errorf("%s's ledger has a row of account %q", a.name, r.account)
					}
					switch {
					case r.status == "ok":
						oks++
					case r.status == "running" && !r.finished.Valid: // the run going on now
					default:
						t.Errorf("%s: a %s run %s: %s", a.name, r.resource, r.status, r.err)
					}
				}
				if oks < 2 {
					t.Errorf("%s: %d ok runs, want several on the schedule", a.name, oks)
				}
				want, got := employeeKeys(t, a.employees), warehouseEmployees(t, db, a.schema, true)
				for id, e := range got {
					if want[id] != e {
						t.Errorf("%s's warehouse has employee %d %s, not its upstream's (%q)", a.name, id, e, want[id])
					}
				}
				for id, e := range want {
					if _, ok := got[id]; !ok {
						t.Errorf("%s's warehouse lacks its employee %d %s", a.name, id, e)
					}
				}
				// Those only referenced (managers from outside the list) are people of its own
				// upstream's records too.
				for id, e := range warehouseEmployees(t, db, a.schema, false) {
					email := e[strings.LastIndex(e, "<")+1 : len(e)-1]
					if !slices.ContainsFunc(a.employees, func(raw json.RawMessage) bool { return strings.Contains(string(raw), email) }) {
						t.Errorf("%s's warehouse has employee %d %s, whom its upstream never named", a.name, id, e)
					}
				}
				if v, found := seriesValue(t, page, "hrsync_sync_last_success_timestamp_seconds", "account="+a.name, "resource=employees"); !found || v <= 0 {
					t.Errorf("%s: no last success time in /metrics (%v, %v)", a.name, v, found)
				}
				if v, _ := seriesValue(t, page, "hrsync_sync_runs_total", "account="+a.name, "status=ok"); v < 2 {
					t.Errorf("%s: %v ok runs in /metrics, want 2 or more", a.name, v)
				}
			}

			rows := ledger(t, db, down.schema)
			failed := 0
			for _, r := range rows {
				if r.account != down.name {
					t.Errorf("%s's ledger has a row of account %q", down.name, r.account)
				}
				switch {
				case r.status == "failed" && r.err != "":
					failed++
				case r.status == "running" && !r.finished.Valid: // retrying now
				default:
					t.Errorf("%s (down): a %s run %s %q, want failed with an error", down.name, r.resource, r.status, r.err)
				}
			}
			if failed == 0 {
				t.Errorf("%s (down): no failed run in the ledger", down.name)
			}
			if n := len(warehouseEmployees(t, db, down.schema, true)) + len(warehouseEmployees(t, db, down.schema, false)); n != 0 {
				t.Errorf("%s (down): %d employees in its warehouse", down.name, n)
			}
			if _, found := seriesValue(t, page, "hrsync_sync_last_success_timestamp_seconds", "account="+down.name); found {
				t.Errorf("%s (down) has a last success time in /metrics", down.name)
			}
			// Serve mode: every key against every account's records. A key lists its own
			// account's employees, all of them; reads each of them; and never another's: an id
			// only another account has is 404, one both have is its own account's record.
			base := "http://" + serveAddr
			for _, k := range accts {
				key := k.name + "-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d"
				own := employeeKeys(t, k.employees)
				listed := map[int64]string{}
				for page := 1; ; page++ {
					code, body := get(t, fmt.Sprintf("%s/v1/employees?page=%d&per_page=100", base, page), key)
					if code != 200 {
						t.Fatalf("%s's key, page %d: %d %s", k.name, page, code, body)
					}
					var doc struct{ Employees []json.RawMessage }
					if err := json.Unmarshal([]byte(body), &doc); err != nil {
						t.Fatal(err)
					}
					if len(doc.Employees) == 0 {
						break
					}
					maps.Copy(listed, employeeKeys(t, doc.Employees))
				}
				if !maps.Equal(listed, own) {
					t.Errorf("%s's key listed %d employees, not its account's %d", k.name, len(listed), len(own))
				}
				for _, a := range accts {
					for id, e := range employeeKeys(t, a.employees) {
						code, body := get(t, fmt.Sprintf("%s/v1/employees/%d", base, id), key)
						mine, has := own[id]
						switch {
						case has && (code != 200 || !strings.Contains(body, mine[strings.LastIndex(mine, "<")+1:len(mine)-1])):
							t.Errorf("%s's key reading its employee %d: %d %s", k.name, id, code, body)
						case !has && code != 404:
							t.Errorf("%s's key reading %s's employee %d (%s): %d, want 404", k.name, a.name, id, e, code)
						case has && mine != e && strings.Contains(body, e[strings.LastIndex(e, "<")+1:len(e)-1]):
							t.Errorf("%s's key read %s's version of employee %d", k.name, a.name, id)
						}
					}
				}
			}

			// The log says which account failed (its line follows the metric's count).
			p.waitFor(t, "an error in the log naming account "+down.name, func() bool {
				for line := range strings.Lines(p.stderr.String()) {
					if strings.Contains(line, "level=ERROR") && strings.Contains(line, "account="+down.name) {
						return true
					}
				}
				return false
			})
		})
	}
}

// TestTwoWorkersShareFourAccounts: two `hrsync run` processes with one configuration of four
// accounts share them: each account's lock lets one worker sync it at a time, both workers sync
// some accounts; killed mid-run, one worker leaves its runs to the other, which takes them over
// at its next ticks once their leases expire (warehouse.lock_ttl, 5 s here, well inside waitFor's 60 s)
// and closes the killed worker's ledger rows as abandoned. No account's ledger ever shows two
// runs of a resource at once.
func TestTwoWorkersShareFourAccounts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs processes for several seconds")
	}
	bin := buildBinary(t)
	// Slow pages: a sync of 400 employees (4 pages, one at a time) lasts a few seconds.
	slow := func(_ int, r *http.Request) fakeupstream.Fault {
		if r.URL.Path == "/v1/employees" {
			return fakeupstream.Fault{Delay: 600 * time.Millisecond}
		}
		return fakeupstream.Fault{}
	}
	accts := []testAccount{{name: "acme"}, {name: "globex"}, {name: "initech"}, {name: "umbrella"}}
	var url string
	for i := range accts {
		a := &accts[i]
		url, a.schema = sinktest.Postgres(t)
		a.employees = fakeupstream.Generate(400+10*i, int64(300+i))
		up := sourcetest.NewServer(fakeupstream.Options{Employees: a.employees, Fault: slow})
		t.Cleanup(up.Close)
		a.url, a.key = up.URL, up.APIKey()
	}
	cfg := accountsConfig(t, url, "source: {rate_limit: 0}\nsync: {resources: [employees], concurrency: 1}\nschedule: \"@every 1s\"\n", accts)
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// Each worker's sessions carry its name; the holder of a lock's lease is its host and pid.
	names := []string{"hrsync-a", "hrsync-b"}
	begun := time.Now()
	workers := make([]*process, len(names))
	for i, name := range names {
		workers[i] = startRun(t, bin, []string{"PGAPPNAME=" + name, "HRSYNC_WAREHOUSE_LOCK_TTL=5s"}, "--config", cfg, "--now")
	}

	// holding is the accounts whose sync lock the worker holds (a live lease), its run's ledger
	// row open.
	holding := func(worker *process) []string {
		var out []string
		for _, acct := range accts {
			var held bool
			err := db.QueryRow(fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %[1]s.locks WHERE name = 'sync'
    AND holder LIKE '%%:' || $1 AND expires_at > clock_timestamp())
AND EXISTS (SELECT 1 FROM %[1]s.sync_runs WHERE status = 'running')`, acct.schema), strconv.Itoa(worker.cmd.Process.Pid)).Scan(&held)
			if err != nil {
				t.Fatal(err)
			}
			if held {
				out = append(out, acct.name)
			}
		}
		return out
	}
	// Both workers sync some accounts (each one's /metrics counts ok runs); then the one in the
	// middle of a run is killed.
	var held []string
	runs := make([]float64, len(workers))
	victim := -1
	workers[0].waitFor(t, "both workers syncing, then one in the middle of a run", func() bool {
		for i, p := range workers {
			runs[i], _ = seriesValue(t, p.scrape(t), "hrsync_sync_runs_total", "status=ok")
			if runs[i] == 0 {
				return false
			}
		}
		for i, p := range workers {
			if held = holding(p); len(held) > 0 {
				victim = i
				return true
			}
		}
		return false
	})
	killedProc, survivor := workers[victim], workers[1-victim]
	// The worker dies between killing (the signal sent) and killed (its exit seen).
	killing := time.Now()
	if err := killedProc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-killedProc.done
	killed := time.Now()
	// The runs it left open: those of the accounts it held (no other worker could run them).
	// Under a loaded machine a run may have ended between the look and the kill.
	leftOpen := 0
	for _, acct := range accts {
		if slices.Contains(held, acct.name) {
			for _, r := range ledger(t, db, acct.schema) {
				if r.status == "running" {
					leftOpen++
				}
			}
		}
	}
	t.Logf("%s killed %s after the start, holding %v; ok runs before: %v", names[victim],
		killed.Sub(begun).Round(time.Millisecond), held, runs)

	// By its next ticks, the survivor syncs every account, the killed one's included, and closes
	// the rows the killed one left running.
	survivor.waitFor(t, "every account synced after the kill, no run of the killed worker left open", func() bool {
		for _, acct := range accts {
			synced := false
			for _, r := range ledger(t, db, acct.schema) {
				if r.status == "running" && r.started.Before(killed) {
					return false
				}
				synced = synced || r.status == "ok" && r.started.After(killed)
			}
			if !synced {
				return false
			}
		}
		return true
	})
	t.Logf("every account synced by the survivor %s after the kill", time.Since(killed).Round(time.Millisecond))
	survivor.stop(t, 45*time.Second)

	abandoned := 0
	for _, acct := range accts {
		var prev ledgerRow
		var prevEnd time.Time
		for _, r := range ledger(t, db, acct.schema) {
			if r.account != acct.name {
				t.Errorf("%s's ledger has a row of account %q", acct.name, r.account)
			}
			end := r.finished.Time
			switch r.status {
			case "abandoned":
				// Closed when the survivor next held the lock; the run itself ended with its
				// worker, at the kill: no later than the survivor's next run began, which is no
				// earlier than killing. To the second, as the ledger keeps times (a run taken
				// over in the second of the kill is written as started at its beginning).
				abandoned++
				if !r.started.Before(killed) {
					t.Errorf("%s: a run started at %s, after the kill, was abandoned", acct.name, r.started)
				}
				end = killing.Truncate(time.Second)
			case "running":
				// Left so on purpose only when the survivor said so: a run that lost its lock (a
				// lease not renewed in time on a loaded machine) writes nothing, its row included,
				// for the next holder to close.
				if leftRunning(survivor.stderr.String(), acct.name, r.id) {
					t.Logf("%s: the run started at %s was left running by the survivor, as it logged", acct.name, r.started)
					break
				}
				t.Errorf("%s: a run started at %s still running after both workers stopped", acct.name, r.started)
			}
			if r.resource == prev.resource && r.started.Before(prevEnd) {
				t.Errorf("%s: a %s run (%s) started at %s before the previous (%s) ended at %s", acct.name, r.resource,
					r.status, r.started.Format(time.StampMilli), prev.status, prevEnd.Format(time.StampMilli))
			}
			prev, prevEnd = r, end
		}
	}
	switch {
	case leftOpen == 0:
		t.Logf("the killed worker's run of %v ended between the look and the kill: nothing was left to abandon", held)
	case abandoned < leftOpen: // more when it began another run between the look and the kill
		t.Errorf("%d runs closed as abandoned, want at least the %d the killed worker left open (it held %v)", abandoned, leftOpen, held)
	}
}
