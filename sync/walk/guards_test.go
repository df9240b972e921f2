package walk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/walk"
)

// blanked is raws with each member named in members sent empty (""), the rest as it was sent.
func blanked(raws []json.RawMessage, members ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(raws))
	for i, raw := range raws {
		for _, m := range members {
			raw = regexp.MustCompile(`"`+m+`":"[^"]*"`).ReplaceAll(raw, []byte(`"`+m+`":""`))
		}
		out[i] = raw
	}
	return out
}

// heldGauge is hrsync_load_held{resource} as gathered from reg.
func heldGauge(t *testing.T, reg *prometheus.Registry, resource sink.Resource) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "hrsync_load_held" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "resource" && l.GetValue() == string(resource) {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no series hrsync_load_held{resource=%q}", resource)
	return 0
}

// guarded is a warehouse synced from a fake upstream of 60 employees, with the metrics and the
// log its syncs share.
type guarded struct {
	t     *testing.T
	up    *upstream
	store *sink.Store
	c     *client.Client
	reg   *prometheus.Registry
	m     *walk.Metrics
	logs  *bytes.Buffer
	log   *slog.Logger
	raws  []json.RawMessage // the employees as the upstream first sends them
	// titled counts those of raws with a job title.
	titled int
}

func newGuarded(t *testing.T, backend string) *guarded {
	t.Helper()
	g := &guarded{t: t, raws: fakeupstream.Generate(60, 42), reg: prometheus.NewRegistry(), logs: &bytes.Buffer{}}
	for _, raw := range g.raws {
		if regexp.MustCompile(`"job_title":"[^"]+"`).Match(raw) {
			g.titled++
		}
	}
	g.up, g.store, g.c = newSync(t, backend, 60, fakeupstream.Options{Employees: g.raws})
	g.m = walk.NewMetrics(g.reg)
	g.m.Configure(seeds)
	g.log = slog.New(slog.NewTextHandler(g.logs, nil))
	if r := g.sync(walk.Options{}); r.Err != nil || r.Inserted != 60 {
		t.Fatalf("first sync: %+v, %v", r.Run, r.Err)
	}
	g.logs.Reset()
	return g
}

// sync runs a sync of the seeds' collections with opts and returns the employees' result.
func (g *guarded) sync(opts walk.Options) walk.Result {
	g.t.Helper()
	opts.Logger, opts.Metrics = g.log, g.m
	rs, _ := walk.New(g.c, g.store, opts).Run(context.Background(), seeds)
	if wp := result(g.t, rs, sink.WorkingPatterns); wp.Status != sink.RunOK {
		g.t.Fatalf("working patterns: %+v, %v", wp.Run, wp.Err)
	}
	return result(g.t, rs, sink.Employees)
}

// state is what must not move while a load is held: the warehouse's version, the employees'
// history, and what is served.
func (g *guarded) state() string {
	g.t.Helper()
	ctx := context.Background()
	v, err := g.store.Version(ctx)
	if err != nil {
		g.t.Fatal(err)
	}
	var history, titled int64
	if err := sinktest.DB(g.store).QueryRowContext(ctx, `SELECT (SELECT count(*) FROM employees_history),
    (SELECT count(*) FROM employees WHERE listed AND deleted_at IS NULL AND job_title <> '')`).Scan(&history, &titled); err != nil {
		g.t.Fatal(err)
	}
	return strings.Join([]string{"version " + itoa(v), "history " + itoa(history), "titled " + itoa(titled),
		"served " + itoa(int64(len(servedPages(g.t, g.store, "/v1/employees"))))}, ", ")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// holds are the guards recorded for ledger row id: key → accepted.
func (g *guarded) holds(id int64) map[string]bool {
	g.t.Helper()
	db := sinktest.DB(g.store)
	rows, err := db.Query(db.Rebind(`SELECT guard, accepted FROM load_holds WHERE run = ?`), id)
	if err != nil {
		g.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var k string
		var a bool
		if err := rows.Scan(&k, &a); err != nil {
			g.t.Fatal(err)
		}
		out[k] = a
	}
	return out
}

// ledger is the ledger's row of run id.
func (g *guarded) ledger(id int64) sink.Run {
	g.t.Helper()
	runs, err := g.store.Runs(context.Background(), 100)
	if err != nil {
		g.t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == id {
			return r
		}
	}
	g.t.Fatalf("no ledger row %d", id)
	return sink.Run{}
}

// logLines are the lines logged containing s.
func (g *guarded) logLines(s string) []string {
	var out []string
	for _, l := range strings.Split(g.logs.String(), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

const fillTitle = "fill:employees.job_title"

// TestBlankColumnIsHeldUntilAccepted: a source that blanks job_title for everyone is held, with
// nothing written (the warehouse's version, the history, what is served), in the ledger (held,
// the guard in load_holds) and the gauge; the scheduled runs after it are held too, quietly
// (one ERROR line over four runs); a person's acceptance publishes the fresh walk and the ledger
// says who and why.
func TestBlankColumnIsHeldUntilAccepted(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			g := newGuarded(t, backend)
			before := g.state()
			g.up.SetEmployees(blanked(g.raws, "job_title"))
			for i := range 4 {
				r := g.sync(walk.Options{})
				var he *walk.HeldError
				if r.Status != sink.RunHeld || !errors.Is(r.Err, walk.ErrHeld) || !errors.As(r.Err, &he) || len(he.Holds) != 1 ||
					he.Holds[0].Key() != fillTitle || !strings.Contains(r.Error, "employees.job_title: ") || !strings.Contains(r.Error, "→ 0% filled") {
					t.Fatalf("run %d: %s, %v; want held by %s", i+1, r.Status, r.Err, fillTitle)
				}
				if r.StillHeld != (i > 0) || r.Lifted {
					t.Errorf("run %d: still held %v, lifted %v", i+1, r.StillHeld, r.Lifted)
				}
				if got := g.state(); got != before {
					t.Errorf("run %d held wrote: %s, was %s", i+1, got, before)
				}
				if l := g.ledger(r.ID); l.Status != sink.RunHeld {
					t.Errorf("run %d: the ledger says %s", i+1, l.Status)
				}
				if h := g.holds(r.ID); len(h) != 1 || h[fillTitle] {
					t.Errorf("run %d: load_holds %v, want %s not accepted", i+1, h, fillTitle)
				}
				if v := heldGauge(t, g.reg, sink.Employees); v != 1 {
					t.Errorf("run %d: hrsync_load_held %v, want 1", i+1, v)
				}
				if v := heldGauge(t, g.reg, sink.WorkingPatterns); v != 0 {
					t.Errorf("run %d: hrsync_load_held{working_patterns} %v, want 0", i+1, v)
				}
			}
			if errs := g.logLines("level=ERROR"); len(errs) != 1 || !strings.Contains(errs[0], `msg="load held`) {
				t.Errorf("%d ERROR lines over four held runs, want one saying load held:\n%s", len(errs), g.logs)
			}
			if still := g.logLines(`level=INFO msg="load still held`); len(still) != 3 {
				t.Errorf("%d INFO lines saying load still held, want 3:\n%s", len(still), g.logs)
			}

			r := g.sync(walk.Options{Accept: &walk.Acceptance{By: "ana", Reason: "titles moved to positions"}})
			if r.Status != sink.RunOK || r.Err != nil || !r.Lifted || r.StillHeld || r.Updated != int64(g.titled) {
				t.Fatalf("accepted: %s, %v, lifted %v, %d changed", r.Status, r.Err, r.Lifted, r.Updated)
			}
			if l := g.ledger(r.ID); l.AcceptedBy != "ana" || l.AcceptReason != "titles moved to positions" {
				t.Errorf("the ledger says accepted by %q because %q", l.AcceptedBy, l.AcceptReason)
			}
			if h := g.holds(r.ID); len(h) != 1 || !h[fillTitle] {
				t.Errorf("load_holds %v, want %s accepted", h, fillTitle)
			}
			if after := g.state(); after == before || !strings.Contains(after, "titled 0,") {
				t.Errorf("accepted, the warehouse is %s (was %s)", after, before)
			}
			if v := heldGauge(t, g.reg, sink.Employees); v != 0 {
				t.Errorf("accepted: hrsync_load_held %v, want 0", v)
			}
			if l := g.logLines("the held load was accepted"); len(l) != 1 || !strings.Contains(l[0], "accepted_by=ana") {
				t.Errorf("the acceptance logged: %q", l)
			}

			// Published: the blank titles are the norm now, and the next run is an ordinary one.
			if r := g.sync(walk.Options{}); r.Status != sink.RunOK || r.Lifted || r.Inserted+r.Updated+r.Deleted != 0 {
				t.Errorf("after the acceptance: %s, lifted %v, wrote %d", r.Status, r.Lifted, r.Inserted+r.Updated+r.Deleted)
			}
		})
	}
}

// TestAcceptingTripsAnotherGuard: a person accepts what held the last run; the fresh walk trips
// another guard too, and is held again, by that one alone (news: said at ERROR), the accepted
// guard recorded as accepted. Accepting again publishes it: what the person accepted before is
// not held again.
func TestAcceptingTripsAnotherGuard(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			g := newGuarded(t, backend)
			before := g.state()
			g.up.SetEmployees(blanked(g.raws, "job_title"))
			if r := g.sync(walk.Options{}); r.Status != sink.RunHeld {
				t.Fatalf("blank titles: %s, %v", r.Status, r.Err)
			}
			g.up.SetEmployees(blanked(g.raws, "job_title", "email"))
			accept := &walk.Acceptance{By: "ana", Reason: "titles moved to positions"}
			r := g.sync(walk.Options{Accept: accept})
			var he *walk.HeldError
			if r.Status != sink.RunHeld || !errors.As(r.Err, &he) || len(he.Holds) != 1 || he.Holds[0].Key() != "fill:employees.email" {
				t.Fatalf("accepting the titles, emails blank too: %s, %v; want held by the emails", r.Status, r.Err)
			}
			if r.StillHeld || r.Lifted || r.AcceptedBy != "" {
				t.Errorf("still held %v, lifted %v, accepted by %q; want news, not lifted, nobody's", r.StillHeld, r.Lifted, r.AcceptedBy)
			}
			if h := g.holds(r.ID); len(h) != 2 || !h[fillTitle] || h["fill:employees.email"] {
				t.Errorf("load_holds %v, want the titles accepted and the emails held", h)
			}
			if l := g.ledger(r.ID); l.AcceptedBy != "" {
				t.Errorf("a held load recorded as accepted by %q", l.AcceptedBy)
			}
			if got := g.state(); got != before {
				t.Errorf("held again, the warehouse moved: %s, was %s", got, before)
			}
			if errs := g.logLines("level=ERROR"); len(errs) != 2 {
				t.Errorf("%d ERROR lines, want 2 (each hold is news):\n%s", len(errs), g.logs)
			}

			r = g.sync(walk.Options{Accept: accept})
			if r.Status != sink.RunOK || !r.Lifted || r.AcceptedBy != "ana" {
				t.Fatalf("accepting again: %s, %v, lifted %v, accepted by %q; want published", r.Status, r.Err, r.Lifted, r.AcceptedBy)
			}
			if h := g.holds(r.ID); len(h) != 2 || !h[fillTitle] || !h["fill:employees.email"] {
				t.Errorf("load_holds %v, want both accepted", h)
			}
			if v := heldGauge(t, g.reg, sink.Employees); v != 0 {
				t.Errorf("published: hrsync_load_held %v", v)
			}
		})
	}
}

// TestHeldStillQuietWhileAGuardComesBack: a scheduled run held by guards the last run knew
// (held or accepted there) is no news; a guard the last run did not trip is.
func TestHeldStillQuietWhileAGuardComesBack(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, "sqlite")
	g.up.SetEmployees(blanked(g.raws, "job_title", "email"))
	if r := g.sync(walk.Options{}); r.Status != sink.RunHeld || r.StillHeld {
		t.Fatalf("both blank: %s, still held %v", r.Status, r.StillHeld)
	}
	// The emails come back: held by the titles alone, the same hold.
	g.up.SetEmployees(blanked(g.raws, "job_title"))
	if r := g.sync(walk.Options{}); r.Status != sink.RunHeld || !r.StillHeld {
		t.Errorf("the emails back: %s, still held %v; want still held", r.Status, r.StillHeld)
	}
	// They go again: the last run did not trip that guard, so it is news.
	g.up.SetEmployees(blanked(g.raws, "job_title", "email"))
	if r := g.sync(walk.Options{}); r.Status != sink.RunHeld || r.StillHeld {
		t.Errorf("the emails gone again: %s, still held %v; want news", r.Status, r.StillHeld)
	}
	if errs := g.logLines("level=ERROR"); len(errs) != 2 {
		t.Errorf("%d ERROR lines, want 2:\n%s", len(errs), g.logs)
	}
}

// TestHoldLiftsByItself: while held, scheduled runs keep checking; when the source is back to
// normal the hold lifts (said at INFO), nothing was written in between, and the gauge is 0.
func TestHoldLiftsByItself(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			g := newGuarded(t, backend)
			before := g.state()
			g.up.SetEmployees(blanked(g.raws, "job_title"))
			for range 2 {
				if r := g.sync(walk.Options{}); r.Status != sink.RunHeld {
					t.Fatalf("blank titles: %s, %v", r.Status, r.Err)
				}
			}
			g.up.SetEmployees(g.raws)
			r := g.sync(walk.Options{})
			if r.Status != sink.RunOK || r.Err != nil || !r.Lifted || r.StillHeld || r.AcceptedBy != "" || r.Inserted+r.Updated+r.Deleted != 0 {
				t.Fatalf("back to normal: %s, %v, lifted %v, accepted by %q, wrote %d", r.Status, r.Err, r.Lifted, r.AcceptedBy, r.Inserted+r.Updated+r.Deleted)
			}
			if got := g.state(); got != before {
				t.Errorf("the warehouse is %s, was %s", got, before)
			}
			if v := heldGauge(t, g.reg, sink.Employees); v != 0 {
				t.Errorf("lifted: hrsync_load_held %v", v)
			}
			if l := g.logLines("the hold lifted"); len(l) != 1 || !strings.Contains(l[0], "level=INFO") {
				t.Errorf("the lift logged: %q", l)
			}
			if errs := g.logLines("level=ERROR"); len(errs) != 1 {
				t.Errorf("%d ERROR lines, want 1:\n%s", len(errs), g.logs)
			}
			if r := g.sync(walk.Options{}); r.Lifted {
				t.Error("lifted again on the next ordinary run")
			}
		})
	}
}

// TestDryRunOfAHeldLoad: a dry run says whether the load would be held, and with a person's
// acceptance that it would be published, but lifts nothing: the ledger, the warehouse and the
// next run still see the hold.
func TestDryRunOfAHeldLoad(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, "sqlite")
	before := g.state()
	g.up.SetEmployees(blanked(g.raws, "job_title"))
	if r := g.sync(walk.Options{}); r.Status != sink.RunHeld {
		t.Fatalf("blank titles: %s, %v", r.Status, r.Err)
	}
	if r := g.sync(walk.Options{DryRun: true}); r.Status != sink.RunHeld || !r.StillHeld {
		t.Errorf("dry run: %s, still held %v; want held, still", r.Status, r.StillHeld)
	}
	r := g.sync(walk.Options{DryRun: true, Accept: &walk.Acceptance{By: "ana", Reason: "checking"}})
	if r.Status != sink.RunOK || r.Updated != int64(g.titled) || r.Lifted {
		t.Errorf("dry run accepting: %s, %d changed, lifted %v; want ok, %d, nothing lifted", r.Status, r.Updated, r.Lifted, g.titled)
	}
	if l := g.logLines("accepted"); len(l) != 0 {
		t.Errorf("a dry run logged an acceptance: %q", l)
	}
	if got := g.state(); got != before {
		t.Errorf("the warehouse is %s, was %s", got, before)
	}
	if r := g.sync(walk.Options{}); r.Status != sink.RunHeld || !r.StillHeld {
		t.Errorf("after the dry runs: %s, still held %v; want still held", r.Status, r.StillHeld)
	}
}

// absenceBook is an account's absences as a fixture changes them night by night.
type absenceBook struct {
	rng     *rand.Rand
	next    int64
	records map[int64][3]string // start, end, notes
}

func (b *absenceBook) add(start time.Time, days int, notes string) {
	b.next++
	b.records[b.next] = [3]string{start.Format(time.DateOnly), start.AddDate(0, 0, days).Format(time.DateOnly), notes}
}

// inside are the ids of the records window w holds (absences match by overlap), in order.
func (b *absenceBook) inside(w sink.Window) []int64 {
	var ids []int64
	for id, r := range b.records {
		if r[0] <= w.To.Format(time.DateOnly) && r[1] >= w.From.Format(time.DateOnly) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func (b *absenceBook) raws() []json.RawMessage {
	ids := slices.Sorted(maps.Keys(b.records))
	out := make([]json.RawMessage, len(ids))
	for i, id := range ids {
		r := b.records[id]
		out[i] = dated(id, r[0], r[1], r[2])
	}
	return out
}

// TestWindowedNightsHoldNothing: a month of ordinary nights (absences booked, edited, moved and
// cancelled, the window sliding with the days, a full walk each week) holds nothing: each
// windowed walk is weighed against the window it walked. A night whose window lost 40 % of its
// absences is held, though that is a few percent of the whole collection's years of history.
func TestWindowedNightsHoldNothing(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			now := time.Date(2026, 10, 1, 2, 0, 0, 0, time.UTC)
			book := &absenceBook{rng: rand.New(rand.NewPCG(7, 38)), records: map[int64][3]string{}}
			for i := range 2000 { // years of history, before any window of the month
				book.add(time.Date(2021, 1, 4, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*1300/2000), book.rng.IntN(5), "history")
			}
			for i := range 200 { // booked around today
				book.add(now.AddDate(0, 0, -85+i*380/200), book.rng.IntN(5), "booked")
			}
			up, store, c := newSync(t, backend, 3, fakeupstream.Options{Collections: map[string][]json.RawMessage{"absences": book.raws()}})
			policy := &walk.WindowPolicy{DaysBack: 90, DaysAhead: 365, FullEvery: 7 * 24 * time.Hour}
			run := func() walk.Result {
				t.Helper()
				at := now
				rs, _ := walk.New(c, store, walk.Options{Concurrency: 2, Window: policy, Now: func() time.Time { return at }}).Run(ctx, []sink.Resource{"absences"})
				return rs[0]
			}
			if r := run(); r.Status != sink.RunOK || r.Inserted != 2200 {
				t.Fatalf("first sync: %s, %d new, %v", r.Status, r.Inserted, r.Err)
			}
			windowed := 0
			for day := 1; day <= 30; day++ {
				now = now.AddDate(0, 0, 1)
				w := sink.NewWindow(now, policy.DaysBack, policy.DaysAhead)
				for range 3 {
					book.add(now.AddDate(0, 0, book.rng.IntN(60)), book.rng.IntN(4), "new")
				}
				in := book.inside(w)
				for range 2 {
					id := in[book.rng.IntN(len(in))]
					r := book.records[id]
					book.records[id] = [3]string{r[0], r[1], r[2] + ", edited"}
				}
				if day%5 == 0 { // moved a week later
					id := in[book.rng.IntN(len(in))]
					r := book.records[id]
					start, _ := time.Parse(time.DateOnly, r[0])
					end, _ := time.Parse(time.DateOnly, r[1])
					book.records[id] = [3]string{start.AddDate(0, 0, 7).Format(time.DateOnly), end.AddDate(0, 0, 7).Format(time.DateOnly), r[2]}
				}
				if day%3 == 0 { // cancelled
					delete(book.records, in[book.rng.IntN(len(in))])
				}
				up.SetCollection("absences", book.raws())
				r := run()
				if r.Status != sink.RunOK || len(r.Holds) != 0 {
					t.Fatalf("day %d (walked %s): %s, %v, holds %v", day, walkedWindow(r), r.Status, r.Err, r.Holds)
				}
				if r.Window != nil {
					windowed++
				}
			}
			if windowed < 15 {
				t.Errorf("%d of 30 nights walked a window, want most", windowed)
			}

			// A night whose window lost 40 % of its absences (someone archived them).
			now = now.AddDate(0, 0, 1)
			w := sink.NewWindow(now, policy.DaysBack, policy.DaysAhead)
			in := book.inside(w)
			for _, id := range in[:len(in)*4/10] {
				delete(book.records, id)
			}
			up.SetCollection("absences", book.raws())
			servedNow := func() (n int64) {
				t.Helper()
				if err := sinktest.DB(store).QueryRowContext(ctx, `SELECT count(*) FROM absences WHERE listed AND deleted_at IS NULL`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			before := servedNow()
			r := run()
			var he *walk.HeldError
			if r.Status != sink.RunHeld || !errors.As(r.Err, &he) || len(he.Holds) != 1 || he.Holds[0].Key() != "shrink:absences" ||
				!strings.Contains(he.Holds[0].Message, "inside the window "+w.String()) {
				t.Fatalf("40%% of the window gone (%d of %d, of %d in all): %s, %v; want held by shrink:absences inside the window",
					len(in)*4/10, len(in), len(book.records)+len(in)*4/10, r.Status, r.Err)
			}
			if got := servedNow(); got != before {
				t.Errorf("held, the warehouse serves %d absences, was %d", got, before)
			}
		})
	}
}

func walkedWindow(r walk.Result) string {
	if r.Window == nil {
		return "all"
	}
	return r.Window.String()
}
