package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/hrsync/hrsync/sink"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func buildVersion() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	return v
}

// usageError is a command line hrsync cannot act on: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func exitCode(err error) int {
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

const usageText = `usage: hrsync [--config FILE] COMMAND [flags]

Commands:
  migrate   create or upgrade the warehouse schema
  serve     serve the warehouse as the /v1 interface (a read replica, or standalone)
  sync      load the source into the warehouse (--dry-run, --resource, --allow-mass-delete)
  onboard   create the new hires of CSV files, each exactly once (--dry-run, --retry-failed; files, or onboarding.dir)
  run       the worker: syncs on the schedule, metrics, health (--serve, --now)
  demo      everything at once, with nothing to set up: an in-process upstream, a sync, an
            onboarding, a second sync, a report, then the replica until Ctrl-C
            (--employees, --addr, --hires, --warehouse, --no-serve)
  version   print the version

Configuration comes from config.yaml (--config, default ./config.yaml when present) and
HRSYNC_* environment variables, which win. See README.md.
`

// run is the whole program: main only adds the process around it.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	global := flag.NewFlagSet("hrsync", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	configPath := global.String("config", "", "config file")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usageText)
			return nil
		}
		return &usageError{err.Error() + " (hrsync --help lists the commands)"}
	}
	if global.NArg() == 0 {
		fmt.Fprint(stderr, usageText)
		return &usageError{"no command given"}
	}
	name, rest := global.Arg(0), global.Args()[1:]
	fs := flag.NewFlagSet("hrsync "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(configPath, "config", *configPath, "config file (default ./config.yaml when present)")
	var cmd func(context.Context, Config, io.Writer, io.Writer) error
	switch name {
	case "version":
		cmd = func(context.Context, Config, io.Writer, io.Writer) error {
			fmt.Fprintln(stdout, "hrsync", buildVersion())
			return nil
		}
	case "help":
		fmt.Fprint(stdout, usageText)
		return nil
	case "migrate":
		cmd = migrateCmd
	case "serve":
		addr := fs.String("addr", "", "listen address (overrides serve.addr)")
		cmd = func(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
			if *addr != "" {
				cfg.Serve.Addr = *addr
			}
			return serveCmd(ctx, cfg, stdout, stderr)
		}
	case "sync":
		var f syncFlags
		fs.StringVar(&f.resource, "resource", "all", "all, employees or working_patterns")
		fs.BoolVar(&f.dryRun, "dry-run", false, "walk and report what would change; write nothing")
		fs.BoolVar(&f.allowMassDelete, "allow-mass-delete", false, "let deletions past the deletion guard through")
		fs.IntVar(&f.concurrency, "concurrency", 0, "pages fetched at once (overrides sync.concurrency)")
		cmd = func(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
			return syncCmd(ctx, cfg, f, stdout, stderr)
		}
	case "run":
		var f runFlags
		fs.BoolVar(&f.serve, "serve", false, "also serve the /v1 replica on serve.addr")
		fs.BoolVar(&f.now, "now", false, "sync once at start, then on the schedule")
		cmd = func(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
			return runCmd(ctx, cfg, f, stdout, stderr)
		}
	case "onboard":
		var f onboardFlags
		fs.BoolVar(&f.dryRun, "dry-run", false, "validate and report; send nothing, write nothing, move nothing")
		fs.BoolVar(&f.retryFailed, "retry-failed", false, "also retry the files in onboarding.dir/failed (finished ones go to processed/)")
		cmd = func(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
			f.files = fs.Args()
			return onboardCmd(ctx, cfg, f, stdout, stderr)
		}
	case "demo":
		f := demoFlags{set: map[string]bool{}}
		fs.IntVar(&f.employees, "employees", 2500, "employees the in-process upstream serves")
		fs.StringVar(&f.addr, "addr", demoAddr, "where the replica listens at the end (when this default is taken, another free port)")
		fs.StringVar(&f.upstreamAddr, "upstream-addr", "127.0.0.1:0", "where the in-process upstream listens (port 0: any free port)")
		fs.StringVar(&f.hires, "hires", demoHiresPath, "CSV of new hires to onboard (when this default is absent, a built-in copy of it)")
		fs.StringVar(&f.warehouse, "warehouse", "", "the demo's own warehouse, made fresh every run: a SQLite file (default "+demoWarehouseFile+
			"), or postgres://… (default when warehouse.url is Postgres; in schema "+demoSchema+")")
		fs.BoolVar(&f.noServe, "no-serve", false, "exit after the report instead of serving the replica")
		cmd = func(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
			fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
			return demoCmd(ctx, cfg, f, stdout, stderr)
		}
	default:
		return &usageError{fmt.Sprintf("unknown command %q (hrsync --help lists the commands)", name)}
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &usageError{err.Error()}
	}
	if fs.NArg() > 0 && name != "onboard" {
		return &usageError{fmt.Sprintf("%s: unexpected arguments %s", name, strings.Join(fs.Args(), " "))}
	}
	cfg, err := loadConfig(*configPath, environ)
	if err != nil {
		return err
	}
	return cmd(ctx, cfg, stdout, stderr)
}

func (c Config) sinkOptions() sink.Options {
	return sink.Options{Schema: c.Warehouse.Schema, AccountID: c.Serve.AccountID, StatementTimeout: c.Warehouse.StatementTimeout}
}

// stopGrace is how long, once a command is asked to stop, its warehouse statements may go on
// (a run's ledger entry, a lock's release) before their connections are closed under them: a
// stop never waits on a warehouse that stopped answering.
const stopGrace = 15 * time.Second

// openStore opens the configured warehouse, refusing one whose schema is behind. Once ctx ends
// (SIGTERM), whatever is still waiting on the warehouse stopGrace later is interrupted.
func (c Config) openStore(ctx context.Context, log *slog.Logger) (*sink.Store, error) {
	opts := c.sinkOptions()
	opts.Logger = log
	store, err := sink.Open(ctx, c.Warehouse.URL, opts)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { time.AfterFunc(stopGrace, store.Interrupt) })
	return store, nil
}

func migrateCmd(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	opts := cfg.sinkOptions()
	opts.Logger = cfg.logger(stderr) // says how many abandoned sync runs it closed
	applied, err := sink.Migrate(ctx, cfg.Warehouse.URL, opts)
	if err != nil {
		return err
	}
	where := redactURL(cfg.Warehouse.URL)
	if len(applied) == 0 {
		fmt.Fprintf(stdout, "warehouse %s is up to date\n", where)
		return nil
	}
	fmt.Fprintf(stdout, "warehouse %s: applied migrations %v\n", where, applied)
	return nil
}

// redactURL drops credentials from a database URL for output.
func redactURL(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
			rest = rest[at+1:]
		}
		if q := strings.IndexByte(rest, '?'); q >= 0 {
			rest = rest[:q]
		}
		return raw[:i+3] + rest
	}
	return raw
}
