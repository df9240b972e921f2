package walk

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/v1"
)

// Plan is what a run expects to do before it walks anything (Options.Planned): its
// collections in order, each with the pages a walk of it is expected to read. It is an
// estimate: a collection can grow, a walk can repeat (the collection changed under it), a
// windowed walk can widen to the whole collection.
type Plan struct {
	Collections []Planned
	// Probes are the requests already made to size collections the ledger could not
	// (SizedByFirstPage), before the plan was told.
	Probes int64
	// Refused is set when the source refused the API key while the plan was sized: the run
	// stops at its first collection with that error, so there is nothing to plan.
	Refused bool
}

// Planned is one collection of a Plan.
type Planned struct {
	Resource sink.Resource
	// Window is the part of the collection the run plans to walk; nil, the whole of it.
	Window *sink.Window
	// Pages is the pages one walk is expected to read; 0 when nothing says (Unsized).
	Pages int64
	// Requests is the requests its walk is expected to make still: its pages, less the first
	// when a probe read the whole collection (a one-page collection's walk is its probe).
	Requests int64
	Sized    Sizing
}

// Sizing is where a Planned collection's pages come from.
type Sizing string

const (
	// SizedByLastRun: the pages the last run that walked the same part of it read, per walk
	// (the ledger, sink.Store.LastWalk).
	SizedByLastRun Sizing = "last run"
	// SizedByFirstPage: the source's answer to its first page, read for the plan: its Link
	// header's last page, or its Total over the page size.
	SizedByFirstPage Sizing = "first page"
	// NotOffered: the account does not offer the collection (its first page, or its last run,
	// said so): no pages, and one request, answered 403 or 404 (none more when it was the
	// probe's).
	NotOffered Sizing = "not offered"
	// Unsized: neither the ledger nor the first page said (the probe failed, or the source
	// sent neither Link nor Total); its walk finds out.
	Unsized Sizing = "unsized"
)

// Pages is the pages the plan expects its walks to read.
func (p Plan) Pages() int64 {
	var n int64
	for _, c := range p.Collections {
		n += c.Pages
	}
	return n
}

// Requests is the requests the plan expects the run still to make.
func (p Plan) Requests() int64 {
	var n int64
	for _, c := range p.Collections {
		n += c.Requests
	}
	return n
}

// Sized counts the collections of the plan sized each way.
func (p Plan) Sized() map[Sizing]int {
	m := map[Sizing]int{}
	for _, c := range p.Collections {
		m[c.Sized]++
	}
	return m
}

// probe is a collection's first page read to size it, kept for its walk: a one-page
// collection's walk is its probe; a longer walk reads its first page again, at its start, since
// it measures the changes under it against that page's Total (walked.consistent).
type probe struct {
	window *sink.Window // the part of the collection it read: the walk takes it for the same
	page   page
	err    error
	stats  client.StatsSnapshot // the requests it took, counted in the collection's run
}

// sameWindow is whether a and b are the same part of a collection.
func sameWindow(a, b *sink.Window) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.From.Equal(b.From) && a.To.Equal(b.To)
}

// reusable is whether the walk of the collection may take the probe as its first page.
func (p *probe) reusable() bool {
	if p == nil {
		return false
	}
	var no *client.NotOfferedError
	if errors.As(p.err, &no) {
		return true
	}
	return p.err == nil && pagesOf(p.page) == 1
}

// plan sizes each collection of resources: by the ledger's last walk of the same part of it,
// else by reading its first page (kept in probes for the walk). A probe that fails leaves the
// collection unsized; its walk will meet the failure again and report it as its own.
func (s *Syncer) plan(ctx context.Context, resources []sink.Resource) (Plan, map[sink.Resource]*probe) {
	var p Plan
	probes := map[sink.Resource]*probe{}
	refused := false // the source refused the key: no more probes, the walks say so
	for _, r := range resources {
		c := Planned{Resource: r, Sized: Unsized}
		w, _, err := s.walkPart(ctx, r)
		if err != nil {
			// The ledger does not answer: the collection's run meets the same error and says it.
			p.Collections = append(p.Collections, c)
			continue
		}
		c.Window = w
		if last, ok, err := s.wh.LastWalk(ctx, r, w != nil); err == nil && ok {
			switch {
			case last.Status == sink.RunUnavailable:
				c.Requests, c.Sized = 1, NotOffered
			case last.Pages > 0:
				c.Pages = last.Pages / max(last.Walks, 1)
				c.Requests, c.Sized = c.Pages, SizedByLastRun
			}
		} else if err != nil {
			s.log.Warn("plan: could not read the ledger; sizing the collection by its first page", "resource", string(r), "err", err)
		}
		if c.Sized == Unsized && !refused && ctx.Err() == nil {
			var filter url.Values
			if w != nil {
				filter = v1.WindowQuery(w.From, w.To)
			}
			stats := &client.Stats{}
			pg, err := s.fetch(client.WithStats(ctx, stats), r, 1, filter)
			pr := &probe{window: w, page: pg, err: err, stats: stats.Snapshot()}
			probes[r] = pr
			p.Probes += pr.stats.Requests
			var no *client.NotOfferedError
			switch {
			case errors.As(err, &no):
				c.Sized = NotOffered
			case errors.Is(err, v1.ErrUnauthorized):
				refused, p.Refused = true, true
			case err != nil:
				s.log.Debug("plan: the first page could not be read; its walk will try again", "resource", string(r), "err", err)
			default:
				if n := pagesOf(pg); n > 0 {
					c.Pages, c.Requests, c.Sized = n, n, SizedByFirstPage
				}
			}
			if pr.reusable() {
				c.Requests = max(c.Requests-1, 0)
			}
		}
		p.Collections = append(p.Collections, c)
	}
	return p, probes
}

// walkPart is the part of r a run walks now: the window of Options.Window when r is a
// collection the source filters by date and its last full walk is recent enough; nil, the
// whole collection, otherwise. why says, for the log, why a windowed collection is walked
// whole.
func (s *Syncer) walkPart(ctx context.Context, r sink.Resource) (w *sink.Window, why []any, err error) {
	c := v1.CollectionNamed(string(r))
	if s.opts.Window == nil || s.opts.Full || c == nil || c.Window == nil {
		return nil, nil, nil
	}
	last, ok, err := s.wh.LastFullWalk(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	now := s.opts.Now()
	if !ok || now.Sub(last) >= s.opts.Window.FullEvery {
		since := "never walked whole"
		if ok {
			since = "last walked whole " + last.UTC().Format(time.RFC3339)
		}
		return nil, []any{"since", since, "full_walk_every", s.opts.Window.FullEvery}, nil
	}
	win := sink.NewWindow(now, s.opts.Window.DaysBack, s.opts.Window.DaysAhead)
	return &win, nil, nil
}

// planWalk decides which part of r the run walks (walkPart) into res.Window, and logs a full
// walk that is due.
func (s *Syncer) planWalk(ctx context.Context, r sink.Resource, res *Result, log *slog.Logger) error {
	w, why, err := s.walkPart(ctx, r)
	if err != nil {
		return err
	}
	if why != nil {
		log.Info("walking the whole collection: its full walk is due", why...)
	}
	res.Window = w
	return nil
}
