package personal

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/server"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/retention"
)

// A SummaryRow is one line of the inventory's summary: what one table holds of one class.
type SummaryRow struct {
	Table string
	Class v1.Class
	// Columns is how many of the inventory's rows (sink.InventoryOf) the table has of the
	// class: its columns, and the members the configuration classes, each a row of extra.
	Columns int
	// Members is, for a collection's table (and its history), how many declared members of
	// its records are of the class (the record's id, not personal; each member a nested
	// object carries; each member the configuration classes); -1 for the warehouse's other
	// tables.
	Members int
	// Undeclared is whether the members of its records no declaration names (whatever else
	// the source sends) are of the class (v1.Collection.ExtraClass): a collection's only.
	Undeclared bool
	// Retention is what happens to the class's columns over time under the rules: the
	// inventory's retention column, each different rule once (with how many columns it is
	// when they differ).
	Retention string
	// Keys are the names of the serve keys that read the class in the table's records, in
	// the order given; nil for a table serve does not serve (history, ledgers, models).
	Keys []string
	// Served is whether serve serves the table (a collection, by its name).
	Served bool
	// History is, when the table's history (Table_history) holds the same columns of every
	// class of personal data, with the same retention, its name: the row stands for both, its
	// Columns counted once (the table's); "" otherwise. Serve does not serve a history.
	History string
}

// An InventorySummary is the inventory's summary for the record of processing: what each table
// holds of each class of personal data, and the tables that hold none.
type InventorySummary struct {
	// Rows are the tables' classes of personal data (never v1.NotPersonal), a history folded
	// into its table's rows where it holds the same (SummaryRow.History).
	Rows []SummaryRow
	// NoPersonal are the tables that hold no personal data at all, in the inventory's order.
	NoPersonal []string
}

// Summary is the inventory's summary by table and class, for the record of processing: for each
// table (in the inventory's order) and each class of personal data it holds (in v1.Classes
// order), how many columns and declared members, the retention that applies under rules, and
// which of keys read it (server.Readable by decls: a key reads a class when it reads a member of
// it, or one no declaration names of that class). A table's history is folded into its rows when
// it holds the same columns of each class of personal data with the same retention, and kept
// distinct otherwise; the tables with no personal data are named in NoPersonal. A key's scope
// that does not compile is an error naming the key.
func Summary(rules retention.Rules, decls v1.Declarations, keys []config.KeyScope) (InventorySummary, error) {
	rows, err := summaryRows(rules, decls, keys)
	if err != nil {
		return InventorySummary{}, err
	}
	return foldHistories(rows), nil
}

// foldHistories leaves out rows' not_personal rows, naming the tables that have no other in
// NoPersonal, and folds each table's history (Table_history) into its rows when its rows are of
// the same classes, columns and retention.
func foldHistories(rows []SummaryRow) InventorySummary {
	personal := map[string][]SummaryRow{}
	var tables []string
	for _, r := range rows {
		if !slices.Contains(tables, r.Table) {
			tables = append(tables, r.Table)
		}
		if r.Class != v1.NotPersonal {
			personal[r.Table] = append(personal[r.Table], r)
		}
	}
	// sameAs is whether two tables' rows of personal data are of the same classes, columns and
	// retention.
	sameAs := func(a, b []SummaryRow) bool {
		return slices.EqualFunc(a, b, func(x, y SummaryRow) bool {
			return x.Class == y.Class && x.Columns == y.Columns && x.Retention == y.Retention
		})
	}
	var out InventorySummary
	for _, table := range tables {
		rows := personal[table]
		if len(rows) == 0 {
			out.NoPersonal = append(out.NoPersonal, table)
			continue
		}
		if base, ok := strings.CutSuffix(table, "_history"); ok && slices.Contains(tables, base) && sameAs(personal[base], rows) {
			continue // folded into its table's rows
		}
		hist := table + "_history"
		folded := slices.Contains(tables, hist) && sameAs(rows, personal[hist])
		for _, r := range rows {
			if folded {
				r.History = hist
			}
			out.Rows = append(out.Rows, r)
		}
	}
	return out
}

// summaryRows are the inventory's rows by table and class, not_personal and each history
// included.
func summaryRows(rules retention.Rules, decls v1.Declarations, keys []config.KeyScope) ([]SummaryRow, error) {
	reads := make([]map[string]server.Reading, len(keys))
	for i, k := range keys {
		r, err := server.Readable(k.Scope, decls)
		if err != nil {
			return nil, fmt.Errorf("serve key %s: %w", k.Name, err)
		}
		reads[i] = r
	}
	served := server.Collections()
	type group struct {
		SummaryRow
		rules []string
		count []int
	}
	var order []*group
	byKey := map[[2]string]*group{}
	for _, it := range sink.InventoryOf(decls) {
		k := [2]string{it.Table, it.Class.String()}
		g := byKey[k]
		if g == nil {
			g = &group{SummaryRow: SummaryRow{Table: it.Table, Class: it.Class, Members: -1, Served: slices.Contains(served, it.Table)}}
			byKey[k] = g
			order = append(order, g)
		}
		g.Columns++
		rule := retentionRule(it, rules)
		if i := slices.Index(g.rules, rule); i >= 0 {
			g.count[i]++
		} else {
			g.rules = append(g.rules, rule)
			g.count = append(g.count, 1)
		}
	}
	// The tables in the inventory's order, the classes of each in v1.Classes order.
	var tables []string
	for _, g := range order {
		if !slices.Contains(tables, g.Table) {
			tables = append(tables, g.Table)
		}
	}
	var out []SummaryRow
	for _, table := range tables {
		for _, c := range v1.Classes {
			g := byKey[[2]string{table, c.String()}]
			if g == nil {
				continue
			}
			row := g.SummaryRow
			if fields, extra, ok := decls.Declared(strings.TrimSuffix(table, "_history")); ok {
				row.Members = countMembers(fields, c)
				if c == v1.NotPersonal {
					row.Members++ // the record's id
				}
				row.Undeclared = extra == c
			}
			if len(g.rules) == 1 {
				row.Retention = g.rules[0]
			} else {
				parts := make([]string, len(g.rules))
				for i, r := range g.rules {
					parts[i] = fmt.Sprintf("%s (%s)", r, counted(g.count[i], "columns"))
				}
				row.Retention = strings.Join(parts, "; ")
			}
			if row.Served {
				row.Keys = []string{}
				for i, k := range keys {
					if r, ok := reads[i][table]; ok && (c == v1.NotPersonal || slices.Contains(r.Classes(), c)) {
						row.Keys = append(row.Keys, k.Name)
					}
				}
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// countMembers counts the members of fields of class c: each field, and each member a nested
// object carries.
func countMembers(fields []v1.Field, c v1.Class) int {
	n := 0
	for _, f := range fields {
		if f.Class == c {
			n++
		}
		if f.Kind == v1.Nested {
			for _, cf := range f.Nested.Fields {
				if cf.Class == c {
					n++
				}
			}
		}
	}
	return n
}

// WriteSummary writes Summary as format: "text" (aligned columns), "csv" or "markdown" (the
// summary of docs/personal-data.md). Text and markdown name a table whose history is folded into
// its rows "TABLE (and its history)", say what that means under the table when there is one, and
// end with a line naming the tables that hold no personal data; CSV is one row per table and
// class, its history column the history's name when the row stands for it too, then one row of
// class "none" (0 columns) per table that holds no personal data. An unknown format is an error
// wrapping ErrFormat, nothing written.
func WriteSummary(w io.Writer, format string, rules retention.Rules, decls v1.Declarations, keys []config.KeyScope) error {
	if format != "text" && format != "csv" && format != "markdown" {
		return fmt.Errorf("--format %q: %w", format, ErrFormat)
	}
	sum, err := Summary(rules, decls, keys)
	if err != nil {
		return err
	}
	header := []string{"table", "class", "columns", "members", "retention", "serve keys"}
	cells := func(r SummaryRow) []string {
		members := "-"
		if r.Members >= 0 {
			members = strconv.Itoa(r.Members)
		}
		if r.Undeclared {
			members += " + undeclared"
		}
		return []string{r.Table, r.Class.String(), strconv.Itoa(r.Columns), members, r.Retention, keysCell(r.Served, r.Keys)}
	}
	const andHistory = " (and its history)"
	folded := slices.ContainsFunc(sum.Rows, func(r SummaryRow) bool { return r.History != "" })
	historyNote := func(history string) string {
		return `"(and its history)": the table's ` + history + " table holds every version of the same columns " +
			"of each class, with the same retention, counted once here; serve does not serve it."
	}
	noPersonal := "No personal data in: " + strings.Join(sum.NoPersonal, ", ") + "."
	switch format {
	case "text":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
		for _, r := range sum.Rows {
			c := cells(r)
			if r.History != "" {
				c[0] += andHistory
			}
			fmt.Fprintln(tw, strings.Join(c, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if folded || len(sum.NoPersonal) > 0 {
			fmt.Fprintln(w)
		}
		if folded {
			fmt.Fprintln(w, historyNote("_history"))
		}
		if len(sum.NoPersonal) > 0 {
			fmt.Fprintln(w, noPersonal)
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write(append(header, "history"))
		for _, r := range sum.Rows {
			_ = cw.Write(append(cells(r), r.History))
		}
		served := server.Collections()
		for _, t := range sum.NoPersonal {
			_ = cw.Write([]string{t, "none", "0", "-", "", keysCell(slices.Contains(served, t), nil), ""})
		}
		cw.Flush()
		return cw.Error()
	}
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	fmt.Fprintln(w, strings.Repeat("|---", len(header))+"|")
	for _, r := range sum.Rows {
		c := cells(r)
		c[0] = "`" + c[0] + "`"
		if r.History != "" {
			c[0] += andHistory
		}
		fmt.Fprintln(w, "| "+strings.Join(c, " | ")+" |")
	}
	if folded {
		fmt.Fprintln(w, "\n"+historyNote("`_history`"))
	}
	if len(sum.NoPersonal) > 0 {
		ticked := make([]string, len(sum.NoPersonal))
		for i, t := range sum.NoPersonal {
			ticked[i] = "`" + t + "`"
		}
		fmt.Fprintln(w, "\nNo personal data in: "+strings.Join(ticked, ", ")+".")
	}
	return nil
}

// keysCell is the serve keys cell: "not served" for a table serve does not serve, "none" for one
// no key reads, else the keys' names.
func keysCell(served bool, keys []string) string {
	switch {
	case !served:
		return "not served"
	case len(keys) == 0:
		return "none"
	}
	return strings.Join(keys, ", ")
}
