package main

import (
	"context"
	"flag"
	"io"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
)

// serveCommand is hrsync serve: the replica, until SIGTERM or SIGINT.
type serveCommand struct {
	addr string
}

func (c *serveCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", "", "listen address (overrides serve.addr)")
}

func (c *serveCommand) run(ctx context.Context, cfg config.Settings, _, stderr io.Writer) error {
	if c.addr != "" {
		cfg.Serve.Addr = c.addr
	}
	return account.Serve(ctx, cfg, newRegistry(), cfg.Logger(stderr))
}
