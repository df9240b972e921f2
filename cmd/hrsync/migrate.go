package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
)

// migrateCommand is hrsync migrate.
type migrateCommand struct {
	account string
	// status says where each warehouse's schema stands, and dryRun also what migrate would run
	// there; neither writes.
	status, dryRun bool
}

func (c *migrateCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.account, "account", "", "migrate only these accounts (comma-separated names from accounts; default: every one)")
	fs.BoolVar(&c.status, "status", false, "change nothing: print each warehouse's schema version, the newest this build knows and the migrations pending")
	fs.BoolVar(&c.dryRun, "dry-run", false, "change nothing: print what --status prints and the SQL each pending migration would run")
}

// run migrates the warehouse of every account named (each schema, or SQLite file), going on
// past one that fails; it fails when any did. With --status or --dry-run it only reads them.
func (c *migrateCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	accts, err := cfg.Pick(c.account)
	if err != nil {
		return err
	}
	log := cfg.Logger(stderr) // says how many abandoned sync runs it closed
	return eachAccount(ctx, accts, func(a *config.Account) error {
		opts := a.SinkOptions()
		opts.Logger = a.Logger(log)
		where := sink.RedactURL(a.Warehouse.URL)
		if a.Listed { // one of several: which of its database's warehouses
			where = sink.RedactPlace(a.Warehouse.URL, a.Warehouse.Schema)
		}
		if c.status || c.dryRun {
			st, err := sink.MigrationStatus(ctx, a.Warehouse.URL, opts)
			if err != nil {
				return a.Wrap(err)
			}
			writeSchemaStatus(stdout, a.LinePrefix(), where, st, c.dryRun)
			return nil
		}
		applied, err := sink.Migrate(ctx, a.Warehouse.URL, opts)
		if err != nil {
			return a.Wrap(err)
		}
		if len(applied) == 0 {
			fmt.Fprintf(stdout, "%swarehouse %s is up to date\n", a.LinePrefix(), where)
			return nil
		}
		fmt.Fprintf(stdout, "%swarehouse %s: applied migrations %v\n", a.LinePrefix(), where, applied)
		return nil
	})
}

// writeSchemaStatus prints st for a person: a line on the warehouse's version against this
// build's, one per migration pending (or applied by a newer build), and with sql, the statements
// migrate would run, each as it runs it, ended by ";" so that the whole can be read into psql or
// sqlite3 by hand.
func writeSchemaStatus(w io.Writer, prefix, where string, st sink.SchemaStatus, sql bool) {
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
