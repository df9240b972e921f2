package demo

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
)

// The default warehouse.url (hrsync.db) is the real warehouse: the demo uses its own file.
func TestDemoWarehouseChoice(t *testing.T) {
	cfg := config.Defaults()
	for _, tt := range []struct {
		configured, flag string
		want             demoWarehouseSpec
	}{
		{"hrsync.db", "", demoWarehouseSpec{url: WarehouseFile}},
		{"postgres://db/hr", "", demoWarehouseSpec{url: "postgres://db/hr", schemas: true}},
		{"postgres://db/hr", "mine.db", demoWarehouseSpec{url: "mine.db"}},
		{"hrsync.db", "postgresql://db/x", demoWarehouseSpec{url: "postgresql://db/x", schemas: true}},
	} {
		cfg.Warehouse.URL = tt.configured
		f := Options{Warehouse: tt.flag, Set: map[string]bool{"warehouse": tt.flag != ""}}
		if got, err := demoWarehouse(cfg, f); err != nil || got != tt.want {
			t.Errorf("warehouse.url %q, --warehouse %q: %+v %v, want %+v", tt.configured, tt.flag, got, err, tt.want)
		}
	}
	// What the report says of the real warehouse names no secret.
	cfg.Warehouse.URL = "postgres://hr:s3cret@db/hr"
	if note := (demoWarehouseSpec{url: "mine.db"}).untouched(cfg, Schema); strings.Contains(note, "s3cret") || !strings.Contains(note, "postgres://hr:xxxxx@db/hr is not touched") {
		t.Errorf("note %q", note)
	}
	cfg.Warehouse.URL = "hrsync.db"
	if note := (demoWarehouseSpec{url: "hrsync.db"}).untouched(cfg, Schema); note != "" {
		t.Errorf("the demo's own file said untouched: %q", note)
	}
}

func TestDemoReplicaAddress(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	// The default taken: another free port, said so.
	ln, note, err := listenReplica(Options{Addr: addr, Set: map[string]bool{}})
	if err != nil || ln.Addr().String() == addr || !strings.Contains(note, addr+" is taken") {
		t.Fatalf("%v %q %v", ln, note, err)
	}
	ln.Close()
	// Asked for by name: an error saying what to do.
	if _, _, err := listenReplica(Options{Addr: addr, Set: map[string]bool{"addr": true}}); err == nil || !strings.Contains(err.Error(), "--addr") {
		t.Errorf("a taken --addr: %v", err)
	}
	if got := reachable(&net.TCPAddr{IP: net.IPv4zero, Port: 8080}); got != "127.0.0.1:8080" {
		t.Errorf("reachable(0.0.0.0:8080) = %s", got)
	}
}

// The built-in hires are deploy/examples/new-hires.csv; `go generate ./cmd/hrsync/internal/demo`
// copies it.
func TestBuiltinHiresAreTheExample(t *testing.T) {
	example, err := os.ReadFile(filepath.Join("..", "..", "..", "..", HiresPath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(example, builtinHires) {
		t.Errorf("cmd/hrsync/internal/demo/new-hires.csv differs from %s: run go generate ./cmd/hrsync/internal/demo", HiresPath)
	}
}
