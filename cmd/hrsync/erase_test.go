package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestEraseCommand: hrsync erase erases a person, prints the rows changed per table and no
// value, lists the erasure, lifts it; its mistakes are one-line usage errors.
func TestEraseCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := warehouseOf(t,
		`{"id":42,"first_name":"Zorblax","last_name":"Quendrith","email":"zq@marker.example","job_title":"Chef","department":{"id":2,"name":"Kitchen"}}`,
		`{"id":43,"first_name":"Quinella","line_manager":{"id":42,"first_name":"Zorblax","last_name":"Quendrith"}}`,
	)
	env := []string{"HRSYNC_WAREHOUSE_URL=" + path}

	for _, tc := range []struct {
		args []string
		has  string
	}{
		{[]string{"erase"}, "give one of --employee ID, --list, --lift ERASURE_ID or --reapply"},
		{[]string{"erase", "--employee", "42", "--list"}, "give one of"},
		{[]string{"erase", "--employee", "42"}, "--reason is needed"},
		{[]string{"erase", "--employee", "42", "--reason", "r", "--classes", "identifying,employment"}, `"employment" is not an erasable class`},
		{[]string{"erase", "--list", "--classes", "health"}, "--classes goes with --employee"},
	} {
		err := run(ctx, tc.args, env, io.Discard, io.Discard)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.has) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.has)
		}
	}

	var out bytes.Buffer
	if err := run(ctx, []string{"erase", "--employee", "42", "--reason", "ticket 7"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"erased employee 42 (erasure 1; identifying,free_text,financial,health)", "employees  ", "employees_history", "erasures"} {
		if !strings.Contains(got, want) {
			t.Errorf("erase printed %q, want %q in it", got, want)
		}
	}
	if strings.Contains(got, "Zorblax") || strings.Contains(got, "zq@") {
		t.Errorf("erase printed a value: %q", got)
	}
	out.Reset()
	if err := run(ctx, []string{"erase", "--list"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "employee 42") || !strings.Contains(got, "ticket 7") || !strings.Contains(got, "request") {
		t.Errorf("list printed %q", got)
	}
	out.Reset()
	if err := run(ctx, []string{"erase", "--lift", "1", "--reason", "withdrawn"}, env, &out, io.Discard); err != nil || !strings.Contains(out.String(), "lifted erasure 1 (employee 42") {
		t.Errorf("lift: %v, printed %q", err, out.String())
	}
	if err := run(ctx, []string{"erase", "--lift", "1", "--reason", "again"}, env, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "no such erasure in force") {
		t.Errorf("second lift: %v", err)
	}

	s, err := sink.Open(ctx, path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var first, managerForm string
	if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT coalesce(first_name, ''), (SELECT nested FROM employees WHERE id = 43) FROM employees WHERE id = 42`).Scan(&first, &managerForm); err != nil {
		t.Fatal(err)
	}
	if first != "" || strings.Contains(managerForm, "Zorblax") {
		t.Errorf("after erase: P's first name %q, Q's nested %s", first, managerForm)
	}
}

// warehouseOf makes a SQLite warehouse holding the employees given as the source sends them,
// and returns its path.
func warehouseOf(t *testing.T, employees ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.db")
	s, err := sink.Open(context.Background(), path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sinktest.WalkEmployees(t, s, sinktest.Employees(t, employees...), 10, sink.MergeOptions{})
	return path
}

// TestPersonCommandsNameOneAccount: an employee's id is an account's, so erase and
// subject-access with several accounts and no --account are refused, naming the accounts, and
// touch no warehouse.
func TestPersonCommandsNameOneAccount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := sinktest.ConfigFile(t, "warehouse: {url: "+filepath.Join(dir, "hrsync.db")+"}\naccounts:\n  - name: acme\n  - name: globex\n")
	for _, args := range [][]string{
		{"erase", "--employee", "42", "--reason", "ticket 1"},
		{"subject-access", "--employee", "42", "--out", dir},
	} {
		err := run(context.Background(), append([]string{"--config", path}, args...), nil, io.Discard, io.Discard)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), args[0]+": name the account whose warehouse holds the person with --account (configured: acme, globex)") {
			t.Errorf("%v: %v (exit %d), want a usage error naming acme and globex", args, err, exitCode(err))
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused command left %d files in %s", len(entries), dir)
	}
}
