package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
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
				n := strings.Count(p, "/") + 1 // /cmd/hrsync/hrsync: three names deep
				if i > 0 || n > len(parts) {
					break
				}
				candidate = strings.Join(parts[:n], "/")
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

// gitRepo is the repository's root for the tests that ask git, or skips the test when there is
// no git or this is not a git checkout (a source archive, a module cache).
func gitRepo(t *testing.T) string {
	t.Helper()
	gitTool, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH: cannot ask it what is tracked and ignored")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gitTool, "-C", root, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("%s is not a git checkout: nothing tracked to check", root)
	}
	top, err := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(root); top != want {
		t.Skipf("%s is inside the git checkout %s, not its root", root, top)
	}
	return root
}

// maxTrackedBytes bounds a tracked file: a binary, a database or a dump committed by mistake
// stays in the history for good, and every clone downloads it.
const maxTrackedBytes = 1 << 20

// TestNoLargeTrackedFiles checks that git tracks no file over 1 MiB.
func TestNoLargeTrackedFiles(t *testing.T) {
	root := gitRepo(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(files) < 50 {
		t.Fatalf("git ls-files lists %d files: not this repository's", len(files))
	}
	for _, f := range files {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted and not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > maxTrackedBytes {
			t.Errorf("%s is tracked and %d bytes (over %d): git rm --cached it, and ignore it if a build writes it", f, fi.Size(), maxTrackedBytes)
		}
	}
}

// TestBuildOutputsIgnored asks git whether .gitignore ignores what builds write (go build in
// the root and in cmd/hrsync, make build, goreleaser) and nothing of the source beside them.
func TestBuildOutputsIgnored(t *testing.T) {
	root := gitRepo(t)
	// --no-index: whether the patterns match, tracked or not.
	ignoredByGit := func(rel string) bool {
		err := exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", rel).Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return true
		case errors.As(err, &ee) && ee.ExitCode() == 1:
			return false
		}
		t.Fatalf("git check-ignore %s: %v", rel, err)
		return false
	}
	for _, rel := range []string{"hrsync", "hrsync.exe", "cmd/hrsync/hrsync", "cmd/hrsync/hrsync.exe",
		"bin/hrsync", "dist/hrsync_linux_amd64_v1/hrsync", "dist/checksums.txt"} {
		if !ignoredByGit(rel) {
			t.Errorf(".gitignore does not ignore %s, which a build writes", rel)
		}
	}
	for _, rel := range []string{"cmd/hrsync/main.go", "cmd/hrsync/run.go", "cmd/hrsync/internal/config/config.go",
		"internal/buildinfo/buildinfo.go", "deploy/Dockerfile", ".goreleaser.yaml"} {
		if ignoredByGit(rel) {
			t.Errorf(".gitignore ignores %s, which is source", rel)
		}
	}
}
