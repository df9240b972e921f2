package onboardreport

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sync/onboard"
)

// TestPrintFile: a run's summary counts each outcome and folds its error onto the line; the rows
// to act on follow, with their person and reason made safe for a terminal, the created ones left
// out; then where the report is.
func TestPrintFile(t *testing.T) {
	r := onboard.FileResult{Name: "march.csv", Err: errors.New("source\nunreachable"), Report: "processed/march.csv.report.csv", Rows: []onboard.RowResult{
		{Line: 2, Outcome: onboard.OutcomeCreated, FirstName: "Ann", LastName: "Lee", Email: "ann@example.com"},
		{Line: 3, Outcome: onboard.OutcomeRejected, FirstName: "Bo\x1b[31m", Reason: "no start date"},
		{Line: 4, Outcome: onboard.OutcomeUnresolved, Email: "cy@example.com", Reason: "timeout"},
		{Line: 5, Outcome: onboard.OutcomeAlreadyDone, Email: "di@example.com"},
	}}
	var b bytes.Buffer
	PrintFile(&b, r, false)
	want := "march.csv: 1 created, 1 already done, 0 skipped, 1 rejected, 1 unresolved — source; unreachable\n" +
		"  line 3: rejected: Bo?[31m: no start date\n" +
		"  line 4: unresolved: cy@example.com: timeout\n" +
		"  report: processed/march.csv.report.csv\n"
	if b.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", b.String(), want)
	}
}

// TestPrintFileDryRun: a dry run counts what would be created, shows rows already done, and
// its error on a line of its own; past maxRowsPrinted rows it says how many more the report
// has.
func TestPrintFileDryRun(t *testing.T) {
	r := onboard.FileResult{Name: "big.csv", Err: errors.New("bad header")}
	for i := range maxRowsPrinted + 3 {
		r.Rows = append(r.Rows, onboard.RowResult{Line: i + 2, Outcome: onboard.OutcomeAlreadyDone, FirstName: "Ann", LastName: "Lee", Email: "a@x"})
	}
	r.Rows = append(r.Rows, onboard.RowResult{Line: 99, Outcome: onboard.OutcomeWouldCreate})
	var b bytes.Buffer
	PrintFile(&b, r, true)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if lines[0] != "big.csv (dry run): 1 valid, 53 already done, 0 skipped, 0 rejected" || lines[1] != "  bad header" {
		t.Errorf("summary %q %q", lines[0], lines[1])
	}
	if lines[2] != "  line 2: already-done: Ann Lee <a@x>: " || len(lines) != 2+maxRowsPrinted+1 || lines[len(lines)-1] != "  … 3 more rows in the report" {
		t.Errorf("%d lines, the first row %q, the last line %q", len(lines), lines[2], lines[len(lines)-1])
	}
}

// TestPrintSummaryNamesSafely: a file's name and its error, as the drop folder has them, are
// made safe for a terminal as cells are: no escape sequence, no line of their own.
func TestPrintSummaryNamesSafely(t *testing.T) {
	r := onboard.FileResult{Name: "a\x1b[2J\nb.csv", Err: errors.New("read a\x1b[2J\nb.csv: gone"), Report: "processed/a\x1b[2J\nb.result.csv"}
	for _, dry := range []bool{false, true} {
		var b bytes.Buffer
		PrintFile(&b, r, dry)
		if strings.ContainsAny(b.String(), "\x1b") || !strings.Contains(b.String(), "a?[2J?b.csv") || !strings.Contains(b.String(), "report: processed/a?[2J?b.result.csv\n") {
			t.Errorf("dry run %v: printed %q", dry, b.String())
		}
	}
}
