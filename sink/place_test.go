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
	t.Parallel()
	abs, err := filepath.Abs("hr sync.db")
	if err != nil {
		t.Fatal(err)
	}
	const pg = "postgres://u:s3cret@db:5432/x?sslmode=disable"
	tests := []struct {
		url, schema                                string
		schemas                                    bool
		describe, shell, command, clientURL, place string
	}{
		{pg, "demo", true, "Postgres postgres://u:xxxxx@db:5432/x?sslmode=disable, schema demo", "psql",
			`psql 'postgres://u@db:5432/x?sslmode=disable' -c 'SET search_path = demo' -c "SELECT 1"`, "postgres://u@db:5432/x?sslmode=disable",
			"postgres://u:xxxxx@db:5432/x?sslmode=disable schema demo"},
		{"hr sync.db", "hr", false, "SQLite file " + abs, "the sqlite3 shell",
			`sqlite3 -header -column '` + abs + `' "SELECT 1"`, abs, "hr sync.db"},
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
			"RedactPlace":  {sink.RedactPlace(tt.url, tt.schema), tt.place},
		} {
			if got[0] != got[1] || strings.Contains(got[0], "s3cret") {
				t.Errorf("%s(%s) = %q, want %q", what, tt.url, got[0], got[1])
			}
		}
	}
}

// TestShellQuote: a word a POSIX shell takes as it is stays as it is; anything else is quoted,
// a quote in it too.
func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/srv/hrsync.db":           "/srv/hrsync.db",
		"postgres://u@db:5432/x":   "postgres://u@db:5432/x",
		"postgres://u@db/x?ssl=on": "'postgres://u@db/x?ssl=on'",
		"hr sync.db":               "'hr sync.db'",
		"it's.db":                  `'it'\''s.db'`,
		"":                         "''",
	} {
		if got := sink.ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
