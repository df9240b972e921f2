package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// TestServeOnHotStandby runs serve as docs/scaling.md advises: on a Postgres hot standby (made
// with pg_basebackup -R) of the warehouse a sync writes. Pages and ETags work there; a sync on the
// primary reaches the standby's answers once replayed (new ETag, new data); a create, with the
// writes a replica of a source has by default (forward), is refused with a JSON 405 that says
// why, before anything is sent upstream; /readyz says read-only; and every command that writes
// refuses the standby at start in one line, as migrate does. A schema the standby has not got
// yet is named as the primary's to migrate.
func TestServeOnHotStandby(t *testing.T) {
	t.Parallel()
	pg := sinktest.NewStandby(t)
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(150, 3)})
	defer up.Close()
	const key = "k-4f9a0c7e2b1d8e6f3a5c9b0d"
	common := []string{"HRSYNC_SOURCE_URL=" + up.URL + "/v1/", "HRSYNC_SOURCE_API_KEY=" + up.APIKey(),
		"HRSYNC_SOURCE_RATE_LIMIT=0", "HRSYNC_SERVE_API_KEYS=" + key}
	primary := append([]string{"HRSYNC_WAREHOUSE_URL=" + pg.PrimaryURL}, common...)
	standby := append([]string{"HRSYNC_WAREHOUSE_URL=" + pg.StandbyURL}, common...)
	ctx := context.Background()
	var logs bytes.Buffer
	for _, args := range [][]string{{"migrate"}, {"sync"}} {
		if err := run(ctx, args, primary, io.Discard, &logs); err != nil {
			t.Fatalf("%s on the primary: %v\n%s", args[0], err, logs.String())
		}
	}
	pg.WaitReplay(t)

	base, serveLogs, stop := startServe(t, standby)
	defer func() { _ = stop() }()
	if !strings.Contains(serveLogs.String(), "the warehouse is read-only (a hot standby)") {
		t.Errorf("serve's start does not say the warehouse is read-only:\n%s", serveLogs)
	}

	// Pages, and conditional GETs answered 304.
	page1 := base + "/v1/employees?per_page=100&page=1"
	resp, body := fetch(t, "GET", page1, key, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Total") != "150" || resp.Header.Get("ETag") == "" {
		t.Fatalf("page 1 from the standby: %d Total %q ETag %q: %.200s", resp.StatusCode, resp.Header.Get("Total"), resp.Header.Get("ETag"), body)
	}
	tag := resp.Header.Get("ETag")
	if resp, body := fetch(t, "GET", base+"/v1/employees?per_page=100&page=2", key, nil); resp.StatusCode != 200 || countEmployees(t, body) != 50 {
		t.Fatalf("page 2 from the standby: %d, %d employees", resp.StatusCode, countEmployees(t, body))
	}
	if resp, _ := fetch(t, "GET", page1, key, nil, "If-None-Match", tag); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidating page 1 on the standby: %d, want 304", resp.StatusCode)
	}

	// /readyz: ready, and read-only.
	if resp, body := fetch(t, "GET", base+"/readyz", "", nil); resp.StatusCode != 200 || !strings.Contains(string(body), `"warehouse":"read-only replica (hot standby)`) {
		t.Errorf("/readyz on the standby: %d %s", resp.StatusCode, body)
	}

	// A create is refused, saying why and where creates go; nothing reaches the upstream, with
	// or without an Idempotency-Key (whose record would be a local write too).
	form := url.Values{"employee[first_name]": {"Ida"}, "employee[last_name]": {"Em"},
		"employee[email]": {"ida@example.com"}, "employee[join_date]": {"2026-01-05"}}
	sent := up.NumRequests()
	for _, idem := range []string{"", "standby-create-1"} {
		resp, body := fetch(t, "POST", base+"/v1/employees", key, strings.NewReader(form.Encode()),
			"Content-Type", "application/x-www-form-urlencoded", "Idempotency-Key", idem)
		var e struct {
			Error struct{ Type, Message string }
		}
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" ||
			json.Unmarshal(body, &e) != nil || e.Error.Message != server.ReadOnlyMessage {
			t.Errorf("a create on the standby (Idempotency-Key %q): %d Allow %q %s", idem, resp.StatusCode, resp.Header.Get("Allow"), body)
		}
	}
	if n := up.NumRequests(); n != sent {
		t.Errorf("creates refused on the standby sent %d requests upstream", n-sent)
	}

	// A change synced on the primary reaches the standby's answers once replayed: a new ETag and
	// the new data, with no restart and no word to serve.
	raws := up.Employees()
	var first map[string]any
	if err := json.Unmarshal(raws[0], &first); err != nil {
		t.Fatal(err)
	}
	first["first_name"] = "Renamed"
	if raws[0], _ = json.Marshal(first); raws[0] == nil {
		t.Fatal("marshal")
	}
	up.SetEmployees(raws)
	if err := run(ctx, []string{"sync"}, primary, io.Discard, &logs); err != nil {
		t.Fatalf("second sync on the primary: %v\n%s", err, logs.String())
	}
	pg.WaitReplay(t)
	resp, body = fetch(t, "GET", page1, key, nil, "If-None-Match", tag)
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == tag || !strings.Contains(string(body), `"first_name":"Renamed"`) {
		t.Fatalf("page 1 after a sync replayed: %d, ETag %q (was %q), renamed employee in it: %v",
			resp.StatusCode, resp.Header.Get("ETag"), tag, strings.Contains(string(body), `"first_name":"Renamed"`))
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Every command that writes refuses the standby at start, in one line; those that only read
	// run.
	csv := filepath.Join(t.TempDir(), "hires.csv")
	writeFile(t, csv, "first_name,last_name,email,join_date\nIda,Em,ida@example.com,2026-01-05\n")
	retain := append([]string{"HRSYNC_RETENTION_LEAVERS_IDENTIFYING=6y"}, standby...)
	refused := "is a read-only replica (hot standby); point warehouse.url at the primary"
	for _, tt := range []struct {
		args []string
		env  []string
		want string // "" : succeeds
	}{
		{[]string{"migrate"}, standby, refused + "; the standby follows once it has replayed the migration"},
		{[]string{"sync"}, standby, refused},
		{[]string{"onboard", csv}, standby, refused},
		{[]string{"erase", "--employee", "1", "--reason", "test"}, standby, refused},
		{[]string{"erase", "--list"}, standby, ""},
		{[]string{"retention"}, retain, refused},
		{[]string{"retention", "--dry-run"}, retain, ""},
		{[]string{"run"}, append([]string{"HRSYNC_SCHEDULE=@daily", "HRSYNC_METRICS_ADDR=" + freeAddr(t)}, standby...), refused},
		{[]string{"inventory"}, standby, ""},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			// Bounded: a worker that is not refused would run until the test times out.
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			var stderr bytes.Buffer
			err := run(cctx, tt.args, tt.env, io.Discard, &stderr)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("reading a standby: %v\n%s", err, stderr.String())
			case tt.want == "":
			case err == nil:
				t.Fatalf("ran on a standby; want refused: %q", tt.want)
			case !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") || exitCode(err) != 1:
				t.Fatalf("refused with %q (exit %d); want one line with %q", err, exitCode(err), tt.want)
			}
		})
	}

	// A standby whose schema is behind this build's says the primary is the one to migrate.
	db, err := sql.Open("postgres", pg.PrimaryURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM hr.schema_migrations WHERE version = $1`, schema.Latest(schema.Postgres)); err != nil {
		t.Fatal(err)
	}
	pg.WaitReplay(t)
	// Bounded: a serve that starts (the bug) would otherwise serve until the test times out.
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = run(sctx, []string{"serve"}, append([]string{"HRSYNC_SERVE_ADDR=" + freeAddr(t)}, standby...), io.Discard, io.Discard)
	if want := fmt.Sprintf("warehouse schema is behind (version %d, this build needs %d): run `hrsync migrate` against the primary: this warehouse is a read-only replica (hot standby), and follows once it has replayed the migration",
		schema.Latest(schema.Postgres)-1, schema.Latest(schema.Postgres)); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("serve on a standby behind: %v\nwant %q", err, want)
	}
}

// fetch sends a request with key (unless "") and the header pairs ("" values left out).
func fetch(t *testing.T, method, target, key string, body io.Reader, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			req.Header.Set(header[i], header[i+1])
		}
	}
	return sourcetest.Do(t, http.DefaultClient, req)
}

func countEmployees(t *testing.T, body []byte) int {
	t.Helper()
	var env struct{ Employees []json.RawMessage }
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("%v: %.200s", err, body)
	}
	return len(env.Employees)
}
