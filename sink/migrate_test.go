package sink_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// openDB is an empty database of the dialect: a new SQLite file, or a new Postgres schema on the
// connection's search_path.
func openRawDB(t *testing.T, d schema.Dialect) *sql.DB {
	t.Helper()
	var db *sql.DB
	var err error
	switch d {
	case schema.SQLite:
		db, err = sql.Open("sqlite", filepath.Join(t.TempDir(), "w.db"))
	case schema.Postgres:
		raw, name := sinktest.Postgres(t)
		var u *url.URL
		if u, err = url.Parse(raw); err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		if db, err = sql.Open("postgres", u.String()); err == nil {
			_, err = db.Exec(fmt.Sprintf(`CREATE SCHEMA IF NOT EXISTS %s`, name))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestUpgradeKeepsTheLedger: a warehouse migrated by an earlier build (version 3 or 4) with runs in
// its ledger upgrades to the latest version with every run kept, and the ledger then takes the
// abandoned and unavailable statuses and runs of any collection.
func TestUpgradeKeepsTheLedger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d        schema.Dialect
		from     int
		statuses []string
	}{
		{schema.SQLite, 3, []string{"ok", "running", "guarded"}},
		{schema.Postgres, 3, []string{"ok", "running", "guarded"}},
		{schema.SQLite, 4, []string{"ok", "running", "guarded", "abandoned"}},
		{schema.Postgres, 4, []string{"ok", "running", "guarded", "abandoned"}},
	} {
		d := tc.d
		t.Run(fmt.Sprintf("%s from %d", d, tc.from), func(t *testing.T) {
			ctx := context.Background()
			db := openRawDB(t, d)
			migrateTo(t, db, d, tc.from) // an earlier build: versions 1 to tc.from only
			var want []string
			for i, st := range tc.statuses {
				want = append(want, fmt.Sprintf("r%d:%s", i, st))
				if _, err := db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO sync_runs (run_id, resource, started_at, status) VALUES ('r%d', 'employees', '2026-11-0%dT02:00:00Z', '%s')`, i, i+1, st)); err != nil {
					t.Fatal(err)
				}
			}
			applied, err := sink.MigrateDB(ctx, db, d)
			if err != nil {
				t.Fatal(err)
			}
			if want := []int{tc.from + 1}; len(applied) == 0 || !slices.Equal(applied[:1], want) {
				t.Errorf("applied %v, want it to start with %v", applied, want)
			}
			rows, err := db.QueryContext(ctx, `SELECT run_id, status FROM sync_runs ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var id, st string
				if err := rows.Scan(&id, &st); err != nil {
					t.Fatal(err)
				}
				got = append(got, id+":"+st)
			}
			rows.Close()
			if !slices.Equal(got, want) {
				t.Errorf("ledger after the upgrade %v, want %v", got, want)
			}
			if _, err := db.ExecContext(ctx, `UPDATE sync_runs SET status = 'abandoned' WHERE run_id = 'r1'`); err != nil {
				t.Errorf("the upgraded ledger refuses abandoned: %v", err)
			}
			if _, err := db.ExecContext(ctx, `UPDATE sync_runs SET status = 'unavailable' WHERE run_id = 'r2'`); err != nil {
				t.Errorf("the upgraded ledger refuses unavailable: %v", err)
			}
			if _, err := db.ExecContext(ctx, `UPDATE sync_runs SET status = 'lost' WHERE run_id = 'r1'`); err == nil {
				t.Error("the upgraded ledger takes any status")
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO sync_runs (run_id, resource, started_at, status) VALUES ('r9', 'absences', '2026-11-09T02:00:00Z', 'ok')`); err != nil {
				t.Errorf("the upgraded ledger refuses a run of absences: %v", err)
			}
		})
	}
}

// oldWarehouse is a warehouse of dialect d migrated to version n only, as an earlier build left
// it: its database (one connection), the target Open and Migrate take, and their options.
func oldWarehouse(t *testing.T, d schema.Dialect, n int) (*sql.DB, string, sink.Options) {
	t.Helper()
	var db *sql.DB
	var target string
	var opts sink.Options
	var err error
	switch d {
	case schema.SQLite:
		target = filepath.Join(t.TempDir(), "w.db")
		db, err = sql.Open("sqlite", target)
	case schema.Postgres:
		target, opts.Schema = sinktest.Postgres(t)
		u, _ := url.Parse(target)
		q := u.Query()
		q.Set("search_path", opts.Schema)
		u.RawQuery = q.Encode()
		if db, err = sql.Open("postgres", u.String()); err == nil {
			_, err = db.Exec(`CREATE SCHEMA IF NOT EXISTS ` + opts.Schema)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	migrateTo(t, db, d, n)
	return db, target, opts
}

// upgraded closes db, the old warehouse oldWarehouse made, and opens it with this build, which
// migrates it to the newest version (Postgres through Migrate, as an operator runs it).
func upgraded(t *testing.T, db *sql.DB, d schema.Dialect, target string, opts sink.Options) *sink.Store {
	t.Helper()
	ctx := context.Background()
	_ = db.Close()
	if d == schema.Postgres {
		if _, err := sink.Migrate(ctx, target, opts); err != nil {
			t.Fatal(err)
		}
	}
	s, err := sink.Open(ctx, target, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// migrateTo applies versions 1 to n of the dialect's migrations to db, as an earlier build did.
func migrateTo(t *testing.T, db *sql.DB, d schema.Dialect, n int) {
	t.Helper()
	ctx := context.Background()
	ms, err := schema.Migrations(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:n] {
		if _, err := db.ExecContext(ctx, m.SQL); err != nil {
			t.Fatalf("%d: %v", m.Version, err)
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, '%s', 'then')`, m.Version, m.Name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUpgradeListsReferenceData: departments and holiday allowances that only employees'
// references filled (before 0008) are kept unlisted, the seeded allowance stays served, and
// meta counts what is served.
func TestUpgradeListsReferenceData(t *testing.T) {
	t.Parallel()
	for _, d := range []schema.Dialect{schema.Postgres, schema.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			db := openRawDB(t, d)
			migrateTo(t, db, d, 7)
			for _, q := range []string{
				`INSERT INTO departments (id, name) VALUES (5, 'R&D'), (6, 'Sales')`,
				`INSERT INTO holiday_allowances (id, name) VALUES (3, 'Senior')`,
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := sink.MigrateDB(ctx, db, d); err != nil {
				t.Fatal(err)
			}
			var deps, unlistedDeps, allowances, unlistedAllowances int
			err := db.QueryRowContext(ctx, `SELECT departments_total, holiday_allowances_total,
    (SELECT count(*) FROM departments WHERE NOT listed), (SELECT count(*) FROM holiday_allowances WHERE NOT listed)
FROM meta`).Scan(&deps, &allowances, &unlistedDeps, &unlistedAllowances)
			if err != nil {
				t.Fatal(err)
			}
			if deps != 0 || unlistedDeps != 2 || allowances != 1 || unlistedAllowances != 1 {
				t.Errorf("served departments %d (want 0), unlisted %d (want 2); served allowances %d (want 1: the seed), unlisted %d (want 1)",
					deps, unlistedDeps, allowances, unlistedAllowances)
			}
			// The triggers count listed rows from now on.
			if _, err := db.ExecContext(ctx, `UPDATE departments SET listed = true WHERE id = 5`); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRowContext(ctx, `SELECT departments_total FROM meta`).Scan(&deps); err != nil || deps != 1 {
				t.Errorf("departments_total %d (%v) after listing one, want 1", deps, err)
			}
		})
	}
}

// TestUpgradeMakesHistoryFromDeclarations: a warehouse an earlier build left (version 15, its
// history triggers written by hand) is upgraded to triggers made from the declarations, in the
// last migration's transaction: employees' history gets nested (the current version its row's),
// the next write of an employee keeps it, and a hard delete closes the version, as in every
// other history.
func TestUpgradeMakesHistoryFromDeclarations(t *testing.T) {
	t.Parallel()
	for _, d := range []schema.Dialect{schema.Postgres, schema.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			db, target, opts := oldWarehouse(t, d, 15)
			nested := `{"department":{"id":5,"name":"R&D"}}`
			if _, err := db.ExecContext(ctx, `INSERT INTO employees (id, first_name, nested) VALUES (7, 'Ana', '`+nested+`')`); err != nil {
				t.Fatal(err)
			}
			s := upgraded(t, db, d, target, opts)
			if bad, err := sink.DeclarationMismatches(ctx, s); err != nil || len(bad) != 0 {
				t.Errorf("after the upgrade: mismatches %q (%v), want none", bad, err)
			}
			current := func() (n int, kept string) {
				t.Helper()
				err := sinktest.DB(s).QueryRowContext(ctx, `SELECT (SELECT count(*) FROM employees_history WHERE id = 7),
    coalesce((SELECT CAST(nested AS text) FROM employees_history WHERE id = 7 AND valid_to IS NULL), '-')`).Scan(&n, &kept)
				if err != nil {
					t.Fatal(err)
				}
				return n, kept
			}
			if n, kept := current(); n != 1 || kept != nested {
				t.Errorf("after the upgrade: %d versions, the current one keeps nested %s; want 1, %s", n, kept, nested)
			}
			nextMillisecond()
			if _, err := sinktest.DB(s).ExecContext(ctx, `UPDATE employees SET first_name = 'Anna' WHERE id = 7`); err != nil {
				t.Fatal(err)
			}
			if n, kept := current(); n != 2 || kept != nested {
				t.Errorf("after an update: %d versions, the current one keeps nested %s; want 2, %s", n, kept, nested)
			}
			nextMillisecond()
			if _, err := sinktest.DB(s).ExecContext(ctx, `DELETE FROM employees WHERE id = 7`); err != nil {
				t.Fatal(err)
			}
			if n, kept := current(); n != 2 || kept != "-" {
				t.Errorf("after a hard delete: %d versions, current nested %s; want 2, none current", n, kept)
			}
		})
	}
}
