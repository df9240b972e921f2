package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestReportCommand: hrsync report writes the page of the account's warehouse where --out
// says, private, says where in one line, names people only with --names, and refuses a
// command line it cannot act on with exit status 2. An empty warehouse gets a page saying so.
func TestReportCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := filepath.Join(t.TempDir(), "w.db")
	s, err := sink.Open(ctx, url, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"HRSYNC_WAREHOUSE_URL=" + url}
	dir := t.TempDir()
	report := func(args ...string) (string, string, error) {
		t.Helper()
		var out, logs bytes.Buffer
		err := run(ctx, append([]string{"report"}, args...), env, &out, &logs)
		return out.String(), logs.String(), err
	}

	empty := filepath.Join(dir, "empty.html")
	out, logs, err := report("--out", empty, "--as-of", sinktest.PeopleAsOf)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	if want := "report written: " + empty + " (as of 2025-06-30, 24 months: no data yet)\n"; out != want {
		t.Errorf("empty warehouse: printed %q, want %q", out, want)
	}
	if b, _ := os.ReadFile(empty); !bytes.Contains(b, []byte("No data yet")) {
		t.Errorf("empty warehouse's page:\n%s", b)
	}

	sinktest.People(t, s)
	sinktest.AbsenceContract(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	for _, names := range []bool{false, true} {
		args := []string{"--out", page, "--as-of", sinktest.PeopleAsOf, "--months", "12"}
		if names {
			args = append(args, "--names")
		}
		out, logs, err := report(args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, logs)
		}
		if want := "report written: " + page + " (as of 2025-06-30, 12 months)\n"; out != want {
			t.Errorf("printed %q, want %q", out, want)
		}
		info, err := os.Stat(page)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v (mode %v), want a 0600 file", page, err, info)
		}
		b, _ := os.ReadFile(page)
		if got := bytes.Contains(b, []byte("Barbara Liskov")); got != names {
			t.Errorf("--names %v: the page names Barbara Liskov: %v", names, got)
		}
		if !bytes.Contains(b, []byte(`id="chart-headcount"`)) || !bytes.Contains(b, []byte(`id="bradford"`)) || !bytes.Contains(b, []byte("Jul 2024 to Jun 2025")) {
			t.Errorf("the page lacks the headcount chart from July 2024, or the Bradford list:\n%s", b)
		}
		// One day throughout: --as-of 2025-06-15 is a report of June 2025, whose figures (the
		// monthly models', the Bradford list's) are of its last day.
		for _, want := range []string{`As of <strong id="as-of">30 Jun 2025</strong>`, "sickness in the 52 weeks to 30 Jun 2025"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("the page does not say %q", want)
			}
		}
		if bytes.Contains(b, []byte("15 Jun")) || bytes.Contains(b, []byte("2025-06-15")) {
			t.Error("the page names a day other than its one as-of day, 30 Jun 2025")
		}
	}

	for _, args := range [][]string{{"--as-of", "15/06/2025"}, {"--months", "0"}, {"--top", "0"}, {"--out", ""}} {
		_, _, err := report(args...)
		if err == nil || exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("files in the folder: %v, want the two reports", entries)
	}
	if !strings.Contains(usageText(), "report") {
		t.Error("hrsync --help does not list report")
	}
}
