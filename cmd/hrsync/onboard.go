package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source"
	hrsync "github.com/hrsync/hrsync/sync"
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
	fs.BoolVar(&c.dryRun, "dry-run", false, "validate and report; send nothing, write nothing, move nothing")
	fs.BoolVar(&c.retryFailed, "retry-failed", false, "also retry the files in onboarding.dir/failed (finished ones go to processed/)")
	fs.StringVar(&c.account, "account", "", "the account the new hires join (a name from accounts; needed with files when there are several);\n"+
		"without files, only these accounts' onboarding.dir (comma-separated; default: every one)")
}

// parsed takes the files named after the flags.
func (c *onboardCommand) parsed(fs *flag.FlagSet) { c.files = fs.Args() }

// run processes each account's drop folder once (with --retry-failed, then the files in its
// failed/), or the files named into the one account named. It fails while any row of the files
// it handled is unresolved.
func (c *onboardCommand) run(ctx context.Context, cfg settings, stdout, stderr io.Writer) error {
	accts, err := cfg.pick(c.account)
	if err != nil {
		return err
	}
	if len(c.files) > 0 {
		if len(accts) > 1 {
			return &usageError{"onboard: name the account the files' new hires join with --account (configured: " +
				strings.Join(accountNames(accts), ", ") + ")"}
		}
		return c.runAccount(ctx, cfg, accts[0], stdout, stderr)
	}
	var withDir []*account
	for _, a := range accts {
		if a.Onboarding.Dir != "" {
			withDir = append(withDir, a)
		}
	}
	if len(withDir) == 0 {
		return &usageError{"onboard: name CSV files, or set onboarding.dir (HRSYNC_ONBOARDING_DIR)"}
	}
	return eachAccount(ctx, withDir, func(a *account) error { return c.runAccount(ctx, cfg, a, stdout, stderr) })
}

// runAccount onboards the files named, or the account's folder, into one account.
func (c *onboardCommand) runAccount(ctx context.Context, cfg settings, a *account, stdout, stderr io.Writer) error {
	log := a.logger(cfg.logger(stderr))
	if c.retryFailed && (len(c.files) > 0 || a.Onboarding.Dir == "") {
		return &usageError{"onboard --retry-failed retries the files in onboarding.dir's failed/ folder: set onboarding.dir (HRSYNC_ONBOARDING_DIR) and name no files"}
	}
	if err := checkSource(a); err != nil {
		return fmt.Errorf("onboard: %w", err)
	}
	store, err := a.openStore(ctx, log)
	if err != nil {
		return err
	}
	defer store.Close()
	client, err := newClient(a, log, store, nil, onboardClientOptions)
	if err != nil {
		return fmt.Errorf("onboard: %w", err)
	}
	o := newOnboarder(a, client, store, nil, c.dryRun, log)
	var results []onboard.FileResult
	err = hrsync.WithLockNamed(ctx, store, onboard.LockName, func(ctx context.Context) error {
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
		results, err = o.Pass(ctx, onboard.PassOptions{Dir: a.Onboarding.Dir, Settle: a.settle, RetryAll: c.retryFailed})
		return err
	})
	if errors.Is(err, hrsync.ErrLocked) {
		return a.wrap(errors.New("onboard: another hrsync process is onboarding from this warehouse; try again when it is done"))
	}
	prefix := a.linePrefix()
	failed := 0
	for _, r := range results {
		fmt.Fprint(stdout, prefix)
		printFile(stdout, r, c.dryRun)
		if r.Failed() {
			failed++
		}
	}
	if err != nil {
		return fmt.Errorf("onboard: %w", a.wrap(err))
	}
	if len(results) == 0 {
		fmt.Fprintln(stdout, prefix+"no complete CSV files to onboard")
	}
	if failed > 0 {
		hint := "run it again once the cause is fixed"
		if len(c.files) == 0 {
			hint = "hrsync onboard --retry-failed finishes the files in failed/ (run retries them on its own)"
		}
		return a.wrap(fmt.Errorf("onboard: %d of %d files not finished (rows unresolved, or the file unreadable); see their reports; %s", failed, len(results), hint))
	}
	return nil
}

// onboardClientOptions are onboard's source client options: the client's defaults (tests
// shorten the retries' backoff).
var onboardClientOptions = source.ClientOptions{}

func newOnboarder(a *account, client *source.Client, store *sink.Store, m *onboard.Metrics, dryRun bool, log *slog.Logger) *onboard.Onboarder {
	return onboard.New(client, store, onboard.Options{DryRun: dryRun, DateLayout: a.Onboarding.DateLayout,
		Folder: a.Onboarding.Dir, MaxFileBytes: a.Onboarding.MaxFileBytes, Metrics: m, Logger: log})
}

func printFile(w io.Writer, r onboard.FileResult, dryRun bool) {
	if dryRun {
		fmt.Fprintf(w, "%s (dry run): %d valid, %d already done, %d skipped, %d rejected\n", r.Name, r.Count(onboard.OutcomeWouldCreate),
			r.Count(onboard.OutcomeAlreadyDone), r.Count(onboard.OutcomeSkipped), r.Count(onboard.OutcomeRejected))
		if r.Err != nil {
			fmt.Fprintf(w, "  %s\n", oneLine(r.Err.Error()))
		}
		for _, x := range r.Rows {
			if x.Outcome != onboard.OutcomeWouldCreate {
				fmt.Fprintf(w, "  line %d: %s: %s\n", x.Line, x.Outcome, x.Reason)
			}
		}
		return
	}
	fmt.Fprintf(w, "%s: %d created, %d already done, %d skipped, %d rejected, %d unresolved", r.Name, r.Count(onboard.OutcomeCreated),
		r.Count(onboard.OutcomeAlreadyDone), r.Count(onboard.OutcomeSkipped), r.Count(onboard.OutcomeRejected), r.Count(onboard.OutcomeUnresolved))
	if r.Err != nil {
		fmt.Fprintf(w, " — %s", oneLine(r.Err.Error()))
	}
	fmt.Fprintln(w)
}
