package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/personal"
	"github.com/hrsync/hrsync/sink"
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
	// reapply re-applies the erasures and lifts of the erasure journal the warehouse lacks
	// (restored from a backup: on Postgres, after pg_restore).
	reapply bool
	// preEmptive erases an id the warehouse does not hold (yet): the erasure holds for when a
	// sync brings them. Without it such an id is refused, as a mistyped one would be.
	preEmptive bool
}

func (c *eraseCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.account, "account", "", "the account whose warehouse it is (needed when the configuration has several)")
	fs.Int64Var(&c.employee, "employee", 0, "erase the employee of this id at the source")
	fs.StringVar(&c.reason, "reason", "", "why (kept and logged: do not name the person); needed by --employee and --lift")
	fs.StringVar(&c.classes, "classes", "", "the classes to erase, comma-separated (default: every erasable one: identifying,free_text,financial,health)")
	fs.BoolVar(&c.list, "list", false, "list the erasures, lifted ones included")
	fs.Int64Var(&c.lift, "lift", 0, "lift the erasure of this id (from --list): the next sync brings the source's values back")
	fs.BoolVar(&c.reapply, "reapply", false, "re-apply every erasure and lift of the erasure journal the warehouse lacks (after restoring a backup)")
	fs.BoolVar(&c.preEmptive, "pre-emptive", false, "with --employee: erase an id the warehouse does not hold (yet), so that the erasure holds when a sync brings them (without it, such an id is refused)")
}

func (c *eraseCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	modes := 0
	for _, on := range []bool{c.employee != 0, c.list, c.lift != 0, c.reapply} {
		if on {
			modes++
		}
	}
	switch {
	case modes != 1:
		return &usageError{"erase: give one of --employee ID, --list, --lift ERASURE_ID or --reapply"}
	case c.employee < 0 || c.lift < 0:
		return &usageError{"erase: ids are positive"}
	case !c.list && !c.reapply && strings.TrimSpace(c.reason) == "":
		return &usageError{"erase: --reason is needed (why; it is kept and logged, so do not name the person)"}
	case c.classes != "" && c.employee == 0:
		return &usageError{"erase: --classes goes with --employee"}
	case c.preEmptive && c.employee == 0:
		return &usageError{"erase: --pre-emptive goes with --employee"}
	}
	classes, err := personal.ParseErasable(c.classes)
	if err != nil {
		return &usageError{"erase: " + err.Error()}
	}
	// An employee's id is an account's: erasing 42 of every account would erase other people.
	a, err := oneAccount(cfg, c.account, "erase", "whose warehouse holds the person")
	if err != nil {
		return err
	}
	open := account.OpenExistingWritable // makes no warehouse where there is none
	if c.list {
		open = account.OpenExisting // reads only: a standby can answer it
	}
	store, err := open(ctx, a, a.Logger(cfg.Logger(stderr)))
	if err != nil {
		return err
	}
	defer store.Close()
	switch {
	case c.reapply:
		return reapplyJournal(ctx, a, store, stdout)
	case c.list:
		list, err := store.Erasures(ctx)
		if err != nil {
			return err
		}
		return personal.PrintErasures(stdout, a.LinePrefix(), list)
	case c.lift != 0:
		e, err := store.LiftErasure(ctx, c.lift, strings.TrimSpace(c.reason))
		if err != nil && !errors.Is(err, sink.ErrNotJournaled) {
			return a.Wrap(err)
		}
		personal.PrintLifted(stdout, a.LinePrefix(), e)
		return a.Wrap(err)
	}
	if !c.preEmptive {
		held, err := store.HoldsEmployee(ctx, c.employee)
		if err != nil {
			return a.Wrap(fmt.Errorf("erase: %w", err))
		}
		if !held {
			return a.Wrap(fmt.Errorf("erase: %w", &notHeldError{c.employee}))
		}
	}
	res, err := store.EraseEmployee(ctx, c.employee, classes, strings.TrimSpace(c.reason))
	if err != nil && !errors.Is(err, sink.ErrNotScrubbed) && !errors.Is(err, sink.ErrNotJournaled) {
		return a.Wrap(err)
	}
	if perr := personal.PrintErased(stdout, a.LinePrefix(), c.employee, classes, res); perr != nil {
		return perr
	}
	return a.Wrap(err)
}

// notHeldError is erase --employee of an id the warehouse does not hold, without --pre-emptive:
// most likely a mistyped id, whose erasure would erase nobody now and someone else later.
type notHeldError struct{ id int64 }

func (e *notHeldError) Error() string {
	return fmt.Sprintf("employee %d is not in the warehouse: check the id, or pass --pre-emptive to record an erasure that holds when a sync brings them", e.id)
}

// reapplyJournal is erase --reapply: the warehouse brought up to date with its erasure journal
// (sink.Store.ReapplyJournal), what it did in one line and the rows it changed per table.
func reapplyJournal(ctx context.Context, a *config.Account, store *sink.Store, stdout io.Writer) error {
	path := store.JournalPath()
	if path == "" {
		return a.Wrap(errors.New("erase --reapply: this warehouse has no erasure journal: set warehouse.erasure_journal (docs/operations.md#backup-and-restore)"))
	}
	res, err := store.ReapplyJournal(ctx)
	if err != nil && !errors.Is(err, sink.ErrNotScrubbed) {
		return a.Wrap(err)
	}
	fmt.Fprintf(stdout, "%sre-applied %d erasures and %d lifts of the erasure journal %s\n", a.LinePrefix(), res.Erased, res.Lifted, path)
	if perr := personal.PrintRows(stdout, a.LinePrefix(), res.Rows); perr != nil {
		return perr
	}
	return a.Wrap(err)
}
