package onboard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/v1"
)

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
// theirs still sending, in any file. A person erased meanwhile (an erase while the answer was
// awaited) is recorded created, as they were, but without their email, nor kept in the
// warehouse's employees: the erasure covers the id it was made of, not this one.
func (o *Onboarder) confirmed(ctx context.Context, h Hire, e v1.Employee, reason string, record func(RowResult, string) error) error {
	erasure, err := o.st.ErasedEmail(ctx, h.Employee.Email)
	if err != nil {
		return err
	}
	if erasure > 0 {
		return record(RowResult{Line: h.Line, Outcome: OutcomeCreated, EmployeeID: e.ID,
			Reason: fmt.Sprintf("created at the source (employee %d), but this person's data was erased meanwhile (erasure %d): the warehouse keeps neither their email nor their record; erase employee %d too", e.ID, erasure, e.ID)}, sink.RowCreated)
	}
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

func (fileOnly) ErasedEmail(context.Context, string) (int64, error) { return 0, nil }

func (fileOnly) PutOnboardingRow(context.Context, sink.OnboardingRow) error { return errNoLedger }

func (fileOnly) ConfirmSending(context.Context, string, int64, string) error { return errNoLedger }

func (fileOnly) PutEmployee(context.Context, v1.Employee) error { return errNoLedger }
