package account

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
)

// TestCheckStores: serve checks its accounts' warehouses a few at a time and gives what it found
// in the accounts' order; a warehouse that does not open fails the start with its account named,
// and a start stopped before the checks end returns at once.
func TestCheckStores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	// One warehouse migrated (seconds under -race), copied for every account (a current file
	// opens in milliseconds).
	template := &config.Account{Name: "template"}
	template.Warehouse.URL = filepath.Join(t.TempDir(), "template.db")
	if _, _, err := CheckStore(ctx, template, log); err != nil {
		t.Fatal(err)
	}
	migrated, err := os.ReadFile(template.Warehouse.URL)
	if err != nil {
		t.Fatal(err)
	}
	accts := func(n, broken int) []*config.Account {
		var as []*config.Account
		for i := range n {
			a := &config.Account{Name: fmt.Sprintf("a%02d", i), Listed: true}
			a.Warehouse.URL = filepath.Join(dir, a.Name+".db")
			if err := os.WriteFile(a.Warehouse.URL, migrated, 0o600); err != nil {
				t.Fatal(err)
			}
			if i == broken {
				// A directory where the file should be: it cannot be opened.
				a.Warehouse.URL = filepath.Join(dir, "not-a-file")
				if err := os.MkdirAll(a.Warehouse.URL, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			as = append(as, a)
		}
		return as
	}

	as := accts(2*CheckParallel+3, -1)
	got, err := CheckStores(ctx, as, log)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(as) {
		t.Fatalf("%d checks for %d accounts", len(got), len(as))
	}
	for i, c := range got {
		if !strings.Contains(c.location, as[i].Name+".db") || c.readOnly {
			t.Errorf("check %d: %+v, want %s's warehouse, writable", i, c, as[i].Name)
		}
	}

	if _, err := CheckStores(ctx, accts(2*CheckParallel, CheckParallel+1), log); err == nil ||
		!strings.HasPrefix(err.Error(), fmt.Sprintf("account a%02d: ", CheckParallel+1)) {
		t.Errorf("a warehouse that does not open: %v, want an error naming account a%02d", err, CheckParallel+1)
	}

	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := CheckStores(stopped, accts(3, -1), log); !errors.Is(err, context.Canceled) {
		t.Errorf("stopped before the checks: %v, want context.Canceled", err)
	}
}
