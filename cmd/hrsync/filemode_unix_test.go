//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest"
)

// privateFiles fails the test for every file in dir readable or writable by group or others.
func privateFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		seen[e.Name()] = true
		if m := fi.Mode().Perm(); m&0o077 != 0 {
			t.Errorf("%s is %#o, want 0600", e.Name(), m)
		}
	}
	for _, name := range want {
		if !seen[name] {
			t.Errorf("no %s in %s", name, dir)
		}
	}
}

// Under umask 022, the demo's warehouse and every account's own SQLite file (hrsync-acme.db
// beside hrsync.db) are made 0600, -wal and -shm included, without a warning: created so.
func TestWarehouseFilesArePrivate(t *testing.T) {
	sinktest.WithUmask(t, 0o022)

	dir := t.TempDir()
	var out, logs bytes.Buffer
	if err := run(context.Background(), []string{"demo", "--employees", "5", "--no-serve", "--warehouse", filepath.Join(dir, "hrsync-demo.db")}, nil, &out, &logs); err != nil {
		t.Fatalf("demo: %v\n%s", err, logs.String())
	}
	privateFiles(t, dir, "hrsync-demo.db")
	if strings.Contains(logs.String(), "made private") {
		t.Errorf("the demo's file was made loose first:\n%s", logs.String())
	}

	dir = t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("warehouse: {url: "+filepath.Join(dir, "hrsync.db")+"}\naccounts:\n"+
		"  - {name: acme, source: {url: 'http://a.example', api_key: a}}\n"+
		"  - {name: globex, source: {url: 'http://g.example', api_key: g}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	if err := run(context.Background(), []string{"--config", cfg, "migrate"}, nil, io.Discard, &logs); err != nil {
		t.Fatalf("migrate: %v\n%s", err, logs.String())
	}
	privateFiles(t, dir, "hrsync-acme.db", "hrsync-globex.db")
}
