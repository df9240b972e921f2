package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// TestReadyzManyAccountsFewSessions: /readyz of a worker whose accounts share one Postgres opens
// at most two sessions a probe, not one for every account (their pools hold none once idle);
// and an account whose schema falls behind after start is still found by a later probe (each
// account's schema is looked at in turn), named, and ready again once it is current.
func TestReadyzManyAccountsFewSessions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a worker for several seconds")
	}
	bin := buildBinary(t)
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(3, 1)})
	t.Cleanup(up.Close)
	accts := make([]testAccount, 6)
	var url string
	for i := range accts {
		a := &accts[i]
		a.name = fmt.Sprintf("acct%d", i)
		url, a.schema = sinktest.Postgres(t)
		a.url, a.key = up.URL, up.APIKey()
	}
	// A schedule far off: the worker only waits, as most accounts do most of the day.
	cfg := accountsConfig(t, url, "schedule: \"0 3 1 1 *\"\n", accts)
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const app = "hrsync-readyz"
	p := startRun(t, bin, []string{"PGAPPNAME=" + app}, "--config", cfg)
	sessions := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	readyz := func() (int, string) { return get(t, "http://"+p.metrics+"/readyz", "") }
	p.waitFor(t, "/readyz 200", func() bool {
		resp, err := http.Get("http://" + p.metrics + "/readyz") // refused until the worker listens
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	p.waitFor(t, "the worker's sessions closed once idle", func() bool { return sessions() == 0 })

	if code, body := readyz(); code != 200 {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	if n := sessions(); n > 2 {
		t.Errorf("one /readyz of %d accounts on one server left %d sessions open, want at most 2", len(accts), n)
	}

	// The last account's schema falls behind: a probe names it within one look at each account.
	behind := accts[len(accts)-1]
	table := pq.QuoteIdentifier(behind.schema) + ".schema_migrations"
	var name, applied string
	if err := db.QueryRow(`DELETE FROM `+table+` WHERE version = $1 RETURNING name, applied_at`, schema.Latest(schema.Postgres)).Scan(&name, &applied); err != nil {
		t.Fatal(err)
	}
	found := false
	for range len(accts) {
		code, body := readyz()
		if code == 503 && strings.Contains(body, "account "+behind.name) && strings.Contains(body, "behind") {
			found = true
			break
		}
		if code != 200 {
			t.Fatalf("/readyz while %s is behind: %d %s, want it named", behind.name, code, body)
		}
	}
	if !found {
		t.Fatalf("%d probes never named %s, whose schema is behind", len(accts), behind.name)
	}
	if code, body := readyz(); code != 503 || !strings.Contains(body, "account "+behind.name) {
		t.Errorf("/readyz after %s was found behind: %d %s, want it still named until it is current", behind.name, code, body)
	}

	// Current again: ready again within one look at each account.
	if _, err := db.Exec(`INSERT INTO `+table+` (version, name, applied_at) VALUES ($1, $2, $3)`, schema.Latest(schema.Postgres), name, applied); err != nil {
		t.Fatal(err)
	}
	for range len(accts) {
		if code, _ := readyz(); code == 200 {
			return
		}
	}
	code, body := readyz()
	t.Errorf("/readyz once %s is current again: %d %s, want 200", behind.name, code, body)
}
