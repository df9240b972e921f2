package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/schema"
)

// behindFile is a SQLite warehouse at version n, as an older build left it: migrations 1 to n
// and their ledger rows.
func behindFile(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms, err := schema.Migrations(schema.SQLite)
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
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, ?, '2026-11-01T00:00:00Z')`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func migrateOut(t *testing.T, path string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"migrate"}, args...), []string{"HRSYNC_WAREHOUSE_URL=" + path}, &out, io.Discard)
	return out.String(), err
}

// statusShape is a status line with what varies between warehouses and builds left out: the
// warehouse's location, the numbers and the migrations' names.
func statusShape(s string) string {
	s = regexp.MustCompile(`warehouse \S+ \(`).ReplaceAllString(s, "warehouse LOCATION (")
	s = regexp.MustCompile(`(pending \d+) \S+`).ReplaceAllString(s, "$1 NAME")
	return regexp.MustCompile(`\d+`).ReplaceAllString(s, "N")
}

// TestMigrateStatusAndDryRun: hrsync migrate --status says a warehouse's version, this build's
// and the migrations pending (as docs/operations.md shows it), --dry-run also each one's SQL as
// its file has it; neither changes the file, or makes one that is not there; --status with
// --dry-run is --dry-run. After migrate the status is up to date, and with a version a newer
// build applied it says so, exit status 0, where migrate refuses.
func TestMigrateStatusAndDryRun(t *testing.T) {
	ms, err := schema.Migrations(schema.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	latest := len(ms)

	missing := filepath.Join(t.TempDir(), "new.db")
	out, err := migrateOut(t, missing, "--status")
	want := fmt.Sprintf("warehouse %s (sqlite): schema version 0, this build knows %d: %d migrations pending (the warehouse does not exist yet: migrate creates it)\n  pending 0001 %s\n",
		missing, latest, latest, ms[0].Name)
	if err != nil || !strings.HasPrefix(out, want) || strings.Count(out, "\n  pending ") != latest {
		t.Errorf("status of a file not there: %v\n%s\nwant it to start\n%s", err, out, want)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the status made the file: %v", err)
	}

	path := behindFile(t, latest-1)
	before := sum(t, path)
	status, err := migrateOut(t, path, "--status")
	last := ms[latest-1]
	want = fmt.Sprintf("warehouse %s (sqlite): schema version %d, this build knows %d: 1 migration pending\n  pending %04d %s\n", path, latest-1, latest, last.Version, last.Name)
	if err != nil || status != want {
		t.Errorf("status: %v\n%s\nwant\n%s", err, status, want)
	}
	// The docs' example has this shape.
	doc := readRepoFile(t, "docs/operations.md")
	_, example, ok := strings.Cut(doc, "$ hrsync migrate --status\n")
	if example, _, _ = strings.Cut(example, "```"); !ok || statusShape(example) != statusShape(status) {
		t.Errorf("docs/operations.md's example of migrate --status\n%s\nis not what it prints\n%s", example, status)
	}

	dry, err := migrateOut(t, path, "--dry-run")
	if err != nil || !strings.HasPrefix(dry, status+"migrate would run (nothing was changed):\n") {
		t.Errorf("dry run: %v\n%s\nwant it to start with the status", err, dry)
	}
	title := fmt.Sprintf("\n-- %04d %s: in one transaction, with its row in schema_migrations\n", last.Version, last.Name)
	if !strings.Contains(dry, title+strings.TrimRight(last.SQL, "\n")) {
		t.Errorf("dry run lacks %04d's file as it is, under %q:\n%s", last.Version, title, dry)
	}
	if both, err := migrateOut(t, path, "--status", "--dry-run"); err != nil || both != dry {
		t.Errorf("--status --dry-run: %v\n%s\nwant what --dry-run prints", err, both)
	}
	if sum(t, path) != before {
		t.Error("--status or --dry-run changed the file")
	}

	if out, err := migrateOut(t, path); err != nil || out != fmt.Sprintf("warehouse %s: applied migrations [%d]\n", path, latest) {
		t.Errorf("migrate: %v %q", err, out)
	}
	want = fmt.Sprintf("warehouse %s (sqlite): schema version %d, this build knows %d: up to date\n", path, latest, latest)
	for _, flag := range []string{"--status", "--dry-run"} {
		if out, err := migrateOut(t, path, flag); err != nil || out != want {
			t.Errorf("%s after migrate: %v %q, want %q", flag, err, out, want)
		}
	}

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`INSERT INTO schema_migrations VALUES (?, 'from_a_newer_build', '2027-01-01T00:00:00Z')`, latest+1)
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err = migrateOut(t, path, "--status")
	want = fmt.Sprintf("warehouse %s (sqlite): schema version %d, this build knows %d: NEWER than this build; a newer hrsync migrated it, and this build refuses it (run that release or a later one)\n"+
		"  applied, unknown to this build: %04d from_a_newer_build (2027-01-01T00:00:00Z)\n", path, latest+1, latest, latest+1)
	if err != nil || out != want {
		t.Errorf("status of a warehouse a newer build migrated: %v\n%s\nwant\n%s", err, out, want)
	}
	_, err = migrateOut(t, path)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), fmt.Sprintf("newer than this build (version %d, this build knows %d)", latest+1, latest)) {
		t.Errorf("migrate of a warehouse a newer build migrated: %v", err)
	}
}
