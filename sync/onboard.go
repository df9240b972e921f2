package sync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source"
)

// Upstream is what onboarding needs of the source; *source.Client is one.
type Upstream interface {
	CreateEmployee(ctx context.Context, ne source.NewEmployee) (source.Employee, error)
	ListEmployees(ctx context.Context, page int64) ([]source.Employee, *source.Response, error)
}

// Ledger is what onboarding needs of the warehouse; *sink.Store is one.
type Ledger interface {
	OnboardingRows(ctx context.Context, fileHash string) (map[int]sink.OnboardingRow, error)
	CreatedByEmail(ctx context.Context, email string) (sink.OnboardingRow, error)
	PutOnboardingRow(ctx context.Context, r sink.OnboardingRow) error
	EmailTaken(ctx context.Context, email string) (bool, error)
	PutEmployee(ctx context.Context, e source.Employee) error
}

// Row outcomes in a report.
const (
	OutcomeCreated     = "created"
	OutcomeSkipped     = "skipped"
	OutcomeRejected    = "rejected"
	OutcomeFailed      = "failed"
	OutcomeWouldCreate = "would-create" // dry runs only
)

// OnboardOptions configures an Onboarder.
type OnboardOptions struct {
	// DryRun validates and reports; nothing is sent or written.
	DryRun bool
	// DateLayout is one more accepted join date layout (see HireOptions).
	DateLayout string
	// ResolveRounds bounds the look-up-then-retry rounds for creates whose outcome is unknown
	// (default 3).
	ResolveRounds int
	Metrics       *Metrics
	Logger        *slog.Logger
}

// Onboarder creates the new hires of CSV files in the source, each row exactly once.
type Onboarder struct {
	up   Upstream
	st   Ledger
	opts OnboardOptions
	log  *slog.Logger
}

// NewOnboarder returns an Onboarder.
func NewOnboarder(up Upstream, st Ledger, opts OnboardOptions) *Onboarder {
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
}

// FileResult is what happened to one file. Err is set when the file could not be processed as
// a whole (unreadable; the source refused the key): its rows were not all handled.
type FileResult struct {
	Name string
	Hash string
	Rows []RowResult
	Err  error
}

// Failed reports whether any row failed or the file could not be read.
func (r FileResult) Failed() bool {
	return r.Err != nil || slices.ContainsFunc(r.Rows, func(x RowResult) bool { return x.Outcome == OutcomeFailed })
}

// ProcessFile onboards one file's rows. The ledger records each row before its create is sent
// and after it is answered, so a crash, a retry, or the same file dropped again creates nobody
// twice; an answer lost on the way back (a timeout, a dropped connection) is resolved by looking
// the person up in the source by email before anything is sent again.
func (o *Onboarder) ProcessFile(ctx context.Context, name string, data []byte) FileResult {
	sum := sha256.Sum256(data)
	res := FileResult{Name: name, Hash: hex.EncodeToString(sum[:])}
	hires, problems, err := ReadHires(bytes.NewReader(data), HireOptions{DateLayout: o.opts.DateLayout})
	if err != nil {
		res.Err = err
		return res
	}
	done, err := o.st.OnboardingRows(ctx, res.Hash)
	if err != nil {
		res.Err = err
		return res
	}
	results := make(map[int]RowResult)
	record := func(r RowResult, status string) error {
		results[r.Line] = r
		o.opts.Metrics.onboarded(r.Outcome)
		if o.opts.DryRun || status == "" {
			return nil
		}
		return o.st.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: res.Hash, FileName: name, Line: r.Line,
			Email: r.Email, Status: status, EmployeeID: r.EmployeeID, Reason: r.Reason})
	}
	for _, p := range problems {
		outcome, status := OutcomeRejected, sink.RowRejected
		if p.Duplicate {
			outcome, status = OutcomeSkipped, sink.RowSkipped
		}
		if err := record(RowResult{Line: p.Line, Email: p.Email, Outcome: outcome, Reason: p.Reason}, status); err != nil {
			res.Err = err
			return res
		}
	}
	var unknown []Hire // sent, answer lost: resolved by looking up
	for _, h := range hires {
		email := h.Employee.Email
		if prev, ok := done[h.Line]; ok {
			switch prev.Status {
			case sink.RowCreated, sink.RowSkipped, sink.RowRejected:
				results[h.Line] = RowResult{Line: h.Line, Email: email, Outcome: prev.Status, EmployeeID: prev.EmployeeID,
					Reason: strings.TrimPrefix(prev.Reason+" (done before)", " ")}
				continue
			case sink.RowSending:
				unknown = append(unknown, h) // a run stopped between sending and the answer
				continue
			}
		}
		if prev, err := o.st.CreatedByEmail(ctx, email); err == nil && !(prev.FileHash == res.Hash && prev.Line == h.Line) {
			r := RowResult{Line: h.Line, Email: email, Outcome: OutcomeSkipped, EmployeeID: prev.EmployeeID,
				Reason: fmt.Sprintf("already onboarded from %s line %d", prev.FileName, prev.Line)}
			if err := record(r, sink.RowSkipped); err != nil {
				res.Err = err
				return res
			}
			continue
		} else if err != nil && !errors.Is(err, source.ErrNotFound) {
			res.Err = err
			return res
		}
		taken, err := o.st.EmailTaken(ctx, email)
		if err != nil {
			res.Err = err
			return res
		}
		if taken {
			if err := record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeSkipped, Reason: "an employee with this email already exists"}, sink.RowSkipped); err != nil {
				res.Err = err
				return res
			}
			continue
		}
		if o.opts.DryRun {
			_ = record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeWouldCreate, Reason: "dry run: valid, not sent"}, "")
			continue
		}
		// Durable before the request goes out: a crash from here on leaves "sending", which the
		// next run resolves by looking the person up first.
		if err := o.st.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: res.Hash, FileName: name, Line: h.Line,
			Email: email, Status: sink.RowSending}); err != nil {
			res.Err = err
			return res
		}
		ambiguous, err := o.send(ctx, res, h, record)
		if err != nil {
			res.Err = err
			break
		}
		if ambiguous {
			unknown = append(unknown, h)
		}
	}
	if res.Err == nil && len(unknown) > 0 {
		res.Err = o.resolve(ctx, res, unknown, record)
	}
	for _, h := range unknown {
		if _, ok := results[h.Line]; !ok {
			// Still unknown: the ledger keeps the row as sending, so the next run looks it up
			// again before anything is sent.
			results[h.Line] = RowResult{Line: h.Line, Email: h.Employee.Email, Outcome: OutcomeFailed,
				Reason: "the source did not answer and the person could not be found yet; the next run checks again"}
		}
	}
	for _, h := range hires {
		if _, ok := results[h.Line]; !ok && res.Err != nil {
			results[h.Line] = RowResult{Line: h.Line, Email: h.Employee.Email, Outcome: OutcomeFailed, Reason: "not sent: " + oneLine(res.Err.Error())}
		}
	}
	for _, r := range results {
		res.Rows = append(res.Rows, r)
	}
	slices.SortFunc(res.Rows, func(a, b RowResult) int { return a.Line - b.Line })
	return res
}

// send creates one hire; ambiguous is true when the outcome is unknown. A file-level stop (the
// key refused, the run canceled) is the error.
func (o *Onboarder) send(ctx context.Context, file FileResult, h Hire, record func(RowResult, string) error) (ambiguous bool, err error) {
	email := h.Employee.Email
	e, err := o.up.CreateEmployee(ctx, h.Employee)
	var verr *source.ValidationError
	var rl *source.RateLimitError
	switch {
	case err == nil:
		if perr := o.st.PutEmployee(ctx, e); perr != nil {
			o.log.Warn("store a created employee; the next sync brings it", "employee_id", e.ID, "err", perr)
		}
		return false, record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeCreated, EmployeeID: e.ID}, sink.RowCreated)
	case errors.As(err, &verr):
		outcome, status, reason := OutcomeRejected, sink.RowRejected, "the source refused it: "+problemsOf(verr)
		if taken(verr) {
			outcome, status, reason = OutcomeSkipped, sink.RowSkipped, "the source already has this email"
		}
		return false, record(RowResult{Line: h.Line, Email: email, Outcome: outcome, Reason: reason}, status)
	case errors.Is(err, source.ErrUnauthorized):
		// Refused, so nothing was created: the row can be sent again once the key is fixed.
		_ = record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeFailed, Reason: "not sent: the source refused the API key"}, sink.RowFailed)
		return false, fmt.Errorf("the source refused the API key (%w): fix source.api_key; %s stays in the folder", source.ErrUnauthorized, file.Name)
	case errors.As(err, &rl):
		// A 429 means not processed: safe to send again on the next run.
		return false, record(RowResult{Line: h.Line, Email: email, Outcome: OutcomeFailed, Reason: "not sent: the source's rate limit; the next run sends it"}, sink.RowFailed)
	case ctx.Err() != nil:
		return true, ctx.Err()
	default:
		o.log.Warn("create: no answer; looking the person up before sending again", "line", h.Line, "err", err)
		return true, nil
	}
}

// resolve looks up the hires whose create had no answer: found, they were created; not found,
// they are sent once more, for a bounded number of rounds.
func (o *Onboarder) resolve(ctx context.Context, file FileResult, unknown []Hire, record func(RowResult, string) error) error {
	pending := slices.Clone(unknown)
	for round := 0; round < o.opts.ResolveRounds && len(pending) > 0; round++ {
		want := make(map[string]bool, len(pending))
		for _, h := range pending {
			want[strings.ToLower(h.Employee.Email)] = true
		}
		found, err := o.lookup(ctx, want)
		if err != nil {
			return fmt.Errorf("look up unanswered creates: %w", err)
		}
		var again []Hire
		for _, h := range pending {
			if e, ok := found[strings.ToLower(h.Employee.Email)]; ok {
				if perr := o.st.PutEmployee(ctx, e); perr != nil {
					o.log.Warn("store a created employee; the next sync brings it", "employee_id", e.ID, "err", perr)
				}
				if err := record(RowResult{Line: h.Line, Email: h.Employee.Email, Outcome: OutcomeCreated, EmployeeID: e.ID,
					Reason: "confirmed by looking it up after the answer was lost"}, sink.RowCreated); err != nil {
					return err
				}
				continue
			}
			ambiguous, err := o.send(ctx, file, h, record)
			if err != nil {
				return err
			}
			if ambiguous {
				again = append(again, h)
			}
		}
		pending = again
	}
	return nil
}

// lookup walks the source's employees for the wanted emails (the interface has no search), and
// stops as soon as all are found.
func (o *Onboarder) lookup(ctx context.Context, want map[string]bool) (map[string]source.Employee, error) {
	found := make(map[string]source.Employee)
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
		last := resp.Total >= 0 && page*source.MaxPerPage >= resp.Total
		if len(es) == 0 || len(found) == len(want) || last {
			return found, nil
		}
	}
}

func taken(v *source.ValidationError) bool {
	for _, p := range v.Problems {
		if strings.Contains(p.Field, "email") {
			for _, r := range p.Reasons {
				if strings.Contains(strings.ToLower(r), "taken") || strings.Contains(strings.ToLower(r), "exists") {
					return true
				}
			}
		}
	}
	return false
}

func problemsOf(v *source.ValidationError) string {
	var parts []string
	for _, p := range v.Problems {
		f := strings.TrimSuffix(strings.TrimPrefix(p.Field, "employee["), "]")
		parts = append(parts, f+": "+strings.Join(p.Reasons, ", "))
	}
	return strings.Join(parts, "; ")
}

// WriteReport writes a file's per-row report as CSV (row, email, outcome, employee_id, reason),
// every cell safe to open in a spreadsheet.
func WriteReport(path string, r FileResult) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"row", "email", "outcome", "employee_id", "reason"})
	if r.Err != nil && len(r.Rows) == 0 {
		_ = w.Write([]string{"", "", OutcomeFailed, "", SafeCell(oneLine(r.Err.Error()))})
	}
	for _, x := range r.Rows {
		id := ""
		if x.EmployeeID > 0 {
			id = strconv.FormatInt(x.EmployeeID, 10)
		}
		_ = w.Write([]string{strconv.Itoa(x.Line), SafeCell(x.Email), x.Outcome, id, SafeCell(x.Reason)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// ProcessDir onboards the complete CSV files in dir: *.csv, not dotfiles, unchanged for settle
// (a file still being written is left for the next pass). Each goes to processed/ (or failed/,
// when a row failed or the file could not be read) with its report beside it; a file stopped by
// a refused key or a canceled run stays where it is.
func (o *Onboarder) ProcessDir(ctx context.Context, dir string, settle time.Duration) ([]FileResult, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("onboarding folder: %w", err)
	}
	var results []FileResult
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || strings.HasPrefix(name, ".") || !strings.EqualFold(filepath.Ext(name), ".csv") {
			continue
		}
		info, err := ent.Info()
		if err != nil || !info.Mode().IsRegular() || time.Since(info.ModTime()) < settle {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		r, err := o.ProcessPath(ctx, filepath.Join(dir, name), dir)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

// ProcessPath onboards one named file; with moveTo set (the drop folder), it moves the file and
// its report into moveTo/processed or moveTo/failed, else it writes the report beside the file.
// A dry run, a canceled run or a refused key leaves the file where it is.
func (o *Onboarder) ProcessPath(ctx context.Context, path, moveTo string) (FileResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return FileResult{Name: filepath.Base(path), Err: err}, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	name := filepath.Base(path)
	r := o.ProcessFile(ctx, name, data)
	o.log.Info("onboarding file", "file", name, "rows", len(r.Rows), "failed", r.Failed(), "err", r.Err)
	stays := o.opts.DryRun || ctx.Err() != nil || errors.Is(r.Err, source.ErrUnauthorized)
	if moveTo == "" { // a file named on the command line: its report beside it
		report := path + ".result.csv"
		if o.opts.DryRun {
			report = path + ".dry-run.csv"
		}
		return r, WriteReport(report, r)
	}
	if stays {
		// Nothing is written into the drop folder for a file that stays there: a report
		// there would be taken for a new file on the next pass.
		return r, nil
	}
	dest := filepath.Join(moveTo, "processed")
	if r.Failed() {
		dest = filepath.Join(moveTo, "failed")
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return r, fmt.Errorf("onboarding folder: %w", err)
	}
	target := filepath.Join(dest, name)
	if _, err := os.Stat(target); err == nil { // the same name dropped before
		target = filepath.Join(dest, strings.TrimSuffix(name, filepath.Ext(name))+"."+time.Now().UTC().Format("20060102T150405")+filepath.Ext(name))
	}
	if err := WriteReport(strings.TrimSuffix(target, filepath.Ext(target))+".result.csv", r); err != nil {
		return r, err
	}
	if err := os.Rename(path, target); err != nil {
		return r, fmt.Errorf("move %s: %w", name, err)
	}
	return r, nil
}
