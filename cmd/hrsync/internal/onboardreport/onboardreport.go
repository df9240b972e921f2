// Package onboardreport is what `hrsync onboard` (and the demo's onboarding step) prints about
// each file of new hires: its counts on one line, then each row a person has to act on or know
// of, with its person and reason, made safe for a terminal, and where the file's report is.
package onboardreport

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sync/onboard"
)

// maxRowsPrinted bounds the rows printed of one file: the report has them all.
const maxRowsPrinted = 50

// PrintFile prints a file's summary, then each row a person has to act on or know of (a dry
// run's: every row not valid; a run's: rejected, unresolved and skipped) with its person and
// reason, the columns not sent, and where the report is.
func PrintFile(w io.Writer, r onboard.FileResult, dryRun bool) {
	PrintSummary(w, r, dryRun)
	shown := 0
	for _, x := range r.Rows {
		switch x.Outcome {
		case onboard.OutcomeRejected, onboard.OutcomeUnresolved, onboard.OutcomeSkipped:
		case onboard.OutcomeAlreadyDone:
			if !dryRun {
				continue
			}
		default:
			continue
		}
		if shown++; shown > maxRowsPrinted {
			continue
		}
		fmt.Fprintf(w, "  line %d: %s: %s%s\n", x.Line, x.Outcome, person(x), terminalSafe(x.Reason))
	}
	if shown > maxRowsPrinted {
		fmt.Fprintf(w, "  … %d more rows in the report\n", shown-maxRowsPrinted)
	}
	if len(r.Ignored) > 0 {
		fmt.Fprintf(w, "  %s\n", terminalSafe(onboard.ColumnsNotSent(r.Ignored)))
	}
	if r.Report != "" {
		fmt.Fprintf(w, "  report: %s\n", terminalSafe(r.Report))
	}
}

// PrintSummary prints a file's counts on one line (a dry run's error on the next). The file's
// name, as the drop folder has it, is made safe for a terminal, as cells are.
func PrintSummary(w io.Writer, r onboard.FileResult, dryRun bool) {
	if dryRun {
		fmt.Fprintf(w, "%s (dry run): %d valid, %d already done, %d skipped, %d rejected\n", terminalSafe(r.Name), r.Count(onboard.OutcomeWouldCreate),
			r.Count(onboard.OutcomeAlreadyDone), r.Count(onboard.OutcomeSkipped), r.Count(onboard.OutcomeRejected))
		if r.Err != nil {
			fmt.Fprintf(w, "  %s\n", terminalSafe(config.OneLine(r.Err.Error())))
		}
		return
	}
	fmt.Fprintf(w, "%s: %d created, %d already done, %d skipped, %d rejected, %d unresolved", terminalSafe(r.Name), r.Count(onboard.OutcomeCreated),
		r.Count(onboard.OutcomeAlreadyDone), r.Count(onboard.OutcomeSkipped), r.Count(onboard.OutcomeRejected), r.Count(onboard.OutcomeUnresolved))
	if r.Err != nil {
		fmt.Fprintf(w, " — %s", terminalSafe(config.OneLine(r.Err.Error())))
	}
	fmt.Fprintln(w)
}

// person names a row's person for the terminal: "Ann Lee <ann@example.com>: ", or what of it
// the row has.
func person(x onboard.RowResult) string {
	name := strings.TrimSpace(x.FirstName + " " + x.LastName)
	switch {
	case name != "" && x.Email != "":
		name += " <" + x.Email + ">"
	case name == "":
		name = x.Email
	}
	if name == "" {
		return ""
	}
	return terminalSafe(name) + ": "
}

// terminalSafe replaces what a terminal would act on (escape sequences, line breaks) in text
// from a file or naming one: cells, file names, paths and errors.
func terminalSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s)
}
