package releasebuild_test

import (
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/internal/releasebuild"
)

// TestFlagsAreTheReleases: the release's build (.goreleaser.yaml), the image's (deploy/Dockerfile)
// and make test's static checks (scripts/test.sh) use the flags Build uses; were one to drift,
// the tests would run another binary than the one shipped, and make test would compile every
// package once more. This reads the words; the builds themselves are read back with go version -m
// where they are made (the image's in deploy/check.sh, the release's in scripts/release-check.sh).
func TestFlagsAreTheReleases(t *testing.T) {
	for _, file := range []string{".goreleaser.yaml", "deploy/Dockerfile", "scripts/test.sh"} {
		b, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "timetzdata"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s does not say %s, which releasebuild.Build uses", file, want)
			}
		}
	}
}

// TestBuild builds a small main package and reads back how it was built.
func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build; -short")
	}
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/hello\n\ngo 1.26\n")
	write("main.go", "package main\n\nvar version = \"dev\"\n\nfunc main() { println(version) }\n")
	out := filepath.Join(t.TempDir(), "hello")
	if err := releasebuild.Build(context.Background(), dir, ".", out, "-X main.version=v1"); err != nil {
		t.Fatal(err)
	}
	info, err := buildinfo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "-tags": "timetzdata"} {
		if settings[k] != want {
			t.Errorf("built with %s=%q, want %q (all: %v)", k, settings[k], want, settings)
		}
	}
	// -trimpath leaves -ldflags out of the build information: the binary says whether -X was
	// applied.
	if said, err := exec.Command(out).CombinedOutput(); err != nil || string(said) != "v1\n" {
		t.Errorf("the built program said %q (%v), want v1 from -ldflags -X", said, err)
	}
	// A build that fails says why.
	write("main.go", "package main\n\nfunc main() { undefined() }\n")
	if err := releasebuild.Build(context.Background(), dir, ".", out, ""); err == nil || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("a build that cannot compile: %v", err)
	}
}
