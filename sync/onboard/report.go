package onboard

import (
	"context"
	"errors"
	"strings"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/v1"
)

// What a report says of a file beyond its rows' outcomes: the people, and the columns not sent.

// sentColumns names, for people, the columns hrsync sends.
const sentColumns = "first name, last name, email, job title and join date"

// maxColumnsNamed bounds the columns ColumnsNotSent names.
const maxColumnsNamed = 20

// ColumnsNotSent says which columns of a file hrsync does not send: one line of column names,
// never cells, for a report, the terminal and the log.
func ColumnsNotSent(columns []string) string {
	named := columns
	more := ""
	if len(named) > maxColumnsNamed {
		named, more = named[:maxColumnsNamed], ", …"
	}
	quoted := make([]string, len(named))
	for i, c := range named {
		quoted[i] = `"` + c + `"`
	}
	return oneLine("columns not sent (hrsync sends only " + sentColumns + "): " + strings.Join(quoted, ", ") + more)
}

// withNames gives the rows of res the names of their people, from the file read: a hire's as
// validated, a rejected row's as given.
func withNames(res *FileResult, f HireFile) {
	type names struct{ first, last string }
	byLine := make(map[int]names, len(f.Hires)+len(f.Problems))
	for _, h := range f.Hires {
		byLine[h.Line] = names{cut(h.Employee.FirstName, maxNameBytes), cut(h.Employee.LastName, maxNameBytes)}
	}
	for _, p := range f.Problems {
		byLine[p.Line] = names{p.FirstName, p.LastName}
	}
	for i := range res.Rows {
		if n, ok := byLine[res.Rows[i].Line]; ok {
			res.Rows[i].FirstName, res.Rows[i].LastName = n.first, n.last
		}
	}
}

// errNoLedger is what fileOnly says to anything but a dry run's questions.
var errNoLedger = errors.New("onboarding without a warehouse: only a dry run can")

// fileOnly is the ledger of a dry run without a warehouse: it knows nobody, so each file is
// checked alone.
type fileOnly struct{}

func (fileOnly) OnboardingRows(context.Context, string) (map[int]sink.OnboardingRow, error) {
	return nil, nil
}

func (fileOnly) CreatedByEmail(context.Context, string) (sink.OnboardingRow, error) {
	return sink.OnboardingRow{}, v1.ErrNotFound
}

func (fileOnly) EmailTaken(context.Context, string) (bool, error) { return false, nil }

func (fileOnly) PutOnboardingRow(context.Context, sink.OnboardingRow) error { return errNoLedger }

func (fileOnly) ConfirmSending(context.Context, string, int64, string) error { return errNoLedger }

func (fileOnly) PutEmployee(context.Context, v1.Employee) error { return errNoLedger }
