package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/demo"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/syncreport"
	"github.com/hrsync/hrsync/internal/buildinfo"
)

// buildVersion names this build in what hrsync writes (reports, exports, the replica's ETags):
// its version and short commit, e.g. "v1.2.3 (abc123def456)". Release builds set them with
// -ldflags -X (package buildinfo).
func buildVersion() string { return buildinfo.Get().Short() }

// logStart is the first line the long-running commands log (commandSpec.logsStart): which build
// wrote the log that follows.
func logStart(log *slog.Logger) {
	b := buildinfo.Get()
	log.Info("hrsync starting", "version", b.Version, "commit", b.ShortCommit(), "go", b.GoVersion)
}

// usageError is a command line hrsync cannot act on: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func exitCode(err error) int {
	var ue *usageError
	var ua *config.UnknownAccountError
	var de *demo.UsageError
	if errors.As(err, &ue) || errors.As(err, &ua) || errors.As(err, &de) {
		return 2
	}
	if onlyHeld(err) {
		return 3
	}
	return 1
}

// onlyHeld reports whether every error err joins (each account's) is a sync held by a load
// guard: neither ok nor failed, exit status 3. One failure among them makes it 1.
func onlyHeld(err error) bool {
	switch e := err.(type) {
	case *syncreport.HeldError:
		return true
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		return len(errs) > 0 && !slices.ContainsFunc(errs, func(e error) bool { return !onlyHeld(e) })
	case interface{ Unwrap() error }:
		return onlyHeld(e.Unwrap())
	}
	return false
}

// command is one subcommand: it registers its own flags, and runs with the loaded configuration
// once they are parsed.
type command interface {
	flags(fs *flag.FlagSet)
	run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error
}

// afterParse is a command that reads its parsed flag set: the arguments after its flags
// (onboard's files), or which flags were given (demo).
type afterParse interface {
	parsed(fs *flag.FlagSet)
}

// commandSpec is one entry of the command table.
type commandSpec struct {
	name string
	// summary is its line of hrsync --help; a newline continues it on an indented line.
	summary string
	// args is what it takes after its flags, for its usage line; "" means no arguments.
	args string
	new  func() command
	// logsStart says whether it logs logStart's line first (run does, before the command), given
	// its stderr; nil for never. The commands whose logs an operator reads later: the worker,
	// the replica, a sync.
	logsStart func(stderr io.Writer) bool
}

// always and piped are commandSpec.logsStart's: always, and only where stderr is no terminal (a
// sync on a terminal draws its progress and logs only warnings: syncreport.Report.Logger).
func always(io.Writer) bool       { return true }
func piped(stderr io.Writer) bool { return !syncreport.IsTerminal(stderr) }

// commands are hrsync's subcommands, in the order hrsync --help lists them.
var commands = []commandSpec{
	{name: "migrate", summary: "create or upgrade the warehouse schema (--status, --dry-run: what it would run;\n" +
		"--account)",
		new: func() command { return &migrateCommand{} }},
	{name: "serve", summary: "serve the warehouse as the /v1 interface (a read replica, or standalone)",
		new: func() command { return &serveCommand{} }, logsStart: always},
	{name: "sync", summary: "load the source into the warehouse (--dry-run, --resource, --full, --accept)",
		new: func() command { return &syncCommand{} }, logsStart: piped},
	{name: "onboard", summary: "create the new hires of CSV files, each exactly once (--dry-run, --retry-failed; files, or onboarding.dir)",
		args: "[FILE.csv ...]", new: func() command { return &onboardCommand{} }},
	{name: "run", summary: "the worker: syncs on the schedule, metrics, health (--serve, --now)",
		new: func() command { return &runCommand{} }, logsStart: always},
	{name: "demo", summary: "everything at once, with nothing to set up: an in-process upstream, a sync, an\n" +
		"onboarding, a second sync, a report, then the replica until Ctrl-C\n" +
		"(--employees, --addr, --hires, --warehouse, --no-serve)",
		new: func() command { return &demoCommand{} }},
	{name: "inventory", summary: "print the data inventory: by table and class of personal data, the columns and\n" +
		"members, the retention under the configured rules and the serve keys that read it;\n" +
		"--columns: every column (--format text, csv or markdown, --account)",
		new: func() command { return &inventoryCommand{} }},
	{name: "subject-access", summary: "export everything the warehouse holds about one employee (GDPR\n" +
		"Art. 15) as JSON and CSV files (--employee ID, --out DIR, --force, --account)",
		new: func() command { return &subjectAccessCommand{} }},
	{name: "erase", summary: "erase a person's personal data from the warehouse and keep it erased across syncs\n" +
		"(--employee ID --reason TEXT [--classes] [--pre-emptive], --list, --lift ERASURE_ID\n" +
		"--reason TEXT, --reapply)",
		new: func() command { return &eraseCommand{} }},
	{name: "backup", summary: "copy a SQLite warehouse while syncs run: private, whole or not at all\n(--out FILE, --force, --account; Postgres: pg_dump, see docs/operations.md)",
		new: func() command { return &backupCommand{} }},
	{name: "restore", summary: "replace a SQLite warehouse with a backup, re-applying the erasures made since\n(--from FILE, --account)",
		new: func() command { return &restoreCommand{} }},
	{name: "retention", summary: "apply the retention rules now: erase what is past its period (leavers' data by\n" +
		"class, old sicknesses' details, old onboarding files) (--dry-run, --account)",
		new: func() command { return &retentionCommand{} }},
	{name: "report", summary: "write the people models' pictures as one self-contained HTML file: headcount,\n" +
		"starters and leavers, turnover, absence, the Bradford list (--out FILE, --as-of DATE,\n" +
		"--months N, --top N, --names, --account)",
		new: func() command { return &reportCommand{} }},
	{name: "events", summary: "the joiner, mover and leaver events: list (--state, --employee, --run), show ID,\n" +
		"release (the leavers a mass leaving held; --run), publish; the webhooks' deliveries\n" +
		"(--subscriber, --state) and replay (the dead ones, or an event's) (--account)",
		args: "[list | show ID | release | publish | deliveries [ID] | replay [ID]]", new: func() command { return &eventsCommand{} }},
	{name: "version", summary: "print the version",
		new: func() command { return versionCommand{} }},
}

// usageText is hrsync --help.
func usageText() string {
	var b strings.Builder
	b.WriteString("usage: hrsync [--config FILE] COMMAND [flags]\n       hrsync --version\n\nCommands:\n")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-*s %s\n", width, c.name, strings.ReplaceAll(c.summary, "\n", "\n"+strings.Repeat(" ", width+3)))
	}
	b.WriteString("\nConfiguration comes from config.yaml (--config, default ./config.yaml when present) and\n" +
		"HRSYNC_* environment variables, which win. See README.md.\n")
	return b.String()
}

// commandUsage is hrsync COMMAND --help: its usage line, its summary and its flags.
func commandUsage(w io.Writer, c commandSpec, fs *flag.FlagSet) {
	line := "usage: hrsync [--config FILE] " + c.name + " [flags]"
	if c.args != "" {
		line += " " + c.args
	}
	fmt.Fprintf(w, "%s\n\n%s\n\nFlags:\n", line, strings.Join(strings.Fields(c.summary), " "))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// run is the whole program: main only adds the process around it.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	global := flag.NewFlagSet("hrsync", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	configPath := global.String("config", "", "config file")
	showVersion := global.Bool("version", false, "print the version on one line")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usageText())
			return nil
		}
		return &usageError{err.Error() + " (hrsync --help lists the commands)"}
	}
	if *showVersion {
		fmt.Fprintln(stdout, "hrsync", buildinfo.Get())
		return nil
	}
	if global.NArg() == 0 {
		fmt.Fprint(stderr, usageText())
		return &usageError{"no command given"}
	}
	name, rest := global.Arg(0), global.Args()[1:]
	if name == "help" {
		fmt.Fprint(stdout, usageText())
		return nil
	}
	i := slices.IndexFunc(commands, func(c commandSpec) bool { return c.name == name })
	if i < 0 {
		return &usageError{fmt.Sprintf("unknown command %q (hrsync --help lists the commands)", name)}
	}
	spec, cmd := commands[i], commands[i].new()
	fs := flag.NewFlagSet("hrsync "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // printed below: to stdout when asked for, to stderr after a mistake
	fs.StringVar(configPath, "config", *configPath, "config file (default ./config.yaml when present)")
	cmd.flags(fs)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			commandUsage(stdout, spec, fs)
			return nil
		}
		fmt.Fprintln(stderr, err)
		commandUsage(stderr, spec, fs)
		return &usageError{err.Error()}
	}
	if fs.NArg() > 0 && spec.args == "" {
		return &usageError{fmt.Sprintf("%s: unexpected arguments %s", name, strings.Join(fs.Args(), " "))}
	}
	if p, ok := cmd.(afterParse); ok {
		p.parsed(fs)
	}
	cfg, err := config.Load(*configPath, environ)
	if err != nil {
		return err
	}
	if spec.logsStart != nil && spec.logsStart(stderr) {
		logStart(cfg.Logger(stderr))
	}
	return cmd.run(ctx, cfg, stdout, stderr)
}

// versionCommand is hrsync version.
type versionCommand struct{}

func (versionCommand) flags(*flag.FlagSet) {}

// run prints the build, one field a line (hrsync --version prints it on one).
func (versionCommand) run(_ context.Context, _ config.Settings, stdout, _ io.Writer) error {
	fmt.Fprint(stdout, buildinfo.Get().Lines("hrsync"))
	return nil
}

// newRegistry is the process's Prometheus registry (prom.NewRegistry), with this build.
func newRegistry() *prometheus.Registry { return prom.NewRegistry(buildinfo.Get()) }

// oneAccount is the one account a command acts on: --account's (name), or the only one
// configured; with several and none named, a usage error asking for the account which holds
// what the command is about (which: "whose warehouse holds the person").
func oneAccount(cfg config.Settings, name, command, which string) (*config.Account, error) {
	accts, err := cfg.Pick(name)
	if err != nil {
		return nil, err
	}
	if len(accts) > 1 {
		return nil, &usageError{command + ": name the account " + which + " with --account (configured: " +
			strings.Join(config.Names(accts), ", ") + ")"}
	}
	return accts[0], nil
}
