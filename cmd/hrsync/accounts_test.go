package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// --account picks accounts by name, in the configuration's order; a wrong name is a usage error
// naming the closest.
// TestUnknownAccountIsAUsageError: a --account naming no account exits 2, as a wrong flag does
// (config's TestPickAccounts holds what Pick answers).
func TestUnknownAccountIsAUsageError(t *testing.T) {
	t.Parallel()
	s, err := config.Load(sinktest.ConfigFile(t, "accounts:\n  - name: acme\n  - name: globex\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pick("globx"); err == nil || exitCode(err) != 2 {
		t.Errorf("pick(globx): %v (exit %d), want a usage error", err, exitCode(err))
	}
}

// A wrong --resource is a usage error said once, however many accounts the sync would cover.
func TestSyncBadResourceSaidOnce(t *testing.T) {
	t.Parallel()
	path := sinktest.ConfigFile(t, "warehouse: {url: "+filepath.Join(t.TempDir(), "hrsync.db")+"}\naccounts:\n"+
		"  - {name: acme, source: {url: 'http://127.0.0.1:1', api_key: a}}\n"+
		"  - {name: globex, source: {url: 'http://127.0.0.1:1', api_key: g}}\n")
	var stdout strings.Builder
	err := run(context.Background(), []string{"--config", path, "sync", "--resource", "bogus"}, nil, &stdout, io.Discard)
	if err == nil || exitCode(err) != 2 || strings.Count(err.Error(), `--resource "bogus"`) != 1 {
		t.Errorf("err %v (exit %d), want one usage error naming --resource", err, exitCode(err))
	}
	if stdout.Len() != 0 {
		t.Errorf("output %q: nothing should be synced", stdout.String())
	}
}
