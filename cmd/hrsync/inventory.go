package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/retention"
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
	items := sink.Inventory()
	header := []string{"table", "column", "class", "retention", "holds"}
	row := func(it sink.InventoryItem) []string {
		return []string{it.Table, it.Column, it.Class.String(), retentionRule(it, rules), it.Holds}
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

// retentionRule is what happens to a column over time under rules: what is not personal, or a
// fact of employment, is kept; a column of an erasable class is erased by the rules that reach it
// (a leavers rule of its class, where erasing a person reaches it: sink.ErasedWithEmployee;
// sickness_details for a sickness's health members; onboarding_files for the ledger's emails,
// hashes and reasons), and otherwise kept (until a person is erased on request: hrsync erase).
func retentionRule(it sink.InventoryItem, rules retention.Rules) string {
	if !it.Class.Erasable() {
		return "kept"
	}
	if !rules.Any() {
		return "kept: no retention configured"
	}
	var says []string
	if rule := retention.LeaverRule(it.Class); sink.ErasedWithEmployee(it.Table, it.Column) && rules.Says(rule) != "" {
		says = append(says, "leavers: "+rules.Says(rule))
	}
	if it.Class == v1.Health && strings.TrimSuffix(it.Table, "_history") == "sicknesses" && rules.Says(retention.RuleSicknessDetails) != "" {
		says = append(says, "sickness details: "+rules.Says(retention.RuleSicknessDetails))
	}
	if it.Table == "onboarding_rows" && sink.ErasedWithEmployee(it.Table, it.Column) && rules.Says(retention.RuleOnboardingFiles) != "" {
		says = append(says, "onboarding: "+rules.Says(retention.RuleOnboardingFiles))
	}
	if len(says) == 0 {
		return "kept: no retention rule reaches it"
	}
	return strings.Join(says, "; ")
}
