package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"reflect"
	"slices"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/personal"
)

// inventoryCommand is hrsync inventory: the data inventory a data protection officer asks for
// first. By default, its summary for the record of processing: by table and class of personal
// data, how many columns and declared members, the retention that applies, and which serve keys
// (by name) read it, a table's history folded into its rows where it holds the same, and the
// tables that hold no personal data named at the end; with --columns, every column of the warehouse with its class and what
// happens to it over time. It needs no warehouse: the inventory is the build's declarations,
// which TestInventoryIsTheWarehouse holds to the migrated tables, and the members the
// configuration classes (personal_data.members), listed as rows of their extra column; the keys
// are the configuration's (never read: only their names and scopes).
type inventoryCommand struct {
	format  string
	account string
	columns bool
}

func (c *inventoryCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.format, "format", "text", "text, csv or markdown")
	fs.StringVar(&c.account, "account", "", "the account whose retention rules, configured members and serve keys the inventory shows (needed when accounts' rules or members differ)")
	fs.BoolVar(&c.columns, "columns", false, "every column of every table, one a line, instead of the summary by table and class")
}

func (c *inventoryCommand) run(_ context.Context, cfg config.Settings, stdout, _ io.Writer) error {
	accts, err := cfg.Pick(c.account)
	if err != nil {
		return err
	}
	rules, decls := accts[0].Retention, accts[0].Declarations
	for _, a := range accts[1:] {
		if !slices.Equal(a.Retention.Describe(), rules.Describe()) {
			return &usageError{"inventory: the accounts' retention rules differ: name one with --account"}
		}
		if !reflect.DeepEqual(a.Declarations.Members(), decls.Members()) {
			return &usageError{"inventory: the accounts' personal_data.members differ: name one with --account"}
		}
	}
	if c.columns {
		err = personal.WriteInventory(stdout, c.format, rules, decls)
	} else {
		err = personal.WriteSummary(stdout, c.format, rules, decls, inventoryKeys(cfg, accts))
	}
	if errors.Is(err, personal.ErrFormat) {
		return &usageError{"inventory: " + err.Error()}
	}
	return err
}

// inventoryKeys are the serve keys of the accounts the inventory shows, each named by its name,
// and by its account too when it shows several (directory (acme)).
func inventoryKeys(cfg config.Settings, accts []*config.Account) []config.KeyScope {
	var out []config.KeyScope
	for _, k := range config.KeyScopes(cfg) {
		if !slices.ContainsFunc(accts, func(a *config.Account) bool { return a.Name == k.Account }) {
			continue
		}
		if len(accts) > 1 {
			k.Name += " (" + k.Account + ")"
		}
		out = append(out, k)
	}
	return out
}
