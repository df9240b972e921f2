// Package schemareport prints what hrsync migrate --status and --dry-run say of a warehouse's
// schema (sink.SchemaStatus) for a person.
package schemareport

import (
	"fmt"
	"io"
	"strings"

	"github.com/hrsync/hrsync/sink"
)

// Write prints st for a person: a line on the warehouse's version against this
// build's, one per migration pending (or applied by a newer build), and with sql, the statements
// migrate would run, each as it runs it, ended by ";" so that the whole can be read into psql or
// sqlite3 by hand.
func Write(w io.Writer, prefix, where string, st sink.SchemaStatus, sql bool) {
	head := fmt.Sprintf("%swarehouse %s (%s): schema version %d, this build knows %d", prefix, where, st.Dialect, st.Applied, st.Known)
	switch {
	case st.Ahead():
		fmt.Fprintf(w, "%s: NEWER than this build; a newer hrsync migrated it, and this build refuses it (run that release or a later one)\n", head)
		for _, m := range st.Unknown {
			fmt.Fprintf(w, "%s  applied, unknown to this build: %04d %s (%s)\n", prefix, m.Version, m.Name, m.AppliedAt)
		}
		return
	case len(st.Pending) == 0 && len(st.History) == 0:
		fmt.Fprintf(w, "%s: up to date\n", head)
		return
	case len(st.Pending) == 0:
		fmt.Fprintf(w, "%s: up to date; its history triggers are not this build's, and migrate remakes them\n", head)
	default:
		what := fmt.Sprintf("%d migrations pending", len(st.Pending))
		if len(st.Pending) == 1 {
			what = "1 migration pending"
		}
		if st.Missing {
			what += " (the warehouse does not exist yet: migrate creates it)"
		}
		fmt.Fprintf(w, "%s: %s\n", head, what)
		for _, p := range st.Pending {
			fmt.Fprintf(w, "%s  pending %04d %s\n", prefix, p.Version, p.Name)
		}
	}
	if !sql {
		return
	}
	fmt.Fprintf(w, "%smigrate would run (nothing was changed):\n", prefix)
	block := func(title string, stmts []string) {
		fmt.Fprintf(w, "\n-- %s\n", title)
		for _, q := range stmts {
			q = strings.TrimRight(q, " \t\n")
			if !strings.HasSuffix(q, ";") {
				q += ";"
			}
			fmt.Fprintln(w, q)
		}
	}
	if len(st.Pending) == 0 {
		block("the history triggers, remade from this build's declarations, in one transaction", st.History)
		return
	}
	if len(st.Setup) > 0 {
		block("the ledger of migrations, before the first", st.Setup)
	}
	for i, p := range st.Pending {
		stmts, history := p.Statements[:1], p.Statements[1:]
		block(fmt.Sprintf("%04d %s: in one transaction, with its row in schema_migrations", p.Version, p.Name), stmts)
		if i == len(st.Pending)-1 && len(history) > 0 {
			title := fmt.Sprintf("%04d %s, same transaction: the history triggers, remade from this build's declarations", p.Version, p.Name)
			if st.HistoryMayDiffer {
				title += " (worked out from the triggers the warehouse has now; the migrations above change tables or triggers, so migrate may run others)"
			}
			block(title, history)
		}
	}
}
