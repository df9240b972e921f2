package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/personal"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sync/retention"
)

// retentionCommand is hrsync retention: the retention rules applied once, now
// (docs/personal-data.md, "Retention"), or with --dry-run, what they would erase. It prints per
// rule how many people, records or files it took and the rows per table, never a value.
type retentionCommand struct {
	account string
	dryRun  bool
}

func (c *retentionCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.account, "account", "", "only these accounts (comma-separated names from accounts; default: every one)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "say what would be erased and deleted, changing nothing")
}

func (c *retentionCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	accts, err := cfg.Pick(c.account)
	if err != nil {
		return err
	}
	log := cfg.Logger(stderr)
	return account.Each(ctx, accts, func(a *config.Account) error {
		p := a.LinePrefix()
		if !a.Retention.Any() {
			fmt.Fprintf(stdout, "%sno retention rule is configured (retention in config.yaml): nothing is erased\n", p)
			return nil
		}
		open := account.OpenExistingWritable // makes no warehouse where there is none
		if c.dryRun {
			open = account.OpenExisting // reads only: a standby can answer it
		}
		store, err := open(ctx, a, a.Logger(log))
		if err != nil {
			return err
		}
		defer store.Close()
		res, err := retention.Run(ctx, store, a.Retention, retention.Options{DryRun: c.dryRun, Logger: a.Logger(log)})
		if err != nil && !errors.Is(err, sink.ErrNotScrubbed) && !errors.Is(err, sink.ErrNotJournaled) {
			return a.Wrap(err)
		}
		personal.PrintRetention(stdout, p, a.Retention, res)
		return a.Wrap(err)
	})
}
