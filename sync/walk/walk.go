// Package walk runs syncs: it walks every page of the source's collections, verifies what it
// received against the source's Total, and loads it into the warehouse in one transaction per
// resource, recording each run in the ledger.
package walk

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/v1"
)

// Source is the upstream service; *client.Client is one.
type Source interface {
	ListEmployees(ctx context.Context, page int64) ([]v1.Employee, *client.Response, error)
	ListWorkingPatterns(ctx context.Context, page int64) ([]v1.WorkingPattern, *client.Response, error)
	// ListRecords reads a page of a collection the wire declares (v1.Collections), filtered by
	// filter when it is not nil (v1.WindowQuery).
	ListRecords(ctx context.Context, c *v1.Collection, page int64, filter url.Values) ([]v1.Record, *client.Response, error)
	// SameOrigin reports whether a Link target is on the configured source's origin.
	SameOrigin(target string) bool
}

// ModelRefresher is a Warehouse that keeps models as tables (sink.RefreshedModels): a run
// that loaded a collection refreshes them once, at its end. *sink.Store is one.
type ModelRefresher interface {
	RefreshModels(ctx context.Context, force bool) (sink.ModelRefresh, error)
}

// ModelSettingsApplier is a Warehouse that reads its models' settings from its own tables
// (sink.ModelSettings): a run writes Options.Models into it before it refreshes the models.
// *sink.Store is one.
type ModelSettingsApplier interface {
	ApplyModelSettings(ctx context.Context, m sink.ModelSettings) (bool, error)
}

// Warehouse is where a sync loads; *sink.Store is one.
type Warehouse interface {
	BeginLoad(ctx context.Context, r sink.Resource) (*sink.Load, error)
	StartRun(ctx context.Context, runID string, r sink.Resource, started time.Time) (int64, error)
	FinishRun(ctx context.Context, r sink.Run) error
	// LastFullWalk is when the last ok run of r that walked the whole collection started.
	LastFullWalk(ctx context.Context, r sink.Resource) (time.Time, bool, error)
	// LastWalk is the newest finished run of r that walked a window of it (windowed) or the
	// whole, which sizes a plan (Options.Planned).
	LastWalk(ctx context.Context, r sink.Resource, windowed bool) (sink.Run, bool, error)
	// Hold is the latest concluded run of r when a load guard held it (ok false otherwise).
	Hold(ctx context.Context, r sink.Resource) (sink.Run, bool, error)
}

// Options configures a Syncer.
type Options struct {
	// Concurrency bounds the pages fetched at once after the first (default DefaultConcurrency). Pacing still
	// applies: concurrency hides latency, it does not exceed the rate limit.
	Concurrency int
	// MaxWalks bounds the walks of one resource when the collection changes under a walk
	// (default DefaultMaxWalks).
	MaxWalks int
	// Guards are the load guards' settings (zero fields: sink.DefaultGuards), CollectionGuards
	// a collection's own (its non-zero fields over Guards'), and AcceptForGood the guards
	// a setting accepts for good (sink.Hold.Key: "fill:employees.job_title").
	Guards           sink.GuardSettings
	CollectionGuards map[sink.Resource]sink.GuardSettings
	AcceptForGood    []string
	// MaxDeleteShare is the shrink guard's share where Guards and CollectionGuards set none
	// (sync.max_delete_share); AllowMassDelete accepts the shrink guard for this run.
	MaxDeleteShare  float64
	AllowMassDelete bool
	// Accept, when set, is a person accepting what held the collections whose latest run was
	// held: their fresh walk is let through the guards that held them (and held again should it
	// trip another), and the ledger records who accepted and why.
	Accept *Acceptance
	// DryRun walks and reports what would change, writing nothing (no ledger row either).
	DryRun bool
	// Models, when set, are the models section's settings (holiday calendar, closure days,
	// Bradford): a run that refreshes the models writes them into the warehouse first
	// (ModelSettingsApplier). Nil leaves the warehouse's as they are.
	Models *sink.ModelSettings
	// Window, when set, walks the collections the source filters by date (absences,
	// sicknesses, leave requests: v1.Collection.Window) only within a window around today,
	// except when their last full walk is older than Window.FullEvery. Nil walks every
	// collection whole, every run.
	Window *WindowPolicy
	// Full walks every collection whole this run, whatever Window says.
	Full bool
	// Planned, when set, is told the run's plan before it walks anything: each collection's
	// pages, by the ledger's last run of it, else by reading its first page (a request, which
	// a one-page collection's walk then takes as its own). Nil plans nothing, and reads nothing
	// to plan.
	Planned func(Plan)
	// Progress, when set, is told after every page.
	Progress func(Progress)
	// Finished, when set, is told each collection's result as soon as its run ends.
	Finished func(Result)
	// Metrics, when set, records runs.
	Metrics *Metrics
	Logger  *slog.Logger
	Now     func() time.Time
}

// Acceptance is a person's acceptance of held loads (Options.Accept).
type Acceptance struct {
	By, Reason string
}

// Defaults for Options.
const (
	// DefaultConcurrency is how many pages a walk fetches at once.
	DefaultConcurrency = 4
	// DefaultMaxWalks is how many times a run walks a collection that changed under it.
	DefaultMaxWalks = 3
)

// WindowPolicy says which part of a dated collection a run walks. Such collections grow without
// end (ten years of absences), while what changes is mostly near today: most runs walk only the
// window from DaysBack days before today to DaysAhead days after it, and a full walk at least
// every FullEvery keeps the rest exact (a past absence edited, one far ahead booked).
//
// A windowed run deletes nothing on the window's word alone: a record the warehouse holds
// inside the window that the window's walk did not return was deleted at the source or moved
// out of the window (its dates changed), and only a walk of the whole collection tells the
// two apart, so the run goes on to walk the whole collection, as a full run would, before it
// deletes anything. Records outside the window are never candidates for deletion in a
// windowed walk.
type WindowPolicy struct {
	DaysBack, DaysAhead int
	FullEvery           time.Duration
}

// Progress is a walk's state after a page.
type Progress struct {
	Resource sink.Resource
	// Collection is the resource's place in the run, from 1, of Collections.
	Collection, Collections int
	Walk                    int
	PagesDone               int64
	PagesTotal              int64 // 0 while unknown
	Records                 int64
	Elapsed                 time.Duration
}

// Syncer runs syncs.
type Syncer struct {
	src  Source
	wh   Warehouse
	opts Options
	log  *slog.Logger
}

// New returns a Syncer.
func New(src Source, wh Warehouse, opts Options) *Syncer {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.MaxWalks <= 0 {
		opts.MaxWalks = DefaultMaxWalks
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Syncer{src: src, wh: wh, opts: opts, log: opts.Logger}
}

// Result is what one resource's run did.
type Result struct {
	sink.Run
	// Err is why the run did not end ok: a failure, an inconsistent walk, a hold (a *HeldError).
	// A collection the account does not offer (Status sink.RunUnavailable) is skipped, not
	// failed: its Err is nil and Run.Error says what the source answered.
	Err error
	// StillHeld says the run was held by guards the collection's last run, held, tripped too:
	// not news (said once, when the hold began). Lifted says the last run was held and this one
	// published its load: the hold lifted (the source is back to normal, or a person accepted
	// it); never in a dry run.
	StillHeld, Lifted bool
	// Events is what the load derived of joiner, mover and leaver events (employees only).
	Events sink.EventsResult
}

// HeldError is a run's error when a load guard held its load: nothing of it was written.
type HeldError struct {
	Resource sink.Resource
	Holds    []sink.Hold // those not accepted
}

func (e *HeldError) Error() string {
	msgs := make([]string, len(e.Holds))
	for i, h := range e.Holds {
		msgs[i] = h.Message
	}
	return "load held, nothing written: " + strings.Join(msgs, "; ")
}

// Is makes errors.Is(err, ErrHeld) hold.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Errors a run ends with, besides the source's and the warehouse's own.
var (
	// ErrInconsistent: the collection kept changing under every walk; upserts were applied
	// but nothing was deleted.
	ErrInconsistent = errors.New("the source's collection changed during every walk")
	// ErrHeld: a load guard held the load (a *HeldError says which).
	ErrHeld = errors.New("load held by a load guard")
	// ErrForeignLink: a Link header pointed at another origin than the source's.
	ErrForeignLink = errors.New("the source's Link header points at another origin")
	// ErrNothingOffered: every collection of the run was unavailable. An account always offers
	// its employees, so this is more likely a wrong source.url (a path the source answers 404)
	// or a key the source forbids than an account without modules, and a run that synced
	// nothing at all is not a success.
	ErrNothingOffered = errors.New("the source offered none of the collections: it answered 403 or 404 to each (check source.url and source.api_key)")
)

// errNotOffered marks a walk whose very first page the source answered as it answers a
// collection the account does not offer (*source.NotOfferedError).
var errNotOffered = errors.New("the account does not offer this collection")

// finishTimeout bounds writing a run's end to the ledger once the run is over (its own context
// may have ended); finishSilentTimeout bounds it when the warehouse was found silent: it is
// tried once, shortly, and otherwise left to the next run (which closes a run left running:
// sink.Store.StartRun).
const (
	finishTimeout       = 10 * time.Second
	finishSilentTimeout = time.Second
)

// stopCause is why ctx ended when the work under the sync lock was stopped (see
// sink.Store.TryLock): a lost lock, a silent warehouse; nil while it goes on, or when it ended
// because the process is stopping (context.Canceled, or the cause signal.NotifyContext gives:
// "terminated signal received").
func stopCause(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, sink.ErrLockLost) || errors.Is(cause, sink.ErrNoAnswer) {
		return cause
	}
	return nil
}

// Known are the collections the sync knows, in the order it loads them (sink.Loadable): the
// reference data, then working patterns (so the employees' patterns are listed ones), employees,
// and the events that point at them. The configuration's names (sync.resources, --resource) are
// checked against it and put in its order by Ordered.
var Known = sink.Loadable()

// Resources are the collections a sync loads when the configuration names none, and what "all"
// names: every collection it knows but the sensitive ones (v1.Collection.Sensitive: pay data,
// synced only when named). The growing event collections cost little a night, walked by date
// window (WindowPolicy). The metrics start a series for each.
var Resources = func() []sink.Resource {
	var rs []sink.Resource
	for _, r := range Known {
		if c := v1.CollectionNamed(string(r)); c == nil || !c.Sensitive {
			rs = append(rs, r)
		}
	}
	return rs
}()

// Ordered returns the collections of rs in the order a sync loads them (the order of Known),
// each once; what Known does not hold is left out.
func Ordered(rs []sink.Resource) []sink.Resource {
	var out []sink.Resource
	for _, r := range Known {
		if slices.Contains(rs, r) {
			out = append(out, r)
		}
	}
	return out
}

// Run syncs the resources in order and returns each one's result; the error joins the results'
// errors. A failed resource does not stop the next one, except a refused API key (401), which
// would refuse them all, a lock lost (sink.ErrLockLost: another process may be syncing now),
// and a warehouse that stopped answering (sink.ErrNoAnswer), whose every statement would wait
// for the same silence: the run stops at once, naming that cause, and attempts no further
// collection. A resource the account does not offer (the source answers its first page 403 or
// 404) is skipped with status unavailable and is no error, unless no resource of the run was
// available (ErrNothingOffered).
//
// ctx, under the sync lock, is the one sink.Store.TryLock returned: it ends with its cause when
// the lock's lease is lost or the warehouse is found silent, and the run then stops as above.
func (s *Syncer) Run(ctx context.Context, resources []sink.Resource) ([]Result, error) {
	runID := newRunID()
	var results []Result
	var errs []error
	var probes map[sink.Resource]*probe
	if s.opts.Planned != nil {
		var p Plan
		p, probes = s.plan(ctx, resources)
		s.opts.Planned(p)
	}
	stopped := false // the warehouse or the lock stopped the run: nothing more is tried
	for i, r := range resources {
		if ctx.Err() != nil {
			errs = append(errs, cmp.Or(stopCause(ctx), ctx.Err()))
			break
		}
		res := s.runResource(ctx, runID, r, place{i + 1, len(resources)}, probes[r])
		results = append(results, res)
		if s.opts.Finished != nil {
			s.opts.Finished(res)
		}
		if res.Err != nil {
			errs = append(errs, fmt.Errorf("sync %s: %w", r, res.Err))
		}
		if errors.Is(res.Err, v1.ErrUnauthorized) {
			// The key is the account's: every other collection would be refused the same way,
			// and saying so once is enough.
			break
		}
		if errors.Is(res.Err, sink.ErrLockLost) || errors.Is(res.Err, sink.ErrNoAnswer) {
			// The lock lost: another process may be syncing now, leave the rest to it. The
			// warehouse silent: each collection would wait for the same silence.
			stopped = true
			s.log.Error("sync stopped: no further collection is attempted", "run_id", runID, "err", res.Err,
				"not_attempted", len(resources)-i-1)
			break
		}
	}
	if !stopped {
		if err := s.refreshModels(ctx, results); err != nil {
			errs = append(errs, err)
		}
	}
	if len(results) > 0 && !slices.ContainsFunc(results, func(r Result) bool { return r.Status != sink.RunUnavailable }) {
		// Each collection said it was skipped; that all of them were is the run's failure.
		s.log.Error("sync failed", "run_id", runID, "err", ErrNothingOffered)
		errs = append(errs, ErrNothingOffered)
	}
	return results, errors.Join(errs...)
}

// refreshModels refreshes the warehouse's models (ModelRefresher) after a run that loaded at
// least one collection, unless it wrote nothing (DryRun) or was stopped; a failure is the run's
// error (the data loaded stays: the models are as they were).
func (s *Syncer) refreshModels(ctx context.Context, results []Result) error {
	mr, ok := s.wh.(ModelRefresher)
	if !ok || s.opts.DryRun || ctx.Err() != nil ||
		!slices.ContainsFunc(results, func(r Result) bool { return r.Err == nil && r.Status == sink.RunOK }) {
		return nil
	}
	if ma, ok := s.wh.(ModelSettingsApplier); ok && s.opts.Models != nil {
		if _, err := ma.ApplyModelSettings(ctx, *s.opts.Models); err != nil {
			return err
		}
	}
	_, err := mr.RefreshModels(ctx, false)
	return err
}

func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// place is a collection's place in its run: the n-th of of.
type place struct{ n, of int }

// runResource is the run of one collection; pr, when not nil, is its first page read to plan
// the run.
func (s *Syncer) runResource(ctx context.Context, runID string, r sink.Resource, at place, pr *probe) Result {
	start := s.opts.Now()
	res := Result{Run: sink.Run{RunID: runID, Resource: r, StartedAt: start, Status: sink.RunRunning, TotalReported: -1}}
	log := s.log.With("resource", string(r), "run_id", runID)
	if !s.opts.DryRun {
		id, err := s.wh.StartRun(ctx, runID, r, start)
		if err != nil {
			res.Status, res.Err, res.FinishedAt = sink.RunFailed, err, s.opts.Now()
			return res
		}
		res.ID = id
	}
	// The hold the collection is under, if its last run was held: what a person accepts
	// (Options.Accept), and what tells a hold from news.
	var prev *sink.Run
	h, isHeld, err := s.wh.Hold(ctx, r)
	if isHeld {
		prev = &h
	}
	stats := &client.Stats{}
	ctx = client.WithStats(ctx, stats)
	if err == nil {
		err = s.planWalk(ctx, r, &res, log)
	}
	if err == nil {
		var first *probe // the probe, when the walk takes it as its first page
		if pr.reusable() && sameWindow(pr.window, res.Window) {
			first = pr
		}
		err = s.load(ctx, r, &res, log, at, first, prev)
	}
	res.Requests, res.Retries, res.RateLimited = stats.Requests.Load(), stats.Retries.Load(), stats.RateLimited.Load()
	if pr != nil {
		// The probe read for the plan was a request of this collection's, even when its walk
		// read its first page again.
		res.Requests += pr.stats.Requests
		res.Retries += pr.stats.Retries
		res.RateLimited += pr.stats.RateLimited
	}
	res.FinishedAt = s.opts.Now()
	if cause := stopCause(ctx); err != nil && cause != nil && !errors.Is(err, cause) &&
		!errors.Is(err, sink.ErrLockLost) && !errors.Is(err, sink.ErrNoAnswer) {
		// The run's context ended for a cause (its lock lost, the warehouse silent) and what
		// failed here is its consequence ("context canceled", a statement abandoned): the
		// cause is the error.
		err = cause
	}
	switch {
	case err != nil && ctx.Err() != nil && stopCause(ctx) == nil:
		// Asked to stop: the open transaction was rolled back; the next run converges.
		res.Status, res.Err, res.Error = sink.RunFailed, err, "interrupted: hrsync was stopping; nothing of this run was written"
	case errors.Is(err, errNotOffered):
		// Not offered: skipped, nothing staged or written; the other collections go on. The
		// ledger says what the source answered ("the account does not offer working_patterns
		// (source answered 404)").
		res.Status, res.Error = sink.RunUnavailable, err.Error()
		if no := (*client.NotOfferedError)(nil); errors.As(err, &no) {
			res.Error = no.Error()
		}
	case err != nil:
		res.Status, res.Err, res.Error = sink.RunFailed, err, err.Error()
	case sink.Held(res.Holds):
		he := &HeldError{Resource: r}
		for _, h := range res.Holds {
			if !h.Accepted {
				he.Holds = append(he.Holds, h)
			}
		}
		res.Status, res.Err, res.Error = sink.RunHeld, he, he.Error()
		res.StillHeld = prev != nil && knownHolds(prev.Holds, he.Holds)
	case res.Status == sink.RunInconsistent:
		res.Err, res.Error = ErrInconsistent, ErrInconsistent.Error()
	default:
		res.Status = sink.RunOK
	}
	// A dry run lifts nothing: the ledger still says held, and so will the next run.
	res.Lifted = prev != nil && !s.opts.DryRun && (res.Status == sink.RunOK || res.Status == sink.RunInconsistent)
	s.opts.Metrics.observeRun(res)
	attrs := []any{"status", res.Status, "walked", walkedPart(res.Window), "pages", res.Pages, "requests", res.Requests, "retries", res.Retries,
		"rate_limited", res.RateLimited, "walks", res.Walks, "records", res.DistinctRecords,
		"inserted", res.Inserted, "updated", res.Updated, "unchanged", res.Unchanged, "deleted", res.Deleted,
		"duration", res.FinishedAt.Sub(start).Round(time.Millisecond)}
	switch {
	case err != nil && ctx.Err() != nil && stopCause(ctx) == nil:
		// A clean stop, said once, as what it is.
		log.Info("sync interrupted: hrsync is stopping; nothing of this run was written", attrs...)
	case res.Status == sink.RunHeld && res.StillHeld:
		// Said once, when the hold began: every scheduled run checks again, quietly.
		log.Info("load still held: nothing written; the same guards as the last run", append(attrs, "err", res.Err)...)
	case res.Status == sink.RunHeld:
		log.Error("load held: nothing written; accept it with hrsync sync --accept once the change is confirmed", append(attrs, "err", res.Err)...)
	case res.Err != nil:
		log.Error("sync finished", append(attrs, "err", res.Err)...)
	case res.Status == sink.RunUnavailable:
		log.Info("sync skipped: the account does not offer this collection", append(attrs, "reason", res.Error)...)
	case res.Lifted && res.AcceptedBy != "":
		log.Info("sync finished: the held load was accepted", append(attrs, "accepted_by", res.AcceptedBy, "reason", res.AcceptReason)...)
	case res.Lifted:
		log.Info("sync finished: the hold lifted, the source is back within the guards", attrs...)
	default:
		log.Info("sync finished", attrs...)
	}
	switch {
	case s.opts.DryRun:
	case errors.Is(err, sink.ErrLockLost):
		// Nothing is written once the lock is lost, the ledger included: the next process that
		// holds the lock closes the row (sink.RunAbandoned).
		log.Warn("the ledger row is left running: the lock was lost; the next sync closes it", "ledger_id", res.ID)
	default:
		// The ledger is written even when the run was canceled, within a bound of its own: a
		// warehouse that stopped answering must not hold a stopping process. One found silent
		// is tried once, shortly; the next sync closes the row it could not.
		wait := finishTimeout
		if errors.Is(err, sink.ErrNoAnswer) {
			wait = finishSilentTimeout
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
		if ferr := s.wh.FinishRun(fctx, res.Run); ferr != nil {
			if errors.Is(err, sink.ErrNoAnswer) {
				log.Warn("the ledger row is left running: the warehouse is silent; the next sync closes it", "ledger_id", res.ID, "err", ferr)
			} else {
				res.Err = errors.Join(res.Err, ferr)
			}
		}
		cancel()
	}
	return res
}

// walkedPart is what a ledger row's window says was walked, for the log.
func walkedPart(w *sink.Window) string {
	if w == nil {
		return "all"
	}
	return w.String()
}

// load walks until a walk is consistent (or MaxWalks), then merges. A run planned on a window
// (res.Window) walks the window; when the window's walk misses records the warehouse holds
// inside it, the run goes on as a full run (see WindowPolicy). first, when not nil, is the first
// page of the part planned, read for the plan, which the first walk takes as its own.
func (s *Syncer) load(ctx context.Context, r sink.Resource, res *Result, log *slog.Logger, at place, first *probe, prev *sink.Run) error {
	l, err := s.wh.BeginLoad(ctx, r)
	if err != nil {
		return err
	}
	defer func() {
		if err := l.Close(); err != nil {
			log.Warn("close load", "err", err)
		}
	}()
	var filter url.Values
	planned := res.Window // the window planned, which the run may widen to the whole
	if res.Window != nil {
		if err := l.Within(res.Window); err != nil {
			return err
		}
		filter = v1.WindowQuery(res.Window.From, res.Window.To)
	}
	// Walk until a walk is consistent. Offset pages that shift under a walk can also hide a
	// record without changing any count (one leaver and one hire); so when a consistent walk
	// finds records to delete, one more walk verifies, and only records both walks missed go.
	consistent, verifying := false, false
	part := 1 // the first walk of this part: a run that widens to the whole collection counts afresh
	for walk := 1; ; walk++ {
		if walk > 1 {
			if err := l.Reset(ctx); err != nil {
				return err
			}
		}
		res.Walks = int64(walk)
		var read *probe
		if walk == 1 {
			read = first
		}
		w, err := s.walk(ctx, r, walkPos{at, walk}, l, filter, read)
		if err != nil {
			return err
		}
		distinct, err := l.Distinct(ctx)
		if err != nil {
			return err
		}
		res.Pages += w.pages
		res.RecordsSeen, res.DistinctRecords, res.TotalReported = l.Staged(), distinct, w.totalMax
		consistent = w.consistent(distinct, l.Staged())
		if !consistent {
			s.opts.Metrics.observeInconsistentWalk(r)
			log.Warn("the collection changed during the walk", "walk", walk, "total_first", w.totalFirst,
				"total_min", w.totalMin, "total_max", w.totalMax, "records_seen", l.Staged(), "distinct", distinct)
			limit := s.opts.MaxWalks
			if verifying {
				limit++
			}
			if walk-part+1 >= limit {
				break
			}
			continue
		}
		if verifying {
			break
		}
		candidates, err := l.DeletionCandidates(ctx)
		if err != nil {
			return err
		}
		if candidates == 0 {
			break
		}
		if res.Window != nil {
			// Missing from the window: deleted, or moved out of it. Only the whole collection
			// tells; what the window's walk saw stays remembered (it exists), and the whole
			// collection is walked, and confirmed, as a full run would be.
			log.Info("records inside the window are missing: walking the whole collection to tell deleted from moved",
				"candidates", candidates, "window", res.Window.String())
			if err := l.Remember(ctx); err != nil {
				return err
			}
			if err := l.Within(nil); err != nil {
				return err
			}
			res.Window, filter, part = nil, nil, walk+1
			continue
		}
		log.Info("records to delete: walking once more to confirm", "candidates", candidates)
		if err := l.Remember(ctx); err != nil {
			return err
		}
		verifying = true
	}
	if !consistent {
		res.Status = sink.RunInconsistent
	}
	opts := sink.MergeOptions{DryRun: s.opts.DryRun, Complete: consistent, Guards: s.guards(r),
		Accept: slices.Clone(s.opts.AcceptForGood), AllowMassDelete: s.opts.AllowMassDelete, RunID: res.Run.RunID}
	if planned != nil && res.Window == nil {
		opts.Widened = planned // like with like: the window's own shrink is weighed too
	}
	personal := map[string]bool{} // the keys a person accepts this run
	if s.opts.Accept != nil && prev != nil {
		// Every guard the held run tripped, those it let through too: a person who accepted
		// one, and saw the load held again by another, accepts the load, not the other alone.
		for _, h := range prev.Holds {
			if !personal[h.Key()] {
				personal[h.Key()] = true
				opts.Accept = append(opts.Accept, h.Key())
			}
		}
	}
	mr, err := l.Merge(ctx, opts)
	if err != nil {
		return err
	}
	res.Inserted, res.Updated, res.Unchanged, res.Deleted = mr.Inserted, mr.Updated, mr.Unchanged, mr.Deleted
	if mr.SeedRetired > 0 {
		log.Info("the warehouse's seeded default gave way to the source's records", "retired", mr.SeedRetired)
	}
	res.DeletionsRefused, res.Holds, res.Profile = mr.DeletionsRefused, mr.Holds, &mr.Profile
	res.Events = mr.Events
	switch ev := mr.Events; {
	case ev.Baseline:
		log.Info("events: the first load of employees is their baseline; the next ones derive joiner, mover and leaver events")
	case ev.Held > 0:
		log.Warn("events: a mass leaving; its leaver events are held until released (hrsync events release --run "+res.Run.RunID+")",
			"leavers", ev.Leavers, "limit", ev.Limit, "held", ev.Held)
	case ev.Derived > 0:
		log.Info("events derived", "derived", ev.Derived, "published", ev.Published)
	}
	if !mr.Held() && !s.opts.DryRun && slices.ContainsFunc(mr.Holds, func(h sink.Hold) bool { return personal[h.Key()] }) {
		res.AcceptedBy, res.AcceptReason = s.opts.Accept.By, s.opts.Accept.Reason
	}
	return nil
}

// guards are the load guards' settings for collection r: the collection's own where it sets
// them, else Guards', else sync.max_delete_share for the shrink guard (zero fields then take
// sink.DefaultGuards).
func (s *Syncer) guards(r sink.Resource) sink.GuardSettings {
	g := s.opts.Guards
	if c, ok := s.opts.CollectionGuards[r]; ok {
		g = g.Over(c)
	}
	if g.MaxShrink == 0 {
		g.MaxShrink = s.opts.MaxDeleteShare
	}
	return g
}

// knownHolds reports whether the guards holding a run (held) are no news: each was tripped by
// the last run (prev), held there or let through. A guard that stops tripping leaves the rest
// of the hold as it was; one the last run did not trip is news. (The last run's accepted
// guards count: a person accepted one and the load was held by another; a scheduled run
// after it held by both says nothing new.)
func knownHolds(prev, held []sink.Hold) bool {
	return !slices.ContainsFunc(held, func(h sink.Hold) bool {
		return !slices.ContainsFunc(prev, func(p sink.Hold) bool { return p.Key() == h.Key() })
	})
}

// walked summarizes one walk: the Totals every page reported, and the pages read.
type walked struct {
	pages                          int64
	totalFirst, totalMin, totalMax int64
}

// consistent says whether a walk that staged staged records, distinct of them, read the
// collection exactly: every record the source counted, each once.
//
// Records added or removed during a walk shift the offset pages after them. A shift forward
// (an addition before a page read later) shows a record twice: staged exceeds distinct. A
// shift back (a removal) can hide one: the Total falls below the first page's. Either makes the
// walk inconsistent. The Total may grow, though, where additions are listed last (new hires
// created through the source, by onboarding or a forwarded create, during a walk): nothing
// shifts, the walk reads the pages the growth adds (walk's tail), and it is exact when it saw
// as many distinct records as the largest Total counted. A removal hidden by an addition keeps
// the counts whatever the Totals do; the record it hides is a deletion candidate, which a
// second walk confirms or clears before anything is deleted (see load).
func (w walked) consistent(distinct, staged int64) bool {
	return w.totalFirst >= 0 && w.totalMin == w.totalFirst && distinct == w.totalMax && staged == distinct
}

// maxTailPages bounds the pages a walk reads past its last for records added during it.
const maxTailPages = 20

type page struct {
	n        int64
	resp     *client.Response
	employee []v1.Employee
	patterns []v1.WorkingPattern
	records  []v1.Record // of a collection the wire declares
}

// fetch reads one page of the resource (of its records filter keeps) and checks its Link
// targets' origin.
func (s *Syncer) fetch(ctx context.Context, r sink.Resource, n int64, filter url.Values) (page, error) {
	p := page{n: n}
	var err error
	switch r {
	case sink.Employees:
		p.employee, p.resp, err = s.src.ListEmployees(ctx, n)
	case sink.WorkingPatterns:
		p.patterns, p.resp, err = s.src.ListWorkingPatterns(ctx, n)
	default:
		c := v1.CollectionNamed(string(r))
		if c == nil {
			return p, fmt.Errorf("unknown resource %q", r)
		}
		p.records, p.resp, err = s.src.ListRecords(ctx, c, n, filter)
	}
	if err != nil {
		return p, err // the client's errors name the collection and the page ("list employees page 3: …")
	}
	for rel, target := range p.resp.Links {
		if !s.src.SameOrigin(target) {
			return p, fmt.Errorf("page %d: %w (rel %q); refusing to follow it", n, ErrForeignLink, rel)
		}
	}
	return p, nil
}

func (p page) count() int64 { return int64(len(p.employee) + len(p.patterns) + len(p.records)) }

// after is the page without its first k records.
func (p page) after(k int64) page {
	cut := func(n int) int { return int(min(int64(n), k)) }
	p.employee, p.patterns, p.records = p.employee[cut(len(p.employee)):], p.patterns[cut(len(p.patterns)):], p.records[cut(len(p.records)):]
	return p
}

// pagesOf is how many pages the collection has, by the Link header's last relation, else by
// Total and the page size the source used; 0 when neither says.
func pagesOf(p page) int64 {
	if last, ok := p.resp.Links["last"]; ok {
		if n := v1.PageOf(last); n > 0 {
			return n
		}
	}
	if _, hasNext := p.resp.Links["next"]; !hasNext && p.resp.Links != nil {
		return p.n // Link present without next or last: this is the last page
	}
	size := p.resp.PerPage
	if size <= 0 {
		size = p.count()
	}
	if p.resp.Total >= 0 && size > 0 {
		return max(v1.LastPage(p.resp.Total, size), 1)
	}
	return 0
}

// walkPos is a walk's place: its collection's in the run, and which walk of it.
type walkPos struct {
	place
	walk int
}

// walk reads every page once: page 1 (read, or read already for the plan), then the rest with
// bounded concurrency, staging each page as it arrives through one stager (the load holds one
// connection).
func (s *Syncer) walk(ctx context.Context, r sink.Resource, pos walkPos, l *sink.Load, filter url.Values, read *probe) (walked, error) {
	start := time.Now()
	walkN := pos.walk
	var first page
	var err error
	if read != nil {
		first, err = read.page, read.err
	} else {
		first, err = s.fetch(ctx, r, 1, filter)
	}
	if err != nil {
		var no *client.NotOfferedError
		if walkN == 1 && errors.As(err, &no) {
			// Not offered: the first answer about the collection says so. A later walk's
			// first page answered so is a broken walk, as is any later page.
			return walked{}, fmt.Errorf("%w: %w", errNotOffered, err)
		}
		return walked{}, err
	}
	w := walked{pages: 1, totalFirst: first.resp.Total, totalMin: first.resp.Total, totalMax: first.resp.Total}
	var staged int64
	stage := func(p page) error {
		var err error
		switch r {
		case sink.Employees:
			err = l.AddEmployees(ctx, p.employee)
		case sink.WorkingPatterns:
			err = l.AddWorkingPatterns(ctx, p.patterns)
		default:
			err = l.AddRecords(ctx, p.records)
		}
		staged += p.count()
		if err != nil {
			return fmt.Errorf("page %d: %w", p.n, err)
		}
		return nil
	}
	if err := stage(first); err != nil {
		return w, err
	}
	total := pagesOf(first)
	// lastCount is how many records the last page held when it was read.
	lastCount := first.count()
	s.progress(Progress{Resource: r, Collection: pos.n, Collections: pos.of, Walk: walkN, PagesDone: 1, PagesTotal: total, Records: staged, Elapsed: time.Since(start)})
	if total == 0 {
		// Neither Link nor Total: read on until an empty page.
		for n := int64(2); first.count() > 0; n++ {
			p, err := s.fetch(ctx, r, n, filter)
			if err != nil {
				return w, err
			}
			w.pages++
			if p.count() == 0 {
				break
			}
			if err := stage(p); err != nil {
				return w, err
			}
		}
		return w, nil
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pagesCh := make(chan int64)
	results := make(chan page, s.opts.Concurrency)
	// The first failure, a fetch's or the staging's, is the walk's error: it cancels the rest,
	// whose "context canceled" are its consequences, not news.
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err; cancel() }) }
	var wg sync.WaitGroup
	for range min(int64(s.opts.Concurrency), max(total-1, 0)) {
		wg.Go(func() {
			for n := range pagesCh {
				p, err := s.fetch(ctx, r, n, filter)
				if err != nil {
					fail(err)
					return
				}
				select {
				case results <- p:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		defer close(pagesCh)
		for n := int64(2); n <= total; n++ {
			select {
			case pagesCh <- n:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	staging := true
	for p := range results {
		if !staging {
			continue // drain
		}
		w.pages++
		w.totalMin, w.totalMax = min(w.totalMin, p.resp.Total), max(w.totalMax, p.resp.Total)
		if p.n == total {
			lastCount = p.count()
		}
		if err := stage(p); err != nil {
			fail(err)
			staging = false
			continue
		}
		s.progress(Progress{Resource: r, Collection: pos.n, Collections: pos.of, Walk: walkN, PagesDone: w.pages, PagesTotal: total, Records: staged, Elapsed: time.Since(start)})
	}
	if firstErr != nil { // every writer has finished: the workers and this loop
		return w, firstErr
	}
	if err := ctx.Err(); err != nil {
		return w, err
	}
	// The tail: records added during the walk, where the source lists them last, made the Total
	// grow past what the pages read held. The records the last page held when it was read stand;
	// those after them are read now: the rest of that page, and the pages the growth added (see
	// walked.consistent).
	size := first.resp.PerPage
	if size <= 0 {
		size = first.count()
	}
	seen := (total-1)*size + lastCount // the records up to the end of the last page, as read
	if w.totalMin == w.totalFirst && seen < w.totalMax && size > 0 {
		for n := seen/size + 1; n <= v1.LastPage(w.totalMax, size) && n <= total+maxTailPages; n++ {
			p, err := s.fetch(ctx, r, n, filter)
			if err != nil {
				return w, err
			}
			w.pages++
			w.totalMin, w.totalMax = min(w.totalMin, p.resp.Total), max(w.totalMax, p.resp.Total)
			if skip := seen - (n-1)*size; skip > 0 { // read already, when the page was
				p = p.after(skip)
			}
			if p.count() == 0 {
				continue
			}
			if err := stage(p); err != nil {
				return w, err
			}
			s.progress(Progress{Resource: r, Collection: pos.n, Collections: pos.of, Walk: walkN, PagesDone: w.pages, PagesTotal: max(total, n), Records: staged, Elapsed: time.Since(start)})
		}
	}
	return w, nil
}

func (s *Syncer) progress(p Progress) {
	if s.opts.Progress != nil {
		s.opts.Progress(p)
	}
}
