package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/onboardreport"
	"github.com/hrsync/hrsync/sync/onboard"
)

// onboardCommand is hrsync onboard.
type onboardCommand struct {
	dryRun      bool
	retryFailed bool
	files       []string
	account     string
}

func (c *onboardCommand) flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.dryRun, "dry-run", false, "validate and report; send nothing, write nothing, move nothing (without a source configured: the files alone)")
	fs.BoolVar(&c.retryFailed, "retry-failed", false, "also retry the files in onboarding.dir/failed (finished ones go to processed/)")
	fs.StringVar(&c.account, "account", "", "the account the new hires join (a name from accounts; needed with files when there are several);\n"+
		"without files, only these accounts' onboarding.dir (comma-separated; default: every one)")
}

// parsed takes the files named after the flags.
func (c *onboardCommand) parsed(fs *flag.FlagSet) { c.files = fs.Args() }

// run processes each account's drop folder once (with --retry-failed, then the files in its
// failed/), or the files named into the one account named. It fails while any row of the files
// it handled is unresolved.
func (c *onboardCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	accts, err := cfg.Pick(c.account)
	if err != nil {
		return err
	}
	if len(c.files) > 0 {
		if len(accts) > 1 {
			return &usageError{"onboard: name the account the files' new hires join with --account (configured: " +
				strings.Join(config.Names(accts), ", ") + ")"}
		}
		return c.runAccount(ctx, cfg, accts[0], stdout, stderr)
	}
	var withDir []*config.Account
	for _, a := range accts {
		if a.Onboarding.Dir != "" {
			withDir = append(withDir, a)
		}
	}
	if len(withDir) == 0 {
		return &usageError{"onboard: name CSV files, or set onboarding.dir (HRSYNC_ONBOARDING_DIR)"}
	}
	return account.Each(ctx, withDir, func(a *config.Account) error { return c.runAccount(ctx, cfg, a, stdout, stderr) })
}

// runAccount onboards the files named, or the account's folder, into one account.
func (c *onboardCommand) runAccount(ctx context.Context, cfg config.Settings, a *config.Account, stdout, stderr io.Writer) error {
	log := a.Logger(cfg.Logger(stderr))
	if c.retryFailed && (len(c.files) > 0 || a.Onboarding.Dir == "") {
		return &usageError{"onboard --retry-failed retries the files in onboarding.dir's failed/ folder: set onboarding.dir (HRSYNC_ONBOARDING_DIR) and name no files"}
	}
	if err := account.CheckSource(a); err != nil {
		if c.dryRun {
			// Nothing to send, nobody to look up: the files alone are checked.
			return c.fileOnly(ctx, a, stdout, log)
		}
		return fmt.Errorf("onboard: %w; hrsync onboard --dry-run checks files without a source", err)
	}
	results, err := account.Onboard(ctx, a, log, account.OnboardRun{Files: c.files, DryRun: c.dryRun, RetryFailed: c.retryFailed})
	return c.report(a, results, err, stdout)
}

// fileOnly is a dry run without a source: the files alone are checked, with no warehouse
// opened (nothing is written but the named files' reports), and it says what it could not check.
func (c *onboardCommand) fileOnly(ctx context.Context, a *config.Account, stdout io.Writer, log *slog.Logger) error {
	results, err := account.CheckFiles(ctx, a, log, c.files)
	rerr := c.report(a, results, err, stdout)
	if len(results) > 0 {
		fmt.Fprintln(stdout, a.LinePrefix()+"checked the file alone: no source is configured (source.url, source.api_key), so whether these people are employees already, or were onboarded before, was not checked")
	}
	return rerr
}

// report prints what happened to each file and fails while a file is not finished.
func (c *onboardCommand) report(a *config.Account, results []onboard.FileResult, err error, stdout io.Writer) error {
	prefix := a.LinePrefix()
	failed := 0
	for _, r := range results {
		fmt.Fprint(stdout, prefix)
		onboardreport.PrintFile(stdout, r, c.dryRun)
		if r.Failed() {
			failed++
		}
	}
	if err != nil { // said already: Onboard and CheckFiles name the command and the account
		return err
	}
	if len(results) == 0 {
		fmt.Fprintln(stdout, prefix+"no complete files to onboard")
	}
	if failed > 0 {
		hint := "run it again once the cause is fixed"
		if len(c.files) == 0 {
			hint = "hrsync onboard --retry-failed finishes the files in failed/ (run retries them on its own)"
		}
		return a.Wrap(fmt.Errorf("onboard: %d of %d files not finished (rows unresolved, nobody onboarded because its rows were rejected, or the file not a CSV of new hires); see their reports; %s", failed, len(results), hint))
	}
	return nil
}
