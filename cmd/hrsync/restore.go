package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sync/onboard"
)

// restoreCommand is hrsync restore: a SQLite warehouse replaced by a backup (hrsync backup's),
// with every erasure and lift of the erasure journal the backup lacks re-applied before the
// restored data is in place (sink.RestoreSQLite), so that no one erased since the backup is
// served or synced again. It takes the sync and onboarding locks: a sync, retention run or
// onboarding running refuses it.
type restoreCommand struct {
	from    string
	account string
}

func (c *restoreCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.from, "from", "", "the backup to restore (a file hrsync backup wrote)")
	fs.StringVar(&c.account, "account", "", "the account whose warehouse to restore (needed when the configuration has several)")
}

func (c *restoreCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	if strings.TrimSpace(c.from) == "" {
		return &usageError{"restore: --from FILE is needed"}
	}
	a, err := oneAccount(cfg, c.account, "restore", "to restore")
	if err != nil {
		return err
	}
	if sink.HasSchemas(a.Warehouse.URL) {
		return a.Wrap(postgresBackupError("restore", a))
	}
	opts := a.SinkOptions()
	opts.Logger = a.Logger(cfg.Logger(stderr))
	res, err := sink.RestoreSQLite(ctx, a.Warehouse.URL, c.from, opts, onboard.LockName)
	if err != nil {
		return a.Wrap(err)
	}
	fmt.Fprintf(stdout, "%srestored %s (schema %d, now %d); re-applied %d erasures and %d lifts of the erasure journal\n",
		a.LinePrefix(), c.from, res.From, res.To, res.Reapply.Erased, res.Reapply.Lifted)
	return nil
}
