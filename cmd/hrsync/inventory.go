package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/personal"
)

// inventoryCommand is hrsync inventory: the data inventory a data protection officer asks for
// first, every column of the warehouse with the class of personal data it holds and what
// happens to it over time. It needs no warehouse: the inventory is the build's declarations,
// which TestInventoryIsTheWarehouse holds to the migrated tables.
type inventoryCommand struct {
	format  string
	account string
}

func (c *inventoryCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.format, "format", "text", "text, csv or markdown")
	fs.StringVar(&c.account, "account", "", "the account whose retention rules the retention column shows (needed when accounts' rules differ)")
}

func (c *inventoryCommand) run(_ context.Context, cfg config.Settings, stdout, _ io.Writer) error {
	accts, err := cfg.Pick(c.account)
	if err != nil {
		return err
	}
	rules := accts[0].Retention
	for _, a := range accts[1:] {
		if !slices.Equal(a.Retention.Describe(), rules.Describe()) {
			return &usageError{"inventory: the accounts' retention rules differ: name one with --account"}
		}
	}
	err = personal.WriteInventory(stdout, c.format, rules)
	if errors.Is(err, personal.ErrFormat) {
		return &usageError{"inventory: " + err.Error()}
	}
	return err
}
