package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitStatusAsDocumented: troubleshooting.md's "Exit status and logs" and operations.md's HrsyncDown
// runbook say a configuration hrsync cannot act on exits 1 with a "config: …" line, and a
// command line it cannot act on exits 2.
func TestExitStatusAsDocumented(t *testing.T) {
	t.Parallel()
	ops := strings.Join(strings.Fields(readRepoFile(t, "docs/operations.md")), " ")
	troubleshooting := strings.Join(strings.Fields(readRepoFile(t, "docs/troubleshooting.md")), " ")
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want int
		line string // the start of the error's line
		doc  string // where the status is documented
		said string
	}{
		{"a configuration", []string{"sync"}, []string{"HRSYNC_SYNC_RESOURCES=employes"}, 1, "config: ", ops, "`config: …` (exit status `1`)"},
		{"a configuration (troubleshooting.md)", []string{"sync"}, []string{"HRSYNC_SYNC_RESOURCES=employes"}, 1, "config: ", troubleshooting, "status `1` (a failure, or a configuration hrsync cannot act on: `hrsync: config: …`)"},
		{"an unknown variable", []string{"sync"}, []string{"HRSYNC_SOURCE_APIKEY=x"}, 1, "config: ", ops, "`config: …` (exit status `1`)"},
		{"an unknown flag", []string{"sync", "--bogus"}, nil, 2, "", troubleshooting, "`2` (a command line hrsync cannot act on)"},
		{"an unknown command", []string{"bogus"}, nil, 2, "", troubleshooting, "`2` (a command line hrsync cannot act on)"},
		{"no warehouse", []string{"erase", "--list"}, []string{"HRSYNC_WAREHOUSE_URL=" + filepath.Join(t.TempDir(), "missing.db")}, 1, "no warehouse at ",
			troubleshooting, "**`no warehouse at …`** (from `erase`, `subject-access`, `retention`)"},
		{"an id the warehouse does not hold", []string{"erase", "--employee", "7", "--reason", "r"}, []string{"HRSYNC_WAREHOUSE_URL=" + warehouseOf(t)}, 1,
			"erase: employee 7 is not in the warehouse", troubleshooting, "**`erase: employee N is not in the warehouse`**"},
	} {
		err := run(context.Background(), tc.args, tc.env, io.Discard, io.Discard)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if got := exitCode(err); got != tc.want || !strings.HasPrefix(err.Error(), tc.line) {
			t.Errorf("%s: exit status %d, %q; want %d, starting %q", tc.name, got, err, tc.want, tc.line)
		}
		if !strings.Contains(tc.doc, tc.said) {
			t.Errorf("%s: the docs no longer say %q", tc.name, tc.said)
		}
	}
}
