package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/syncreport"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sync/walk"
)

// syncCommand is hrsync sync: one run over the resources, printing what it did.
type syncCommand struct {
	resource        string
	dryRun          bool
	allowMassDelete bool
	concurrency     int
	full            bool
	account         string
	accept, by      string
	acceptGiven     bool // --accept was given, even empty
}

// parsed notes whether --accept was given: an empty reason is refused, not taken for none.
func (c *syncCommand) parsed(fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) { c.acceptGiven = c.acceptGiven || f.Name == "accept" })
}

func (c *syncCommand) flags(fs *flag.FlagSet) {
	// The names "all" leaves out (the sensitive ones), from the declarations, not written here.
	var named []string
	for _, r := range walk.Known {
		if !slices.Contains(walk.Resources, r) {
			named = append(named, string(r))
		}
	}
	fs.StringVar(&c.resource, "resource", "", "the collections to sync, overriding sync.resources: one or more, comma-separated, of\n"+
		strings.Join(config.ResourceNames(walk.Known), ", ")+",\nor all: every one but the financial module's ("+strings.Join(named, ", ")+"), which\n"+
		"are synced only when named (default: sync.resources)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "walk and report what would change; write nothing")
	fs.BoolVar(&c.allowMassDelete, "allow-mass-delete", false, "accept the shrink guard for this run: let deletions past sync.max_delete_share\n"+
		"through (--accept is the general form, for every guard, and records who and why)")
	fs.StringVar(&c.accept, "accept", "", "accept the holds of the collections whose last run was held, once you have checked\n"+
		"the source, saying why (`REASON`, one line, kept in the ledger: name no employee): their\n"+
		"fresh walk is let through the guards that held them and published, the ledger keeping\n"+
		"who (--by) and why (not with --dry-run)")
	fs.StringVar(&c.by, "by", "", "who accepts (`NAME`), with --accept (default: the login name)")
	fs.IntVar(&c.concurrency, "concurrency", 0, "pages fetched at once (overrides sync.concurrency)")
	fs.BoolVar(&c.full, "full", false, "walk every collection whole, even those sync.window lets a run walk in part")
	fs.StringVar(&c.account, "account", "", "sync only these accounts (comma-separated names from accounts; default: every one, one after another)")
}

// resourcesOf is what --resource names: nothing, sync.resources (configured); otherwise the
// collections it lists, comma-separated, all standing for every one the sync knows but the
// sensitive (config.ParseResources).
func resourcesOf(flag string, configured []sink.Resource) ([]sink.Resource, error) {
	if strings.TrimSpace(flag) == "" {
		return configured, nil
	}
	rs, err := config.ParseResources(strings.Split(flag, ","))
	if err != nil {
		return nil, &usageError{fmt.Sprintf("--resource %q: %v, or all", flag, err)}
	}
	return rs, nil
}

// Bounds of what --accept and --by record: a sentence, a name.
const (
	maxAcceptReason = 300
	maxAcceptBy     = 100
)

// acceptance is the person's acceptance --accept and --by make (nil without --accept), or why
// the command line cannot be acted on.
func (c *syncCommand) acceptance() (*walk.Acceptance, error) {
	if !c.acceptGiven && c.accept == "" {
		if c.by != "" {
			return nil, &usageError{"sync: --by names who accepts, with --accept REASON"}
		}
		return nil, nil
	}
	if c.dryRun {
		// A dry run already shows what a held load would change; an acceptance it cannot
		// record would only look as if it had been.
		return nil, &usageError{"sync: --accept publishes a held load and --dry-run writes nothing: a dry run already shows what the load would change; run --accept without --dry-run"}
	}
	line := func(flag, v string, most int) (string, error) {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			return "", &usageError{fmt.Sprintf("sync: %s is empty: say why the held load is right (kept in the ledger)", flag)}
		case strings.ContainsFunc(v, unicode.IsControl):
			return "", &usageError{fmt.Sprintf("sync: %s must be one line", flag)}
		case utf8.RuneCountInString(v) > most:
			return "", &usageError{fmt.Sprintf("sync: %s is longer than %d characters", flag, most)}
		}
		return v, nil
	}
	reason, err := line("--accept", c.accept, maxAcceptReason)
	if err != nil {
		return nil, err
	}
	by := c.by
	if by == "" {
		by = loginName()
	}
	if by, err = line("--by", by, maxAcceptBy); err != nil {
		return nil, &usageError{"sync: --accept needs who accepts: --by NAME (no login name found)"}
	}
	return &walk.Acceptance{By: by, Reason: reason}, nil
}

// loginName is the name of the account hrsync runs as (os/user, else $USER): who accepts a
// held load when --by does not say.
func loginName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// run syncs each account named, one after another, going on past one that fails; it fails
// when any did.
func (c *syncCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	if _, err := c.acceptance(); err != nil {
		return err
	}
	accts, err := cfg.Pick(c.account)
	if err != nil {
		return err
	}
	// A wrong --resource is said once, not once for each account, and syncs none of them.
	if _, err := resourcesOf(c.resource, nil); err != nil {
		return err
	}
	return account.Each(ctx, accts, func(a *config.Account) error { return c.runAccount(ctx, cfg, a, stdout, stderr) })
}

// runAccount is one account's sync: its lock, its budget, its warehouse.
func (c *syncCommand) runAccount(ctx context.Context, cfg config.Settings, a *config.Account, stdout, stderr io.Writer) error {
	resources, err := resourcesOf(c.resource, a.Resources)
	if err != nil {
		return err
	}
	rep := syncreport.New(stdout, stderr, syncreport.IsTerminal(stderr), a.LinePrefix(), a.Source.RateLimit, c.dryRun, nil)
	defer rep.Close()
	log := a.Logger(rep.Logger(cfg))
	syncer, err := account.OpenSync(ctx, a, log)
	if err != nil {
		return err
	}
	defer syncer.Close()
	concurrency := a.Sync.Concurrency
	if c.concurrency > 0 {
		concurrency = c.concurrency
	}
	sopts := a.WalkOptions()
	sopts.Concurrency, sopts.AllowMassDelete, sopts.DryRun, sopts.Logger, sopts.Full = concurrency, c.allowMassDelete, c.dryRun, log, c.full
	if sopts.Accept, err = c.acceptance(); err != nil {
		return err
	}
	rep.Options(&sopts)
	rep.Begin(len(resources))
	results, err := syncer.Run(ctx, sopts, resources)
	if errors.Is(err, account.ErrSyncLocked) {
		return err
	}
	rep.Close() // the totals, before the error that says what failed
	if sopts.Accept != nil && !slices.ContainsFunc(results, func(r walk.Result) bool { return r.AcceptedBy != "" }) {
		fmt.Fprintln(stdout, a.LinePrefix()+"--accept: nothing accepted: no collection of this run was held by a guard it had been held by")
	}
	if err != nil {
		return syncreport.Failed(a, results, err, c.dryRun)
	}
	return nil
}
