// Package syncreport is what `hrsync sync` tells its operator about a run: each collection's
// summary line as it finishes and a closing line of totals, and on a terminal the run's plan and
// one progress line redrawn in place, with the log's warnings written above it. The demo's
// report shares its summary lines and its way of writing counts and times.
package syncreport

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sync/walk"
)

// Report is what `hrsync sync` tells its operator about one account's run: each
// collection's summary as it finishes, and a closing line of totals, on stdout. On a terminal
// (stderr is one) it also opens with the run's plan (the collections, the pages and requests
// expected, and the time they take at the account's rate) and keeps one progress line for the
// whole run on stderr, redrawn in place, with the log's warnings and errors written above it
// (its other lines say what the report says). Piped, the logs stay as they are and no control
// character is written.
type Report struct {
	mu     sync.Mutex
	out    io.Writer // the plan, the summaries, the totals
	term   io.Writer // the progress line and the log
	tty    bool
	prefix string // the account's, before every line
	rate   int    // requests a minute; 0: unpaced
	dryRun bool
	now    func() time.Time
	width  int // the progress line is cut to this many characters

	started time.Time
	pages   []int64 // per collection: the pages expected, then as its walks learn them
	reqs    []int64 // per collection: the requests its walks are expected to make (Planned.Requests)
	done    []int64 // per collection: the pages read, over its walks
	before  []int64 // per collection: the pages its earlier walks read
	walk    []int   // per collection: the walk going on
	cur     int     // the collection walking, from 0; -1 none
	line    string  // the progress line on the terminal, "" none
	drawn   time.Time
	results []walk.Result
	closed  bool
	// accepting is what the run's options accept without a person (their holds' labels).
	accepting accepting
}

// accepting is what a run's options accept without a person: the guards accepted for good
// (sync.guards.accept) and the shrink guard (--allow-mass-delete).
type accepting struct {
	forGood         []string
	allowMassDelete bool
}

// redrawEvery bounds how often the progress line is redrawn: a fast source reads hundreds of
// pages a second.
const redrawEvery = 100 * time.Millisecond

// progressWidth is the progress line's width at most, so that it fits an 80-column terminal
// and \r redraws it whole.
const progressWidth = 79

// terminal is a writer that says whether it is a terminal, as a test's stand-in for one does.
type terminal interface{ IsTerminal() bool }

// IsTerminal reports whether w is a terminal: a character device, or a writer that says so.
func IsTerminal(w io.Writer) bool {
	if t, ok := w.(terminal); ok {
		return t.IsTerminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// New is the report of one account's run: its plan, progress and log on term when tty (term is
// a terminal), its summaries and totals on out, each line after prefix (the account's); the
// time left is told at ratePerMinute (0: unpaced). now is the clock, time.Now when nil.
func New(out, term io.Writer, tty bool, prefix string, ratePerMinute int, dryRun bool, now func() time.Time) *Report {
	if now == nil {
		now = time.Now
	}
	return &Report{out: out, term: term, tty: tty, prefix: prefix, rate: ratePerMinute, dryRun: dryRun,
		now: now, width: progressWidth, started: now(), cur: -1}
}

// Options sets the sync's hooks: the plan and the progress on a terminal only (planning reads a
// first page of each collection the ledger cannot size), the summaries always.
func (r *Report) Options(o *walk.Options) {
	o.Finished = r.finished
	r.accepting = accepting{forGood: o.AcceptForGood, allowMassDelete: o.AllowMassDelete}
	if r.tty {
		o.Planned, o.Progress = r.planned, r.progress
	}
}

// Begin says, on a terminal, that the run is being planned: sizing a collection the ledger
// cannot may take a paced request each before the plan is told.
func (r *Report) Begin(collections int) {
	if !r.tty {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.draw(r.prefix + fmt.Sprintf("planning: sizing %s…", Plural(int64(collections), "collection")))
}

// Logger is the command's logger: piped, as configured; on a terminal, warnings and errors
// only, written above the progress line.
func (r *Report) Logger(cfg config.Settings) *slog.Logger {
	if !r.tty {
		return cfg.Logger(r.term)
	}
	return slog.New(minLevel{min: slog.LevelWarn, Handler: cfg.Logger(logAbove{r}).Handler()})
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}

// logAbove writes log lines to the terminal above the progress line (a handler writes a record
// in one Write).
type logAbove struct{ r *Report }

func (l logAbove) Write(p []byte) (int, error) {
	l.r.mu.Lock()
	defer l.r.mu.Unlock()
	l.r.above(l.r.term, string(p))
	return len(p), nil
}

// above writes text to w with the progress line out of its way: cleared first, drawn again
// under it.
func (r *Report) above(w io.Writer, text string) {
	line := r.line
	if line != "" {
		fmt.Fprint(r.term, "\r\033[K")
		r.line = ""
	}
	fmt.Fprint(w, text)
	if line != "" && r.cur >= 0 {
		r.draw(line)
	}
}

// draw puts line on the terminal in place of the one there.
func (r *Report) draw(line string) {
	fmt.Fprint(r.term, "\r\033[K"+line)
	r.line = line
	r.drawn = r.now()
}

// planned writes the opening lines: what the run will walk and what it will cost.
func (r *Report) planned(p walk.Plan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pages = make([]int64, len(p.Collections))
	r.done = make([]int64, len(p.Collections))
	r.before = make([]int64, len(p.Collections))
	r.walk = make([]int, len(p.Collections))
	r.reqs = make([]int64, len(p.Collections))
	for i, c := range p.Collections {
		r.pages[i], r.reqs[i] = c.Pages, c.Requests
	}
	if p.Refused {
		// The key was refused while sizing: the run stops at once and its error says so; a
		// plan of unknowns would only hide it.
		r.above(r.out, "")
		return
	}
	r.above(r.out, r.prefix+planLine(p, r.rate)+"\n"+r.prefix+"  "+planPages(p)+"\n")
}

// planLine is the plan's first line: "plan: 15 collections, 1,185 pages, ~1,190 requests,
// ~20m14s at 60 requests a minute (sized by each collection's first page)".
func planLine(p walk.Plan, rate int) string {
	sized := p.Sized()
	estimate := sized[walk.SizedByLastRun] > 0 || sized[walk.Unsized] > 0
	about := ""
	if estimate {
		about = "~"
	}
	s := fmt.Sprintf("plan: %s, %s%s pages, %s%s requests", Plural(int64(len(p.Collections)), "collection"),
		about, Thousands(p.Pages()), about, Thousands(p.Requests()))
	if rate > 0 {
		s += fmt.Sprintf(", ~%s at %d requests a minute", clock(Paced(int(p.Requests()), rate)), rate)
	} else {
		s += ", unpaced (source.rate_limit 0)"
	}
	var how []string
	switch n, all := sized[walk.SizedByLastRun], len(p.Collections)-sized[walk.NotOffered]; {
	case n > 0 && n == all:
		how = append(how, "an estimate: the pages of the last run")
	case n > 0:
		how = append(how, fmt.Sprintf("an estimate: %d by the last run", n))
	}
	if n := sized[walk.SizedByFirstPage]; n > 0 {
		if len(how) == 0 && n+sized[walk.NotOffered] == len(p.Collections) {
			how = append(how, "sized by each collection's first page")
		} else {
			how = append(how, fmt.Sprintf("%d sized by their first page", n))
		}
	}
	if n := sized[walk.Unsized]; n > 0 {
		how = append(how, fmt.Sprintf("%d unknown until walked", n))
	}
	if p.Probes > 0 {
		how = append(how, fmt.Sprintf("%s made to size them", Plural(p.Probes, "request")))
	}
	if len(how) > 0 {
		s += " (" + strings.Join(how, "; ") + ")"
	}
	return s
}

// planPages is the plan's second line: each collection's pages.
func planPages(p walk.Plan) string {
	parts := make([]string, len(p.Collections))
	for i, c := range p.Collections {
		switch {
		case c.Sized == walk.NotOffered:
			parts[i] = string(c.Resource) + " (not offered)"
		case c.Sized == walk.Unsized:
			parts[i] = string(c.Resource) + " ?"
		default:
			parts[i] = string(c.Resource) + " " + Thousands(c.Pages)
		}
		if c.Window != nil {
			parts[i] += " (window)"
		}
	}
	return "pages: " + strings.Join(parts, ", ")
}

// progress redraws the progress line: the collection of how many, its pages, the run's pages,
// and the time left at the account's rate.
func (r *Report) progress(p walk.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := p.Collection - 1
	if i < 0 || i >= len(r.pages) {
		return // not of the plan
	}
	first := r.cur != i || r.walk[i] != p.Walk
	if r.walk[i] != p.Walk {
		r.before[i] = r.done[i]
		r.walk[i] = p.Walk
	}
	r.cur = i
	r.done[i] = r.before[i] + p.PagesDone
	if p.PagesTotal > 0 {
		r.pages[i] = max(r.before[i]+p.PagesTotal, r.done[i])
	}
	last := p.PagesTotal > 0 && p.PagesDone >= p.PagesTotal
	if !first && !last && r.now().Sub(r.drawn) < redrawEvery {
		return
	}
	r.draw(r.progressLine(p))
}

// progressLine is the line for p. The time left is that of the requests still to make: the
// rest of the walk going on (a page a request), and the requests planned for the collections
// after it (a one-page collection read by the plan makes none).
func (r *Report) progressLine(p walk.Progress) string {
	var done, left, requests int64
	for j := range r.pages {
		done += r.done[j]
		switch {
		case j == r.cur:
			left += max(r.pages[j]-r.done[j], 0)
			requests += max(r.pages[j]-r.done[j], 0)
		case j > r.cur:
			left += r.pages[j]
			requests += r.reqs[j]
		}
	}
	total := "?"
	if p.PagesTotal > 0 {
		total = Thousands(p.PagesTotal)
	}
	name := string(p.Resource)
	if p.Walk > 1 {
		name += fmt.Sprintf(" (walk %d)", p.Walk)
	}
	remaining := "?"
	switch elapsed := r.now().Sub(r.started); {
	case r.rate > 0:
		remaining = "~" + clock(Paced(int(requests), r.rate))
	case done > 0:
		remaining = "~" + clock(time.Duration(float64(elapsed)/float64(done)*float64(requests)))
	}
	line := fmt.Sprintf("%s%d/%d %s: page %s/%s · %s/%s pages in all · %s left", r.prefix, p.Collection, p.Collections, name,
		Thousands(p.PagesDone), total, Thousands(done), Thousands(done+left), remaining)
	if utf8.RuneCountInString(line) > r.width {
		line = string([]rune(line)[:r.width-1]) + "…"
	}
	return line
}

// finished writes a collection's summary as soon as it finishes.
func (r *Report) finished(res walk.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, res)
	r.cur = -1 // no line until the next collection's first page
	var b strings.Builder
	printResult(&b, r.prefix, res, r.dryRun, r.accepting)
	r.above(r.out, b.String())
}

// Close ends the report, once: the progress line cleared, and the closing line of totals when
// any collection ran.
func (r *Report) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	r.cur = -1
	if r.line != "" {
		fmt.Fprint(r.term, "\r\033[K")
		r.line = ""
	}
	if len(r.results) > 0 {
		fmt.Fprintln(r.out, r.prefix+totalsLine(r.results, r.dryRun, r.now().Sub(r.started)))
	}
}

// totalsLine is the closing line: "total: 15 collections in 19m45s, 1,185 pages, 1,190 requests;
// 61,002 records: 61,002 new, 0 changed, 0 unchanged, 0 deleted", and what did not end ok.
func totalsLine(rs []walk.Result, dryRun bool, took time.Duration) string {
	var pages, requests, records, inserted, updated, unchanged, deleted, refused int64
	statuses := map[string]int{}
	var order []string
	for _, r := range rs {
		pages += r.Pages
		requests += r.Requests
		if r.Status != sink.RunUnavailable {
			records += r.DistinctRecords
		}
		inserted, updated, unchanged, deleted, refused = inserted+r.Inserted, updated+r.Updated, unchanged+r.Unchanged,
			deleted+r.Deleted, refused+r.DeletionsRefused
		if r.Status != sink.RunOK {
			if statuses[r.Status] == 0 {
				order = append(order, r.Status)
			}
			statuses[r.Status]++
		}
	}
	s := fmt.Sprintf("total: %s in %s, %s pages, %s requests; %s records: %s new, %s changed, %s unchanged, %s deleted",
		Plural(int64(len(rs)), "collection"), clock(took), Thousands(pages), Thousands(requests), Thousands(records),
		Thousands(inserted), Thousands(updated), Thousands(unchanged), Thousands(deleted))
	if refused > 0 {
		s += fmt.Sprintf(", %s deletions refused", Thousands(refused))
	}
	for _, st := range order {
		s += fmt.Sprintf("; %d %s", statuses[st], statusWord(st, dryRun))
	}
	if dryRun {
		s += " (dry run: nothing written)"
	}
	return s
}

// clock writes a duration as a countdown does: 19m45s, 1h02m00s, 14s, 0.35s.
func clock(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dh%02dm%02ds", int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second))
}

// PrintResult writes what a run did to a collection, after prefix, as `hrsync sync` prints
// it: one line, and under it the guards that held the load or were accepted and the changes
// worth a look.
func PrintResult(w io.Writer, prefix string, r walk.Result, dryRun bool) {
	printResult(w, prefix, r, dryRun, accepting{})
}

// statusWord is how a summary says a run's status: a dry run's held load "would be held".
func statusWord(status string, dryRun bool) string {
	if status == sink.RunHeld && dryRun {
		return "would be held"
	}
	return status
}

func printResult(w io.Writer, prefix string, r walk.Result, dryRun bool, acc accepting) {
	fmt.Fprint(w, prefix)
	if r.Status == sink.RunUnavailable {
		// Skipped: nothing was walked or written, and there is nothing to count.
		fmt.Fprintf(w, "%s: %s — skipped: %s\n", r.Resource, r.Status, r.Error)
		return
	}
	verb := ""
	switch {
	case dryRun:
		verb = " (dry run: nothing written)"
	case r.Status == sink.RunHeld:
		verb = " (nothing written)"
	}
	if r.Window != nil {
		// Only part of the collection was walked: the counts are the window's.
		verb += " (window " + r.Window.String() + ")"
	}
	fmt.Fprintf(w, "%s: %s%s — %d records: %d new, %d changed, %d unchanged, %d deleted",
		r.Resource, statusWord(r.Status, dryRun), verb, r.DistinctRecords, r.Inserted, r.Updated, r.Unchanged, r.Deleted)
	if r.DeletionsRefused > 0 {
		fmt.Fprintf(w, ", %d deletions refused", r.DeletionsRefused)
	}
	fmt.Fprintf(w, "; %d pages, %d requests, %d retries, %d rate-limited, %d walks",
		r.Pages, r.Requests, r.Retries, r.RateLimited, r.Walks)
	// A run that failed before it started (the warehouse refused its ledger row) has no end.
	if !r.FinishedAt.IsZero() && !r.StartedAt.IsZero() {
		fmt.Fprintf(w, ", %s", r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	printHolds(w, prefix+"  ", r, dryRun, acc)
	printWorthALook(w, prefix+"  ", r)
}

// printHolds writes a line for each guard the load tripped: what held it, before → after, with
// the key that accepts it, or who accepted it and why.
func printHolds(w io.Writer, prefix string, r walk.Result, dryRun bool, acc accepting) {
	for _, h := range r.Holds {
		switch {
		case !h.Accepted && dryRun:
			fmt.Fprintf(w, "%swould be held: %s [%s]\n", prefix, h.Message, h.Key())
		case !h.Accepted:
			fmt.Fprintf(w, "%sheld: %s [%s]\n", prefix, h.Message, h.Key())
		case slices.Contains(acc.forGood, h.Key()):
			fmt.Fprintf(w, "%saccepted for good (sync.guards.accept): %s\n", prefix, h.Message)
		case acc.allowMassDelete && h.Guard == sink.GuardShrink:
			fmt.Fprintf(w, "%saccepted (--allow-mass-delete): %s\n", prefix, h.Message)
		case r.AcceptedBy != "":
			fmt.Fprintf(w, "%saccepted by %s (%q): %s\n", prefix, r.AcceptedBy, r.AcceptReason, h.Message)
		default:
			fmt.Fprintf(w, "%saccepted: %s\n", prefix, h.Message)
		}
	}
	switch {
	case r.Status == sink.RunHeld && !dryRun && r.StillHeld:
		fmt.Fprintf(w, "%sstill held, by the same guards as the last run: nothing of this load was written\n", prefix)
	case r.Status == sink.RunHeld && !dryRun:
		fmt.Fprintf(w, "%snothing of this load was written: the warehouse, its history and the replica are as they were\n", prefix)
	case r.Lifted && r.AcceptedBy == "" && !dryRun:
		fmt.Fprintf(w, "%sthe hold of the last run lifted: the source is back within the guards\n", prefix)
	}
}

// worthALook is how far a share must move, in points, for the summary to name it.
const worthALook = 0.05

// maxWorthALook bounds the changes worth a look named per collection.
const maxWorthALook = 8

// printWorthALook writes the changes of the load's profile worth a look, whether or not a guard
// tripped: the columns and members whose filled share moved by worthALook or more, and the
// references whose share pointing at no listed record rose by as much. A first load (nothing
// served before) and an empty walk have nothing to compare; what a hold names already is not
// named twice.
func printWorthALook(w io.Writer, prefix string, r walk.Result) {
	p := r.Profile
	if p == nil || p.Before == 0 || p.After == 0 {
		return
	}
	named := map[string]bool{}
	for _, h := range r.Holds {
		named[h.Key()] = true
	}
	var lines []string
	for _, c := range p.Columns {
		name := string(r.Resource) + "." + c.Column
		if c.Member {
			name += " (a member the source sends)"
		}
		before, after := float64(c.FilledBefore)/float64(p.Before), float64(c.FilledAfter)/float64(p.After)
		if diff := after - before; (diff >= worthALook || -diff >= worthALook) && !named[sink.GuardKey(sink.GuardFill, r.Resource, c.Column)] {
			lines = append(lines, fmt.Sprintf("%s: %s → %s filled (%s of %s records → %s of %s)", name,
				sink.Percent(c.FilledBefore, p.Before), sink.Percent(c.FilledAfter, p.After),
				Thousands(c.FilledBefore), Thousands(p.Before), Thousands(c.FilledAfter), Thousands(p.After)))
		}
		if !c.Reference || c.FilledAfter == 0 || named[sink.GuardKey(sink.GuardUnlisted, r.Resource, c.Column)] {
			continue
		}
		ub := 0.0
		if c.FilledBefore > 0 {
			ub = float64(c.UnlistedBefore) / float64(c.FilledBefore)
		}
		if float64(c.UnlistedAfter)/float64(c.FilledAfter)-ub >= worthALook {
			lines = append(lines, fmt.Sprintf("%s: %s → %s point at no listed record (%s of %s → %s of %s)", name,
				sink.Percent(c.UnlistedBefore, c.FilledBefore), sink.Percent(c.UnlistedAfter, c.FilledAfter),
				Thousands(c.UnlistedBefore), Thousands(c.FilledBefore), Thousands(c.UnlistedAfter), Thousands(c.FilledAfter)))
		}
	}
	if len(lines) > maxWorthALook {
		lines = append(lines[:maxWorthALook], fmt.Sprintf("and %d more (the run's profile: load_profiles)", len(lines)-maxWorthALook))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%sworth a look: %s\n", prefix, l)
	}
}

// Paced is how long n requests take at the client's pacing of perMinute (evenly spaced, 2%
// wider than the budget: see client.Options.RateLimit).
func Paced(n, perMinute int) time.Duration {
	return time.Duration(float64(n) * 1.02 * float64(time.Minute) / float64(perMinute))
}

// Plural is n and its unit: "1 second", "3 seconds".
func Plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}

// Thousands writes n with thousands separators: 2,500.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + Thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
