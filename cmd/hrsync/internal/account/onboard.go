package account

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/runner"
)

// OnboardClientOptions are onboard's source client options: the client's defaults (tests
// shorten the retries' backoff).
var OnboardClientOptions = client.Options{}

func NewOnboarder(a *config.Account, src *client.Client, store *sink.Store, m *onboard.Metrics, n *onboard.Notifier, dryRun bool, log *slog.Logger) *onboard.Onboarder {
	opts := OnboardOptions(a, m, dryRun, log)
	opts.Notifier = n
	return onboard.New(src, store, opts)
}

func OnboardOptions(a *config.Account, m *onboard.Metrics, dryRun bool, log *slog.Logger) onboard.Options {
	return onboard.Options{DryRun: dryRun, DateLayout: a.Onboarding.DateLayout,
		Folder: a.Onboarding.Dir, MaxFileBytes: a.Onboarding.MaxFileBytes, Access: a.ResultAccess,
		NoReportBOM: !a.Onboarding.ReportBOM, Metrics: m, Logger: log}
}

// NotifyDrain bounds how long hrsync onboard, and run as it stops, wait for the notifications
// still queued for the webhook (onboarding.notify): each is bounded too.
var NotifyDrain = 30 * time.Second

// NotifyOptions are the webhook's options beyond the account's (tests shorten the backoff).
var NotifyOptions = onboard.NotifyOptions{}

// NewNotifier is the account's notifier of the files filed in its drop folder
// (onboarding.notify.url), counted on m; nil when it has no webhook.
func NewNotifier(a *config.Account, m *onboard.Metrics, log *slog.Logger) (*onboard.Notifier, error) {
	if a.Onboarding.Notify.URL == "" || a.Onboarding.Dir == "" {
		return nil, nil
	}
	opts := NotifyOptions
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

// OnboardRun is what one hrsync onboard asks of an account.
type OnboardRun struct {
	// Files are the CSV files to onboard; none: the account's drop folder.
	Files []string
	// DryRun sends nothing and changes nothing.
	DryRun bool
	// RetryFailed: the files of the drop folder's failed/ too.
	RetryFailed bool
}

// Onboard onboards the files of r into the account (its source checked already: CheckSource),
// or its drop folder's, under the warehouse's onboarding lock, and returns what became of each
// file. What was filed from the folder is told (onboarding.notify) before it returns, within
// NotifyDrain.
func Onboard(ctx context.Context, a *config.Account, log *slog.Logger, r OnboardRun) ([]onboard.FileResult, error) {
	store, err := OpenWritable(ctx, a, log)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	src, err := NewClient(a, log, store, nil, OnboardClientOptions)
	if err != nil {
		return nil, fmt.Errorf("onboard: %w", err)
	}
	var n *onboard.Notifier
	if !r.DryRun && len(r.Files) == 0 { // the drop folder's files are notified, not those named
		if n, err = NewNotifier(a, nil, log); err != nil {
			return nil, err
		}
	}
	o := NewOnboarder(a, src, store, nil, n, r.DryRun, log)
	var results []onboard.FileResult
	err = runner.WithLockNamed(ctx, store, onboard.LockName, func(ctx context.Context) error {
		if len(r.Files) > 0 {
			for _, path := range r.Files {
				res, err := o.ProcessPath(ctx, path, "")
				results = append(results, res)
				if err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		results, err = o.Pass(ctx, onboard.PassOptions{Dir: a.Onboarding.Dir, Settle: a.Settle, RetryAll: r.RetryFailed})
		return err
	})
	// What was filed is told before the command ends; a webhook that does not answer holds it
	// up NotifyDrain at most (each notification not sent is logged).
	dctx, cancel := context.WithTimeout(ctx, NotifyDrain)
	defer cancel()
	_ = n.Close(dctx)
	if errors.Is(err, runner.ErrLocked) {
		return results, a.Wrap(errors.New("onboard: another hrsync process is onboarding from this warehouse; try again when it is done"))
	}
	if err != nil {
		return results, fmt.Errorf("onboard: %w", a.Wrap(err))
	}
	return results, nil
}

// CheckFiles is a dry run of files (none: the drop folder's) without a source: the files alone
// are checked, and no warehouse is opened (nothing is written but the named files' reports).
func CheckFiles(ctx context.Context, a *config.Account, log *slog.Logger, files []string) ([]onboard.FileResult, error) {
	o := onboard.New(nil, nil, OnboardOptions(a, nil, true, log))
	if len(files) == 0 {
		results, err := o.Pass(ctx, onboard.PassOptions{Dir: a.Onboarding.Dir, Settle: a.Settle})
		return results, wrapOnboard(a, err)
	}
	var results []onboard.FileResult
	for _, path := range files {
		r, err := o.ProcessPath(ctx, path, "")
		results = append(results, r)
		if err != nil {
			return results, wrapOnboard(a, err)
		}
	}
	return results, nil
}

func wrapOnboard(a *config.Account, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("onboard: %w", a.Wrap(err))
}
