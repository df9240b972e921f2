package sink

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
)

// Where a row came from: the source (a walk, or a create's answer), a create here, or the seed
// rows a new warehouse starts with.
const (
	originSource = "source"
	originLocal  = "local"
	originSeed   = "seed"
)

// merger builds and runs the merge statements of one staged walk, from the collection's
// declared table.
type merger struct {
	d                   dialect
	stage, latest, seen string
	delta               string // the ids the merge writes, and why (classify)
	unique              bool   // the stage holds each id once: no de-duplicated copy is needed
	scope               string // "" or "\n AND <condition>": the rows the walk covered (Load.Within)
	// written collects the tables the merge wrote rows of (for statistics, see Load.Merge).
	written map[string]bool
	// gone holds the served rows in scope the walk did not list (findGone).
	gone string
	// staged is what was counted of the walk while it was staged (Load.profile).
	staged *stagedProfile
}

// wrote notes that the merge wrote n rows of table.
func (m merger) wrote(table string, n int64) {
	if n > 0 && m.written != nil {
		m.written[table] = true
	}
}

// merge applies the staged walk of table t: nested references to other tables first, then the
// records (only those that changed), then references to t itself (managers the collection does
// not list), then, for a complete walk, soft deletes. Before it writes anything it profiles the
// load and weighs it against the guards (guards.go): a load that trips one the options do not
// accept is held, and merge returns what it found without writing (the caller rolls back).
func (m *merger) merge(ctx context.Context, tx *sqlx.Tx, t *table, opts MergeOptions) (MergeResult, error) {
	if err := m.prepare(ctx, tx); err != nil {
		return MergeResult{}, err
	}
	res, err := m.classify(ctx, tx, t)
	if err != nil {
		return res, err
	}
	if opts.Unguarded && !opts.Complete {
		// Records written one by one: nothing to weigh, and nothing to delete.
		return res, m.write(ctx, tx, t, "", 0, &res)
	}
	if err := m.findGone(ctx, tx, t); err != nil {
		return res, err
	}
	g := opts.Guards.withDefaults()
	if res.Profile, err = m.profile(ctx, tx, t, m.staged, g.MinRecords); err != nil {
		return res, err
	}
	staged := res.Inserted + res.Updated + res.Unchanged // classify counted the staged records
	gone, fromSource, err := m.deletions(ctx, tx, t.name, opts, staged)
	if err != nil {
		return res, err
	}
	accept := func(key string) bool {
		return slices.Contains(opts.Accept, key) || (opts.AllowMassDelete && key == GuardKey(GuardShrink, Resource(t.name), ""))
	}
	var widened *windowShrink
	if opts.Widened != nil && opts.Complete && gone != "" && m.scope == "" {
		if widened, err = m.windowShrink(ctx, tx, t, gone, *opts.Widened); err != nil {
			return res, err
		}
	}
	if !opts.Unguarded {
		res.Holds = guard(Resource(t.name), res.Profile, res, fromSource, opts.Complete && gone != "", g, accept, widened)
	}
	if res.Held() {
		if !opts.Complete || gone == "" {
			fromSource = 0
		}
		res.DeletionsRefused = fromSource
		return res, nil
	}
	return res, m.write(ctx, tx, t, gone, fromSource, &res)
}

// write writes what the merge found: references, records, references to t itself, deletions.
func (m *merger) write(ctx context.Context, tx *sqlx.Tx, t *table, gone string, fromSource int64, res *MergeResult) error {
	if err := m.references(ctx, tx, t, false); err != nil {
		return err
	}
	if err := m.upsert(ctx, tx, t); err != nil {
		return err
	}
	if err := m.references(ctx, tx, t, true); err != nil {
		return err
	}
	return m.softDelete(ctx, tx, t.name, gone, fromSource, res)
}

// changed is true when any of cols differs between rows a and b, or when a is not a served
// source record (see dialect.comparable).
func (m merger) changed(a, b string, cols []colDef) string {
	var l, r []string
	for _, c := range cols {
		if c.name == "id" {
			continue
		}
		l = append(l, m.d.comparable(c.kind, a+"."+c.name))
		r = append(r, m.d.comparable(c.kind, b+"."+c.name))
	}
	return "((" + strings.Join(l, ", ") + ") IS DISTINCT FROM (" + strings.Join(r, ", ") + ") OR " + a + ".origin <> '" + originSource + "')"
}

func exec(ctx context.Context, tx *sqlx.Tx, q string, args ...any) (int64, error) {
	r, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", firstWords(q), err)
	}
	return r.RowsAffected()
}

func firstWords(q string) string {
	f := strings.Fields(q)
	return strings.Join(f[:min(4, len(f))], " ")
}

// prepare keeps the last staged version of each id (a record seen twice during a shifting walk
// is taken as last seen) and serializes the merge with creates and other merges. A walk with no
// duplicates (the rule) is merged from the staging table itself.
func (m *merger) prepare(ctx context.Context, tx *sqlx.Tx) error {
	if err := m.d.serializeWrites(ctx, tx); err != nil {
		return fmt.Errorf("serialize writes: %w", err)
	}
	if _, err := exec(ctx, tx, `DROP TABLE IF EXISTS `+m.latest); err != nil {
		return err
	}
	if m.unique {
		m.latest = m.stage
	} else {
		_, err := exec(ctx, tx, `CREATE TEMPORARY TABLE `+m.latest+` AS SELECT * FROM `+m.stage+
			` WHERE seq IN (SELECT max(seq) FROM `+m.stage+` GROUP BY id)`)
		if err != nil {
			return err
		}
	}
	return m.d.indexStaged(ctx, tx, m.latest)
}

// classify compares the staged records with the table once, before the merge: the ids that
// need a write go into the delta table with what they need ('new': not in the table; 'back':
// there but not served, or a seeded row the source's record of its id replaces: new to what is
// served as the source's; 'changed'), and the counts come from it. The writes then touch only
// those ids, so a nightly merge compares every row once, not once to count and again to write.
func (m merger) classify(ctx context.Context, tx *sqlx.Tx, t *table) (MergeResult, error) {
	var res MergeResult
	visible := t.visible("t")
	for _, q := range []string{
		`DROP TABLE IF EXISTS ` + m.delta,
		`CREATE TEMPORARY TABLE ` + m.delta + ` AS
SELECT s.id, CASE WHEN t.id IS NULL THEN 'new' WHEN NOT (` + visible + `) OR t.origin = '` + originSeed + `' THEN 'back' ELSE 'changed' END AS need
FROM ` + m.latest + ` s LEFT JOIN ` + t.name + ` t ON t.id = s.id
WHERE t.id IS NULL OR NOT (` + visible + `) OR ` + m.changed("t", "s", t.cols),
	} {
		if _, err := exec(ctx, tx, q); err != nil {
			return res, fmt.Errorf("classify %s: %w", t.name, err)
		}
	}
	if err := m.d.indexStaged(ctx, tx, m.delta); err != nil {
		return res, fmt.Errorf("classify %s: %w", t.name, err)
	}
	var total int64
	err := tx.QueryRowxContext(ctx, `SELECT coalesce(sum(CASE WHEN need = 'changed' THEN 0 ELSE 1 END), 0),
    coalesce(sum(CASE WHEN need = 'changed' THEN 1 ELSE 0 END), 0), (SELECT count(*) FROM `+m.latest+`)
FROM `+m.delta).Scan(&res.Inserted, &res.Updated, &total)
	if err != nil {
		return res, fmt.Errorf("classify %s: %w", t.name, err)
	}
	res.Unchanged = total - res.Inserted - res.Updated
	return res, nil
}

// upsert writes what classify found: an UPDATE of the ids there but changed or not served, then
// a plain INSERT of the new ones (no ON CONFLICT arbitration per row: the merge serializes
// writes, so no other writer adds an id in between).
func (m merger) upsert(ctx context.Context, tx *sqlx.Tx, t *table) error {
	var set, sCols []string
	for _, c := range t.cols {
		if c.name != "id" {
			set = append(set, c.name+" = s."+c.name)
		}
		sCols = append(sCols, "s."+c.name)
	}
	now := m.d.now()
	updated, err := exec(ctx, tx, `UPDATE `+t.name+` SET `+strings.Join(set, ", ")+`, listed = true, origin = '`+originSource+`',
    deleted_at = NULL, synced_at = `+now+`
FROM `+m.latest+` s JOIN `+m.delta+` d ON d.id = s.id
WHERE `+t.name+`.id = s.id AND d.need <> 'new'`)
	if err != nil {
		return err
	}
	inserted, err := exec(ctx, tx, `INSERT INTO `+t.name+` (`+strings.Join(colNames(t.cols), ", ")+`, listed, origin, deleted_at, synced_at)
SELECT `+strings.Join(sCols, ", ")+`, true, '`+originSource+`', NULL, `+now+`
FROM `+m.latest+` s JOIN `+m.delta+` d ON d.id = s.id
WHERE d.need = 'new'`)
	m.wrote(t.name, updated+inserted)
	return err
}

// references writes the rows the staged records' nested references carry, for the targets
// other than t (self false: before the records, which point at them) or for t itself (self
// true: after them). Per target, one statement covers every reference pointing at it, and each
// id's fields are picked the same way whatever order the pages came in, so an unchanged source
// writes nothing:
//
// The target gets unlisted rows for ids it does not list (a pattern the collection lacks, a
// manager who left, a department no walk has listed yet), updated only while still unlisted: a
// listed row keeps its own fields. A record's reference to one listed in the same walk writes
// nothing.
func (m merger) references(ctx context.Context, tx *sqlx.Tx, t *table, self bool) error {
	var targets []string
	byTarget := map[string][]refDef{}
	for _, r := range t.refs {
		if (r.target == t.name) != self {
			continue
		}
		if byTarget[r.target] == nil {
			targets = append(targets, r.target)
		}
		byTarget[r.target] = append(byTarget[r.target], r)
	}
	for _, target := range targets {
		refs := byTarget[target]
		if tableOf(target) == nil {
			return fmt.Errorf("merge %s: reference %s points at %s, which is not declared", t.name, refs[0].field, target)
		}
		cols := refs[0].cols // the same for every reference to the target (TestDeclarations)
		var union []string
		for _, r := range refs {
			sel := []string{r.column + " AS id"}
			for _, c := range cols {
				sel = append(sel, r.staged(c.name)+" AS "+c.name)
			}
			union = append(union, "SELECT "+strings.Join(sel, ", ")+" FROM "+m.latest+" WHERE "+r.column+" IS NOT NULL")
		}
		where := "true" // SQLite needs a WHERE before an upsert's ON CONFLICT
		if self {
			where = "NOT EXISTS (SELECT 1 FROM " + m.latest + " l WHERE l.id = p.id) -- listed: written by upsert"
		}
		names := colNames(cols)
		var picks, mine, keep, kept []string
		for _, c := range cols {
			picks = append(picks, m.d.pick(c.kind, c.name))
			mine = append(mine, m.d.comparable(c.kind, target+"."+c.name))
			// An unlisted row keeps what no reference carries any more: one collection's nested
			// form may carry less than another's (a sickness's employee is {id} alone).
			keep = append(keep, c.name+" = coalesce(excluded."+c.name+", "+target+"."+c.name+")")
			kept = append(kept, m.d.comparable(c.kind, "coalesce(excluded."+c.name+", "+target+"."+c.name+")"))
		}
		n, err := exec(ctx, tx, `INSERT INTO `+target+` (id, `+strings.Join(names, ", ")+`, listed, origin, synced_at)
SELECT id, `+strings.Join(picks, ", ")+`, false, '`+originSource+`', `+m.d.now()+` FROM (
    `+strings.Join(union, "\n    UNION ALL\n    ")+`) p
WHERE `+where+`
GROUP BY id
ON CONFLICT (id) DO UPDATE SET `+strings.Join(keep, ", ")+`, synced_at = excluded.synced_at
WHERE NOT `+target+`.listed AND (`+strings.Join(mine, ", ")+`) IS DISTINCT FROM (`+strings.Join(kept, ", ")+`)`)
		if err != nil {
			return fmt.Errorf("merge %s references: %w", target, err)
		}
		m.wrote(target, n)
	}
	return nil
}

// findGone keeps the served rows in the walk's scope that it did not list (any origin) in the
// temporary table m.gone: what a complete walk deletes (deletions), and what the profile's
// served side reads (profile). One pass over the table; the rest reads the few rows it holds.
func (m merger) findGone(ctx context.Context, tx *sqlx.Tx, t *table) error {
	for _, q := range []string{
		`DROP TABLE IF EXISTS ` + m.gone,
		`CREATE TEMPORARY TABLE ` + m.gone + ` AS SELECT id, origin FROM ` + t.name + `
WHERE ` + t.visible(t.name) + `
    AND NOT EXISTS (SELECT 1 FROM ` + m.latest + ` l WHERE l.id = ` + t.name + `.id)` + m.scope,
	} {
		if _, err := exec(ctx, tx, q); err != nil {
			return fmt.Errorf("find the %s the walk did not list: %w", t.name, err)
		}
	}
	return m.d.indexStaged(ctx, tx, m.gone)
}

// deletions finds what a complete walk would soft-delete: the served records the walk did not
// see (m.gone), but those a remembered walk saw. It returns the rows' FROM clause ("" when there
// is nothing to delete or the walk was not complete) and how many of them are the source's.
// Seeded rows (the default pattern and allowance a new warehouse starts with) give way to the
// source's own records once it lists any; they never count against the shrink guard, which
// protects source data, nor as deletions (MergeResult.SeedRetired): the first sync of a new
// warehouse deleted nothing of the source's.
func (m merger) deletions(ctx context.Context, tx *sqlx.Tx, table string, opts MergeOptions, staged int64) (gone string, fromSource int64, err error) {
	if !opts.Complete {
		return "", 0, nil
	}
	origins := "'" + originSource + "'"
	if staged > 0 {
		origins += ", '" + originSeed + "'"
	}
	gone = `FROM ` + m.gone + ` g WHERE origin IN (` + origins + `)
    AND NOT EXISTS (SELECT 1 FROM ` + m.seen + ` s WHERE s.id = g.id)`
	var n int64
	err = tx.QueryRowxContext(ctx, `SELECT count(*), coalesce(sum(CASE WHEN origin = '`+originSource+`' THEN 1 ELSE 0 END), 0) `+gone).Scan(&n, &fromSource)
	if err != nil {
		return "", 0, fmt.Errorf("count deletions: %w", err)
	}
	if n == 0 {
		return "", 0, nil
	}
	return gone, fromSource, nil
}

// windowShrink counts, for a walk of window w that widened to the whole collection, the
// source's records served inside w and those of them the merge would delete (gone, as
// deletions returns it).
func (m merger) windowShrink(ctx context.Context, tx *sqlx.Tx, t *table, gone string, w Window) (*windowShrink, error) {
	scope, err := windowScope(t, &w)
	if err != nil {
		return nil, fmt.Errorf("weigh the window's deletions: %w", err)
	}
	ws := &windowShrink{window: w}
	err = tx.QueryRowxContext(ctx, `SELECT count(*), coalesce(sum(CASE WHEN id IN (SELECT id `+gone+`) THEN 1 ELSE 0 END), 0)
FROM `+t.name+` WHERE `+t.visible(t.name)+` AND origin = '`+originSource+`' AND `+scope).Scan(&ws.before, &ws.gone)
	if err != nil {
		return nil, fmt.Errorf("weigh the window's deletions: %w", err)
	}
	return ws, nil
}

// softDelete retires the rows deletions found (gone), fromSource of them the source's.
func (m merger) softDelete(ctx context.Context, tx *sqlx.Tx, table, gone string, fromSource int64, res *MergeResult) error {
	if gone == "" {
		return nil
	}
	now := m.d.now()
	deleted, err := exec(ctx, tx, `UPDATE `+table+` SET deleted_at = `+now+`, synced_at = `+now+` WHERE id IN (SELECT id `+gone+`)`)
	if err != nil {
		return err
	}
	m.wrote(table, deleted)
	// The writes serialize (prepare): the rows counted are the rows retired.
	res.Deleted, res.SeedRetired = fromSource, deleted-fromSource
	return nil
}
