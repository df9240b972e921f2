// Package onboard creates new hires in the source from CSV files, each row exactly once: it
// reads the files as spreadsheets write them (ReadHires), plans and sends the creates against a
// ledger in the warehouse, writes a report per file, and moves the files of a drop folder to
// processed/ or failed/. A pass of the folder (Pass) is the onboard command's, once, and the
// worker's job (Job), run by the sync package's job runner every poll interval, which also
// retries the files in failed/ with backoff (FailedRetries).
package onboard

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source"
	"github.com/hrsync/hrsync/source/v1"
)

// Upstream is what onboarding needs of the source; *source.Client is one.
type Upstream interface {
	CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error)
	ListEmployees(ctx context.Context, page int64) ([]v1.Employee, *source.Response, error)
}

// Ledger is what onboarding needs of the warehouse; *sink.Store is one.
type Ledger interface {
	OnboardingRows(ctx context.Context, fileHash string) (map[int]sink.OnboardingRow, error)
	CreatedByEmail(ctx context.Context, email string) (sink.OnboardingRow, error)
	PutOnboardingRow(ctx context.Context, r sink.OnboardingRow) error
	ConfirmSending(ctx context.Context, email string, employeeID int64, reason string) error
	EmailTaken(ctx context.Context, email string) (bool, error)
	PutEmployee(ctx context.Context, e v1.Employee) error
}

// Row outcomes in a report. A row is done when it is created, already done, skipped or rejected;
// an unresolved row is one a later run must finish (its create was not sent, or not confirmed).
const (
	// OutcomeCreated: this run confirmed the create (answered, or found at the source by email
	// after the answer was lost, in this run or an earlier one).
	OutcomeCreated = "created"
	// OutcomeAlreadyDone: an earlier run confirmed the person's create, from this file or another.
	OutcomeAlreadyDone = "already-done"
	OutcomeSkipped     = "skipped"
	OutcomeRejected    = "rejected"
	// OutcomeUnresolved: not done yet; the ledger keeps it, and the next run that meets the
	// person (this file again, a re-export, another file) looks them up and creates them at
	// most once.
	OutcomeUnresolved  = "unresolved"
	OutcomeWouldCreate = "would-create" // dry runs only
)

// Outcomes are the outcomes a run records, each counted on hrsync_onboarding_rows_total from
// the start (Metrics): all of the above but dry runs' would-create. A new outcome goes here too.
var Outcomes = []string{OutcomeCreated, OutcomeAlreadyDone, OutcomeSkipped, OutcomeRejected, OutcomeUnresolved}

// ErrUnreadable marks a file that could not be read as a CSV of new hires: sending it again will
// not help, a corrected file will.
var ErrUnreadable = errors.New("the file cannot be read")

// ErrNoHires is a file with a header and no rows below it (or only blank ones): nobody to
// onboard. It is one of ErrUnreadable's (errors.Is): a corrected file is needed.
var ErrNoHires error = noHires{}

type noHires struct{}

func (noHires) Error() string {
	return "the file has a header but no rows of new hires below it: add them, or drop the file that has them"
}

func (noHires) Is(target error) bool { return target == ErrUnreadable }

// DefaultMaxFileBytes is Options.MaxFileBytes when it is not set: 16 MiB, over a hundred
// thousand new hires' rows.
const DefaultMaxFileBytes = 16 << 20

// FileTooLargeError is a file larger than Options.MaxFileBytes; it is refused without being read
// (past the limit, when it grew while being read). It comes wrapped in ErrUnreadable.
type FileTooLargeError struct {
	Size  int64 // the file's size; 0 when it is only known to be over the limit
	Limit int64
}

func (e *FileTooLargeError) Error() string {
	what := "the file grew over the limit of " + byteCount(e.Limit) + " while it was read"
	if e.Size > 0 {
		what = "the file is " + byteCount(e.Size) + ", over the limit of " + byteCount(e.Limit)
	}
	return what + " (onboarding.max_file_bytes, HRSYNC_ONBOARDING_MAX_FILE_BYTES): split it into smaller files, or raise the limit"
}

// byteCount writes n as people read it, and exactly: "16 MiB (16777216 bytes)".
func byteCount(n int64) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, units := float64(n)/(1<<10), []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for v >= 1<<10 && i < len(units)-1 {
		v /= 1 << 10
		i++
	}
	return fmt.Sprintf("%s %s (%d bytes)", strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0"), units[i], n)
}

// sizeLimit reads r, failing with a FileTooLargeError once more than limit bytes come.
type sizeLimit struct {
	r     io.Reader
	left  int64
	limit int64
}

func (l *sizeLimit) Read(p []byte) (int, error) {
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		n, l.left = int(l.left), 0
		return n, &FileTooLargeError{Limit: l.limit}
	}
	l.left -= int64(n)
	return n, err
}

// Options configures an Onboarder.
type Options struct {
	// DryRun validates and reports; nothing is sent or written.
	DryRun bool
	// DateLayout is how the files write join dates (see HireOptions).
	DateLayout string
	// ResolveRounds bounds the look-up-then-retry rounds for creates whose outcome is unknown
	// (default 3).
	ResolveRounds int
	// Folder is the drop folder, if any: the report of a file named to ProcessPath that lies in
	// it goes to Folder/reports, where the folder scan does not look.
	Folder string
	// MaxFileBytes bounds a file's size (when 0 or less, DefaultMaxFileBytes): a larger one is
	// not read (a FileTooLargeError, unreadable).
	MaxFileBytes int64
	// Metrics counts the rows by outcome (hrsync_onboarding_rows_total); nil records nothing.
	Metrics *Metrics
	Logger  *slog.Logger
}

// Onboarder creates the new hires of CSV files in the source, each row exactly once.
type Onboarder struct {
	up   Upstream
	st   Ledger
	opts Options
	log  *slog.Logger

	mu     sync.Mutex
	warned map[string]bool // entries of the drop folder left alone and said so (warnOnce)
}

// New returns an Onboarder. For a dry run, up and st may be nil: a dry run sends nothing, and
// without a ledger (no warehouse) it checks the files alone, every valid row would-create.
func New(up Upstream, st Ledger, opts Options) *Onboarder {
	if st == nil {
		st = fileOnly{}
	}
	if opts.ResolveRounds <= 0 {
		opts.ResolveRounds = 3
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Onboarder{up: up, st: st, opts: opts, log: opts.Logger}
}

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

// ProcessFile onboards one file's rows. A row counts as done only once its create is confirmed:
// answered, or its person found at the source by email. The ledger records each row before its
// create is sent and after it is answered, so a crash, a retry, or the same person dropped again
// (the same file, a re-export whose bytes differ, another file) creates nobody twice: a create
// whose answer never came, in this run or an earlier one, is resolved by looking the person up in
// the source by email before anything is sent again.
func (o *Onboarder) ProcessFile(ctx context.Context, name string, data []byte) FileResult {
	f, hash, err := o.read(bytes.NewReader(data), int64(len(data)))
	return o.onboard(ctx, name, hash, f, err)
}

// read reads a file of size bytes from r, row by row, hashing its bytes as they go by; a file
// over the size limit is refused before it is read (and while, if it grows).
func (o *Onboarder) read(r io.Reader, size int64) (HireFile, string, error) {
	limit := o.opts.MaxFileBytes
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	if size > limit {
		return HireFile{}, "", &FileTooLargeError{Size: size, Limit: limit}
	}
	sum := sha256.New()
	f, err := ReadHireFile(io.TeeReader(&sizeLimit{r: r, left: limit, limit: limit}, sum), HireOptions{DateLayout: o.opts.DateLayout})
	return f, hex.EncodeToString(sum.Sum(nil)), err
}

// onboard onboards a file read (ProcessFile past reading it).
func (o *Onboarder) onboard(ctx context.Context, name, hash string, f HireFile, err error) FileResult {
	res := FileResult{Name: name, Hash: hash}
	if err != nil {
		res.Err = fmt.Errorf("%w: %w", ErrUnreadable, err)
		return res
	}
	if res.Ignored = f.Ignored; len(f.Ignored) > 0 {
		o.log.Info("onboarding: the file has columns hrsync does not send; they are named in its report", "file", name, "columns", strings.Join(f.Ignored, ", "))
	}
	hires, problems := f.Hires, f.Problems
	if len(hires) == 0 && len(problems) == 0 {
		res.Err = ErrNoHires
		return res
	}
	done, err := o.st.OnboardingRows(ctx, res.Hash)
	if err != nil {
		res.Err = err
		return res
	}
	results := make(map[int]RowResult)
	defer func() { // every row of the report counted once, whatever settled it
		for _, r := range res.Rows {
			if r.Outcome != OutcomeWouldCreate {
				o.opts.Metrics.row(r.Outcome)
			}
		}
	}()
	// requests are the hashes of the creates sent (v1.NewEmployee.Hash), by line: a refusal
	// the source answers is kept with its request, which is not sent again as it is.
	requests := make(map[int]string)
	record := func(r RowResult, status string) error {
		results[r.Line] = r
		if o.opts.DryRun || status == "" {
			return nil
		}
		row := sink.OnboardingRow{FileHash: res.Hash, FileName: name, Line: r.Line,
			Email: r.Email, Status: status, EmployeeID: r.EmployeeID, Reason: r.Reason}
		if status == sink.RowRejected || status == sink.RowSkipped {
			row.RequestHash = requests[r.Line] // set only once the row was sent
		}
		return o.st.PutOnboardingRow(ctx, row)
	}
	for _, p := range problems {
		outcome, status := OutcomeRejected, sink.RowRejected
		if p.Duplicate {
			outcome, status = OutcomeSkipped, sink.RowSkipped
		}
		r := RowResult{Line: p.Line, Email: p.Email, Outcome: outcome, Reason: p.Reason}
		if prev, ok := done[p.Line]; ok && (prev.Status == sink.RowCreated || prev.Status == sink.RowSending) {
			// Read as it is now (other settings), the row is not valid, but its create went
			// out before: the ledger keeps that, so the person is never sent twice.
			status = ""
			if prev.Status == sink.RowCreated {
				r.Outcome, r.EmployeeID = OutcomeAlreadyDone, prev.EmployeeID
				r.Reason = "onboarded by an earlier run (read now, the row is not valid: " + p.Reason + ")"
			}
		}
		if err := record(r, status); err != nil {
			res.Err = err
			return res
		}
	}
	var unknown []unanswered // sent, answer lost: resolved by looking up
	// plan settles one hire from the ledger, or sends it; an error stops the file.
	plan := func(h Hire) error {
		email := h.Employee.Email
		// The person, by email, in the whole ledger: confirmed, or sent without an answer.
		prev, err := o.st.CreatedByEmail(ctx, email)
		switch {
		case err == nil && prev.Status == sink.RowCreated:
			r := RowResult{Line: h.Line, Email: email, Outcome: OutcomeAlreadyDone, EmployeeID: prev.EmployeeID,
				Reason: fmt.Sprintf("already onboarded from %s line %d", prev.FileName, prev.Line)}
			if prev.FileHash == res.Hash && prev.Line == h.Line {
				r.Reason = "onboarded by an earlier run"
				results[h.Line] = r
				return nil
			}
			return record(r, sink.RowSkipped)
		case err == nil: // sending: the create's answer never came, here or in another file
			if o.opts.DryRun {
				_ = record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeWouldCreate,
					Reason: "dry run: an earlier create was never confirmed; a run looks the person up before sending"}, "")
				return nil
			}
			requests[h.Line] = h.Employee.Hash()
			unknown = append(unknown, unanswered{Hire: h, earlier: true})
			return nil
		case !errors.Is(err, v1.ErrNotFound):
			return err
		}
		// Only a create confirmed (above) is done for good. A row rejected or skipped before is
		// looked at again: read again from the bytes (its problems are above), checked again
		// against the warehouse, and sent again unless the source refused this very request.
		taken, err := o.st.EmailTaken(ctx, email)
		if err != nil {
			return err
		}
		if taken {
			return record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeSkipped, Reason: "an employee with this email already exists"}, sink.RowSkipped)
		}
		if p, ok := done[h.Line]; ok && refusedBefore(p, h) {
			results[h.Line] = RowResult{Line: h.Line, Email: email, Outcome: p.Status, EmployeeID: p.EmployeeID,
				Reason: p.Reason + " (the source's answer to this same row before: change the row, or the onboarding settings, to send it again)"}
			return nil
		}
		if o.opts.DryRun {
			_ = record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeWouldCreate, Reason: "dry run: valid, not sent"}, "")
			return nil
		}
		requests[h.Line] = h.Employee.Hash()
		// Durable before the request goes out: a crash from here on leaves "sending", which the
		// next run that meets the person resolves by looking them up first.
		if err := o.st.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: res.Hash, FileName: name, Line: h.Line,
			Email: email, Status: sink.RowSending}); err != nil {
			return err
		}
		ambiguous, err := o.send(ctx, res, h, record)
		if err == nil && ambiguous {
			unknown = append(unknown, unanswered{Hire: h})
		}
		return err
	}
	for _, h := range hires {
		if res.Err = plan(h); res.Err != nil {
			break
		}
	}
	if res.Err == nil && len(unknown) > 0 {
		res.Err = o.resolve(ctx, res, unknown, record)
	}
	for _, u := range unknown {
		if _, ok := results[u.Line]; !ok {
			// Still unknown: the ledger keeps the person as sending, so the next run that meets
			// them looks them up again before anything is sent.
			reason := "sent, but the source did not answer and the person could not be found yet; the next run looks them up again"
			if res.Err != nil {
				reason += " (" + oneLine(res.Err.Error()) + ")"
			}
			results[u.Line] = RowResult{Line: u.Line, Email: u.Employee.Email, Outcome: OutcomeUnresolved, Reason: reason}
		}
	}
	for _, h := range hires {
		if _, ok := results[h.Line]; !ok && res.Err != nil {
			results[h.Line] = RowResult{Line: h.Line, Email: h.Employee.Email, Outcome: OutcomeUnresolved, Reason: "not sent: " + oneLine(res.Err.Error())}
		}
	}
	for _, r := range results {
		res.Rows = append(res.Rows, r)
	}
	slices.SortFunc(res.Rows, func(a, b RowResult) int { return a.Line - b.Line })
	withNames(&res, f)
	return res
}

// refusedBefore reports whether the ledger row is the source's refusal (422: rejected, or
// skipped because it has the email) of the very create h would send now: the same file bytes
// read with the same settings. A row rejected while reading has no request, so it is never
// refused before: it is read again.
func refusedBefore(p sink.OnboardingRow, h Hire) bool {
	return (p.Status == sink.RowRejected || p.Status == sink.RowSkipped) && p.RequestHash != "" && p.RequestHash == h.Employee.Hash()
}

// send creates one hire; ambiguous is true when the outcome is unknown. A file-level stop (the
// key refused, the source unreachable, the run canceled) is the error.
func (o *Onboarder) send(ctx context.Context, file FileResult, h Hire, record func(RowResult, string) error) (ambiguous bool, err error) {
	email := h.Employee.Email
	e, err := o.up.CreateEmployee(ctx, h.Employee)
	var verr *v1.ValidationError
	var rl *v1.RateLimitError
	switch {
	case err == nil:
		return false, o.confirmed(ctx, h, e, "", record)
	case errors.As(err, &verr):
		outcome, status, reason := OutcomeRejected, sink.RowRejected, "the source refused it: "+problemsOf(verr)
		if taken(verr) {
			outcome, status, reason = OutcomeSkipped, sink.RowSkipped, "the source already has this email"
		}
		return false, record(RowResult{Line: h.Line, Email: email, Outcome: outcome, Reason: reason}, status)
	case errors.Is(err, v1.ErrUnauthorized):
		// Refused, so nothing was created: the row can be sent again once the key is fixed.
		_ = record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeUnresolved, Reason: "not sent: the source refused the API key"}, sink.RowFailed)
		return false, fmt.Errorf("%w: fix source.api_key; %s stays in the folder", err, file.Name)
	case errors.As(err, &rl):
		// A 429 means not processed: safe to send again on the next run.
		return false, record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeUnresolved, Reason: "not sent: the source's rate limit; the next run sends it"}, sink.RowFailed)
	case ctx.Err() != nil:
		return true, ctx.Err()
	case notSent(err):
		// Nothing reached the source (the client already retried the dial): the rest of the
		// file would meet the same, so it stops here, and the next run sends the row again.
		if rerr := record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeUnresolved,
			Reason: "not sent: the source could not be reached; the next run sends it"}, sink.RowFailed); rerr != nil {
			return false, rerr
		}
		return false, fmt.Errorf("the source could not be reached: %w", err)
	default:
		o.log.Warn("create: no answer; looking the person up before sending again", "line", h.Line, "err", err)
		return true, nil
	}
}

// notSent reports whether a create failed before anything was sent: the connection could not be
// made (refused, no route, a name that does not resolve).
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// confirmed records a hire whose person is at the source as e, and settles every other row of
// theirs still sending, in any file.
func (o *Onboarder) confirmed(ctx context.Context, h Hire, e v1.Employee, reason string, record func(RowResult, string) error) error {
	if perr := o.st.PutEmployee(ctx, e); perr != nil {
		o.log.Warn("store a created employee; the next sync brings it", "employee_id", e.ID, "err", perr)
	}
	if err := record(RowResult{Line: h.Line, Email: h.Employee.Email, Outcome: OutcomeCreated, EmployeeID: e.ID, Reason: reason}, sink.RowCreated); err != nil {
		return err
	}
	return o.st.ConfirmSending(ctx, h.Employee.Email, e.ID, "confirmed by a later row of the same person")
}

// unanswered is a hire whose create had no answer; earlier: an earlier run sent it.
type unanswered struct {
	Hire
	earlier bool
}

// resolve looks up the hires whose create had no answer: found, they were created; not found,
// they are sent once more, for a bounded number of rounds.
func (o *Onboarder) resolve(ctx context.Context, file FileResult, unknown []unanswered, record func(RowResult, string) error) error {
	pending := unknown
	for round := 0; round < o.opts.ResolveRounds && len(pending) > 0; round++ {
		want := make(map[string]bool, len(pending))
		for _, u := range pending {
			want[strings.ToLower(u.Employee.Email)] = true
		}
		found, err := o.lookup(ctx, want)
		if err != nil {
			return fmt.Errorf("look up unanswered creates: %w", err)
		}
		var again []unanswered
		for _, u := range pending {
			if e, ok := found[strings.ToLower(u.Employee.Email)]; ok {
				reason := "confirmed by looking it up after the answer was lost"
				if u.earlier {
					reason = "sent by an earlier run whose answer was lost; confirmed by looking it up"
				}
				if err := o.confirmed(ctx, u.Hire, e, reason, record); err != nil {
					return err
				}
				continue
			}
			ambiguous, err := o.send(ctx, file, u.Hire, record)
			if err != nil {
				return err
			}
			if ambiguous {
				again = append(again, u)
			}
		}
		pending = again
	}
	return nil
}

// lookup walks the source's employees for the wanted emails (the interface has no search), and
// stops as soon as all are found.
func (o *Onboarder) lookup(ctx context.Context, want map[string]bool) (map[string]v1.Employee, error) {
	found := make(map[string]v1.Employee)
	for page := int64(1); ; page++ {
		es, resp, err := o.up.ListEmployees(ctx, page)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if k := strings.ToLower(e.Email); want[k] {
				found[k] = e
			}
		}
		last := resp.Total >= 0 && page*v1.MaxPerPage >= resp.Total
		if len(es) == 0 || len(found) == len(want) || last {
			return found, nil
		}
	}
}

// taken reports whether the source refused a create because the email is in use.
func taken(v *v1.ValidationError) bool {
	inUse := func(reason string) bool {
		reason = strings.ToLower(reason)
		return strings.Contains(reason, "taken") || strings.Contains(reason, "exists")
	}
	return slices.ContainsFunc(v.Problems, func(p v1.FieldProblem) bool {
		return strings.Contains(p.Field, "email") && slices.ContainsFunc(p.Reasons, inUse)
	})
}

func problemsOf(v *v1.ValidationError) string {
	var parts []string
	for _, p := range v.Problems {
		f := strings.TrimSuffix(strings.TrimPrefix(p.Field, "employee["), "]")
		parts = append(parts, f+": "+strings.Join(p.Reasons, ", "))
	}
	return strings.Join(parts, "; ")
}

// ReportHeader are the columns of a report, in order: scripts read them by position, so new ones
// go at the end.
var ReportHeader = []string{"row", "email", "outcome", "employee_id", "reason", "first_name", "last_name"}

// OutcomeColumnsNotSent is the outcome of a report's line, first after the header, naming the
// columns of the file that hrsync does not send; it has no row number.
const OutcomeColumnsNotSent = "columns-not-sent"

// WriteReport writes a file's per-row report as CSV (ReportHeader), every cell safe to open in a
// spreadsheet. The report is private (0600, whatever the umask),
// written beside its final name and renamed over it; a link in its place is replaced, never
// followed.
func WriteReport(path string, r FileResult) error {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	defer root.Close()
	return writeReport(root, filepath.Base(path), r)
}

// writeReport is WriteReport to name in root.
func writeReport(root *os.Root, name string, r FileResult) error {
	err := writePrivate(root, name, func(out io.Writer) error {
		bw := bufio.NewWriter(out)
		w := csv.NewWriter(bw)
		_ = w.Write(ReportHeader)
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

// Modes of what onboarding creates: its files and folders hold personal data, so only the
// account hrsync runs as may read them, whatever the umask.
const (
	privateFile   fs.FileMode = 0o600
	privateFolder fs.FileMode = 0o700
)

// writePrivate writes a new file of mode privateFile with write, then renames it over name in
// root. The temporary file is made anew (O_EXCL): a link left in its place is removed, never
// followed.
func writePrivate(root *os.Root, name string, write func(io.Writer) error) error {
	tmp := name + ".tmp"
	if err := root.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privateFile)
	if err != nil {
		return err
	}
	err = f.Chmod(privateFile) // the umask may have taken bits off
	if err == nil {
		err = write(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}

// LinkedFolderError is a folder onboarding writes to (processed/, failed/, reports/) that is a
// symbolic link, or not a folder: hrsync does not follow it, so personal data never lands where
// a link points.
type LinkedFolderError struct {
	Path string
	Link bool // a symbolic link; else something that is not a folder
}

func (e *LinkedFolderError) Error() string {
	if e.Link {
		return fmt.Sprintf("onboarding folder: %s is a symbolic link; hrsync does not follow links where it moves files and writes reports: make it a real folder", e.Path)
	}
	return fmt.Sprintf("onboarding folder: %s is not a folder: move it away", e.Path)
}

// checkFolder refuses name in root when it exists and is a link or not a folder; exists tells
// whether it does.
func checkFolder(root *os.Root, name string) (exists bool, err error) {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("onboarding folder: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return true, &LinkedFolderError{Path: filepath.Join(root.Name(), name), Link: true}
	case !fi.IsDir():
		return true, &LinkedFolderError{Path: filepath.Join(root.Name(), name)}
	}
	return true, nil
}

// privateFolderIn makes sure name in root is a folder, not a link: one that is missing is made
// with mode privateFolder, whatever the umask (one that exists keeps the mode it has).
func privateFolderIn(root *os.Root, name string) error {
	exists, err := checkFolder(root, name)
	if err != nil || exists {
		return err
	}
	if err := root.Mkdir(name, privateFolder); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("onboarding folder: %w", err)
	}
	if _, err := checkFolder(root, name); err != nil { // made by another process meanwhile
		return err
	}
	if err := root.Chmod(name, privateFolder); err != nil {
		return fmt.Errorf("onboarding folder: %w", err)
	}
	return nil
}

// checkFolders refuses a drop folder whose processed/ or failed/ is a link or not a folder,
// before any of its files is read.
func checkFolders(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("onboarding folder: %w", err)
	}
	defer root.Close()
	for _, name := range []string{processedDir, failedDir} {
		if _, err := checkFolder(root, name); err != nil {
			return err
		}
	}
	return nil
}

// IgnoredName reports whether a file in the drop folder (or in its failed/) is left alone: a
// name that is never a person's file but a program's while it works, kept there only while it
// does. These are dotfiles (hidden files: .DS_Store, rsync's .name.XXXXXX while it copies,
// LibreOffice's .~lock.name# while a document is open); Office's owner files, ~$name.xlsx,
// while a workbook is open; Windows Explorer's Thumbs.db and desktop.ini; and files still being
// downloaded or copied, renamed when complete: *.tmp, *.part, *.partial, *.crdownload (Chrome),
// *.download (Safari). Every other regular file is taken.
func IgnoredName(name string) bool {
	lower := strings.ToLower(name)
	switch {
	case strings.HasPrefix(name, "."), strings.HasPrefix(name, "~$"), lower == "thumbs.db", lower == "desktop.ini":
		return true
	}
	for _, ext := range []string{".tmp", ".part", ".partial", ".crdownload", ".download"} {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// ProcessDir onboards the complete files in dir: every regular file but those IgnoredName
// leaves alone, unchanged for settle (a file still being written is left for the next pass). A
// file that is not a CSV of new hires (a workbook, UTF-16 text, anything else) is taken too: it
// goes to failed/ with a report saying what it is and how to save it as CSV. A file that ends inside its last row
// (no line ending, or inside a quoted cell) waits until it has been unchanged for another settle
// period, in case its writer is not done: then the rows before go ahead and that row is
// rejected. Each goes to processed/ (or failed/, when a row is unresolved or the file could not
// be read) with its report beside it; a file stopped by a refused key or a canceled run stays
// where it is.
func (o *Onboarder) ProcessDir(ctx context.Context, dir string, settle time.Duration) ([]FileResult, error) {
	if err := checkFolders(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("onboarding folder: %w", err)
	}
	var results []FileResult
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || IgnoredName(name) {
			continue
		}
		info, err := ent.Info()
		if err != nil {
			continue
		}
		if !info.Mode().IsRegular() {
			o.warnOnce(name, "onboarding: an entry of the drop folder is not a regular file (a symbolic link?) and is left alone: hrsync follows no links there; copy the file itself in",
				"file", name, "mode", info.Mode().Type().String())
			continue
		}
		if time.Since(info.ModTime()) < settle {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		r, held, err := o.processPath(ctx, filepath.Join(dir, name), dir, settle)
		if err != nil {
			return results, err
		}
		if !held {
			results = append(results, r)
		}
	}
	return results, nil
}

// FailedFiles lists the files waiting in dir/failed (not their reports, nor the names
// IgnoredName leaves alone), by name.
func FailedFiles(dir string) ([]string, error) {
	if err := checkFolders(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, failedDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("onboarding folder: %w", err)
	}
	reports := make(map[string]bool, len(entries))
	for _, ent := range entries {
		reports[strings.ToLower(reportPath(ent.Name()))] = true
	}
	var files []string
	for _, ent := range entries {
		name := ent.Name()
		// x.result.csv beside x.csv, or x.xlsx.result.csv beside x.xlsx, is x's report.
		if !ent.Type().IsRegular() || IgnoredName(name) || reports[strings.ToLower(name)] {
			continue
		}
		files = append(files, name)
	}
	return files, nil
}

// RetryFailed onboards the files in dir/failed again (those due says to, when due is set): the
// ledger resumes each where it stopped. A file that is now finished goes to processed/ with its
// report; one that is not stays in failed/ with its report brought up to date.
func (o *Onboarder) RetryFailed(ctx context.Context, dir string, due func(name string) bool) ([]FileResult, error) {
	names, err := FailedFiles(dir)
	if err != nil {
		return nil, err
	}
	return o.retryFailed(ctx, dir, names, due)
}

// retryFailed is RetryFailed of the names FailedFiles listed.
func (o *Onboarder) retryFailed(ctx context.Context, dir string, names []string, due func(name string) bool) ([]FileResult, error) {
	var results []FileResult
	for _, name := range names {
		if ctx.Err() != nil {
			break
		}
		if due != nil && !due(name) {
			continue
		}
		r, err := o.ProcessPath(ctx, filepath.Join(dir, failedDir, name), dir)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

const (
	processedDir = "processed"
	failedDir    = "failed"
	reportsDir   = "reports"
	reportSuffix = ".result.csv"
)

// ProcessPath onboards one named file; with moveTo set (the drop folder), it moves the file and
// its report into moveTo/processed or moveTo/failed (a file retried from failed/ that is still
// not finished stays there), else it writes the report beside the file, or in Folder/reports
// when the file lies in the drop folder. A dry run, a canceled run or a refused key leaves the
// file where it is. A last row the file ends inside is rejected at once. The folders it makes
// are private (0700) and so are the reports and the files it moves (0600); a processed/,
// failed/ or reports/ folder that is a symbolic link is refused (LinkedFolderError), and nothing
// it does in moveTo follows a link out of it.
func (o *Onboarder) ProcessPath(ctx context.Context, path, moveTo string) (FileResult, error) {
	r, _, err := o.processPath(ctx, path, moveTo, -1)
	return r, err
}

// processPath is ProcessPath; settle, when not negative, is the drop folder's: a file that
// changes while it is read, or ends inside its last row and has not been unchanged for twice
// settle, is left where it is, untouched (held).
func (o *Onboarder) processPath(ctx context.Context, path, moveTo string, settle time.Duration) (r FileResult, held bool, err error) {
	name := filepath.Base(path)
	var root *os.Root // moveTo, when set
	rel := name       // path in root
	if moveTo != "" {
		if rel, err = filepath.Rel(moveTo, path); err != nil || !filepath.IsLocal(rel) {
			return FileResult{Name: name, Err: fmt.Errorf("%s is not in the onboarding folder", name)}, false, fmt.Errorf("read %s: not in the onboarding folder %s", name, moveTo)
		}
		if root, err = os.OpenRoot(moveTo); err != nil {
			return FileResult{Name: name, Err: err}, false, fmt.Errorf("onboarding folder: %w", err)
		}
		defer root.Close()
	}
	var f *os.File
	if root != nil {
		f, err = root.Open(rel)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return FileResult{Name: name, Err: err}, false, fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return FileResult{Name: name, Err: err}, false, fmt.Errorf("read %s: %w", name, err)
	}
	if !before.Mode().IsRegular() {
		err := fmt.Errorf("%s is not a regular file", name)
		return FileResult{Name: name, Err: err}, false, fmt.Errorf("read %s: %w", name, err)
	}
	file, hash, rerr := o.read(f, before.Size())
	if settle >= 0 {
		after, err := f.Stat()
		if err != nil || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
			o.log.Info("onboarding: a file changed while it was read; it waits for the next pass", "file", name)
			return FileResult{Name: name}, true, nil
		}
		if file.Cut > 0 && time.Since(after.ModTime()) < 2*settle {
			o.log.Info("onboarding: a file ends inside its last row (no line ending, or inside a quoted cell); it waits another settle period in case it is still being written, then that row is rejected",
				"file", name, "line", file.Cut)
			return FileResult{Name: name}, true, nil
		}
	}
	r = o.onboard(ctx, name, hash, file, rerr)
	if !o.opts.DryRun && ctx.Err() == nil {
		o.opts.Metrics.file(r.Outcome())
	}
	stays := o.opts.DryRun || ctx.Err() != nil || errors.Is(r.Err, v1.ErrUnauthorized)
	if moveTo == "" { // a file named on the command line
		r.Report, err = o.writeNamedReport(path, r)
		o.logFile(r, r.Report)
		return r, false, err
	}
	if stays {
		o.logFile(r, "")
		// Nothing is written into the drop folder for a file that stays there: a report
		// there would be taken for a new file on the next pass.
		return r, false, nil
	}
	dest := processedDir
	if r.Failed() {
		dest = failedDir
	}
	from := filepath.Dir(rel)
	if from == dest { // retried from failed/ and still not finished
		r.movedTo = rel
		r.Report = filepath.Join(moveTo, reportPath(rel))
		o.logFile(r, reportPath(rel))
		return r, false, writeReport(root, reportPath(rel), r)
	}
	if err := privateFolderIn(root, dest); err != nil {
		return r, false, err
	}
	target := freeName(root, dest, name)
	r.Report = filepath.Join(moveTo, reportPath(target))
	if err := writeReport(root, reportPath(target), r); err != nil {
		return r, false, err
	}
	r.movedTo = target
	o.logFile(r, reportPath(target))
	// The file keeps its mode when it moves: it is made private first (on the file opened, so
	// no link is followed). A file of another account's cannot be: processed/ and failed/ are.
	if err := f.Chmod(privateFile); err != nil {
		o.log.Warn("onboarding: a file's mode cannot be made private (0600); the folder it moves to is", "file", name, "err", err)
	}
	if err := root.Rename(rel, target); err != nil {
		return r, false, fmt.Errorf("move %s: %w", name, err)
	}
	if from == failedDir { // finished from failed/: its old report goes
		if err := root.Remove(reportPath(rel)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return r, false, fmt.Errorf("remove the old report of %s: %w", name, err)
		}
	}
	return r, false, nil
}

// freeName is where a file named name goes in dest: dest/name, or, when that or its report is
// taken (the same name dropped before), dest/name with the time before its extension.
func freeName(root *os.Root, dest, name string) string {
	free := func(p string) bool {
		_, err1 := root.Lstat(p)
		_, err2 := root.Lstat(reportPath(p))
		return errors.Is(err1, fs.ErrNotExist) && errors.Is(err2, fs.ErrNotExist)
	}
	target := filepath.Join(dest, name)
	stem, ext := strings.TrimSuffix(name, filepath.Ext(name)), filepath.Ext(name)
	stamp := time.Now().UTC().Format("20060102T150405")
	for i := 1; !free(target) && i < 1000; i++ {
		if i == 1 {
			target = filepath.Join(dest, stem+"."+stamp+ext)
		} else {
			target = filepath.Join(dest, fmt.Sprintf("%s.%s-%d%s", stem, stamp, i, ext))
		}
	}
	return target
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

// warnOnce logs msg at WARN the first time this Onboarder meets name.
func (o *Onboarder) warnOnce(name, msg string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.warned == nil {
		o.warned = make(map[string]bool)
	}
	if !o.warned[name] {
		o.warned[name] = true
		o.log.Warn(msg, args...)
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
		report := filepath.Join(dir, base+suffix)
		return report, WriteReport(report, r)
	}
	root, err := os.OpenRoot(o.opts.Folder)
	if err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	defer root.Close()
	if err := privateFolderIn(root, reportsDir); err != nil {
		return "", err
	}
	report := filepath.Join(reportsDir, base+suffix)
	return filepath.Join(o.opts.Folder, report), writeReport(root, report, r)
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

// sameDir reports whether a and b name the same existing folder.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ai, err := os.Stat(a)
	if err != nil {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && os.SameFile(ai, bi)
}

// Retrying files in failed/ on the worker's own: the first try a minute after the file is first
// seen there, then, while rows are unresolved, twice as long each time, at most an hour apart,
// FailedRetryAttempts tries in all (about a day). After that, `hrsync onboard --retry-failed`
// finishes it. A file that failed for its content (unreadable, or nobody onboarded because its
// rows were rejected) is not retried by the process that failed it: the same bytes with the
// same settings fail the same way, and a corrected file is dropped anew. The state lives in the
// process: a restarted worker (with new settings, say onboarding.date_layout) gives every file
// in failed/ one try a minute after it starts, which is local for a file failed for its
// content (the source is asked only about rows whose create changed), and the fix applies
// without anyone moving files.
const (
	FailedRetryInitial  = time.Minute
	FailedRetryMax      = time.Hour
	FailedRetryAttempts = 30
)

// FailedRetries is the backoff of the worker's retries of the files in failed/. The zero value
// uses the defaults above and the wall clock. It is not safe for concurrent use.
type FailedRetries struct {
	Initial, Max time.Duration
	Attempts     int
	Now          func() time.Time

	files map[string]*failedRetry
}

type failedRetry struct {
	tries   int
	next    time.Time
	stopped bool
}

func (b *FailedRetries) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Due reports whether the file in failed/ is to be retried now; the first call for a name
// starts its backoff.
func (b *FailedRetries) Due(name string) bool {
	if b.files == nil {
		b.files = make(map[string]*failedRetry)
	}
	f, ok := b.files[name]
	if !ok {
		f = &failedRetry{next: b.now().Add(cmp.Or(b.Initial, FailedRetryInitial))}
		b.files[name] = f
	}
	return !f.stopped && !b.now().Before(f.next)
}

// Tried records a retry's result: the next is due twice as late, up to Max; after Attempts, or
// when the file cannot be read, there is none. It reports whether the retries of the file
// stopped with this one (it is left to a person).
func (b *FailedRetries) Tried(name string, r FileResult) (stopped bool) {
	f, ok := b.files[name]
	if !ok || !r.Failed() {
		delete(b.files, name) // finished (moved to processed/), or not ours
		return false
	}
	if r.forContent() {
		// Tried once more (the first retry of a file this process did not fail itself, with
		// its settings): the same bytes and settings fail the same way.
		f.stopped = true
		return true
	}
	f.tries++
	initial, maxWait, attempts := cmp.Or(b.Initial, FailedRetryInitial), cmp.Or(b.Max, FailedRetryMax), cmp.Or(b.Attempts, FailedRetryAttempts)
	wait := initial
	for i := 0; i < f.tries && wait < maxWait; i++ {
		wait *= 2
	}
	wait = min(wait, maxWait)
	f.next = b.now().Add(wait)
	f.stopped = f.tries >= attempts
	return f.stopped
}

// settle stops the timed retries of a file put in failed/ for its content by this process.
func (b *FailedRetries) settle(name string) {
	if b.files == nil {
		b.files = make(map[string]*failedRetry)
	}
	b.files[name] = &failedRetry{stopped: true}
}

// Forget drops the state of names no longer in failed/.
func (b *FailedRetries) Forget(present []string) {
	keep := make(map[string]bool, len(present))
	for _, n := range present {
		keep[n] = true
	}
	for n := range b.files {
		if !keep[n] {
			delete(b.files, n)
		}
	}
}
