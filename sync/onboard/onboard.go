package onboard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/v1"
)

// Upstream is what onboarding needs of the source; *client.Client is one.
type Upstream interface {
	CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error)
	ListEmployees(ctx context.Context, page int64) ([]v1.Employee, *client.Response, error)
}

// Ledger is what onboarding needs of the warehouse; *sink.Store is one.
type Ledger interface {
	OnboardingRows(ctx context.Context, fileHash string) (map[int]sink.OnboardingRow, error)
	CreatedByEmail(ctx context.Context, email string) (sink.OnboardingRow, error)
	PutOnboardingRow(ctx context.Context, r sink.OnboardingRow) error
	ConfirmSending(ctx context.Context, email string, employeeID int64, reason string) error
	EmailTaken(ctx context.Context, email string) (bool, error)
	PutEmployee(ctx context.Context, e v1.Employee) error
	// ErasedEmail is the id of an erasure in force of a person who had the email, or 0: such a
	// person is not onboarded again until it is lifted.
	ErasedEmail(ctx context.Context, email string) (int64, error)
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

// outcomes are the outcomes a run records, each counted on hrsync_onboarding_rows_total from
// the start (Metrics): all of the above but dry runs' would-create. A new outcome goes here too.
var outcomes = []string{OutcomeCreated, OutcomeAlreadyDone, OutcomeSkipped, OutcomeRejected, OutcomeUnresolved}

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
	// Access is who may read the results in the drop folder (processed/, failed/, reports/ and
	// the reports); the zero Access is private. A report beside a file named elsewhere is
	// private whatever it says.
	Access Access
	// NoReportBOM leaves the byte-order mark out of the reports (ReportOptions.NoBOM).
	NoReportBOM bool
	// Notifier, when set, is told of each file of the drop folder filed in processed/ or
	// failed/ (Notifier.Notify); it never holds onboarding up.
	Notifier *Notifier
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

// onboard onboards a file read (ProcessFile past reading it): the rows rejected while reading
// it recorded, each hire planned against the ledger (sent, or settled without sending), the
// creates whose answer was lost resolved, and what is still open marked unresolved.
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
	run := &fileRun{o: o, res: res, done: done, results: make(map[int]RowResult), requests: make(map[int]string)}
	defer func() { // every row of the report counted once, whatever settled it
		for _, r := range run.res.Rows {
			if r.Outcome != OutcomeWouldCreate {
				o.opts.Metrics.row(r.Outcome)
			}
		}
	}()
	if err := run.rejected(ctx, problems); err != nil {
		run.res.Err = err
		return run.res
	}
	for _, h := range hires {
		if run.res.Err = run.plan(ctx, h); run.res.Err != nil {
			break
		}
	}
	if run.res.Err == nil && len(run.unknown) > 0 {
		run.res.Err = o.resolve(ctx, run.res, run.unknown, run.recorder(ctx))
	}
	run.finish(hires)
	withNames(&run.res, f)
	return run.res
}

// hasWarned reports whether warnOnce has met name.
func (o *Onboarder) hasWarned(name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.warned[name]
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
