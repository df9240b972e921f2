package sink_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// warehouseState is everything a status must leave as it found: the ledger, every table with
// its row count, and every trigger, of db's warehouse (its search_path's schema on Postgres).
func warehouseState(t *testing.T, db *sql.DB, d schema.Dialect) string {
	t.Helper()
	ctx := context.Background()
	objects := `SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY type, name`
	tablesQ := `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	if d == schema.Postgres {
		objects = `SELECT 'table ' || table_name FROM information_schema.tables WHERE table_schema = current_schema()
UNION ALL SELECT 'trigger ' || t.tgname || ' ' || pg_get_triggerdef(t.oid) FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND NOT t.tgisinternal
ORDER BY 1`
		tablesQ = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`
	}
	var out []string
	read := func(q string) []string {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		return got
	}
	out = append(out, read(objects)...)
	for _, table := range read(tablesQ) {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s: %d rows", table, n))
	}
	out = append(out, read(`SELECT CAST(version AS text) || ' ' || name || ' ' || applied_at FROM schema_migrations ORDER BY version`)...)
	return strings.Join(out, "\n")
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func pendingVersions(ps []sink.Pending) []int {
	var v []int
	for _, p := range ps {
		v = append(v, p.Version)
	}
	return v
}

// TestMigrationStatusChangesNothing: a warehouse an earlier build left (version 15, with runs in
// its ledger; version latest-1) says its version, this build's and the migrations pending, each
// with its file's SQL as migrate runs it and the history triggers at the end of the last; the
// status leaves every table, row, trigger and ledger row as they were (and a SQLite file's bytes);
// migrate then applies exactly the migrations it listed.
func TestMigrationStatusChangesNothing(t *testing.T) {
	t.Parallel()
	for _, d := range []schema.Dialect{schema.Postgres, schema.SQLite} {
		ms, err := schema.Migrations(d)
		if err != nil {
			t.Fatal(err)
		}
		latest := len(ms)
		for _, from := range []int{15, latest - 1} {
			t.Run(fmt.Sprintf("%s from %d", d, from), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				db, target, opts := oldWarehouse(t, d, from)
				defer db.Close()
				if _, err := db.ExecContext(ctx, `INSERT INTO sync_runs (run_id, resource, started_at, status) VALUES ('r1', 'employees', '2026-11-01T02:00:00Z', 'ok')`); err != nil {
					t.Fatal(err)
				}
				before := warehouseState(t, db, d)
				var sum [32]byte
				if d == schema.SQLite {
					sum = fileSum(t, target)
				}
				st, err := sink.MigrationStatus(ctx, target, opts)
				if err != nil {
					t.Fatal(err)
				}
				if after := warehouseState(t, db, d); after != before {
					t.Errorf("the status changed the warehouse\nbefore %s\nafter %s", before, after)
				}
				if d == schema.SQLite && fileSum(t, target) != sum {
					t.Error("the status changed the SQLite file's bytes")
				}
				if st.Dialect != d || st.Applied != from || st.Known != latest || st.Ahead() || st.Missing || len(st.Unknown) != 0 || len(st.Setup) != 0 {
					t.Errorf("status %+v, want version %d of %d, not ahead, nothing to set up", st, from, latest)
				}
				var want []int
				for v := from + 1; v <= latest; v++ {
					want = append(want, v)
				}
				if !slices.Equal(pendingVersions(st.Pending), want) {
					t.Fatalf("pending %v, want %v", pendingVersions(st.Pending), want)
				}
				for i, p := range st.Pending {
					m := ms[p.Version-1]
					if p.Name != m.Name || p.Statements[0] != m.SQL {
						t.Errorf("pending %d %s: want %s and its file's SQL as it is", p.Version, p.Name, m.Name)
					}
					if i < len(st.Pending)-1 && len(p.Statements) != 1 {
						t.Errorf("pending %d: %d statements, want its file's alone (the history triggers come with the last)", p.Version, len(p.Statements))
					}
				}
				// Version 15's triggers were written by hand: the last migration remakes them.
				last := st.Pending[len(st.Pending)-1].Statements
				if from == 15 && (len(last) < 2 || !slices.ContainsFunc(last[1:], func(q string) bool { return strings.Contains(q, "employees_history_upd") })) {
					t.Errorf("the last migration's statements from 15 lack the history triggers: %d statements", len(last))
				}
				if from == 15 && !st.HistoryMayDiffer {
					t.Error("migrations 16 to the last change triggers, and the status does not say the history statements may differ")
				}

				_ = db.Close()
				applied, err := sink.Migrate(ctx, target, opts)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(applied, want) {
					t.Errorf("migrate applied %v, the status said %v", applied, want)
				}
				st, err = sink.MigrationStatus(ctx, target, opts)
				if err != nil || st.Applied != latest || len(st.Pending) != 0 || len(st.History) != 0 {
					t.Errorf("status after migrate %+v (%v), want up to date", st, err)
				}
			})
		}
	}
}

// TestMigrationStatusOfNothing: a warehouse not there yet (a Postgres schema never created, a
// SQLite file that does not exist) is at version 0 with every migration pending and the ledger's
// table to make first, and the status creates neither the schema, the ledger nor the file.
func TestMigrationStatusOfNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url, name := sinktest.Postgres(t)
		st, err := sink.MigrationStatus(ctx, url, sink.Options{Schema: name})
		if err != nil {
			t.Fatal(err)
		}
		checkNothing(t, st, schema.Postgres)
		db, err := sql.Open("postgres", url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, name).Scan(&n); err != nil || n != 0 {
			t.Errorf("schema %s after the status: %d (%v), want none", name, n, err)
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		st, err := sink.MigrationStatus(ctx, filepath.Join(dir, "w.db"), sink.Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkNothing(t, st, schema.SQLite)
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("the status left %d files in the directory, want none", len(entries))
		}
	})
}

func checkNothing(t *testing.T, st sink.SchemaStatus, d schema.Dialect) {
	t.Helper()
	latest := schema.Latest(d)
	if !st.Missing || st.Applied != 0 || st.Known != latest || len(st.Pending) != latest || len(st.Setup) != 1 || !strings.Contains(st.Setup[0], "schema_migrations") {
		t.Errorf("status of nothing: missing %v, version %d of %d, %d pending, setup %q; want missing, 0 of %d, all pending, the ledger to make",
			st.Missing, st.Applied, st.Known, len(st.Pending), st.Setup, latest)
	}
}

// TestMigrationStatusCurrentAndAhead: a current warehouse (a SQLite file in WAL mode, as hrsync
// leaves it) is up to date, and its file unchanged by the status; one whose history trigger was
// dropped by hand lists what migrate runs to remake it, and migrate does; one a newer build
// migrated (a version this build lacks in its ledger) is ahead, lists that version and nothing to
// run, and Open refuses it with an error naming both versions.
func TestMigrationStatusCurrentAndAhead(t *testing.T) {
	backendURLs(t, func(t *testing.T, d schema.Dialect, target string, opts sink.Options) {
		ctx := context.Background()
		if _, err := sink.Migrate(ctx, target, opts); err != nil {
			t.Fatal(err)
		}
		latest := schema.Latest(d)
		var sum [32]byte
		if d == schema.SQLite {
			sum = fileSum(t, target)
		}
		st, err := sink.MigrationStatus(ctx, target, opts)
		if err != nil || st.Applied != latest || st.Known != latest || len(st.Pending) != 0 || len(st.History) != 0 || st.Ahead() {
			t.Fatalf("status of a current warehouse %+v (%v), want up to date", st, err)
		}
		if d == schema.SQLite && fileSum(t, target) != sum {
			t.Error("the status changed the SQLite file's bytes")
		}

		s, err := sink.Open(ctx, target, opts)
		if err != nil {
			t.Fatal(err)
		}
		drop := `DROP TRIGGER employees_history_upd`
		if d == schema.Postgres {
			drop += ` ON employees`
		}
		if _, err := sinktest.DB(s).ExecContext(ctx, drop); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		st, err = sink.MigrationStatus(ctx, target, opts)
		if err != nil || len(st.Pending) != 0 || len(st.History) == 0 || !strings.Contains(strings.Join(st.History, "\n"), "employees_history_upd") {
			t.Fatalf("status with a trigger dropped: history %q (%v), want its remaking", st.History, err)
		}
		if _, err := sink.Migrate(ctx, target, opts); err != nil {
			t.Fatal(err)
		}
		if st, err = sink.MigrationStatus(ctx, target, opts); err != nil || len(st.History) != 0 {
			t.Errorf("status after migrate remade the trigger: history %q (%v), want none", st.History, err)
		}

		s, err = sink.Open(ctx, target, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sinktest.DB(s).ExecContext(ctx, fmt.Sprintf(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (%d, 'from_a_newer_build', '2027-01-01T00:00:00Z')`, latest+1)); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		st, err = sink.MigrationStatus(ctx, target, opts)
		if err != nil || !st.Ahead() || st.Applied != latest+1 || len(st.Pending) != 0 || len(st.History) != 0 ||
			len(st.Unknown) != 1 || st.Unknown[0].Version != latest+1 || st.Unknown[0].Name != "from_a_newer_build" {
			t.Fatalf("status of a warehouse a newer build migrated %+v (%v)", st, err)
		}
		_, err = sink.Open(ctx, target, opts)
		var ahead *schema.AheadError
		if !errors.As(err, &ahead) || !errors.Is(err, schema.ErrAhead) || ahead.Current != latest+1 || ahead.Latest != latest {
			t.Fatalf("open of a warehouse a newer build migrated: %v, want an AheadError %d/%d", err, latest+1, latest)
		}
		if want := fmt.Sprintf("(version %d, this build knows %d)", latest+1, latest); !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("open's error %q: want one line with %q", err, want)
		}
		if _, err := sink.Migrate(ctx, target, opts); !errors.Is(err, schema.ErrAhead) {
			t.Errorf("migrate of a warehouse a newer build migrated: %v, want ErrAhead", err)
		}
	})
}

// backendURLs runs f on each backend with a warehouse not yet made: a SQLite file's path, or a
// Postgres URL and the options naming its schema.
func backendURLs(t *testing.T, f func(t *testing.T, d schema.Dialect, target string, opts sink.Options)) {
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url, name := sinktest.Postgres(t)
		f(t, schema.Postgres, url, sink.Options{Schema: name})
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, schema.SQLite, filepath.Join(t.TempDir(), "w.db"), sink.Options{})
	})
}
