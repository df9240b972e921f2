package onboard

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/v1"
)

// fileRun is the onboarding of one file read: what its rows have come to so far, and the
// creates sent whose answer was lost.
type fileRun struct {
	o   *Onboarder
	res FileResult
	// done are the ledger's rows of the file (its bytes), by line, from earlier runs.
	done map[int]sink.OnboardingRow
	// results are the rows settled, by line.
	results map[int]RowResult
	// requests are the hashes of the creates sent (v1.NewEmployee.Hash), by line: a refusal
	// the source answers is kept with its request, which is not sent again as it is.
	requests map[int]string
	unknown  []unanswered // sent, answer lost: resolved by looking up
}

// record settles a row, and unless status is "" (or it is a dry run) keeps it in the ledger
// with that status.
func (fr *fileRun) record(ctx context.Context, r RowResult, status string) error {
	fr.results[r.Line] = r
	if fr.o.opts.DryRun || status == "" {
		return nil
	}
	row := sink.OnboardingRow{FileHash: fr.res.Hash, FileName: fr.res.Name, Line: r.Line,
		Email: r.Email, Status: status, EmployeeID: r.EmployeeID, Reason: r.Reason}
	if status == sink.RowRejected || status == sink.RowSkipped {
		row.RequestHash = fr.requests[r.Line] // set only once the row was sent
	}
	return fr.o.st.PutOnboardingRow(ctx, row)
}

// recorder is record as send and resolve take it.
func (fr *fileRun) recorder(ctx context.Context) func(RowResult, string) error {
	return func(r RowResult, status string) error { return fr.record(ctx, r, status) }
}

// rejected records the rows rejected (or skipped as duplicates) while reading the file.
func (fr *fileRun) rejected(ctx context.Context, problems []RowProblem) error {
	for _, p := range problems {
		outcome, status := OutcomeRejected, sink.RowRejected
		if p.Duplicate {
			outcome, status = OutcomeSkipped, sink.RowSkipped
		}
		r := RowResult{Line: p.Line, Email: p.Email, Outcome: outcome, Reason: p.Reason}
		if prev, ok := fr.done[p.Line]; ok && (prev.Status == sink.RowCreated || prev.Status == sink.RowSending) {
			// Read as it is now (other settings), the row is not valid, but its create went
			// out before: the ledger keeps that, so the person is never sent twice.
			status = ""
			if prev.Status == sink.RowCreated {
				r.Outcome, r.EmployeeID = OutcomeAlreadyDone, prev.EmployeeID
				r.Reason = "onboarded by an earlier run (read now, the row is not valid: " + p.Reason + ")"
			}
		}
		if err := fr.record(ctx, r, status); err != nil {
			return err
		}
	}
	return nil
}

// erasedReason is a report's reason for a hire not sent because an erasure in force was made
// of the person (sink.Store.ErasedEmail).
func erasedReason(erasure int64) string {
	return fmt.Sprintf("this person's data was erased (erasure %d); lift the erasure (hrsync erase --lift %d --reason ...) to onboard them again", erasure, erasure)
}

// plan settles one hire from the ledger, or sends it; an error stops the file.
func (fr *fileRun) plan(ctx context.Context, h Hire) error {
	o := fr.o
	email := h.Employee.Email
	prevRow, seen := fr.done[h.Line]
	// A person erased is not onboarded again, from this file, a re-export or another, until the
	// erasure is lifted: asked before anything could send or look them up. The ledger keeps the
	// row skipped, without their email or request; a row of this line that created or sent
	// them stays as it is, so that once the erasure is lifted they are still not sent twice.
	erasure, err := o.st.ErasedEmail(ctx, email)
	if err != nil {
		return err
	}
	if erasure > 0 {
		r := RowResult{Line: h.Line, Email: email, Outcome: OutcomeSkipped, Reason: erasedReason(erasure)}
		fr.results[h.Line] = r
		if o.opts.DryRun || (seen && (prevRow.Status == sink.RowCreated || prevRow.Status == sink.RowSending)) {
			return nil
		}
		return o.st.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: fr.res.Hash, FileName: fr.res.Name, Line: h.Line,
			Status: sink.RowSkipped, Reason: r.Reason})
	}
	// This very row (the file's bytes, its line) created someone before: done, whatever its
	// email says now (an erasure lifted since blanked it).
	if seen && prevRow.Status == sink.RowCreated {
		fr.results[h.Line] = RowResult{Line: h.Line, Email: email, Outcome: OutcomeAlreadyDone, EmployeeID: prevRow.EmployeeID,
			Reason: "onboarded by an earlier run"}
		return nil
	}
	// The person, by email, in the whole ledger: confirmed, or sent without an answer.
	prev, err := o.st.CreatedByEmail(ctx, email)
	switch {
	case err == nil && prev.Status == sink.RowCreated:
		r := RowResult{Line: h.Line, Email: email, Outcome: OutcomeAlreadyDone, EmployeeID: prev.EmployeeID,
			Reason: fmt.Sprintf("already onboarded from %s line %d", prev.FileName, prev.Line)}
		if prev.FileHash == fr.res.Hash && prev.Line == h.Line {
			r.Reason = "onboarded by an earlier run"
			fr.results[h.Line] = r
			return nil
		}
		return fr.record(ctx, r, sink.RowSkipped)
	case err == nil: // sending: the create's answer never came, here or in another file
		if o.opts.DryRun {
			_ = fr.record(ctx, RowResult{Line: h.Line, Email: email, Outcome: OutcomeWouldCreate,
				Reason: "dry run: an earlier create was never confirmed; a run looks the person up before sending"}, "")
			return nil
		}
		fr.requests[h.Line] = h.Employee.Hash()
		fr.unknown = append(fr.unknown, unanswered{Hire: h, earlier: true})
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
		return fr.record(ctx, RowResult{Line: h.Line, Email: email, Outcome: OutcomeSkipped, Reason: "an employee with this email already exists"}, sink.RowSkipped)
	}
	if p, ok := fr.done[h.Line]; ok && refusedBefore(p, h) {
		fr.results[h.Line] = RowResult{Line: h.Line, Email: email, Outcome: p.Status, EmployeeID: p.EmployeeID,
			Reason: p.Reason + " (the source's answer to this same row before: change the row, or the onboarding settings, to send it again)"}
		return nil
	}
	if o.opts.DryRun {
		_ = fr.record(ctx, RowResult{Line: h.Line, Email: email, Outcome: OutcomeWouldCreate, Reason: "dry run: valid, not sent"}, "")
		return nil
	}
	fr.requests[h.Line] = h.Employee.Hash()
	// Durable before the request goes out: a crash from here on leaves "sending", which the
	// next run that meets the person resolves by looking them up first.
	if err := o.st.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: fr.res.Hash, FileName: fr.res.Name, Line: h.Line,
		Email: email, Status: sink.RowSending}); err != nil {
		return err
	}
	ambiguous, err := o.send(ctx, fr.res, h, fr.recorder(ctx))
	if err == nil && ambiguous {
		fr.unknown = append(fr.unknown, unanswered{Hire: h})
	}
	return err
}

// finish marks unresolved what is still open, the creates whose answer is still unknown and the
// hires a stop left unsent, and puts the rows in the order of the file.
func (fr *fileRun) finish(hires []Hire) {
	res := &fr.res
	for _, u := range fr.unknown {
		if _, ok := fr.results[u.Line]; !ok {
			// Still unknown: the ledger keeps the person as sending, so the next run that meets
			// them looks them up again before anything is sent.
			reason := "sent, but the source did not answer and the person could not be found yet; the next run looks them up again"
			if res.Err != nil {
				reason += " (" + oneLine(res.Err.Error()) + ")"
			}
			fr.results[u.Line] = RowResult{Line: u.Line, Email: u.Employee.Email, Outcome: OutcomeUnresolved, Reason: reason}
		}
	}
	for _, h := range hires {
		if _, ok := fr.results[h.Line]; !ok && res.Err != nil {
			fr.results[h.Line] = RowResult{Line: h.Line, Email: h.Employee.Email, Outcome: OutcomeUnresolved, Reason: "not sent: " + oneLine(res.Err.Error())}
		}
	}
	for _, r := range fr.results {
		res.Rows = append(res.Rows, r)
	}
	slices.SortFunc(res.Rows, func(a, b RowResult) int { return a.Line - b.Line })
}
