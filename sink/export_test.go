package sink

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/source/v1"
)

// PostgresEmployeeSelect is the store's own employee statement on Postgres (the employees
// table aliased t), without its id condition: the serve benchmark builds its OFFSET baselines
// on it, so they never drift from what the store runs.
func PostgresEmployeeSelect() string {
	t := employeeCollection.table
	return "SELECT " + t.selectList(pgDialect{}, false) + "\nWHERE " + t.visible("t")
}

// MigrateDB runs the migration runner on a database handle of the named dialect: for tests of
// upgrades from a database a previous build left.
func MigrateDB(ctx context.Context, db *sql.DB, d schema.Dialect) ([]int, error) {
	return migrate(ctx, db, map[schema.Dialect]dialect{schema.Postgres: pgDialect{}, schema.SQLite: sqliteDialect{}}[d])
}

// DeclarationMismatches compares the declared collections (collections.go) with the tables the
// migrations made in s: every declared column must exist with its kind's type, every table
// column must be declared or be bookkeeping, every reference must point at a declared table
// whose columns it carries, meta must keep each table's total, and a history must hold every
// column of its table (so a field declared without its history column fails here, not in an
// analyst's query a year on). It returns one line per disagreement.
func DeclarationMismatches(ctx context.Context, s *Store) ([]string, error) {
	var out []string
	bookkeeping := map[string]bool{"origin": true, "deleted_at": true, "synced_at": true}
	meta, err := tableColumns(ctx, s.db.DB, s.d, "meta")
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		have, err := tableColumns(ctx, s.db.DB, s.d, t.name)
		if err != nil {
			return nil, err
		}
		if len(have) == 0 {
			out = append(out, t.name+": declared, but the migrations make no such table")
			continue
		}
		bad, err := historyMismatches(ctx, s, t, have)
		if err != nil {
			return nil, err
		}
		out = append(out, bad...)
		want := map[string]string{}
		for _, c := range t.cols {
			want[c.name] = s.d.columnType(c.kind)
		}
		want["listed"] = s.d.columnType(KindBool)
		for name, typ := range want {
			switch got, ok := have[name]; {
			case !ok:
				out = append(out, t.name+"."+name+": declared, missing from the migrated table")
			case !strings.EqualFold(got, typ):
				out = append(out, t.name+"."+name+": declared "+typ+", migrated "+got)
			}
		}
		for name := range have {
			if _, ok := want[name]; !ok && !bookkeeping[name] {
				out = append(out, t.name+"."+name+": in the migrated table, not declared")
			}
		}
		for b := range bookkeeping {
			if _, ok := have[b]; !ok {
				out = append(out, t.name+"."+b+": bookkeeping column missing")
			}
		}
		if _, ok := meta[t.name+"_total"]; !ok {
			out = append(out, "meta."+t.name+"_total: missing: the table's Total is not kept")
		}
		for _, r := range t.refs {
			target := tableOf(r.target)
			if target == nil {
				out = append(out, t.name+"."+r.column+": points at "+r.target+", which is not declared")
				continue
			}
			for _, c := range r.cols {
				if k := target.kindOf(c.name); k != c.kind {
					out = append(out, fmt.Sprintf("%s.%s: carries %s.%s as kind %d, declared there as %d", t.name, r.field, r.target, c.name, c.kind, k))
				}
			}
			for _, o := range t.refs {
				if o.target == r.target && !slices.Equal(o.cols, r.cols) {
					out = append(out, t.name+"."+r.field+" and "+o.field+": point at "+r.target+" carrying different columns")
				}
			}
		}
	}
	// The history triggers are the declarations' (history.go): migrate made them.
	stale, err := staleHistory(ctx, s.db, s.d, historyTriggers(s.d, tables))
	if err != nil {
		return nil, err
	}
	for _, q := range stale {
		out = append(out, "history triggers differ from the declarations: "+firstWords(q)+"…")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// historyMismatches compares the history of table, if it has or should have one, with the
// table's migrated columns: each must be there with the same type, synced_at aside (a version's
// valid_from is when it was written), and the period columns must be there.
func historyMismatches(ctx context.Context, s *Store, t *table, cols map[string]string) ([]string, error) {
	table := t.name
	name := table + "_history"
	hist, err := tableColumns(ctx, s.db.DB, s.d, name)
	if err != nil {
		return nil, err
	}
	switch {
	case len(hist) == 0 && t.history:
		return []string{name + ": missing: " + table + " has no history"}, nil
	case len(hist) == 0:
		return nil, nil
	case !t.history:
		return []string{name + ": a history the declarations do not know of: add " + table + " to historied"}, nil
	}
	var out []string
	for c, typ := range cols {
		switch got, ok := hist[c]; {
		case c == "synced_at":
		case !ok:
			out = append(out, name+"."+c+": in "+table+", missing from its history")
		case !strings.EqualFold(got, typ):
			out = append(out, name+"."+c+": "+got+", "+typ+" in "+table)
		}
	}
	for _, c := range []string{"valid_from", "valid_to"} {
		if _, ok := hist[c]; !ok {
			out = append(out, name+"."+c+": missing: the history has no period")
		}
	}
	return out, nil
}

// RemakeHistoryWith makes the warehouse's history triggers from a copy of the declarations in
// which table has one more column, name, of kind text: what one more line in its declaration
// (collections.go) brings at the next migrate.
func RemakeHistoryWith(ctx context.Context, s *Store, tableName, name string) error {
	ts := slices.Clone(tables)
	i := slices.IndexFunc(ts, func(t *table) bool { return t.name == tableName })
	if i < 0 {
		return fmt.Errorf("no table %s declared", tableName)
	}
	more := *ts[i]
	more.cols = append(slices.Clone(more.cols), colDef{name: name, kind: KindText})
	ts[i] = &more
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := remakeHistory(ctx, tx, s.d, historyTriggers(s.d, ts)); err != nil {
		return err
	}
	return tx.Commit()
}

// InventoryMismatches compares the inventory (Inventory) with the tables the migrations made in
// s, both ways: a migrated column not inventoried, or an inventoried one not migrated, is a line.
func InventoryMismatches(ctx context.Context, s *Store) ([]string, error) {
	q := `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type IN ('BASE TABLE', 'VIEW')`
	if s.d.name() == schema.SQLite {
		q = `SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'`
	}
	var names []string
	if err := s.db.SelectContext(ctx, &names, q); err != nil {
		return nil, err
	}
	inventoried := map[string]bool{}
	for _, it := range Inventory() {
		key := it.Table + "." + it.Column
		if inventoried[key] {
			return nil, fmt.Errorf("%s: inventoried twice", key)
		}
		inventoried[key] = true
	}
	var out []string
	for _, name := range names {
		cols, err := tableColumns(ctx, s.db.DB, s.d, name)
		if err != nil {
			return nil, err
		}
		for c := range cols {
			if !inventoried[name+"."+c] {
				out = append(out, name+"."+c+": migrated, not in the inventory")
			}
			delete(inventoried, name+"."+c)
		}
	}
	for key := range inventoried {
		out = append(out, key+": in the inventory, not migrated")
	}
	slices.Sort(out)
	return out, nil
}

// StopRenewing stops the renewals of the Postgres lease held (a context TryLock returned), as
// a process that stalls (paused, cut off from the warehouse) stops renewing: the lease expires
// after its TTL while the holder carries on.
func StopRenewing(held context.Context) {
	h, _ := held.Value(heldKey{}).(*heldLock)
	l := h.lock.(*leaseLock)
	close(l.stop)
	<-l.ended
	l.stop = make(chan struct{}) // release closes it again
	l.ended = make(chan struct{})
	close(l.ended)
}

// ReadStatement is a statement serve runs per request on a declared table, as the store
// prepares it: a page (parameters: the first id, the last id, the count), of either shape, or
// one record by id.
type ReadStatement struct {
	Table, Name, SQL string
	ByID             bool
}

// ReadStatements are the per-request read statements of every declared table.
func ReadStatements(s *Store) []ReadStatement {
	var out []ReadStatement
	for _, t := range tables {
		r := s.readsOf(t.name)
		out = append(out, ReadStatement{Table: t.name, Name: "page", SQL: r.pageQuery},
			ReadStatement{Table: t.name, Name: "page, every column", SQL: r.pageFullQuery},
			ReadStatement{Table: t.name, Name: "by id", SQL: r.byIDQuery, ByID: true})
	}
	return out
}

// FullPages is a store whose pages are read with every column of every row (pageFullQuery), as
// they were read before a page sent only sent where a row keeps it: serve's answers over it are
// what the answers over the store must be.
type FullPages struct{ *Store }

func (f FullPages) ListEmployees(ctx context.Context, p v1.Page) (v1.List[v1.Employee], error) {
	return listPageOf(ctx, f.Store, employeeCollection, p, true)
}

func (f FullPages) ListWorkingPatterns(ctx context.Context, p v1.Page) (v1.List[v1.WorkingPattern], error) {
	return listPageOf(ctx, f.Store, patternCollection, p, true)
}

func (f FullPages) ListRecords(ctx context.Context, collection string, p v1.Page) (v1.List[v1.Record], error) {
	c, ok := wireCollections[collection]
	if !ok {
		return v1.List[v1.Record]{}, ErrUnknownCollection
	}
	return listPageOf(ctx, f.Store, c, p, true)
}
