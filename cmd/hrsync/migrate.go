package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/schemareport"
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
	return account.Each(ctx, accts, func(a *config.Account) error {
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
			schemareport.Write(stdout, a.LinePrefix(), where, st, c.dryRun)
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
