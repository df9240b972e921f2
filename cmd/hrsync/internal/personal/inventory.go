package personal

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/retention"
)

// ErrFormat is WriteInventory's error for a format it does not know.
var ErrFormat = errors.New("want text, csv or markdown")

// WriteInventory writes the data inventory, every column of the warehouse (sink.Inventory) with
// the class of personal data it holds, what happens to it over time under rules, and what it
// holds, as format: "text" (aligned columns), "csv" or "markdown" (the table of
// docs/personal-data.md). The members decls classes beside the declarations are rows of their
// collection's extra column (sink.InventoryOf). An unknown format is an error wrapping
// ErrFormat, nothing written.
func WriteInventory(w io.Writer, format string, rules retention.Rules, decls v1.Declarations) error {
	items := sink.InventoryOf(decls)
	header := []string{"table", "column", "class", "retention", "holds"}
	row := func(it sink.InventoryItem) []string {
		return []string{it.Table, it.Column, it.Class.String(), retentionRule(it, rules), it.Holds}
	}
	switch format {
	case "text":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
		for _, it := range items {
			fmt.Fprintln(tw, strings.Join(row(it), "\t"))
		}
		return tw.Flush()
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write(header)
		for _, it := range items {
			_ = cw.Write(row(it))
		}
		cw.Flush()
		return cw.Error()
	case "markdown":
		fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
		fmt.Fprintln(w, strings.Repeat("|---", len(header))+"|")
		for _, it := range items {
			cells := row(it)
			cells[0], cells[1] = "`"+cells[0]+"`", "`"+cells[1]+"`"
			fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
		}
		return nil
	}
	return fmt.Errorf("--format %q: %w", format, ErrFormat)
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
