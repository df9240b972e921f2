package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestServeManyAccounts: one serve of many accounts on one Postgres, a key each, starts without
// holding a session per account and answers every key with its own account's data: a create
// with each key lands in that account only, and a read with it finds that one employee. Its
// sessions stay within serve.open_accounts' warehouses throughout, where opening every
// warehouse at start held one for every account. 12 accounts, three times the open ones,
// because migrating a schema takes seconds on a loaded machine: BenchmarkFleet serves 1,000
// (docs/benchmarks.md).
func TestServeManyAccounts(t *testing.T) {
	t.Parallel()
	const n, openAccounts = 12, 4 // three times as many accounts as may be open
	dbURL, prefix := sinktest.Postgres(t)
	app := "hrsync_serve_" + prefix
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "warehouse: {url: %q}\nlog: {level: warn}\naccounts:\n", dbURL+"&application_name="+app)
	var keys strings.Builder
	schemas := make([]string, n)
	for i := range n {
		schemas[i] = fmt.Sprintf("%s_a%03d", prefix, i)
		fmt.Fprintf(&cfg, "  - {name: a%03d, warehouse: {schema: %s}}\n", i, schemas[i])
		fmt.Fprintf(&keys, "    - {name: k%03d, key: %s, account: a%03d}\n", i, manyKey(i), i)
	}
	cfg.WriteString("serve:\n  open_accounts: " + fmt.Sprint(openAccounts) + "\n  keys:\n" + keys.String())
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t.Cleanup(func() {
		for _, s := range schemas {
			_, _ = db.Exec("DROP SCHEMA IF EXISTS " + pq.QuoteIdentifier(s) + " CASCADE")
		}
	})
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	began := time.Now()
	if err := run(ctx, []string{"--config", path, "migrate"}, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Logf("%d accounts migrated in %s", n, time.Since(began).Round(time.Millisecond))
	sessions := func() int {
		var c int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}

	began = time.Now()
	base, logs, stop := startServe(t, nil, "--config", path)
	t.Logf("serve of %d accounts up in %s", n, time.Since(began).Round(time.Millisecond))
	if got := sessions(); got != 0 {
		t.Errorf("serve holds %d sessions before any request, want 0", got)
	}
	peak := 0
	for i := range n {
		email := fmt.Sprintf("person-%03d@a%03d.example", i, i)
		resp, body := postEmployee(t, base, manyKey(i), url.Values{"employee[first_name]": {"Ada"}, "employee[last_name]": {fmt.Sprintf("A%03d", i)},
			"employee[email]": {email}, "employee[join_date]": {"2026-01-05"}})
		if resp.StatusCode != 201 {
			t.Fatalf("create with a%03d's key: %d %s\n%s", i, resp.StatusCode, body, logs)
		}
		code, page := get(t, base+"/v1/employees", manyKey(i))
		if code != 200 {
			t.Fatalf("read with a%03d's key: %d %s", i, code, page)
		}
		var doc struct {
			Employees []struct {
				Email string `json:"email"`
			} `json:"employees"`
		}
		if err := json.Unmarshal([]byte(page), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Employees) != 1 || doc.Employees[0].Email != email {
			t.Fatalf("a%03d's key read %+v, want its one employee %s", i, doc.Employees, email)
		}
		peak = max(peak, sessions())
	}
	// Each open warehouse holds what its requests used (a session or two) until it is closed.
	if peak > 2*openAccounts {
		t.Errorf("serve held up to %d sessions answering %d accounts, want at most %d (serve.open_accounts %d)", peak, n, 2*openAccounts, openAccounts)
	}
	t.Logf("at most %d sessions answering %d accounts in turn", peak, n)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// manyKey is the serve key of account i of TestServeManyAccounts.
func manyKey(i int) string { return fmt.Sprintf("many-accounts-serve-key-%03d-4f9a0c7e2b1d8e6f", i) }
