package main

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/internal/buildinfo"
	"github.com/hrsync/hrsync/internal/releasebuild"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// TestVersionFlag checks hrsync --version and -version (one line) and hrsync version (one field
// a line), for the build running the test.
func TestVersionFlag(t *testing.T) {
	b := buildinfo.Get()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--version"}, "hrsync " + b.String() + "\n"},
		{[]string{"-version"}, "hrsync " + b.String() + "\n"},
		{[]string{"--config", "nowhere.yaml", "--version"}, "hrsync " + b.String() + "\n"},
		{[]string{"version"}, b.Lines("hrsync")},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), tt.args, nil, &stdout, &stderr); err != nil {
				t.Fatalf("hrsync %s: %v", strings.Join(tt.args, " "), err)
			}
			if stdout.String() != tt.want || stderr.Len() != 0 {
				t.Errorf("stdout:\n%s\nwant:\n%s\nstderr: %q", stdout.String(), tt.want, stderr.String())
			}
		})
	}
	if !regexp.MustCompile(`^hrsync \S+ \(.*go1\.\d+.* \w+/\w+\)$`).MatchString(strings.TrimSpace("hrsync " + b.String())) {
		t.Errorf("hrsync --version does not read as the docs say: %s", b.String())
	}
}

// TestVersionFromLdflags builds hrsync as a release build does (package releasebuild), with
// -ldflags -X on package buildinfo's variables, and checks that hrsync version and --version
// print them: -X on a variable that is not there (a rename, a typo) builds fine and silently
// sets nothing. Only the link is its own: buildBinary's build compiled the rest.
func TestVersionFromLdflags(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds hrsync; -short")
	}
	const (
		pkg    = "github.com/hrsync/hrsync/internal/buildinfo"
		commit = "0123456789abcdef0123456789abcdef01234567"
	)
	bin := filepath.Join(t.TempDir(), "hrsync")
	ldflags := "-X " + pkg + ".version=v9.8.7 -X " + pkg + ".commit=" + commit +
		" -X " + pkg + ".date=2026-11-29T06:00:00Z -X " + pkg + ".modified=false"
	if err := releasebuild.Build(context.Background(), "", ".", bin, ldflags); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("hrsync --version: %v", err)
	}
	if want := regexp.MustCompile(`^hrsync v9\.8\.7 \(commit 0123456789ab, built 2026-11-29, go1\.\S+ \w+/\w+\)\n$`); !want.Match(out) {
		t.Errorf("hrsync --version printed %q", out)
	}
	out, err = exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("hrsync version: %v", err)
	}
	for _, want := range []string{"hrsync v9.8.7\n", "commit:   " + commit + "\n", "built:    2026-11-29T06:00:00Z\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("hrsync version lacks %q:\n%s", want, out)
		}
	}
}

// TestStartLogLine checks that run, serve and a piped sync log "hrsync starting" with the build
// first, and that the other commands, and a sync on a terminal (which logs only warnings
// there), do not.
func TestStartLogLine(t *testing.T) {
	b := buildinfo.Get()
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(5, 1)})
	defer up.Close()
	for _, tt := range []struct {
		name     string
		args     []string
		terminal bool
		want     bool
	}{
		{"run", []string{"run"}, false, true}, // fails: nothing to do, after the line
		{"serve", []string{"serve", "--addr", "127.0.0.1:0"}, false, true},
		{"sync piped", []string{"sync", "--resource", "working_patterns"}, false, true},
		{"sync on a terminal", []string{"sync", "--resource", "working_patterns"}, true, false},
		{"migrate", []string{"migrate"}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0"}
			warehouseFile(t, "hrsync.db") // the default warehouse, migrated
			ctx, cancel := context.WithCancel(context.Background())
			if tt.args[0] == "serve" {
				cancel() // serve starts, and stops at once
			}
			defer cancel()
			var stderr interface {
				io.Writer
				String() string
			} = &bytes.Buffer{}
			if tt.terminal {
				stderr = &fakeTerminal{}
			}
			_ = run(ctx, tt.args, env, io.Discard, stderr)
			first, _, _ := strings.Cut(stderr.String(), "\n")
			want := regexp.MustCompile(`level=INFO msg="hrsync starting" version=` + regexp.QuoteMeta(b.Version) +
				` commit=(` + regexp.QuoteMeta(b.ShortCommit()) + `|"")` + ` go=` + regexp.QuoteMeta(b.GoVersion) + `$`)
			if got := want.MatchString(first); got != tt.want {
				t.Errorf("hrsync %s: first line of stderr %q; want the start line: %v\n%s", strings.Join(tt.args, " "), first, tt.want, stderr.String())
			}
			if n := strings.Count(stderr.String(), "hrsync starting"); n > 1 {
				t.Errorf("the start line logged %d times:\n%s", n, stderr.String())
			}
		})
	}
}
