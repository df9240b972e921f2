package syncreport

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/walk"
)

// What a failed sync says (hrsync sync), in one line.

// acceptHint says what to run once the held collections' source is checked.
func acceptHint(a *config.Account, held []string, dryRun bool) string {
	cmd := "hrsync sync"
	if a.Listed {
		cmd += " --account " + a.Name
	}
	cmd += " --resource " + strings.Join(held, ",") + ` --accept "why"`
	if dryRun {
		return "a sync would write nothing of it: once you have checked the source, run `" + cmd + "`"
	}
	return "once you have checked the source, run `" + cmd + "`; until then scheduled syncs keep checking and the hold lifts by itself when the source is back to normal"
}

// heldMessages are the guards' messages of a held run's error.
func heldMessages(err error) string {
	var he *walk.HeldError
	if !errors.As(err, &he) {
		return err.Error()
	}
	msgs := make([]string, len(he.Holds))
	for i, h := range he.Holds {
		msgs[i] = h.Message
	}
	return strings.Join(msgs, "; ")
}

// joined are the errors err joins (errors.Join), or err alone.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// HeldError is a sync whose only trouble was loads held by a load guard: neither ok nor
// failed (hrsync sync exits 3).
type HeldError struct{ err error }

func (e *HeldError) Error() string { return e.err.Error() }
func (e *HeldError) Unwrap() error { return e.err }

// Failed is the error of an account's sync that failed with err: one line naming each collection
// that failed or was held and why, what to run for those held, and for an API key refused which
// setting to check. A sync whose only trouble was held loads fails with a *HeldError.
func Failed(a *config.Account, results []walk.Result, err error, dryRun bool) error {
	var msgs []string
	var held []string // the collections held, to name in what to run
	failed := false
	for _, r := range results {
		if r.Err == nil {
			continue
		}
		msg := fmt.Sprintf("%s: %v", r.Resource, r.Err)
		switch {
		case errors.Is(r.Err, walk.ErrHeld):
			held = append(held, string(r.Resource))
			if dryRun {
				msg = fmt.Sprintf("%s: the load would be held: %s", r.Resource, heldMessages(r.Err))
			}
		case errors.Is(r.Err, v1.ErrUnauthorized):
			failed = true
			msg += " (check source.api_key, HRSYNC_SOURCE_API_KEY; nothing else was synced)"
			if a.Listed {
				msg = fmt.Sprintf("%s: %v (check the account's source.api_key, %s; nothing else of it was synced)",
					r.Resource, r.Err, a.EnvVar("source.api_key"))
			}
		default:
			failed = true
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		return fmt.Errorf("sync: %w", a.Wrap(err))
	}
	if len(held) > 0 {
		msgs = append(msgs, acceptHint(a, held, dryRun))
	}
	onlyHeld := !failed && !slices.ContainsFunc(joined(err), func(e error) bool { return !errors.Is(e, walk.ErrHeld) })
	err = fmt.Errorf("sync: %w", a.Wrap(errors.New(strings.Join(msgs, "; "))))
	if onlyHeld {
		return &HeldError{err}
	}
	return err
}
