package sink

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
)

// A load's profile (LoadProfile) is what the guards weigh: per column of the collection's table,
// and per member of its extra column, how many records hold a value among those served in the
// walk's scope before the merge and among those staged.
//
// It costs a nightly merge almost nothing (docs/benchmarks.md, load guards), because neither side
// is counted by reading every row. The staged side is counted in Go as pages are staged
// (stagedProfile). The served side is worked out from it: the rows classify found unchanged hold
// the same values on both sides, so the served rows' counts are the staged counts, less the
// staged rows that differ from what is served (the delta), plus the served rows that differ
// (the delta's served versions, and the rows the walk no longer lists). Only those few rows are
// read. What the walk did not cover is outside its scope on both sides.
//
// References are weighed by how the walk moves them: how many more (or fewer) of them point at
// no listed row, from the same few rows, against the warehouse as it stands. Only when that moves
// at least MinRecords references, enough to trip the guard, are both sides counted in full.

// maxMembers bounds the undeclared members a profile reports per collection: the most held.
// maxMemberNames bounds the names a staged profile tracks, against a source that names members
// per record.
const (
	maxMembers     = 100
	maxMemberNames = 1000
)

// stagedProfile counts the staged records' values as they are staged: per column of the
// table, the records holding a value and the distinct values (up to DistinctCap, by hash: a
// collision undercounts by one, which a profile can bear); the same for each member of the
// extra column. Its notion of a value is the SQL's (filled, dialect.jsonMembers), so that the
// served side can be worked out from it.
type stagedProfile struct {
	seed    maphash.Seed
	cols    []colDef
	extra   int // the extra column's index in cols, or -1
	rows    int64
	filled  []int64
	sets    []map[uint64]struct{}
	members map[string]*memberCount
}

type memberCount struct {
	filled int64
	set    map[uint64]struct{}
}

func newStagedProfile(t *table) *stagedProfile {
	p := &stagedProfile{seed: maphash.MakeSeed(), cols: t.cols, extra: -1, filled: make([]int64, len(t.cols)),
		sets: make([]map[uint64]struct{}, len(t.cols)), members: map[string]*memberCount{}}
	for i, c := range t.cols {
		if c.name == "extra" && c.kind == KindJSON {
			p.extra = i
		}
	}
	return p
}

// add counts one staged row (row[1+i] is column i's value: seq comes first). Values are as
// staged: nil for null, a string, an int64 or a bool.
func (p *stagedProfile) add(row []any) {
	p.rows++
	for i, c := range p.cols {
		v := row[1+i]
		if !filledValue(c.kind, v) {
			continue
		}
		p.filled[i]++
		if p.sets[i] == nil {
			p.sets[i] = map[uint64]struct{}{}
		}
		if len(p.sets[i]) <= DistinctCap {
			p.sets[i][p.hash(v)] = struct{}{}
		}
		if i == p.extra {
			p.addMembers(v.(string))
		}
	}
}

func (p *stagedProfile) hash(v any) uint64 {
	switch v := v.(type) {
	case string:
		return maphash.String(p.seed, v)
	case int64:
		return maphash.String(p.seed, strconv.FormatInt(v, 10))
	case bool:
		return maphash.String(p.seed, strconv.FormatBool(v))
	}
	return maphash.String(p.seed, fmt.Sprint(v))
}

// addMembers counts the members of one extra object.
func (p *stagedProfile) addMembers(obj string) {
	var ms map[string]json.RawMessage
	if json.Unmarshal([]byte(obj), &ms) != nil {
		return // not an object: no members (the source's extra is always one)
	}
	for k, raw := range ms {
		if !filledMember(raw) {
			continue
		}
		m := p.members[k]
		if m == nil {
			if len(p.members) >= maxMemberNames {
				continue
			}
			m = &memberCount{set: map[uint64]struct{}{}}
			p.members[k] = m
		}
		m.filled++
		if len(m.set) <= DistinctCap {
			m.set[maphash.Bytes(p.seed, raw)] = struct{}{}
		}
	}
}

// reset forgets what was counted (a new walk).
func (p *stagedProfile) reset() {
	p.rows = 0
	clear(p.filled)
	clear(p.sets)
	clear(p.members)
}

// filledValue is filled's test in Go, of a value as staged.
func filledValue(k Kind, v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		switch k {
		case KindText:
			return strings.Trim(v, " ") != ""
		case KindJSON:
			return v != "null" && v != "[]" && v != "{}" && v != `""`
		}
	}
	return true
}

// filledMember is jsonMembers' test in Go, of a member's value as sent.
func filledMember(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return false
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil && strings.Trim(s, " ") != ""
	case '[':
		var a []json.RawMessage
		return json.Unmarshal(raw, &a) != nil || len(a) > 0
	case '{':
		var o map[string]json.RawMessage
		return json.Unmarshal(raw, &o) != nil || len(o) > 0
	}
	return true
}

// filled is the SQL condition that expr, a column of kind k, holds a value: not null, and for
// text not blank (spaces only), for JSON not null, an empty array, an empty object or "".
func filled(k Kind, expr string) string {
	switch k {
	case KindText:
		return expr + " IS NOT NULL AND trim(" + expr + ") <> ''"
	case KindJSON:
		return expr + " IS NOT NULL AND CAST(" + expr + " AS text) NOT IN ('null', '[]', '{}', '\"\"')"
	default:
		return expr + " IS NOT NULL"
	}
}

// profiled are the columns a profile reports: the table's, but its id.
func profiled(t *table) []colDef {
	var cols []colDef
	for _, c := range t.cols {
		if c.name != "id" {
			cols = append(cols, c)
		}
	}
	return cols
}

// sums is one aggregate's counts: rows, per profiled column the rows holding a value, per
// reference the rows pointing at no listed row.
type sums struct {
	rows     int64
	filled   []int64
	unlisted []int64
}

// aggregate counts the rows of `from` (a FROM clause whose rows of t are aliased alias) that
// where keeps: fill (the rows holding a value, per profiled column) and refs (per reference,
// the rows pointing at no listed row of its target as the warehouse stands).
func (m merger) aggregate(ctx context.Context, tx *sqlx.Tx, t *table, from, alias, where string, fill, refs bool) (sums, error) {
	cols := profiled(t)
	sel := []string{"count(*)"}
	if fill {
		for _, c := range cols {
			sel = append(sel, "coalesce(sum(CASE WHEN "+filled(c.kind, alias+"."+c.name)+" THEN 1 ELSE 0 END), 0)")
		}
	}
	var joins []string
	if refs {
		for i, r := range t.refs {
			u := "u" + strconv.Itoa(i)
			joins = append(joins, "LEFT JOIN "+r.target+" "+u+" ON "+u+".id = "+alias+"."+r.column+" AND "+u+".listed AND "+u+".deleted_at IS NULL")
			sel = append(sel, "coalesce(sum(CASE WHEN "+alias+"."+r.column+" IS NOT NULL AND "+u+".id IS NULL THEN 1 ELSE 0 END), 0)")
		}
	}
	q := "SELECT " + strings.Join(sel, ", ") + "\nFROM " + from
	for _, j := range joins {
		q += "\n" + j
	}
	if where != "" {
		q += "\nWHERE " + where
	}
	var s sums
	dest := []any{&s.rows}
	if fill {
		s.filled = make([]int64, len(cols))
		for i := range s.filled {
			dest = append(dest, &s.filled[i])
		}
	}
	if refs {
		s.unlisted = make([]int64, len(t.refs))
		for i := range s.unlisted {
			dest = append(dest, &s.unlisted[i])
		}
	}
	if err := tx.QueryRowxContext(ctx, q).Scan(dest...); err != nil {
		return s, err
	}
	return s, nil
}

// memberSums counts, per member of the extra column of the rows of `from` that where keeps,
// the rows holding a value (and, with distinct, its distinct values).
func (m merger) memberSums(ctx context.Context, tx *sqlx.Tx, from, alias, where string, distinct bool) (map[string][2]int64, error) {
	each, cond, value := m.d.jsonMembers(alias + ".extra")
	sel := "e.key, count(*)"
	if distinct {
		sel += ", count(DISTINCT " + value + ")"
	}
	if where != "" {
		cond = where + " AND " + cond
	}
	rows, err := tx.QueryxContext(ctx, `SELECT `+sel+` FROM `+from+`, `+each+` WHERE `+cond+` GROUP BY e.key`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][2]int64{}
	for rows.Next() {
		var key string
		var n [2]int64
		dest := []any{&key, &n[0]}
		if distinct {
			dest = append(dest, &n[1])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out[key] = n
	}
	return out, rows.Err()
}

// profile works out the load's profile in the merge's transaction, after classify (the delta)
// and gone (the served rows the walk no longer lists), before anything is written. sp is what
// was counted while staging; minRecords is the guards' MinRecords (see the file's comment).
func (m merger) profile(ctx context.Context, tx *sqlx.Tx, t *table, sp *stagedProfile, minRecords int64) (LoadProfile, error) {
	cols := profiled(t)
	index := map[string]int{} // a profiled column's index in t.cols
	for i, c := range t.cols {
		index[c.name] = i
	}
	hasExtra := sp != nil && sp.extra >= 0
	var p LoadProfile
	p.Columns = make([]ColumnProfile, len(cols))
	for i, c := range cols {
		p.Columns[i].Column = c.name
		p.Columns[i].Reference = slices.ContainsFunc(t.refs, func(r refDef) bool { return r.column == c.name })
	}
	members := map[string]*ColumnProfile{}
	member := func(k string) *ColumnProfile {
		if members[k] == nil {
			members[k] = &ColumnProfile{Column: k, Member: true}
		}
		return members[k]
	}

	// The staged side: counted while staging, unless the walk staged a record more than once
	// (a walk the source shifted under): then the merge's own copy of the walk is counted.
	if sp != nil && m.unique {
		p.After = sp.rows
		for i, c := range cols {
			j := index[c.name]
			p.Columns[i].FilledAfter = sp.filled[j]
			n := int64(len(sp.sets[j]))
			p.Columns[i].Distinct, p.Columns[i].Capped = min(n, DistinctCap), n > DistinctCap
		}
		for k, mc := range sp.members {
			c := member(k)
			n := int64(len(mc.set))
			c.FilledAfter, c.Distinct, c.Capped = mc.filled, min(n, DistinctCap), n > DistinctCap
		}
	} else {
		all, err := m.aggregate(ctx, tx, t, m.latest+" s", "s", "", true, false)
		if err != nil {
			return p, fmt.Errorf("profile the staged %s: %w", t.name, err)
		}
		p.After = all.rows
		for i := range cols {
			p.Columns[i].FilledAfter = all.filled[i]
			if sp != nil {
				n := int64(len(sp.sets[index[cols[i].name]]))
				p.Columns[i].Distinct, p.Columns[i].Capped = min(n, DistinctCap), n > DistinctCap
			}
		}
		if hasExtra {
			ms, err := m.memberSums(ctx, tx, m.latest+" s", "s", "", true)
			if err != nil {
				return p, fmt.Errorf("profile the staged %s's members: %w", t.name, err)
			}
			for k, n := range ms {
				c := member(k)
				c.FilledAfter, c.Distinct, c.Capped = n[0], min(n[1], DistinctCap), n[1] > DistinctCap
			}
		}
	}

	// The served side: the staged counts, less the staged rows that differ from what is served,
	// plus the served rows that differ or are gone.
	stagedDiff := m.latest + " s JOIN " + m.delta + " d ON d.id = s.id"
	// The few ids first: the served rows are looked up by id, not scanned.
	servedDiff := `(SELECT id FROM ` + m.delta + ` UNION SELECT id FROM ` + m.gone + `) x JOIN ` + t.name + ` ON ` + t.name + `.id = x.id`
	served := t.visible(t.name) + " AND " + t.name + ".origin <> '" + originSeed + "'"
	less, err := m.aggregate(ctx, tx, t, stagedDiff, "s", "", true, true)
	if err != nil {
		return p, fmt.Errorf("profile the staged %s: %w", t.name, err)
	}
	more, err := m.aggregate(ctx, tx, t, servedDiff, t.name, served, true, true)
	if err != nil {
		return p, fmt.Errorf("profile the served %s: %w", t.name, err)
	}
	p.Before = p.After - less.rows + more.rows
	for i := range cols {
		p.Columns[i].FilledBefore = p.Columns[i].FilledAfter - less.filled[i] + more.filled[i]
	}
	if hasExtra {
		lessM, err := m.memberSums(ctx, tx, stagedDiff, "s", "", false)
		if err != nil {
			return p, fmt.Errorf("profile the staged %s's members: %w", t.name, err)
		}
		moreM, err := m.memberSums(ctx, tx, servedDiff, t.name, served, false)
		if err != nil {
			return p, fmt.Errorf("profile the served %s's members: %w", t.name, err)
		}
		for k := range lessM {
			member(k)
		}
		for k := range moreM {
			member(k)
		}
		for k, c := range members {
			c.FilledBefore = c.FilledAfter - lessM[k][0] + moreM[k][0]
		}
	}

	// References: how many more point nowhere after the walk than before; counted in full
	// only when that is enough to trip the guard.
	rise := make([]int64, len(t.refs))
	counted := false
	for i := range t.refs {
		rise[i] = less.unlisted[i] - more.unlisted[i]
		counted = counted || rise[i] >= minRecords
	}
	if counted {
		all, err := m.aggregate(ctx, tx, t, m.latest+" s", "s", "", false, true)
		if err != nil {
			return p, fmt.Errorf("profile the staged %s's references: %w", t.name, err)
		}
		for i, r := range t.refs {
			c := &p.Columns[slices.IndexFunc(cols, func(c colDef) bool { return c.name == r.column })]
			c.UnlistedCounted, c.UnlistedAfter, c.UnlistedBefore = true, all.unlisted[i], all.unlisted[i]-rise[i]
		}
	}

	out := make([]ColumnProfile, 0, len(members))
	for _, c := range members {
		out = append(out, *c)
	}
	// The most held first (before or after), then by name; at most maxMembers, by name.
	slices.SortFunc(out, func(a, b ColumnProfile) int {
		if x, y := max(a.FilledBefore, a.FilledAfter), max(b.FilledBefore, b.FilledAfter); x != y {
			if x > y {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Column, b.Column)
	})
	out = out[:min(len(out), maxMembers)]
	slices.SortFunc(out, func(a, b ColumnProfile) int { return strings.Compare(a.Column, b.Column) })
	p.Columns = append(p.Columns, out...)
	return p, nil
}
