package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/demo"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/onboardreport"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/sync/onboard"
)

// demoCommand is hrsync demo (package demo): the whole product in one process, with nothing to
// set up.
type demoCommand struct {
	opts demo.Options
}

func (c *demoCommand) flags(fs *flag.FlagSet) {
	fs.IntVar(&c.opts.Employees, "employees", demo.Employees, "employees the in-process upstream serves")
	fs.StringVar(&c.opts.Addr, "addr", demo.Addr, "where the replica listens at the end (when this default is taken, another free port)")
	fs.StringVar(&c.opts.UpstreamAddr, "upstream-addr", "127.0.0.1:0", "where the in-process upstream listens (port 0: any free port)")
	fs.StringVar(&c.opts.Hires, "hires", demo.HiresPath, "CSV of new hires to onboard (when this default is absent, a built-in copy of it)")
	fs.StringVar(&c.opts.Warehouse, "warehouse", "", "the demo's own warehouse, made fresh every run: a SQLite file (default "+demo.WarehouseFile+
		"), or postgres://… (default when warehouse.url is Postgres; in schema "+demo.Schema+")")
	fs.BoolVar(&c.opts.NoServe, "no-serve", false, "exit after the report instead of serving the replica")
}

// parsed notes which flags were given: a default that cannot be used gives way, a choice does not.
func (c *demoCommand) parsed(fs *flag.FlagSet) {
	c.opts.Set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { c.opts.Set[fl.Name] = true })
}

func (c *demoCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	c.opts.Version = buildVersion()
	return demo.Run(ctx, cfg, c.opts, demoWiring, stdout, stderr)
}

// demoWiring is what the demo runs of the other commands: their client (with no shared budget:
// the demo's upstream is unpaced), their onboarder, serve's /v1 interface, onboard's summary.
var demoWiring = demo.Wiring{
	Client: func(a *config.Account, log *slog.Logger) (*client.Client, error) {
		return account.NewClient(a, log, nil, nil, client.Options{})
	},
	Onboarder: func(a *config.Account, src *client.Client, store *sink.Store, log *slog.Logger) *onboard.Onboarder {
		return account.NewOnboarder(a, src, store, nil, nil, false, log)
	},
	Replica: func(cfg config.Settings, store *sink.Store, upstream *client.Client, log *slog.Logger) (http.Handler, error) {
		return account.Replica(cfg, store, upstream, prom.NewServe(newRegistry()), log)
	},
	OnboardSummary: func(w io.Writer, f onboard.FileResult) { onboardreport.PrintSummary(w, f, false) },
}
