package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
)

// backupCommand is hrsync backup: a consistent copy of a SQLite warehouse, taken while syncs run
// (sink.Store.Backup), private and written whole or not at all. A Postgres warehouse is refused
// in one line naming pg_dump: its backups are the server's tools' (docs/operations.md, "Backup
// and restore").
type backupCommand struct {
	out     string
	account string
	force   bool
}

func (c *backupCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.out, "out", "", "the file to write the copy to (0600)")
	fs.StringVar(&c.account, "account", "", "the account whose warehouse to copy (needed when the configuration has several)")
	fs.BoolVar(&c.force, "force", false, "replace a file already at --out")
}

func (c *backupCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	if strings.TrimSpace(c.out) == "" {
		return &usageError{"backup: --out FILE is needed"}
	}
	a, err := oneAccount(cfg, c.account, "backup", "to back up")
	if err != nil {
		return err
	}
	if sink.HasSchemas(a.Warehouse.URL) {
		return a.Wrap(postgresBackupError("backup", a))
	}
	store, err := account.OpenExisting(ctx, a, a.Logger(cfg.Logger(stderr)))
	if err != nil {
		return err
	}
	defer store.Close()
	n, err := store.Backup(ctx, c.out, c.force)
	if err != nil {
		return a.Wrap(err)
	}
	fmt.Fprintf(stdout, "%sbacked up %s to %s (%d bytes); keep the erasure journal %s with it\n",
		a.LinePrefix(), store.Location(), c.out, n, store.JournalPath())
	return nil
}

// postgresBackupError is backup's and restore's answer for a Postgres warehouse: the tools to
// use, with the account's schema, in one line.
func postgresBackupError(command string, a *config.Account) error {
	how := "pg_dump --format=custom --schema=" + a.Warehouse.Schema + " --file=FILE \"$DATABASE_URL\""
	if command == "restore" {
		how = "pg_restore --clean --if-exists --single-transaction --schema=" + a.Warehouse.Schema +
			" --dbname=\"$DATABASE_URL\" FILE, then hrsync erase --reapply"
	}
	return fmt.Errorf("%s: %w: %s", command, sink.ErrPostgresBackup, how)
}
