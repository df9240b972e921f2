package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/demo"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// ignored says whether .gitignore's patterns ignore the file at rel (slash-separated, from
// the repository's root), for the forms the file uses: a pattern with a leading / matches
// from the root, one without a / matches the name at any depth, and one ending in / matches a
// folder and everything in it.
func ignored(patterns []string, rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range patterns {
		dirOnly := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		anchored := strings.Contains(p, "/")
		p = strings.TrimPrefix(p, "/")
		for i := range parts {
			if dirOnly && i == len(parts)-1 {
				break // a folder pattern: only the file's folders
			}
			candidate := parts[i]
			if anchored {
				if i > 0 {
					break
				}
				candidate = strings.Join(parts[:strings.Count(p, "/")+1], "/")
			}
			if ok, _ := path.Match(p, candidate); ok {
				return true
			}
		}
	}
	return false
}

// TestGitignoreCoversWhatHrsyncWrites runs, in a folder standing for the repository, what a
// newcomer runs there with the defaults (a sync, an onboarding of a CSV and its dry run, the
// demo, serve's generated key) and checks that .gitignore ignores every file they leave: the
// warehouses, their WAL files and lock files, the key, the onboarding reports.
func TestGitignoreCoversWhatHrsyncWrites(t *testing.T) {
	var patterns []string
	for line := range strings.Lines(readRepoFile(t, ".gitignore")) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	// The new hires' file: the example, of which the demo runs its built-in copy.
	example := readRepoFile(t, demo.HiresPath)
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(30, 1)})
	defer up.Close()
	t.Chdir(t.TempDir())
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0"}
	const hires = "new-hires.csv" // the newcomer's own file, not hrsync's
	if err := os.WriteFile(hires, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, args := range [][]string{
		{"migrate"},
		{"sync", "--resource", "working_patterns,employees"},
		{"onboard", "--dry-run", hires},
		{"onboard", hires},
		{"demo", "--no-serve", "--employees", "20"},
	} {
		err := run(ctx, args, env, io.Discard, io.Discard)
		var ue *usageError
		if err != nil && (args[0] != "onboard" || errors.As(err, &ue)) { // onboard fails for the rejected rows
			t.Fatalf("hrsync %s: %v", strings.Join(args, " "), err)
		}
	}
	if _, err := config.APIKeys(config.Defaults().Serve, slog.New(slog.DiscardHandler)); err != nil { // serve without a key
		t.Fatal(err)
	}
	var written []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == hires {
			return err
		}
		written = append(written, filepath.ToSlash(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) < 5 {
		t.Fatalf("only %v written: the commands did not run as expected", written)
	}
	for _, p := range written {
		if !ignored(patterns, p) {
			t.Errorf(".gitignore does not ignore %s, which hrsync writes by default", p)
		}
	}
	t.Logf("written: %v", written)
}
