package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestPersonCommandsMakeNoWarehouse: erase (every mode), subject-access and retention (and its
// dry run) where there is no warehouse (run where no configuration is found, so at the default
// hrsync.db; at a warehouse.url naming no file; at a Postgres schema never migrated) fail with one
// line saying there is none, exit 1, and leave no warehouse behind.
func TestPersonCommandsMakeNoWarehouse(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // no config.yaml here: the defaults, warehouse hrsync.db
	pgURL, pgSchema := sinktest.Postgres(t)
	retentionRule := []string{"HRSYNC_RETENTION_LEAVERS_IDENTIFYING=6y"}
	for _, where := range []struct {
		name string
		env  []string
		file string // the SQLite file that must not be made
		says string
	}{
		{"no configuration", nil, filepath.Join(dir, "hrsync.db"), "no warehouse at " + filepath.Join(dir, "hrsync.db") + ": no such file"},
		{"a missing file", []string{"HRSYNC_WAREHOUSE_URL=" + filepath.Join(dir, "elsewhere.db")}, filepath.Join(dir, "elsewhere.db"), "no such file"},
		{"a schema never migrated", []string{"HRSYNC_WAREHOUSE_URL=" + pgURL, "HRSYNC_WAREHOUSE_SCHEMA=" + pgSchema}, "", "not set up"},
	} {
		for _, args := range [][]string{
			{"erase", "--employee", "42", "--reason", "ticket 1"},
			{"erase", "--employee", "42", "--reason", "ticket 1", "--pre-emptive"},
			{"erase", "--list"},
			{"erase", "--lift", "1", "--reason", "withdrawn"},
			{"subject-access", "--employee", "42", "--out", filepath.Join(dir, "exports")},
			{"retention"},
			{"retention", "--dry-run"},
		} {
			env := append(append([]string(nil), where.env...), retentionRule...)
			err := run(context.Background(), args, env, io.Discard, io.Discard)
			if err == nil || exitCode(err) != 1 || !errors.Is(err, sink.ErrNoWarehouse) || !strings.Contains(err.Error(), where.says) ||
				strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v: %v (exit %d), want one line saying %q, exit 1", where.name, args, err, exitCode(err), where.says)
			}
			if where.file != "" {
				if _, err := os.Stat(where.file); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s: %v made a warehouse at %s", where.name, args, where.file)
				}
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused commands left %d files in %s", len(entries), dir)
	}
}

// TestEraseUnheldEmployee: erase --employee of an id the warehouse does not hold (a mistyped
// id) is refused, saying how to check it or ask for a pre-emptive erasure, and records nothing;
// with --pre-emptive it is recorded, to hold once a sync brings the person.
func TestEraseUnheldEmployee(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := warehouseOf(t, `{"id":42,"first_name":"Zorblax","last_name":"Quendrith","email":"zq@marker.example"}`)
	env := []string{"HRSYNC_WAREHOUSE_URL=" + path}
	err := run(ctx, []string{"erase", "--employee", "4242", "--reason", "ticket 7"}, env, io.Discard, io.Discard)
	const want = "employee 4242 is not in the warehouse: check the id, or pass --pre-emptive to record an erasure that holds when a sync brings them"
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("erase of an unheld id: %v (exit %d), want one line %q, exit 1", err, exitCode(err), want)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"erase", "--list"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "4242") {
		t.Errorf("a refused erase was recorded: %q", out.String())
	}
	if err := run(ctx, []string{"erase", "--list", "--pre-emptive"}, env, io.Discard, io.Discard); err == nil || exitCode(err) != 2 {
		t.Errorf("--pre-emptive without --employee: %v, want a usage error", err)
	}

	out.Reset()
	if err := run(ctx, []string{"erase", "--employee", "4242", "--reason", "ticket 7", "--pre-emptive"}, env, &out, io.Discard); err != nil {
		t.Fatalf("pre-emptive erase: %v", err)
	}
	if !strings.Contains(out.String(), "erased employee 4242") {
		t.Errorf("pre-emptive erase printed %q", out.String())
	}
	// A held person needs no flag.
	if err := run(ctx, []string{"erase", "--employee", "42", "--reason", "ticket 8"}, env, io.Discard, io.Discard); err != nil {
		t.Errorf("erase of a held id: %v", err)
	}
}
