// Package releasebuild builds hrsync the way its releases are built (.goreleaser.yaml,
// deploy/Dockerfile): static (CGO_ENABLED=0), trimmed (-trimpath), with the time zone database
// (-tags timetzdata).
//
// The tests that run hrsync as a process build it here, and make test's go vet and staticcheck
// use the same flags (scripts/test.sh), so that one compilation of every package serves them all
// and the image's build in deploy/check.sh too: each other set of flags compiles every package
// again, a minute of CPU or more on a cold build cache, as CI has.
package releasebuild

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
)

// Flags are a release's go build flags, -ldflags aside.
var Flags = []string{"-trimpath", "-tags", "timetzdata"}

// Env is what a release's build sets in its environment.
var Env = []string{"CGO_ENABLED=0"}

// Build builds the main package pkg (e.g. "./cmd/hrsync") of the module in dir ("" for the
// working directory) into out, as a release is built, with ldflags (none when empty) and env set
// beside the process's environment (env wins). Its error holds the go command's output.
func Build(ctx context.Context, dir, pkg, out, ldflags string, env ...string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go command is needed to build %s: %w", pkg, err)
	}
	args := append([]string{"build"}, Flags...)
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	args = append(args, "-o", out, pkg)
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), Env...), env...)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %v: %w\n%s", args, err, bytes.TrimSpace(output.Bytes()))
	}
	return nil
}
