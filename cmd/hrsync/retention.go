package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sync/retention"
)

// retentionCommand is hrsync retention: the retention rules applied once, now
// (docs/personal-data.md, "Retention"), or with --dry-run, what they would erase. It prints per
// rule how many people, records or files it took and the rows per table, never a value.
type retentionCommand struct {
	account string
	dryRun  bool
}

func (c *retentionCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.account, "account", "", "only these accounts (comma-separated names from accounts; default: every one)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "say what would be erased and deleted, changing nothing")
}

func (c *retentionCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	accts, err := cfg.Pick(c.account)
	if err != nil {
		return err
	}
	log := cfg.Logger(stderr)
	return eachAccount(ctx, accts, func(a *config.Account) error {
		p := a.LinePrefix()
		if !a.Retention.Any() {
			fmt.Fprintf(stdout, "%sno retention rule is configured (retention in config.yaml): nothing is erased\n", p)
			return nil
		}
		store, err := openStore(ctx, a, a.Logger(log))
		if err != nil {
			return err
		}
		defer store.Close()
		res, err := retention.Run(ctx, store, a.Retention, retention.Options{DryRun: c.dryRun, Logger: a.Logger(log)})
		if err != nil && !errors.Is(err, sink.ErrNotScrubbed) {
			return a.Wrap(err)
		}
		printRetention(stdout, p, a.Retention, res)
		return a.Wrap(err)
	})
}

// printRetention writes what a run did (or would do): per rule, its period, how many it took and
// the rows per table.
func printRetention(w io.Writer, prefix string, rules retention.Rules, res retention.Result) {
	verb, files := "erased", "deleted"
	if res.DryRun {
		verb, files = "would erase", "would delete"
		fmt.Fprintf(w, "%sdry run: nothing is changed\n", prefix)
	}
	for _, rr := range res.Rules {
		line := fmt.Sprintf("%s%s (%s): %s %s", prefix, rr.Rule, rules.Says(rr.Rule), verb, counted(rr.Subjects, rr.What))
		if rr.Rule == retention.RuleOnboardingFiles {
			line += fmt.Sprintf("; %s %s", files, counted(rr.Files, "files"))
		}
		fmt.Fprintln(w, line)
		tables := make([]string, 0, len(rr.Rows))
		for t := range rr.Rows {
			tables = append(tables, t)
		}
		slices.Sort(tables)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range tables {
			fmt.Fprintf(tw, "%s  %s\t%d\n", prefix, t, rr.Rows[t])
		}
		_ = tw.Flush()
	}
	if !res.DryRun {
		fmt.Fprintf(w, "%sthe run is in erasure_log (action retention)\n", prefix)
	}
}

// singular are the names of what retention takes, one of each.
var singular = map[string]string{"people": "person", "sicknesses": "sickness", "onboarding rows": "onboarding row", "files": "file"}

// counted is n of what (a plural), in the singular for one: "1 person", "2 people".
func counted(n int, what string) string {
	if one, ok := singular[what]; ok && n == 1 {
		what = one
	}
	return fmt.Sprintf("%d %s", n, what)
}
