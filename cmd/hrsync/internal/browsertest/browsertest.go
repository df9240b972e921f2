// Package browsertest finds the headless Chromium that hrsync's browser tests read its
// documents with (the people report, the subject-access document), installing it where CI
// runs: as root on a clean Debian, with no standard input.
package browsertest

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// paths are where Debian's and others' packages put Chromium.
var paths = []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chromium"}

// Chromium is the path of a headless-capable Chromium, installed with apt-get when missing and
// the test runs as root (as CI does: scripts/test.sh installs what the tests need the same
// way); the test is skipped otherwise, saying how to install it. Tests of several packages may
// install it at once: apt-get waits for the other's lock.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := find(); p != "" {
		return p
	}
	if os.Geteuid() != 0 {
		t.Skip("chromium is not installed and the test is not root: sudo apt-get install -y chromium")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("chromium is not installed and there is no apt-get to install it")
	}
	t.Log("installing chromium with apt-get (once per machine)")
	for _, args := range [][]string{
		{"-o", "DPkg::Lock::Timeout=600", "update"},
		{"-o", "DPkg::Lock::Timeout=600", "install", "-y", "--no-install-recommends", "chromium"},
	} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("apt-get %s: %v\n%s", strings.Join(args, " "), err, LastLines(out, 20))
		}
	}
	p := find()
	if p == "" {
		t.Fatal("apt-get installed chromium, yet it is not found")
	}
	return p
}

func find() string {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

// LastLines is the last n lines of b: what a failing browser or apt-get says last is why.
func LastLines(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
