package sink

import (
	"path/filepath"
	"strings"
)

// How a person names and reaches a warehouse, without asking which database it is: commands
// print these, and sink is the one package that tells Postgres from SQLite (backendOf).

// HasSchemas reports whether warehouses at rawURL are schemas of one shared database (Postgres),
// each apart by its schema; false: a warehouse is a file of its own (SQLite).
func HasSchemas(rawURL string) bool { return backendOf(rawURL).hasSchemas() }

// ClientURL is what a client is given to reach the warehouse at rawURL: a Postgres URL without
// its password, a SQLite file's absolute path.
func ClientURL(rawURL string) string { return backendOf(rawURL).clientURL(rawURL) }

// Describe names the warehouse at rawURL (schema on Postgres) for a person, without its password:
// "Postgres postgres://u@db/x, schema hr" or "SQLite file /srv/hrsync.db".
func Describe(rawURL, schema string) string { return backendOf(rawURL).describe(rawURL, schema) }

// RedactPlace names the warehouse at rawURL among others of its database, without its password:
// RedactURL's, and on Postgres the schema after it ("postgres://u:xxxxx@db/x schema hr").
func RedactPlace(rawURL, schema string) string { return backendOf(rawURL).redactPlace(rawURL, schema) }

// ShellName names the database's own shell: "psql" or "the sqlite3 shell".
func ShellName(rawURL string) string { return backendOf(rawURL).shellName() }

// ShellCommand is a command to paste that runs query on the warehouse at rawURL (schema on
// Postgres) in the database's own shell. query must be one line that quotes its literals with '
// only and holds no $ (it goes between double quotes as it is).
func ShellCommand(rawURL, schema, query string) string {
	return backendOf(rawURL).shellCommand(rawURL, schema, query)
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:@=,+%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// absPath is p made absolute; p itself when that fails.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
