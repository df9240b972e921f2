package onboard

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// reportHeader are the columns of a report, in order: scripts read them by position, so new ones
// go at the end.
var reportHeader = []string{"row", "email", "outcome", "employee_id", "reason", "first_name", "last_name"}

// OutcomeColumnsNotSent is the outcome of a report's line, first after the header, naming the
// columns of the file that hrsync does not send; it has no row number.
const OutcomeColumnsNotSent = "columns-not-sent"

// BOM is the byte-order mark a report begins with (ReportOptions.NoBOM leaves it out): UTF-8's,
// which tells Excel the file is UTF-8. Without it Excel opens a CSV in the machine's legacy code
// page and shows "Zoë Brontë" as "ZoÃ« BrontÃ«". CSV readers that know UTF-8 skip it (Python's
// utf-8-sig, pandas, LibreOffice); a script reading the first column's name by hand strips it.
const BOM = "\ufeff"

// ReportOptions is how a report is written.
type ReportOptions struct {
	// NoBOM leaves out the byte-order mark (onboarding.report_bom: false).
	NoBOM bool
	// Access is who may read it; the zero Access is private (0600).
	Access Access
}

// WriteReport writes a file's per-row report as CSV (reportHeader) in UTF-8, beginning with a
// byte-order mark unless opts.NoBOM, every cell safe to open in a spreadsheet. The report has
// opts.Access (private, 0600, by default) whatever the umask, written beside its final name and
// renamed over it; a link in its place is replaced, never followed.
func WriteReport(path string, r FileResult, opts ReportOptions) error {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	defer root.Close()
	return writeReport(root, filepath.Base(path), r, opts)
}

// writeReport writes the report of a file of the drop folder to name in root, as the
// onboarder's options say.
func (o *Onboarder) writeReport(root *os.Root, name string, r FileResult) error {
	return writeReport(root, name, r, ReportOptions{NoBOM: o.opts.NoReportBOM, Access: o.opts.Access})
}

// writeReport is WriteReport to name in root.
func writeReport(root *os.Root, name string, r FileResult, opts ReportOptions) error {
	err := writePrivate(root, name, opts.Access, func(out io.Writer) error {
		bw := bufio.NewWriter(out)
		if !opts.NoBOM {
			_, _ = bw.WriteString(BOM)
		}
		w := csv.NewWriter(bw)
		_ = w.Write(reportHeader)
		if len(r.Ignored) > 0 {
			_ = w.Write([]string{"", "", OutcomeColumnsNotSent, "", SafeCell(ColumnsNotSent(r.Ignored)), "", ""})
		}
		if r.Err != nil && len(r.Rows) == 0 {
			outcome := OutcomeUnresolved
			if errors.Is(r.Err, ErrUnreadable) {
				outcome = "unreadable"
			}
			_ = w.Write([]string{"", "", outcome, "", SafeCell(oneLine(r.Err.Error())), "", ""})
		}
		for _, x := range r.Rows {
			id := ""
			if x.EmployeeID > 0 {
				id = strconv.FormatInt(x.EmployeeID, 10)
			}
			_ = w.Write([]string{strconv.Itoa(x.Line), SafeCell(x.Email), x.Outcome, id, SafeCell(x.Reason), SafeCell(x.FirstName), SafeCell(x.LastName)})
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// logFile logs how a file ended, at WARN when something in it needs a person: what happened,
// the counts, and its report (relative to the drop folder; "" when it has none there). Never a
// name or email: those are in the report.
func (o *Onboarder) logFile(r FileResult, report string) {
	args := []any{"file", r.Name, "outcome", r.Outcome(), "created", r.Count(OutcomeCreated), "already_done", r.Count(OutcomeAlreadyDone),
		"skipped", r.Count(OutcomeSkipped), "rejected", r.Count(OutcomeRejected), "unresolved", r.Count(OutcomeUnresolved)}
	if report != "" {
		args = append(args, "report", report)
	}
	if r.Err != nil {
		args = append(args, "err", oneLine(r.Err.Error()))
	}
	if o.opts.DryRun {
		o.log.Info("onboarding file (dry run)", args...)
		return
	}
	switch r.Outcome() {
	case FileDone:
		o.log.Info("onboarding file", args...)
	case FilePartlyRejected:
		o.log.Warn("onboarding: rows of a file were rejected, the others went ahead: see its report, correct those rows and drop them again", args...)
	case FileRejected:
		o.log.Warn("onboarding: nobody could be onboarded from a file: its rows were rejected; it is in failed/ with its report: correct the rows (or the onboarding settings) and drop it again", args...)
	case FileUnreadable:
		o.log.Warn("onboarding: a file is not a CSV of new hires; it is in failed/ with its report saying why and how to fix it", args...)
	default:
		o.log.Warn("onboarding: rows of a file are unresolved; it is retried with backoff (hrsync onboard --retry-failed finishes it once the cause is fixed)", args...)
	}
}

// writeNamedReport writes the report of a file named on the command line beside it
// (<file>.result.csv, or <file>.dry-run.csv for a dry run), or, when the file lies in the drop
// folder, in its reports/ folder, where the folder scan never takes a report for a new file. It
// returns the report's path.
func (o *Onboarder) writeNamedReport(path string, r FileResult) (string, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	suffix := ".result.csv"
	if o.opts.DryRun {
		suffix = ".dry-run.csv"
	}
	if o.opts.Folder == "" || !sameDir(dir, o.opts.Folder) {
		// Beside a file named elsewhere: private, whatever the drop folder's results are.
		report := filepath.Join(dir, base+suffix)
		return report, WriteReport(report, r, ReportOptions{NoBOM: o.opts.NoReportBOM})
	}
	root, err := os.OpenRoot(o.opts.Folder)
	if err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	defer root.Close()
	if err := privateFolderIn(root, reportsDir, o.opts.Access); err != nil {
		return "", err
	}
	report := filepath.Join(reportsDir, base+suffix)
	return filepath.Join(o.opts.Folder, report), o.writeReport(root, report, r)
}

// reportPath is the report beside a file in processed/ or failed/: x.csv → x.result.csv, and
// a file of another kind keeps its whole name, x.xlsx → x.xlsx.result.csv, so that x.csv and
// x.xlsx dropped together get a report each.
func reportPath(file string) string {
	if ext := filepath.Ext(file); strings.EqualFold(ext, ".csv") {
		return strings.TrimSuffix(file, ext) + reportSuffix
	}
	return file + reportSuffix
}
