package sinktest

import (
	"os"
	"path/filepath"
	"testing"
)

// ConfigFile writes text as config.yaml in a new temporary folder, readable by its owner only,
// and returns its path.
func ConfigFile(t testing.TB, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
