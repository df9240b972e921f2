//go:build unix

package sinktest

import (
	"syscall"
	"testing"
)

// WithUmask runs the rest of the test under umask mask (022 is a bare install's usual one) and
// restores the one before at its cleanup. The umask is the process's: tests that call this never
// run in parallel.
func WithUmask(t testing.TB, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}
