package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
)

// TestPersonalDataPageIsTheInventory: docs/personal-data.md shows the inventory hrsync prints,
// as it is: regenerate its block with `go run ./cmd/hrsync inventory --format markdown`.
func TestPersonalDataPageIsTheInventory(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"inventory", "--format", "markdown"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	page := readRepoFile(t, "docs/personal-data.md")
	const begin, end = "<!-- inventory: hrsync inventory --format markdown -->\n", "<!-- /inventory -->"
	i, j := strings.Index(page, begin), strings.Index(page, end)
	if i < 0 || j < i {
		t.Fatalf("docs/personal-data.md has no inventory block (%q … %q)", begin, end)
	}
	if got := page[i+len(begin) : j]; got != out.String() {
		t.Errorf("docs/personal-data.md's inventory is not what hrsync inventory prints: regenerate it with "+
			"go run ./cmd/hrsync inventory --format markdown\nprinted:\n%s", firstDifference(got, out.String()))
	}
}

// firstDifference is the first line where got and want differ, each side shown.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "page:    " + a + "\nprinted: " + b
		}
	}
	return ""
}

// TestInventoryFormats: every format lists every column once, with its class; CSV reads back
// as a table; an unknown format is a usage error naming the choices.
func TestInventoryFormats(t *testing.T) {
	items := sink.Inventory()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"inventory", "--format", "csv"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(items) || strings.Join(rows[0], ",") != "table,column,class,retention,holds" {
		t.Fatalf("csv: %d rows, header %q; want %d and table,column,class,retention,holds", len(rows), rows[0], 1+len(items))
	}
	for i, it := range items {
		if r := rows[1+i]; r[0] != it.Table || r[1] != it.Column || r[2] != it.Class.String() {
			t.Errorf("csv row %d = %q, want %s.%s %s", i+1, r, it.Table, it.Column, it.Class)
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"inventory"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1+len(items) || !strings.HasPrefix(lines[0], "TABLE") {
		t.Fatalf("text: %d lines, first %q; want %d and a header", len(lines), lines[0], 1+len(items))
	}
	for i, it := range items {
		if f := strings.Fields(lines[1+i]); len(f) < 4 || f[0] != it.Table || f[1] != it.Column || f[2] != it.Class.String() {
			t.Errorf("text line %d %q, want %s %s %s …", i+1, lines[1+i], it.Table, it.Column, it.Class)
		}
	}
	var ue *usageError
	err = run(context.Background(), []string{"inventory", "--format", "xml"}, nil, io.Discard, io.Discard)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "want text, csv or markdown") {
		t.Errorf("--format xml: %v, want a usage error naming the formats", err)
	}
}
