package sink

import (
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// A collection is declared once (collections.go): its table, its columns with their kinds and
// where each comes from in the record, and its nested references with the table each points
// at. Everything the warehouse does with it is derived from that declaration, for both
// dialects: the staging table and the staged rows, the merge's comparison and writes, the
// unlisted rows of references, the read queries and the scan of their rows, and the triggers
// that keep a table's history (history.go). Nothing is
// positional by hand: every list of columns, every SELECT and every scan is built from the
// same declaration, so they cannot drift apart; and TestDeclarationsMatchMigrations fails
// when the declarations and the migrations disagree.

// Kind is what a column holds. It fixes the column's type in each dialect (dialect.columnType),
// how the merge compares it (dialect.comparable) and how it is read back (dialect.read), so
// that both backends hand Go the same values.
type Kind uint8

// The kinds.
const (
	KindID        Kind = iota + 1 // a record's id, or a reference to one: bigint
	KindInt                       // a count: integer
	KindText                      // text
	KindBool                      // boolean
	KindDate                      // date, read as YYYY-MM-DD
	KindTimestamp                 // timestamp, stored and read in UTC as YYYY-MM-DDTHH:MM:SSZ
	KindDecimal                   // numeric, read back as the source wrote it
	KindJSON                      // a JSON value, kept as the source sent it
)

// column is one column of a collection's table, and how it maps to a field of the record T.
type column[T any] struct {
	name string
	kind Kind
	// class is what kind of personal data the column holds (v1.Class); for a JSON column of
	// several members, the most sensitive of them.
	class v1.Class
	// value is what is staged for the record: nil for null.
	value func(*T) any
	// set gives the record the value read back.
	set func(*T, *cell)
}

// as is the column of class class.
func (c column[T]) as(class v1.Class) column[T] {
	c.class = class
	return c
}

// cell holds one column's value as read: the field of its kind's Go type.
type cell struct {
	s sql.NullString
	i sql.NullInt64
	b sql.NullBool
}

// dest is where a column of kind k is scanned to.
func (c *cell) dest(k Kind) any {
	switch k {
	case KindID, KindInt:
		return &c.i
	case KindBool:
		return &c.b
	}
	return &c.s
}

// idColumn is a record's id: never null.
func idColumn[T any](f func(*T) *int64) column[T] {
	return column[T]{name: "id", kind: KindID,
		value: func(t *T) any { return *f(t) },
		set:   func(t *T, c *cell) { *f(t) = c.i.Int64 }}
}

// textColumn is a text, date, timestamp or decimal column of a string field: "" is null.
func textColumn[T any](name string, kind Kind, f func(*T) *string) column[T] {
	return column[T]{name: name, kind: kind,
		value: func(t *T) any { return nullStr(*f(t)) },
		set:   func(t *T, c *cell) { *f(t) = c.s.String }}
}

// intColumn is an integer (or id) column of an optional field.
func intColumn[T any](name string, kind Kind, f func(*T) **int64) column[T] {
	return optColumn(name, kind, f, func(c *cell) (int64, bool) { return c.i.Int64, c.i.Valid })
}

// boolColumn is a boolean column of an optional field.
func boolColumn[T any](name string, f func(*T) **bool) column[T] {
	return optColumn(name, KindBool, f, func(c *cell) (bool, bool) { return c.b.Bool, c.b.Valid })
}

// optColumn is a column of an optional field *f: a nil pointer is null. read takes the value
// out of a cell, false for null.
func optColumn[T, V any](name string, kind Kind, f func(*T) **V, read func(*cell) (V, bool)) column[T] {
	return column[T]{name: name, kind: kind,
		value: func(t *T) any {
			if p := *f(t); p != nil {
				return *p
			}
			return nil
		},
		set: func(t *T, c *cell) {
			if v, ok := read(c); ok {
				*f(t) = &v
			} else {
				*f(t) = nil
			}
		}}
}

// jsonColumn is a JSON column of a raw-JSON field: empty is null.
func jsonColumn[T any, B ~[]byte](name string, f func(*T) *B) column[T] {
	return column[T]{name: name, kind: KindJSON,
		value: func(t *T) any { return nullRaw(*f(t)) },
		set: func(t *T, c *cell) {
			if c.s.Valid && c.s.String != "" {
				*f(t) = B(c.s.String)
			} else {
				*f(t) = nil
			}
		}}
}

// ref is a nested reference of a collection's records: the record embeds an object of another
// table (an employee's department, line manager…). Its id is the foreign key column; the fields
// the object carries are staged beside the record (as field__column) and, for a target the
// walk never lists in full, written as the target's row (see merger.references). It is read
// back from the target's row.
type ref[T any] struct {
	field  string // the nested object's field in the record, e.g. "department"
	column string // the foreign key, e.g. "department_id"
	target string // the table it points at
	// class is the foreign key's personal-data class (v1.Field.Class of the reference).
	class v1.Class
	// cols are the target's columns the nested object carries, id excluded.
	cols []colDef
	// id is the staged foreign key: the reference's id, or nil when the record has none.
	id func(*T) any
	// carry appends the staged values of the reference's cols (nils when the record has none).
	carry func(*T, []any) []any
	// set gives the record the reference read back from cells (id, then cols); a null id
	// leaves none.
	set func(*T, []cell)
}

// refTo declares a reference of T to a record of type R (the nested object), stored in field
// *f, of the class the wire declares for it (v1.EmployeeRefs). shape declares R's id and the
// columns of target it carries.
func refTo[T, R any](field, column, target string, shape []column[R], f func(*T) **R) ref[T] {
	id, cols := shape[0], shape[1:]
	defs := make([]colDef, len(cols))
	for i, c := range cols {
		defs[i] = colDef{name: c.name, kind: c.kind, class: c.class}
	}
	return ref[T]{field: field, column: column, target: target, class: v1.EmployeeRef(field).Class, cols: defs,
		id: func(t *T) any {
			if r := *f(t); r != nil {
				return id.value(r)
			}
			return nil
		},
		carry: func(t *T, row []any) []any {
			r := *f(t)
			for _, c := range cols {
				if r == nil {
					row = append(row, nil)
				} else {
					row = append(row, c.value(r))
				}
			}
			return row
		},
		set: func(t *T, cells []cell) {
			if !cells[0].i.Valid {
				*f(t) = nil
				return
			}
			r := new(R)
			id.set(r, &cells[0])
			for i, c := range cols {
				c.set(r, &cells[1+i])
			}
			*f(t) = r
		}}
}

// colDef is a column's name and kind, what the SQL needs of it, and its personal-data class.
type colDef struct {
	name  string
	kind  Kind
	class v1.Class
}

// refDef is a reference without its record type: what the SQL needs of it.
type refDef struct {
	field, column, target string
	cols                  []colDef
}

// staged is the name of one of the reference's columns in the staging table.
func (r refDef) staged(col string) string { return r.field + "__" + col }

// table is a collection's declaration without its record type: what the SQL needs.
//
// Every table is a collection the source lists: a walk of it is staged and merged into it, and a
// row seen only as a reference (a manager who left, a department no walk has listed yet) is kept
// with listed = false and not served.
type table struct {
	name string
	// cols are the table's columns the declaration writes, id first, references' foreign keys
	// included (after the plain columns, in the order of refs).
	cols []colDef
	refs []refDef
	// history says every version of every row is kept in <name>_history (history.go).
	history bool
}

// visible is the condition of a served row of the table aliased a.
func (t *table) visible(a string) string {
	return a + ".listed AND " + a + ".deleted_at IS NULL"
}

// colNames are the names of cols.
func colNames(cols []colDef) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return names
}

// stagedCols are the staging table's columns after seq: the table's columns, then each
// reference's carried columns.
func (t *table) stagedCols() []colDef {
	cols := append([]colDef{}, t.cols...)
	for _, r := range t.refs {
		for _, c := range r.cols {
			cols = append(cols, colDef{name: r.staged(c.name), kind: c.kind, class: c.class})
		}
	}
	return cols
}

// kindOf is the kind of the table's (or the staging table's) column.
func (t *table) kindOf(name string) Kind {
	for _, c := range t.stagedCols() {
		if c.name == name {
			return c.kind
		}
	}
	return 0
}

// collection is the declaration of a collection whose records are T.
type collection[T any] struct {
	*table
	plain []column[T]
	refs  []ref[T]
	// init readies a zero record for its columns to be set (optional).
	init func(t *T)
	// finish completes a record read back, given where its row came from (origin) and the
	// time of the read; optional.
	finish func(t *T, origin string, now time.Time)
	// id is the record's id; json is the record as JSON (as the source sent it), decode a
	// record from its JSON: what a load erases a record it stages by (eraseStaged).
	id     func(t *T) int64
	json   func(t *T) []byte
	decode func(b []byte) (T, error)
	// sent is where the record keeps its sent column's value (sentColumn), nil when it has none.
	sent func(t *T) *json.RawMessage
}

// declare builds a collection's declaration from its columns (id first) and references.
func declare[T any](name string, cols []column[T], refs ...ref[T]) *collection[T] {
	t := &table{name: name}
	for _, c := range cols {
		t.cols = append(t.cols, colDef{name: c.name, kind: c.kind, class: c.class})
	}
	for _, r := range refs {
		t.cols = append(t.cols, colDef{name: r.column, kind: KindID, class: r.class})
		t.refs = append(t.refs, refDef{field: r.field, column: r.column, target: r.target, cols: r.cols})
	}
	id := cols[0].value
	return &collection[T]{table: t, plain: cols, refs: refs, id: func(r *T) int64 { n, _ := id(r).(int64); return n }}
}

// stageRow is the staged row of a record: seq, then in the order of stagedCols the plain
// columns, the references' ids (the foreign keys), then each reference's carried columns. So
// row[1:1+len(c.table.cols)] is the table's row.
func (c *collection[T]) stageRow(seq int64, t *T) []any {
	n := 1 + len(c.table.cols)
	for _, r := range c.table.refs {
		n += len(r.cols)
	}
	row := make([]any, 1, n)
	row[0] = seq
	for _, col := range c.plain {
		row = append(row, col.value(t))
	}
	for _, r := range c.refs {
		row = append(row, r.id(t))
	}
	for _, r := range c.refs {
		row = r.carry(t, row)
	}
	return row
}

// reader scans the rows of a collection's read query (selectList) into records. Its cells are
// reused from row to row: reading a page allocates only what the records keep.
type reader[T any] struct {
	c     *collection[T]
	cells []cell
	dest  []any
	// origin, version and total follow the record's columns in every read query.
	origin         sql.NullString
	version, total int64
	// sentAt is the cell of the sent column, -1 when the collection has none.
	sentAt int
}

func (c *collection[T]) newReader() *reader[T] {
	r := &reader[T]{c: c, sentAt: -1}
	n := len(c.plain)
	for _, rf := range c.refs {
		n += 1 + len(rf.cols)
	}
	r.cells = make([]cell, n)
	i := 0
	for _, col := range c.plain {
		if col.name == "sent" && c.sent != nil {
			r.sentAt = i
		}
		r.dest = append(r.dest, r.cells[i].dest(col.kind))
		i++
	}
	for _, rf := range c.refs {
		r.dest = append(r.dest, r.cells[i].dest(KindID))
		i++
		for _, col := range rf.cols {
			r.dest = append(r.dest, r.cells[i].dest(col.kind))
			i++
		}
	}
	r.dest = append(r.dest, &r.origin, &r.version, &r.total)
	return r
}

// record builds the record of the row last scanned into r.dest. References are set first, so
// that a column may refine them (an employee's nested forms).
func (r *reader[T]) record(now time.Time) T {
	var t T
	if r.c.init != nil {
		r.c.init(&t)
	}
	i := len(r.c.plain)
	for _, rf := range r.c.refs {
		rf.set(&t, r.cells[i:i+1+len(rf.cols)])
		i += 1 + len(rf.cols)
	}
	for j, col := range r.c.plain {
		col.set(&t, &r.cells[j])
	}
	if r.c.finish != nil {
		r.c.finish(&t, r.origin.String, now)
	}
	return t
}

// unserved reports whether the row last scanned keeps a sent that t, the record built from it,
// could not take (not a JSON object: edited by hand). A row of selectList's sentOnly shape that
// keeps sent has its other columns NULL: such a record must be read again with them.
func (r *reader[T]) unserved(t *T) bool {
	return r.sentAt >= 0 && r.cells[r.sentAt].s.Valid && len(*r.c.sent(t)) == 0
}

// selectList is the read query's select list and joins, without WHERE: the record's columns
// as the reader scans them, its references' columns from their targets' rows, then the row's
// origin, the warehouse's version and the collection's total.
//
// The version and the total are scalar subqueries of meta's one row, not a join: Postgres runs
// them once per statement (an InitPlan) and plans them apart, where a join to meta is one more
// relation in the join search, and, while meta has no statistics (a table of one row rarely
// reaches autovacuum's analyze threshold), one the planner takes for hundreds of rows: enough
// to turn a 100-row page into hash joins over whole tables.
//
// sentOnly is the shape of a page (pageQuery): a row that keeps sent, which is all serve answers
// from, sends its id and sent and NULL in every other column of the record (its references'
// included), so that a page sends its client little more than the answer's bytes; a row
// without sent (created here, or stored before sent was kept) sends every column, as in the
// other shape, and is answered from them. Its references are joined on the same expression, so
// a row that keeps sent looks nothing up: the join's key is NULL, which an index answers at
// once (a page of 100 absences executed in 0.14 ms against 0.30 ms when each row looked up its
// references for columns it then sent as NULL: docs/benchmarks.md).
func (t *table) selectList(d dialect, sentOnly bool) string {
	var sel []string
	sentOnly = sentOnly && t.keepsSent()
	// unlessSent is a column's expression in the shape: NULL where the row keeps sent.
	unlessSent := func(expr string) string {
		if !sentOnly {
			return expr
		}
		return "CASE WHEN t.sent IS NULL THEN " + expr + " END"
	}
	for _, c := range t.cols[:len(t.cols)-len(t.refs)] {
		switch c.name {
		case "id", "sent":
			sel = append(sel, d.read(c.kind, "t."+c.name))
		default:
			sel = append(sel, unlessSent(d.read(c.kind, "t."+c.name)))
		}
	}
	var joins strings.Builder
	for i, r := range t.refs {
		a := "r" + strconv.Itoa(i)
		sel = append(sel, unlessSent("t."+r.column))
		for _, c := range r.cols {
			sel = append(sel, unlessSent(d.read(c.kind, a+"."+c.name)))
		}
		joins.WriteString("\nLEFT JOIN " + r.target + " " + a + " ON " + a + ".id = " + unlessSent("t."+r.column))
	}
	sel = append(sel, "t.origin", "(SELECT version FROM meta)", "(SELECT "+t.name+"_total FROM meta)")
	return strings.Join(sel, ", ") + "\nFROM " + t.name + " t" + joins.String()
}

// keepsSent reports whether the table has a sent column (every declared table has).
func (t *table) keepsSent() bool {
	for _, c := range t.cols {
		if c.name == "sent" {
			return true
		}
	}
	return false
}
