package onboard

import (
	"errors"
)

// RowResult is what happened to one row.
type RowResult struct {
	Line       int
	Email      string
	Outcome    string
	EmployeeID int64
	Reason     string
	// FirstName and LastName are the row's, for a person to find it (as given when the row was
	// rejected, cut short): for reports and the terminal, never logs.
	FirstName, LastName string
}

// FileResult is what happened to one file. Err is set when the file could not be processed as
// a whole (unreadable, wrapping ErrUnreadable; the source refused the key or could not be
// reached): its rows were not all handled.
type FileResult struct {
	Name string
	Hash string
	Rows []RowResult
	Err  error
	// Ignored are the file's columns hrsync does not send (HireFile.Ignored).
	Ignored []string
	// Report is where the file's report was written; "" when none was.
	Report string

	movedTo string // where the drop folder's pass moved the file, relative to the folder
}

// Count returns how many rows had the outcome.
func (r FileResult) Count(outcome string) int {
	n := 0
	for _, x := range r.Rows {
		if x.Outcome == outcome {
			n++
		}
	}
	return n
}

// How a file ends, the outcome label of hrsync_onboarding_files_total (FileResult.Outcome).
const (
	// FileDone: every row created, already done or skipped; the file goes to processed/.
	FileDone = "done"
	// FilePartlyRejected: some rows rejected, the others onboarded; processed/, logged at WARN.
	FilePartlyRejected = "partly-rejected"
	// FileRejected: nobody onboarded (created or already done) and rows rejected; failed/.
	FileRejected = "rejected"
	// FileUnreadable: not a CSV of new hires (a workbook, UTF-16 text, no header, too large),
	// or no rows in it (ErrUnreadable); failed/.
	FileUnreadable = "unreadable"
	// FileUnresolved: rows unresolved, or the file stopped (the source unreachable, the key
	// refused, the warehouse failing); failed/, retried with backoff.
	FileUnresolved = "unresolved"
)

// FileOutcomes are the outcomes of a file, each counted on hrsync_onboarding_files_total from
// the start (Metrics).
var FileOutcomes = []string{FileDone, FilePartlyRejected, FileRejected, FileUnreadable, FileUnresolved}

// Outcome says how the file ended (FileDone, ...).
func (r FileResult) Outcome() string {
	switch {
	case errors.Is(r.Err, ErrUnreadable):
		return FileUnreadable
	case r.Err != nil || r.Count(OutcomeUnresolved) > 0:
		return FileUnresolved
	case r.Count(OutcomeRejected) == 0:
		return FileDone
	case r.Count(OutcomeCreated)+r.Count(OutcomeAlreadyDone)+r.Count(OutcomeWouldCreate) == 0:
		return FileRejected
	}
	return FilePartlyRejected
}

// Failed reports whether the file is not finished: a row is unresolved, the file could not be
// read or holds no rows, or nobody could be onboarded from it because its rows were rejected.
func (r FileResult) Failed() bool {
	switch r.Outcome() {
	case FileUnreadable, FileUnresolved, FileRejected:
		return true
	}
	return false
}

// forContent reports whether the file failed for what it holds (unreadable, or every row
// rejected): sending it again as it is will not help; a corrected file, or other onboarding
// settings, will.
func (r FileResult) forContent() bool {
	o := r.Outcome()
	return o == FileUnreadable || o == FileRejected
}
