package sink_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestSQLiteCallsNoGoCode: hrsync registers nothing with SQLite that SQLite would call back (a
// function, collation, module, page cache, hook or authorizer). make test leaves SQLite's C
// library and allocator (modernc.org/libc, modernc.org/memory) out of the race detector, as it
// does SQLite itself: sound only while no Go code of hrsync's runs inside them, where the
// detector would not see what that code shares (scripts/test.sh). A registration would need
// them instrumented again; this test says so.
func TestSQLiteCallsNoGoCode(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "modernc.org/sqlite").Output()
	if err != nil {
		t.Fatalf("go list -m modernc.org/sqlite: %v", err)
	}
	registers := registrations(t, strings.TrimSpace(string(out)))
	if len(registers) < 8 {
		t.Fatalf("modernc.org/sqlite exports only %v: the search for its registrations is broken", sorted(registers))
	}
	fset := token.NewFileSet()
	var calls []string
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// scripts/deploycheck is a module of its own, without SQLite; testdata holds no code.
			if n := d.Name(); n == "testdata" || n == "deploycheck" || strings.HasPrefix(n, ".") && path != ".." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && registers[sel.Sel.Name] {
				calls = append(calls, fset.Position(sel.Pos()).String()+": "+sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		t.Errorf("%s: SQLite would run Go code of hrsync's; scripts/test.sh must then instrument modernc.org/libc and modernc.org/memory again", c)
	}
}

// registrations is the names of what modernc.org/sqlite (in dir) exports to register a callback:
// its exported functions and methods named Register… or MustRegister….
func registrations(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			if n := fn.Name.Name; strings.HasPrefix(n, "Register") || strings.HasPrefix(n, "MustRegister") {
				names[n] = true
			}
		}
	}
	return names
}

func sorted(m map[string]bool) []string {
	s := make([]string, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}
