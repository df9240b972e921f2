package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shape the code keeps (docs/development.md, "Layout"): the command's own package holds the
// commands, flags and what they print, and the wiring of accounts lives in internal/account; no
// file of sink passes 700 lines; and one function of sink, backendOf, tells Postgres from SQLite
// by a warehouse URL's form.
func TestHouseKeepsItsShape(t *testing.T) {
	t.Parallel()
	const mainBudget, sinkFileBudget = 1500, 700
	lines := func(path string) int {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	sources := func(dir string) []string {
		all, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range all {
			if !strings.HasSuffix(f, "_test.go") {
				out = append(out, f)
			}
		}
		return out
	}
	total := 0
	for _, f := range sources(".") {
		total += lines(f)
	}
	if total > mainBudget {
		t.Errorf("package main holds %d lines, over %d: what is not a command's flags, run or output belongs in a package of its own (internal/account for the wiring of accounts)", total, mainBudget)
	}
	sinkDir := filepath.Join("..", "..", "sink")
	for _, f := range sources(sinkDir) {
		if n := lines(f); n > sinkFileBudget {
			t.Errorf("%s holds %d lines, over %d: split it where its parts are", f, n, sinkFileBudget)
		}
		b, _ := os.ReadFile(f)
		if filepath.Base(f) != "backend.go" && strings.Contains(string(b), `"postgres://")`) {
			t.Errorf("%s tells a Postgres URL by its prefix: ask backendOf (backend.go)", f)
		}
	}
}
