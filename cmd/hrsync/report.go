package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/hrreport"
	"github.com/hrsync/hrsync/sink"
)

// reportCommand is hrsync report: the people models' pictures (docs/report.md) as one
// self-contained HTML file — key figures, headcount trend, starters and leavers, turnover,
// the sickness absence rate and absence by department, the Bradford list, and how to read
// them — every figure of one day (the --as-of month's last, or today), written atomically
// and private (0600): its lists of people name them by id and department only, unless --names.
type reportCommand struct {
	account string
	out     string
	asOf    string
	months  int
	top     int
	names   bool
	now     func() time.Time // the clock "today" is read from; nil: time.Now
}

func (c *reportCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.account, "account", "", "the account whose warehouse is reported (needed when the configuration has several)")
	fs.StringVar(&c.out, "out", "hrsync-report.html", "the HTML file written (replaced whole if there; 0600)")
	fs.StringVar(&c.asOf, "as-of", "", "a day of the report's last month, YYYY-MM-DD (default today, UTC): every figure is of that month's last day, or today in the current month")
	fs.IntVar(&c.months, "months", 24, "how many months the trends show, the as-of day's the last (1-240)")
	fs.IntVar(&c.top, "top", 20, "how many employees the Bradford list shows (1-1000)")
	fs.BoolVar(&c.names, "names", false, "show names in the Bradford list (identifying data; an erased person's never)")
}

func (c *reportCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	asOf := now().UTC()
	if c.asOf != "" {
		t, err := time.Parse(time.DateOnly, c.asOf)
		if err != nil {
			return &usageError{fmt.Sprintf("report: --as-of %q: want a date, YYYY-MM-DD", c.asOf)}
		}
		asOf = t
	}
	switch {
	case c.months < 1 || c.months > 240:
		return &usageError{fmt.Sprintf("report: --months %d: want 1 to 240", c.months)}
	case c.top < 1 || c.top > 1000:
		return &usageError{fmt.Sprintf("report: --top %d: want 1 to 1000", c.top)}
	case c.out == "":
		return &usageError{"report: --out names the file written"}
	}
	accts, err := cfg.Pick(c.account)
	if err != nil {
		return err
	}
	if len(accts) > 1 {
		return &usageError{"report: name the account to report with --account (configured: " + strings.Join(config.Names(accts), ", ") + ")"}
	}
	a := accts[0]
	store, err := account.Open(ctx, a, a.Logger(cfg.Logger(stderr)))
	if err != nil {
		return err
	}
	defer store.Close()
	r, err := store.PeopleReport(ctx, sink.PeopleReportOptions{AsOf: asOf, Months: c.months, BradfordTop: c.top, Names: c.names, Models: &a.Models})
	if err != nil {
		return a.Wrap(fmt.Errorf("report: %w", err))
	}
	account := ""
	if a.Listed {
		account = a.Name
	}
	o := hrreport.Options{Account: account, Generated: now(), Version: buildVersion(), Names: c.names}
	if err := hrreport.WriteFile(c.out, r, o); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(stdout, "%sreport written: %s (%s)\n", a.LinePrefix(), c.out, hrreport.Summary(r))
	return nil
}
