package sink

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Load guards (docs/sync.md#load-guards). Before a merge writes anything, the staged walk is
// profiled and compared with the rows served now in the same scope (the whole collection, or the
// window the walk covered): a column that went blank, a collection that shrank or grew past its
// bound, references that went from pointing at listed rows to pointing nowhere. A load that trips
// a guard is held: the merge is rolled back whole, so the tables, their history, the models and
// serve's answers stay as they were, and the run ends held until the source returns to normal or
// a person accepts the load.

// The guards, the first part of a Hold's key.
const (
	GuardFill     = "fill"     // a column most records held is blank now
	GuardShrink   = "shrink"   // more records would be deleted than allowed, or the source lists none
	GuardGrowth   = "growth"   // more records are new than allowed
	GuardUnlisted = "unlisted" // a reference now points at rows no collection lists
)

// GuardSettings are the guards' thresholds for one collection. The zero value of a field takes
// its default (DefaultGuards); a negative share turns that guard off.
type GuardSettings struct {
	// MinRecords: a guard trips only when at least this many records are concerned (records
	// deleted, records whose value went blank, references gone unlisted), so that an account of
	// five people is never held for one person's change. Default 10.
	MinRecords int64
	// FillFloor and FillDrop: a column held by at least FillFloor of the served records that no
	// staged record holds, or whose share fell by at least FillDrop (points, as a share), trips
	// the fill guard. Defaults 0.20 and 0.50.
	FillFloor, FillDrop float64
	// MaxShrink: a complete walk may delete at most this share of the served records (and at
	// least MinRecords). Default 0.10 (sync.max_delete_share).
	MaxShrink float64
	// MaxGrowth and GrowthMinRecords: a walk may add at most max(GrowthMinRecords, MaxGrowth ×
	// served) records new to the collection. Defaults 1.0 (doubling) and 100.
	MaxGrowth        float64
	GrowthMinRecords int64
	// UnlistedRise: the share of a reference's values pointing at no listed row may rise by at
	// most this (points, as a share). Default 0.50.
	UnlistedRise float64
}

// DefaultGuards are the guards' defaults: none needs configuring.
var DefaultGuards = GuardSettings{MinRecords: 10, FillFloor: 0.20, FillDrop: 0.50, MaxShrink: DefaultMaxDeleteShare,
	MaxGrowth: 1.0, GrowthMinRecords: 100, UnlistedRise: 0.50}

// Over is g with the non-zero fields of o over its own: a collection's settings over the
// account's.
func (g GuardSettings) Over(o GuardSettings) GuardSettings {
	set := func(dst *float64, v float64) {
		if v != 0 {
			*dst = v
		}
	}
	if o.MinRecords != 0 {
		g.MinRecords = o.MinRecords
	}
	if o.GrowthMinRecords != 0 {
		g.GrowthMinRecords = o.GrowthMinRecords
	}
	set(&g.FillFloor, o.FillFloor)
	set(&g.FillDrop, o.FillDrop)
	set(&g.MaxShrink, o.MaxShrink)
	set(&g.MaxGrowth, o.MaxGrowth)
	set(&g.UnlistedRise, o.UnlistedRise)
	return g
}

// withDefaults fills the zero fields of g from DefaultGuards.
func (g GuardSettings) withDefaults() GuardSettings { return DefaultGuards.Over(g) }

// A Hold is a guard a load tripped: what it compared, before → after, and whether it was let
// through (Accepted: by a person this run, or for good by a setting).
type Hold struct {
	Guard    string   // GuardFill, GuardShrink, GuardGrowth or GuardUnlisted
	Resource Resource // the collection loaded
	Column   string   // the column, for GuardFill and GuardUnlisted; "" otherwise
	// Before and After are what the guard compared: BeforeCount of BeforeOf records then,
	// AfterCount of AfterOf now (values held, references unlisted; for shrink and growth the
	// records served and the records there would be).
	BeforeCount, BeforeOf, AfterCount, AfterOf int64
	// Message says it in one line, before → after: "employees.job_title: 98% → 0% filled
	// (980 of 1,000 records → 0 of 1,000)".
	Message  string
	Accepted bool
}

// Key names the guard for accepting it (MergeOptions.Accept, sync.guards.accept): "fill:" or
// "unlisted:" with collection.column, "shrink:" or "growth:" with the collection.
func (h Hold) Key() string { return GuardKey(h.Guard, h.Resource, h.Column) }

// GuardKey is the key of a guard of resource r (and column, for fill and unlisted).
func GuardKey(guard string, r Resource, column string) string {
	if column == "" {
		return guard + ":" + string(r)
	}
	return guard + ":" + string(r) + "." + column
}

// ValidGuardKey reports whether key is a guard's key for a collection hrsync loads, and says
// what is wrong with it otherwise (for the configuration's sync.guards.accept).
func ValidGuardKey(key string) error {
	guard, rest, ok := strings.Cut(key, ":")
	if !ok {
		return fmt.Errorf("guard %q: want fill:COLLECTION.COLUMN, unlisted:COLLECTION.COLUMN, shrink:COLLECTION or growth:COLLECTION", key)
	}
	coll, column, hasColumn := strings.Cut(rest, ".")
	t := tableOf(coll)
	if t == nil || !slices.Contains(Loadable(), Resource(coll)) {
		return fmt.Errorf("guard %q: %q is not a collection hrsync loads", key, coll)
	}
	switch guard {
	case GuardShrink, GuardGrowth:
		if hasColumn {
			return fmt.Errorf("guard %q: the %s guard is the collection's, without a column", key, guard)
		}
	case GuardFill, GuardUnlisted:
		if !hasColumn {
			return fmt.Errorf("guard %q: the %s guard needs a column (%s:%s.COLUMN)", key, guard, guard, coll)
		}
		ok := false
		if guard == GuardFill {
			// A declared column, or a member the source sends that hrsync does not declare.
			ok = column != "id" && column != "" && strings.Trim(column, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == ""
		} else {
			ok = slices.ContainsFunc(t.refs, func(r refDef) bool { return r.column == column })
		}
		if !ok {
			return fmt.Errorf("guard %q: %s has no column %q the %s guard watches", key, coll, column, guard)
		}
	default:
		return fmt.Errorf("guard %q: no guard %q (fill, unlisted, shrink or growth)", key, guard)
	}
	return nil
}

// LoadProfile is the profile of one load: the records served in the walk's scope before the
// merge and those staged, and per column of the collection's table how many of each hold a
// value.
type LoadProfile struct {
	Before, After int64
	Columns       []ColumnProfile
}

// ColumnProfile is one column's part of a LoadProfile.
type ColumnProfile struct {
	Column                    string
	FilledBefore, FilledAfter int64 // records holding a value (not null, not empty)
	// Distinct counts the distinct values staged, up to DistinctCap (Capped: there were more).
	Distinct int64
	Capped   bool
	// Reference says the column is a reference to another collection (or to its own), and
	// Unlisted* how many of its values point at no row that collection lists, as the warehouse
	// stands before the merge; counted (UnlistedCounted) only when the walk moved at least
	// MinRecords of them, enough to trip the guard (profile.go).
	Reference                     bool
	UnlistedCounted               bool
	UnlistedBefore, UnlistedAfter int64
	// Member says Column is a member the source sends that hrsync does not declare (kept in the
	// extra column, served back as sent: a financial module's amounts), not a column.
	Member bool
}

// DistinctCap bounds the distinct values a profile counts per column: past it, a column is
// "more than" (a name column, an id), and counting on would cost memory for nothing.
const DistinctCap = 1000

// guard weighs a load's profile, what classify found (res) and the deletions a complete walk
// would make (gone of them the source's) against g, and returns the guards it trips, each
// marked Accepted when accept holds its key.
func guard(r Resource, p LoadProfile, res MergeResult, gone int64, complete bool, g GuardSettings, accept func(string) bool, widened *windowShrink) []Hold {
	var holds []Hold
	add := func(h Hold) {
		h.Resource = r
		h.Accepted = accept(h.Key())
		holds = append(holds, h)
	}
	name := string(r)
	if p.Before > 0 && g.MaxShrink >= 0 && complete {
		switch {
		case p.After == 0 && gone > 0:
			add(Hold{Guard: GuardShrink, BeforeCount: p.Before, BeforeOf: p.Before, AfterOf: p.Before,
				Message: fmt.Sprintf("%s: the source lists none while the warehouse serves %s", name, count(p.Before))})
		case gone >= g.MinRecords && float64(gone) > g.MaxShrink*float64(p.Before):
			add(Hold{Guard: GuardShrink, BeforeCount: p.Before, BeforeOf: p.Before, AfterCount: p.Before - gone, AfterOf: p.Before,
				Message: fmt.Sprintf("%s: %s → %s records (%s, %s, would be deleted; at most %s allowed)", name,
					count(p.Before), count(p.Before-gone), count(gone), Percent(gone, p.Before), share(g.MaxShrink))})
		case widened != nil && widened.before > 0 && widened.gone >= g.MinRecords && float64(widened.gone) > g.MaxShrink*float64(widened.before):
			w := widened
			add(Hold{Guard: GuardShrink, BeforeCount: w.before, BeforeOf: w.before, AfterCount: w.before - w.gone, AfterOf: w.before,
				Message: fmt.Sprintf("%s: %s → %s records inside the window %s (%s, %s, would be deleted; at most %s allowed)", name,
					count(w.before), count(w.before-w.gone), w.window, count(w.gone), Percent(w.gone, w.before), share(g.MaxShrink))})
		}
	}
	if p.Before > 0 && g.MaxGrowth >= 0 {
		grown := res.Inserted
		if grown >= g.GrowthMinRecords && float64(grown) > g.MaxGrowth*float64(p.Before) {
			add(Hold{Guard: GuardGrowth, BeforeCount: p.Before, BeforeOf: p.Before, AfterCount: p.Before + grown, AfterOf: p.Before,
				Message: fmt.Sprintf("%s: %s → %s records (%s new, more than the %s allowed)", name,
					count(p.Before), count(p.Before+grown), count(grown), share(g.MaxGrowth))})
		}
	}
	if p.Before == 0 || p.After == 0 {
		return holds // nothing to compare a column with: a first load, or a source listing none (shrink)
	}
	for _, c := range p.Columns {
		before, after := float64(c.FilledBefore)/float64(p.Before), float64(c.FilledAfter)/float64(p.After)
		if g.FillDrop >= 0 && c.FilledBefore-c.FilledAfter >= g.MinRecords &&
			((before >= g.FillFloor && c.FilledAfter == 0) || before-after >= g.FillDrop) {
			add(Hold{Guard: GuardFill, Column: c.Column, BeforeCount: c.FilledBefore, BeforeOf: p.Before, AfterCount: c.FilledAfter, AfterOf: p.After,
				Message: fmt.Sprintf("%s.%s: %s → %s filled (%s of %s records → %s of %s)", name, c.Column,
					Percent(c.FilledBefore, p.Before), Percent(c.FilledAfter, p.After),
					count(c.FilledBefore), count(p.Before), count(c.FilledAfter), count(p.After))})
		}
		// A share rising needs one to rise from: at least MinRecords references served (a few
		// records served before a collection's first real walk compare with nothing).
		if !c.UnlistedCounted || g.UnlistedRise < 0 || c.FilledBefore < g.MinRecords || c.FilledAfter == 0 ||
			c.UnlistedAfter-c.UnlistedBefore < g.MinRecords {
			continue
		}
		ub := 0.0
		if c.FilledBefore > 0 {
			ub = float64(c.UnlistedBefore) / float64(c.FilledBefore)
		}
		if float64(c.UnlistedAfter)/float64(c.FilledAfter)-ub >= g.UnlistedRise {
			add(Hold{Guard: GuardUnlisted, Column: c.Column, BeforeCount: c.UnlistedBefore, BeforeOf: c.FilledBefore, AfterCount: c.UnlistedAfter, AfterOf: c.FilledAfter,
				Message: fmt.Sprintf("%s.%s: %s → %s point at no listed record (%s of %s → %s of %s)", name, c.Column,
					Percent(c.UnlistedBefore, c.FilledBefore), Percent(c.UnlistedAfter, c.FilledAfter),
					count(c.UnlistedBefore), count(c.FilledBefore), count(c.UnlistedAfter), count(c.FilledAfter))})
		}
	}
	return holds
}

// windowShrink is what a walk of a window that widened to the whole collection
// (MergeOptions.Widened) would delete inside the window: gone of the before source records
// served there.
type windowShrink struct {
	window       Window
	before, gone int64
}

// Percent is n of of as a whole percentage that is 0% or 100% only when it is exactly so: how
// the guards' messages, and the summary's lines of a profile, write a share.
func Percent(n, of int64) string {
	if of <= 0 || n <= 0 {
		return "0%"
	}
	if n >= of {
		return "100%"
	}
	v := math.Floor(100 * float64(n) / float64(of))
	return strconv.FormatFloat(min(max(v, 1), 99), 'f', 0, 64) + "%"
}

// share is a setting's share as a percentage ("10%", "12.5%").
func share(f float64) string { return strconv.FormatFloat(100*f, 'f', -1, 64) + "%" }

// count writes n with thousands separators ("12,345").
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
