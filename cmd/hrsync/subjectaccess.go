package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/personal"
)

// subjectAccessCommand is hrsync subject-access: everything the warehouse holds about one
// employee (UK/EU GDPR Art. 15, the right of access), as one JSON document and a CSV file per
// table (sink.Store.SubjectAccess says what is searched, and what is left out: other people's
// data). It prints where it wrote and how many rows of each table, never a value.
type subjectAccessCommand struct {
	account  string
	employee string
	out      string
	force    bool
}

func (c *subjectAccessCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.account, "account", "", "the account whose warehouse holds the person (a name from accounts; needed when there are several)")
	fs.StringVar(&c.employee, "employee", "", "the employee's id at the source (required)")
	fs.StringVar(&c.out, "out", ".", "the folder the export is written in")
	fs.BoolVar(&c.force, "force", false, "replace an export of the same employee already in the folder")
}

func (c *subjectAccessCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	if c.employee == "" {
		return &usageError{"subject-access: name the employee with --employee ID"}
	}
	id, err := strconv.ParseInt(c.employee, 10, 64)
	if err != nil || id <= 0 {
		return &usageError{fmt.Sprintf("subject-access: --employee %q: want an employee's id, a whole number above 0", c.employee)}
	}
	a, err := personAccount(cfg, c.account, "subject-access")
	if err != nil {
		return err
	}
	ex := personal.NewExport(c.out, id)
	if !c.force {
		if err := ex.Absent(); err != nil {
			return fmt.Errorf("subject-access: %w", err)
		}
	}
	store, err := openExisting(ctx, a, a.Logger(cfg.Logger(stderr))) // makes no warehouse where there is none
	if err != nil {
		return err
	}
	defer store.Close()
	x, err := store.SubjectAccess(ctx, id)
	if err != nil {
		return a.Wrap(fmt.Errorf("subject-access: %w", err))
	}
	doc, err := personal.Document(a, x, time.Now(), buildVersion())
	if err != nil {
		return fmt.Errorf("subject-access: %w", err)
	}
	if err := ex.Write(doc, x.Tables, c.force); err != nil {
		return fmt.Errorf("subject-access: %w", err)
	}
	ex.Print(stdout, a.LinePrefix(), x)
	return nil
}
