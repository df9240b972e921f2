package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/v1"
)

// eraseCommand is hrsync erase: erasure on request (UK/EU GDPR Art. 17; docs/personal-data.md,
// "Erasure on request"). It erases a person's values of the erasable classes from every place
// the warehouse holds them, keeps them erased across syncs until the erasure is lifted, lists
// the erasures, and lifts one. It prints the rows it changed per table, never a value.
type eraseCommand struct {
	account  string
	employee int64
	reason   string
	classes  string
	list     bool
	lift     int64
}

func (c *eraseCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.account, "account", "", "the account whose warehouse it is (needed when the configuration has several)")
	fs.Int64Var(&c.employee, "employee", 0, "erase the employee of this id at the source")
	fs.StringVar(&c.reason, "reason", "", "why (kept and logged: do not name the person); needed by --employee and --lift")
	fs.StringVar(&c.classes, "classes", "", "the classes to erase, comma-separated (default: every erasable one: identifying,free_text,financial,health)")
	fs.BoolVar(&c.list, "list", false, "list the erasures, lifted ones included")
	fs.Int64Var(&c.lift, "lift", 0, "lift the erasure of this id (from --list): the next sync brings the source's values back")
}

// erasableNames are the erasable classes' names, for messages.
func erasableNames() string {
	var names []string
	for _, c := range v1.Classes {
		if c.Erasable() {
			names = append(names, c.String())
		}
	}
	return strings.Join(names, ", ")
}

// parseErasable reads --classes: nil (every erasable class) when empty.
func parseErasable(flag string) ([]v1.Class, error) {
	if strings.TrimSpace(flag) == "" {
		return nil, nil
	}
	var out []v1.Class
	for _, name := range strings.Split(flag, ",") {
		c, err := v1.ParseClass(name)
		if err != nil || !c.Erasable() {
			return nil, &usageError{fmt.Sprintf("erase: --classes %q: %q is not an erasable class (want %s)", flag, strings.TrimSpace(name), erasableNames())}
		}
		out = append(out, c)
	}
	return out, nil
}

func (c *eraseCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	modes := 0
	for _, on := range []bool{c.employee != 0, c.list, c.lift != 0} {
		if on {
			modes++
		}
	}
	switch {
	case modes != 1:
		return &usageError{"erase: give one of --employee ID, --list or --lift ERASURE_ID"}
	case c.employee < 0 || c.lift < 0:
		return &usageError{"erase: ids are positive"}
	case !c.list && strings.TrimSpace(c.reason) == "":
		return &usageError{"erase: --reason is needed (why; it is kept and logged, so do not name the person)"}
	case c.classes != "" && c.employee == 0:
		return &usageError{"erase: --classes goes with --employee"}
	}
	classes, err := parseErasable(c.classes)
	if err != nil {
		return err
	}
	accts, err := cfg.Pick(c.account)
	if err != nil {
		return err
	}
	// An employee's id is an account's: erasing 42 of every account would erase other people.
	if len(accts) != 1 {
		return &usageError{"erase: the configuration has several accounts: name one with --account"}
	}
	a := accts[0]
	store, err := openStore(ctx, a, a.Logger(cfg.Logger(stderr)))
	if err != nil {
		return err
	}
	defer store.Close()
	switch {
	case c.list:
		return printErasures(ctx, store, stdout, a.LinePrefix())
	case c.lift != 0:
		e, err := store.LiftErasure(ctx, c.lift, strings.TrimSpace(c.reason))
		if err != nil {
			return a.Wrap(err)
		}
		fmt.Fprintf(stdout, "%slifted erasure %d (%s; %s): the next sync brings the source's current values back; "+
			"what the history held stays erased\n", a.LinePrefix(), e.ID, e.Subject(), classList(e.Classes))
		return nil
	}
	res, err := store.EraseEmployee(ctx, c.employee, classes, strings.TrimSpace(c.reason))
	if err != nil && !errors.Is(err, sink.ErrNotScrubbed) {
		return a.Wrap(err)
	}
	ids := make([]string, len(res.IDs))
	for i, id := range res.IDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	if classes == nil {
		classes = slices.DeleteFunc(slices.Clone(v1.Classes), func(c v1.Class) bool { return !c.Erasable() })
	}
	fmt.Fprintf(stdout, "%serased employee %d (erasure %s; %s); rows changed:\n", a.LinePrefix(), c.employee, strings.Join(ids, ","), classList(classes))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	tables := make([]string, 0, len(res.Rows))
	for t := range res.Rows {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	for _, t := range tables {
		fmt.Fprintf(tw, "%s  %s\t%d\n", a.LinePrefix(), t, res.Rows[t])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return a.Wrap(err)
}

func classList(classes []v1.Class) string {
	names := make([]string, len(classes))
	for i, c := range classes {
		names[i] = c.String()
	}
	return strings.Join(names, ",")
}

// printErasures lists the erasures: what, whom, why and whether they still hold.
func printErasures(ctx context.Context, store *sink.Store, stdout io.Writer, prefix string) error {
	list, err := store.Erasures(ctx)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(stdout, "%sno erasures\n", prefix)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, prefix+"ID\tSUBJECT\tCLASSES\tCAUSE\tERASED\tLIFTED\tREASON")
	for _, e := range list {
		lifted := "-"
		reason := e.Reason
		if e.LiftedAt != "" {
			lifted = e.LiftedAt
			reason += " (lifted: " + e.LiftReason + ")"
		}
		fmt.Fprintf(tw, "%s%d\t%s\t%s\t%s\t%s\t%s\t%s\n", prefix, e.ID, e.Subject(), classList(e.Classes), e.Cause, e.ErasedAt, lifted, oneLine(reason))
	}
	return tw.Flush()
}
