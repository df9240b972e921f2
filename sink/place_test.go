package sink_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
)

// TestPlace: how a person is told of a warehouse and reaches it, for each database, never with
// the password of its URL.
func TestPlace(t *testing.T) {
	abs, err := filepath.Abs("hr sync.db")
	if err != nil {
		t.Fatal(err)
	}
	const pg = "postgres://u:s3cret@db:5432/x?sslmode=disable"
	tests := []struct {
		url, schema                         string
		schemas                             bool
		describe, shell, command, clientURL string
	}{
		{pg, "demo", true, "Postgres postgres://u:xxxxx@db:5432/x?sslmode=disable, schema demo", "psql",
			`psql 'postgres://u@db:5432/x?sslmode=disable' -c 'SET search_path = demo' -c "SELECT 1"`, "postgres://u@db:5432/x?sslmode=disable"},
		{"hr sync.db", "hr", false, "SQLite file " + abs, "the sqlite3 shell",
			`sqlite3 -header -column '` + abs + `' "SELECT 1"`, abs},
	}
	for _, tt := range tests {
		if got := sink.HasSchemas(tt.url); got != tt.schemas {
			t.Errorf("HasSchemas(%s) = %v", tt.url, got)
		}
		for what, got := range map[string][2]string{
			"Describe":     {sink.Describe(tt.url, tt.schema), tt.describe},
			"ShellName":    {sink.ShellName(tt.url), tt.shell},
			"ShellCommand": {sink.ShellCommand(tt.url, tt.schema, "SELECT 1"), tt.command},
			"ClientURL":    {sink.ClientURL(tt.url), tt.clientURL},
		} {
			if got[0] != got[1] || strings.Contains(got[0], "s3cret") {
				t.Errorf("%s(%s) = %q, want %q", what, tt.url, got[0], got[1])
			}
		}
	}
}
