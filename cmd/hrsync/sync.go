package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source"
	"github.com/hrsync/hrsync/source/v1"
	hrsync "github.com/hrsync/hrsync/sync"
)

// syncCommand is hrsync sync: one run over the resources, printing what it did.
type syncCommand struct {
	resource        string
	dryRun          bool
	allowMassDelete bool
	concurrency     int
	full            bool
}

func (c *syncCommand) flags(fs *flag.FlagSet) {
	// The names "all" leaves out (the sensitive ones), from the declarations, not written here.
	var named []string
	for _, r := range hrsync.Known {
		if !slices.Contains(hrsync.Resources, r) {
			named = append(named, string(r))
		}
	}
	fs.StringVar(&c.resource, "resource", "", "the collections to sync, overriding sync.resources: one or more, comma-separated, of\n"+
		strings.Join(resourceNames(hrsync.Known), ", ")+",\nor all: every one but the financial module's ("+strings.Join(named, ", ")+"), which\n"+
		"are synced only when named (default: sync.resources)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "walk and report what would change; write nothing")
	fs.BoolVar(&c.allowMassDelete, "allow-mass-delete", false, "let deletions past the deletion guard through")
	fs.IntVar(&c.concurrency, "concurrency", 0, "pages fetched at once (overrides sync.concurrency)")
	fs.BoolVar(&c.full, "full", false, "walk every collection whole, even those sync.window lets a run walk in part")
}

// checkSource says what the source settings lack, before a command opens the warehouse its
// client then paces on.
func checkSource(cfg settings) error {
	if cfg.Source.URL == "" {
		return errors.New("source URL: not set (source.url, HRSYNC_SOURCE_URL)")
	}
	if cfg.Source.APIKey == "" {
		return errors.New("source API key: not set (source.api_key, HRSYNC_SOURCE_API_KEY)")
	}
	return nil
}

// newClient builds a client of the account, paced at source.rate_limit; a process makes one and
// shares it, so everything it sends the account counts against one budget. With
// source.shared_budget (the default) and a store, that budget is the account's in the warehouse,
// shared with every other hrsync process of the account (sink.Budget); without a store (demo)
// or with shared_budget off, the process paces itself alone. reg, when not nil, gets the shared
// budget's metrics.
func newClient(cfg settings, log *slog.Logger, store *sink.Store, reg prometheus.Registerer, opts source.ClientOptions) (*source.Client, error) {
	if err := checkSource(cfg); err != nil {
		return nil, err
	}
	opts.RateLimit, opts.Logger = cfg.Source.RateLimit, log
	if store != nil && cfg.Source.SharedBudget && cfg.Source.RateLimit > 0 {
		b, err := store.NewBudget(sink.BudgetOptions{Account: cfg.Source.Account, PerMinute: cfg.Source.RateLimit,
			Share: cfg.Source.BudgetShare, Logger: log})
		if err != nil {
			return nil, err
		}
		opts.Budget = b
		if reg != nil {
			if err := reg.Register(newBudgetCollector(b)); err != nil {
				return nil, fmt.Errorf("register the request budget's metrics: %w", err)
			}
		}
	}
	return source.NewClient(cfg.Source.URL, cfg.Source.APIKey, opts)
}

// resourcesOf is what --resource names: nothing, sync.resources (configured); otherwise the
// collections it lists, comma-separated, all standing for every one the sync knows but the
// sensitive (parseResources).
func resourcesOf(flag string, configured []sink.Resource) ([]sink.Resource, error) {
	if strings.TrimSpace(flag) == "" {
		return configured, nil
	}
	rs, err := parseResources(strings.Split(flag, ","))
	if err != nil {
		return nil, &usageError{fmt.Sprintf("--resource %q: %v, or all", flag, err)}
	}
	return rs, nil
}

func (c *syncCommand) run(ctx context.Context, cfg settings, stdout, stderr io.Writer) error {
	resources, err := resourcesOf(c.resource, cfg.resources)
	if err != nil {
		return err
	}
	log := cfg.logger(stderr)
	if err := checkSource(cfg); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	store, err := cfg.openStore(ctx, log)
	if err != nil {
		return err
	}
	defer store.Close()
	client, err := newClient(cfg, log, store, nil, source.ClientOptions{})
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	concurrency := cfg.Sync.Concurrency
	if c.concurrency > 0 {
		concurrency = c.concurrency
	}
	sopts := hrsync.Options{
		Concurrency: concurrency, MaxWalks: cfg.Sync.MaxWalks, MaxDeleteShare: cfg.Sync.MaxDeleteShare,
		AllowMassDelete: c.allowMassDelete, DryRun: c.dryRun, Logger: log, Window: cfg.window, Full: c.full,
	}
	if isTerminal(stderr) {
		sopts.Progress = progressPrinter(stderr, cfg.Source.RateLimit)
	}
	var results []hrsync.Result
	err = hrsync.WithLock(ctx, store, func(ctx context.Context) error {
		results, err = hrsync.New(client, store, sopts).Run(ctx, resources)
		return err
	})
	if errors.Is(err, hrsync.ErrLocked) {
		return fmt.Errorf("sync: %w; try again when it is done", err)
	}
	for _, r := range results {
		printResult(stdout, r, c.dryRun)
	}
	if err != nil {
		var msgs []string
		for _, r := range results {
			if r.Err == nil {
				continue
			}
			msg := fmt.Sprintf("%s: %v", r.Resource, r.Err)
			switch {
			case errors.Is(r.Err, hrsync.ErrGuarded):
				msg += " (if intended, run again with --allow-mass-delete)"
			case errors.Is(r.Err, v1.ErrUnauthorized):
				msg += " (check source.api_key, HRSYNC_SOURCE_API_KEY; nothing else was synced)"
			}
			msgs = append(msgs, msg)
		}
		if len(msgs) == 0 {
			return fmt.Errorf("sync: %w", err)
		}
		return fmt.Errorf("sync: %s", strings.Join(msgs, "; "))
	}
	return nil
}

func printResult(w io.Writer, r hrsync.Result, dryRun bool) {
	if r.Status == sink.RunUnavailable {
		// Skipped: nothing was walked or written, and there is nothing to count.
		fmt.Fprintf(w, "%s: %s — skipped: %s\n", r.Resource, r.Status, r.Error)
		return
	}
	verb := ""
	if dryRun {
		verb = " (dry run: nothing written)"
	}
	if r.Window != nil {
		// Only part of the collection was walked: the counts are the window's.
		verb += " (window " + r.Window.String() + ")"
	}
	fmt.Fprintf(w, "%s: %s%s — %d records: %d new, %d changed, %d unchanged, %d deleted",
		r.Resource, r.Status, verb, r.DistinctRecords, r.Inserted, r.Updated, r.Unchanged, r.Deleted)
	if r.DeletionsRefused > 0 {
		fmt.Fprintf(w, ", %d deletions refused", r.DeletionsRefused)
	}
	fmt.Fprintf(w, "; %d pages, %d requests, %d retries, %d rate-limited, %d walks",
		r.Pages, r.Requests, r.Retries, r.RateLimited, r.Walks)
	// A run that failed before it started (the warehouse refused its ledger row) has no end.
	if !r.FinishedAt.IsZero() && !r.StartedAt.IsZero() {
		fmt.Fprintf(w, ", %s", r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond))
	}
	fmt.Fprintln(w)
}

// isTerminal reports whether w is a character device (a terminal), for progress output.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressPrinter redraws one status line: pages done of total, records a second, and the time
// left, which under pacing is the pages left at the rate limit.
func progressPrinter(w io.Writer, ratePerMinute int) func(hrsync.Progress) {
	return func(p hrsync.Progress) {
		secs := p.Elapsed.Seconds()
		rate := 0.0
		if secs > 0 {
			rate = float64(p.Records) / secs
		}
		left := "?"
		if p.PagesTotal > 0 && p.PagesDone > 0 {
			remaining := float64(p.PagesTotal - p.PagesDone)
			perPage := secs / float64(p.PagesDone)
			if ratePerMinute > 0 {
				perPage = max(perPage, 60/float64(ratePerMinute))
			}
			left = time.Duration(remaining * perPage * float64(time.Second)).Round(time.Second).String()
		}
		total := "?"
		if p.PagesTotal > 0 {
			total = fmt.Sprint(p.PagesTotal)
		}
		fmt.Fprintf(w, "\r\033[K%s (walk %d): page %d/%s · %d records · %.0f records/s · %s left",
			p.Resource, p.Walk, p.PagesDone, total, p.Records, rate, left)
		if p.PagesTotal > 0 && p.PagesDone >= p.PagesTotal {
			fmt.Fprintln(w)
		}
	}
}
