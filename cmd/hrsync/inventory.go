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
// first, every column of the warehouse with the class of personal data it holds and what
// happens to it over time. It needs no warehouse: the inventory is the build's declarations,
// which TestInventoryIsTheWarehouse holds to the migrated tables, and the members the
// configuration classes (personal_data.members), listed as rows of their extra column.
type inventoryCommand struct {
	format  string
	account string
}

func (c *inventoryCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.format, "format", "text", "text, csv or markdown")
	fs.StringVar(&c.account, "account", "", "the account whose retention rules and configured members the inventory shows (needed when accounts' differ)")
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
	err = personal.WriteInventory(stdout, c.format, rules, decls)
	if errors.Is(err, personal.ErrFormat) {
		return &usageError{"inventory: " + err.Error()}
	}
	return err
}
