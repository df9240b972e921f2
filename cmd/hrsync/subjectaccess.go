package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/personal"
	"github.com/hrsync/hrsync/sink"
)

// subjectAccessCommand is hrsync subject-access: everything the warehouse holds about one
// employee (UK/EU GDPR Art. 15, the right of access), as a document a data protection officer
// sends as is (HTML to read and print, JSON and CSV for machines; personal.Subject says what it
// holds). The person is found by id, email or name; several found by an email or a name are
// listed and none exported until one is chosen by id. It prints where it wrote and counts,
// never a value; its errors name no one.
type subjectAccessCommand struct {
	account  string
	employee string
	email    string
	name     string
	out      string
	force    bool
	models   bool
}

func (c *subjectAccessCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.account, "account", "", "the account whose warehouse holds the person (a name from accounts; needed when there are several)")
	fs.StringVar(&c.employee, "employee", "", "the employee's id at the source")
	fs.StringVar(&c.email, "email", "", "find the employee by an email they have or had (case ignored)")
	fs.StringVar(&c.name, "name", "", "find the employee by name (every word a word of their first or last name; case and accents ignored)")
	fs.StringVar(&c.out, "out", ".", "the folder the export is written in")
	fs.BoolVar(&c.force, "force", false, "replace an export of the same employee already in the folder")
	fs.BoolVar(&c.models, "include-models", false, "include the rows of the warehouse's models (figures derived from the records)")
}

// errSeveralMatches is the error of a search that found several people: they are listed, and
// none is exported.
var errSeveralMatches = errors.New("several employees match: choose one with --employee ID")

func (c *subjectAccessCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	given := 0
	for _, s := range []string{c.employee, c.email, c.name} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return &usageError{"subject-access: name the person with one of --employee ID, --email ADDRESS or --name NAME"}
	}
	var id int64
	if c.employee != "" {
		var err error
		id, err = strconv.ParseInt(c.employee, 10, 64)
		if err != nil || id <= 0 {
			return &usageError{fmt.Sprintf("subject-access: --employee %q: want an employee's id, a whole number above 0", c.employee)}
		}
	}
	a, err := oneAccount(cfg, c.account, "subject-access", "whose warehouse holds the person")
	if err != nil {
		return err
	}
	store, err := account.OpenExisting(ctx, a, a.Logger(cfg.Logger(stderr))) // makes no warehouse where there is none
	if err != nil {
		return err
	}
	defer store.Close()
	if id == 0 {
		found, err := store.FindEmployees(ctx, sink.EmployeeQuery{Email: c.email, Name: c.name})
		if err != nil {
			return a.Wrap(fmt.Errorf("subject-access: %w", err))
		}
		switch len(found) {
		case 0:
			by := "--name"
			if c.email != "" {
				by = "--email"
			}
			return a.Wrap(fmt.Errorf("subject-access: no employee in the warehouse matches %s", by))
		case 1:
			id = found[0].ID
		default:
			printMatches(stdout, a.LinePrefix(), found)
			return a.Wrap(fmt.Errorf("subject-access: %d %w", len(found), errSeveralMatches))
		}
	}
	ex := personal.NewExport(c.out, id)
	if !c.force {
		if err := ex.Absent(); err != nil {
			return fmt.Errorf("subject-access: %w", err)
		}
	}
	x, err := store.SubjectAccess(ctx, id)
	if err != nil {
		return a.Wrap(fmt.Errorf("subject-access: %w", err))
	}
	erasures, err := store.Erasures(ctx)
	if err != nil {
		return a.Wrap(fmt.Errorf("subject-access: %w", err))
	}
	now := time.Now()
	leavers, err := store.Leavers(ctx, now)
	if err != nil {
		return a.Wrap(fmt.Errorf("subject-access: %w", err))
	}
	keys, err := personal.KeyReadings(cfg, a)
	if err != nil {
		return fmt.Errorf("subject-access: %w", err)
	}
	in := personal.SubjectInput{Account: a, Export: x, Erasures: erasures, Models: c.models, Now: now, Version: buildVersion(), Keys: keys}
	for _, l := range leavers {
		if l.EmployeeID == id {
			in.Left = l.Left
		}
	}
	doc := personal.NewSubject(in)
	if err := ex.Write(doc, c.force); err != nil {
		return fmt.Errorf("subject-access: %w", err)
	}
	ex.Print(stdout, a.LinePrefix(), doc)
	return nil
}

// printMatches lists the employees a search found, for the operator to choose one by id: the
// terminal's, never a log's.
func printMatches(w io.Writer, prefix string, found []sink.EmployeeMatch) {
	fmt.Fprintf(w, "%s%d employees match; none is exported: choose one with --employee ID\n", prefix, len(found))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tNAME\tDEPARTMENT\tSTATUS\tJOINED\tLEFT")
	for _, m := range found {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Name(), dash(m.Department), dash(m.Status), dash(m.JoinDate), dash(m.LeavingDate))
	}
	_ = tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
