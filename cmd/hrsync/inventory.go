package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
)

// inventoryCommand is hrsync inventory: the data inventory a data protection officer asks for
// first, every column of the warehouse with the class of personal data it holds and what
// happens to it over time. It needs no warehouse: the inventory is the build's declarations,
// which TestInventoryIsTheWarehouse holds to the migrated tables.
type inventoryCommand struct{ format string }

func (c *inventoryCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.format, "format", "text", "text, csv or markdown")
}

func (c *inventoryCommand) run(_ context.Context, _ config.Settings, stdout, _ io.Writer) error {
	items := sink.Inventory()
	header := []string{"table", "column", "class", "retention", "holds"}
	row := func(it sink.InventoryItem) []string {
		return []string{it.Table, it.Column, it.Class.String(), retentionRule(it), it.Holds}
	}
	switch c.format {
	case "text":
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
		for _, it := range items {
			fmt.Fprintln(tw, strings.Join(row(it), "\t"))
		}
		return tw.Flush()
	case "csv":
		w := csv.NewWriter(stdout)
		_ = w.Write(header)
		for _, it := range items {
			_ = w.Write(row(it))
		}
		w.Flush()
		return w.Error()
	case "markdown":
		fmt.Fprintln(stdout, "| "+strings.Join(header, " | ")+" |")
		fmt.Fprintln(stdout, strings.Repeat("|---", len(header))+"|")
		for _, it := range items {
			cells := row(it)
			cells[0], cells[1] = "`"+cells[0]+"`", "`"+cells[1]+"`"
			fmt.Fprintln(stdout, "| "+strings.Join(cells, " | ")+" |")
		}
		return nil
	}
	return &usageError{fmt.Sprintf("inventory: --format %q: want text, csv or markdown", c.format)}
}

// retentionRule is what happens to a column over time. No retention rule is configured yet:
// every class is kept as long as the warehouse is, unless a person is erased (hrsync erase).
func retentionRule(it sink.InventoryItem) string {
	if it.Class.Erasable() {
		return "kept: no retention configured"
	}
	return "kept"
}
