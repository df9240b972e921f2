package main

import (
	"context"
	"flag"
	"io"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
)

// runCommand is hrsync run, the worker (account.Run).
type runCommand struct {
	serve bool
	now   bool
}

func (c *runCommand) flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.serve, "serve", false, "also serve the /v1 replica on serve.addr")
	fs.BoolVar(&c.now, "now", false, "sync once at start, then on the schedule")
}

func (c *runCommand) run(ctx context.Context, cfg config.Settings, _, stderr io.Writer) error {
	return account.Run(ctx, cfg, account.RunOptions{Serve: c.serve, Now: c.now, Registry: newRegistry(), Logger: cfg.Logger(stderr)})
}
