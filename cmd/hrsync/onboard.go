package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/onboardreport"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/runner"
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
	return eachAccount(ctx, withDir, func(a *config.Account) error { return c.runAccount(ctx, cfg, a, stdout, stderr) })
}

// runAccount onboards the files named, or the account's folder, into one account.
func (c *onboardCommand) runAccount(ctx context.Context, cfg config.Settings, a *config.Account, stdout, stderr io.Writer) error {
	log := a.Logger(cfg.Logger(stderr))
	if c.retryFailed && (len(c.files) > 0 || a.Onboarding.Dir == "") {
		return &usageError{"onboard --retry-failed retries the files in onboarding.dir's failed/ folder: set onboarding.dir (HRSYNC_ONBOARDING_DIR) and name no files"}
	}
	if err := checkSource(a); err != nil {
		if c.dryRun {
			// Nothing to send, nobody to look up: the files alone are checked.
			return c.fileOnly(ctx, a, stdout, log)
		}
		return fmt.Errorf("onboard: %w; hrsync onboard --dry-run checks files without a source", err)
	}
	store, err := openWritable(ctx, a, log)
	if err != nil {
		return err
	}
	defer store.Close()
	src, err := newClient(a, log, store, nil, onboardClientOptions)
	if err != nil {
		return fmt.Errorf("onboard: %w", err)
	}
	var n *onboard.Notifier
	if !c.dryRun && len(c.files) == 0 { // the drop folder's files are notified, not those named
		if n, err = newNotifier(a, nil, log); err != nil {
			return err
		}
	}
	o := newOnboarder(a, src, store, nil, n, c.dryRun, log)
	var results []onboard.FileResult
	err = runner.WithLockNamed(ctx, store, onboard.LockName, func(ctx context.Context) error {
		if len(c.files) > 0 {
			for _, path := range c.files {
				r, err := o.ProcessPath(ctx, path, "")
				results = append(results, r)
				if err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		results, err = o.Pass(ctx, onboard.PassOptions{Dir: a.Onboarding.Dir, Settle: a.Settle, RetryAll: c.retryFailed})
		return err
	})
	// What was filed is told before the command ends; a webhook that does not answer holds it
	// up notifyDrain at most (each notification not sent is logged).
	dctx, cancel := context.WithTimeout(ctx, notifyDrain)
	defer cancel()
	_ = n.Close(dctx)
	if errors.Is(err, runner.ErrLocked) {
		return a.Wrap(errors.New("onboard: another hrsync process is onboarding from this warehouse; try again when it is done"))
	}
	return c.report(a, results, err, stdout)
}

// fileOnly is a dry run without a source: the files alone are checked, with no warehouse
// opened (nothing is written but the named files' reports), and it says what it could not check.
func (c *onboardCommand) fileOnly(ctx context.Context, a *config.Account, stdout io.Writer, log *slog.Logger) error {
	o := onboard.New(nil, nil, onboardOptions(a, nil, true, log))
	var results []onboard.FileResult
	var err error
	if len(c.files) > 0 {
		for _, path := range c.files {
			var r onboard.FileResult
			r, err = o.ProcessPath(ctx, path, "")
			results = append(results, r)
			if err != nil {
				break
			}
		}
	} else {
		results, err = o.Pass(ctx, onboard.PassOptions{Dir: a.Onboarding.Dir, Settle: a.Settle})
	}
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
	if err != nil {
		return fmt.Errorf("onboard: %w", a.Wrap(err))
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

// onboardClientOptions are onboard's source client options: the client's defaults (tests
// shorten the retries' backoff).
var onboardClientOptions = client.Options{}

func newOnboarder(a *config.Account, src *client.Client, store *sink.Store, m *onboard.Metrics, n *onboard.Notifier, dryRun bool, log *slog.Logger) *onboard.Onboarder {
	opts := onboardOptions(a, m, dryRun, log)
	opts.Notifier = n
	return onboard.New(src, store, opts)
}

func onboardOptions(a *config.Account, m *onboard.Metrics, dryRun bool, log *slog.Logger) onboard.Options {
	return onboard.Options{DryRun: dryRun, DateLayout: a.Onboarding.DateLayout,
		Folder: a.Onboarding.Dir, MaxFileBytes: a.Onboarding.MaxFileBytes, Access: a.ResultAccess,
		NoReportBOM: !a.Onboarding.ReportBOM, Metrics: m, Logger: log}
}

// notifyDrain bounds how long hrsync onboard, and run as it stops, wait for the notifications
// still queued for the webhook (onboarding.notify): each is bounded too.
var notifyDrain = 30 * time.Second

// notifyOptions are the webhook's options beyond the account's (tests shorten the backoff).
var notifyOptions = onboard.NotifyOptions{}

// newNotifier is the account's notifier of the files filed in its drop folder
// (onboarding.notify.url), counted on m; nil when it has no webhook.
func newNotifier(a *config.Account, m *onboard.Metrics, log *slog.Logger) (*onboard.Notifier, error) {
	if a.Onboarding.Notify.URL == "" || a.Onboarding.Dir == "" {
		return nil, nil
	}
	opts := notifyOptions
	opts.URL, opts.Names, opts.Metrics, opts.Logger = a.Onboarding.Notify.URL, a.Onboarding.Notify.Names, m, log
	if a.Listed {
		opts.Account = a.Name
	}
	n, err := onboard.NewNotifier(opts)
	if err != nil {
		return nil, a.Wrap(fmt.Errorf("config: %w", err))
	}
	return n, nil
}
