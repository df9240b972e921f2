package sink

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	v1 "github.com/hrsync/hrsync/source/v1"
)

// Subject access (UK/EU GDPR Art. 15): everything the warehouse holds about one person, table by
// table, read in one snapshot. What is searched is derived from the declarations and the data
// inventory, never listed by hand per table:
//
//   - the person's own records: their employees row and every version of it, and every row (and
//     version) of each collection whose records belong to an employee (a reference named
//     "employee"), every column of the inventory in its order;
//   - the warehouse's own tables with an employee_id column (the onboarding ledger, the
//     idempotency records), by that id, and, where they have an email column and the row names
//     no employee, by any email the person's employees row or its history ever had (case
//     ignored);
//   - the records of other people that name the person in another reference (a line manager, a
//     holiday approver, an approver of an absence): only what is about the person, the record's
//     table and id, the field naming them and the nested object as stored in the record's
//     nested column, never the other person's members (Art. 15(4)); in named_in_<table>.
//
// In the person's own records, a nested person other than them (the approver of their leave,
// their line manager) is cut down to its id in the JSON columns that keep nested objects (nested,
// sent; an idempotency record's body), for the same reason: the id is a fact of the person's
// own record, the other person's names and email are not theirs.

// SubjectExport is everything the warehouse holds about one employee (Store.SubjectAccess).
type SubjectExport struct {
	EmployeeID int64 `json:"employee_id"`
	// Tables are every table searched, with or without rows: the collections in the order a
	// sync loads them, each followed by the records of others in it that name the person
	// (named_in_<table>), then the same of its history; then the warehouse's own tables.
	Tables []SubjectTable `json:"tables"`
}

// SubjectTable is what one table holds about the person.
type SubjectTable struct {
	// Name is the section's name: the table's, or named_in_<table> for the records of others
	// that name the person (Table is then the table they are in).
	Name  string `json:"name"`
	Table string `json:"table"`
	// Columns are the rows' columns, in the inventory's order (hrsync inventory); a named_in_
	// section's are id, field, nested (and a history's valid_from, valid_to).
	Columns []string     `json:"columns"`
	Rows    []SubjectRow `json:"rows"`
}

// SubjectRow is one row: a value per column, in Columns' order.
type SubjectRow []SubjectValue

// SubjectValue is one column's value as stored, in the text form the warehouse's reads give it
// on both backends: dates YYYY-MM-DD, timestamps in UTC (YYYY-MM-DDTHH:MM:SSZ; a SQLite
// history's periods to the millisecond, as kept), decimals as written, booleans true or false,
// JSON as its text.
type SubjectValue struct {
	Column string
	Text   string
	Null   bool
	// Kind is what the value is, for a JSON document: KindJSON is embedded as JSON, KindID and
	// KindInt as numbers, KindBool as a boolean, the rest as strings.
	Kind Kind
}

// SubjectNotFoundError is a subject access for an id no row of the warehouse holds or names.
type SubjectNotFoundError struct{ ID int64 }

func (e *SubjectNotFoundError) Error() string {
	return fmt.Sprintf("no employee %d in the warehouse", e.ID)
}

// Is makes it a v1.ErrNotFound.
func (e *SubjectNotFoundError) Is(target error) bool { return target == v1.ErrNotFound }

// MarshalJSON writes the row as one object, its members in the columns' order.
func (r SubjectRow) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, v := range r {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, v.Column) // a column's name: plain ASCII
		b = append(b, ':')
		b = v.appendJSON(b)
	}
	return append(b, '}'), nil
}

// appendJSON appends the value as a JSON value (see Kind).
func (v SubjectValue) appendJSON(b []byte) []byte {
	switch {
	case v.Null:
		return append(b, "null"...)
	case v.Kind == KindJSON && json.Valid([]byte(v.Text)):
		return append(b, v.Text...)
	case (v.Kind == KindID || v.Kind == KindInt) && isInteger(v.Text), v.Kind == KindBool && (v.Text == "true" || v.Text == "false"):
		return append(b, v.Text...)
	}
	return appendJSONString(b, v.Text)
}

// appendJSONString appends s as a JSON string, & < > as they are.
func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string: never fails
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
}

func isInteger(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// Rows counts the export's rows, every table's.
func (x SubjectExport) Rows() int {
	n := 0
	for _, t := range x.Tables {
		n += len(t.Rows)
	}
	return n
}

// SubjectAccess reads everything the warehouse holds about the employee id, in one snapshot (see
// above). An id no row holds or names is a *SubjectNotFoundError.
func (s *Store) SubjectAccess(ctx context.Context, id int64) (SubjectExport, error) {
	tx, err := s.db.BeginTxx(ctx, s.d.snapshot())
	if err != nil {
		return SubjectExport{}, fmt.Errorf("subject access: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	out := SubjectExport{EmployeeID: id}
	for _, src := range subjectSources {
		t, err := src.read(ctx, tx, s.d, id)
		if err != nil {
			return SubjectExport{}, fmt.Errorf("subject access: read %s: %w", src.name, err)
		}
		out.Tables = append(out.Tables, t)
	}
	if out.Rows() == 0 {
		return SubjectExport{}, &SubjectNotFoundError{id}
	}
	return out, nil
}

// subjectSource is one table searched for a person, or the records of a table naming them.
type subjectSource struct {
	name, table string
	// cols are the columns read, in the inventory's order; a kind of 0 is one the declarations
	// do not give (the warehouse's own tables): read as the driver hands it.
	cols []subjectCol
	// where selects the rows: each ? is the person's id.
	where string
	order string
	// theirs are the JSON columns of records of the person's own (nested, sent; an answer's
	// body), with the collection the records are of: a nested person in them who is not the
	// person is cut down to its id (onlyTheirs).
	theirs map[string]theirsColumn
	// named, for a named_in_ section, are the references that name a person (field and
	// foreign key): the rows are one per reference naming them.
	named []refDef
	// history: a named_in_ section of a history, whose rows keep the version's period.
	history bool
}

type subjectCol struct {
	name string
	kind Kind
}

// bookkeepingKinds are the kinds of the columns every collection's table (and history) keeps
// beside its declared ones.
var bookkeepingKinds = map[string]Kind{"listed": KindBool, "origin": KindText, "deleted_at": KindTimestamp,
	"synced_at": KindTimestamp, "valid_from": KindTimestamp, "valid_to": KindTimestamp}

// subjectEmail is the employees' column of their email: the warehouse's own tables with an
// email column are searched by every value it ever had for the person.
const subjectEmail = "email"

// employeeJSON are the columns of the warehouse's own tables that hold an employee as served
// (JSON): their nested persons are cut down like those of the person's own records.
var employeeJSON = map[string]string{"idempotency_keys": "body"}

// ownKinds are the kinds of the warehouse's own columns that a subject access reads through the
// dialect (dialect.read), so that both backends give the same text; the others are read as they
// are. The people models' dates (schemas 0020, 0023, 0024) are dates on Postgres and text on SQLite.
var ownKinds = map[string]map[string]Kind{
	"model_employment":                {"start_date": KindDate, "end_date": KindDate},
	"model_employee_versions":         {"valid_from": KindDate, "valid_to": KindDate},
	"model_employee_versions_derived": {"valid_from": KindDate, "valid_to": KindDate},
	"model_employed_spans":            {"lo": KindDate, "hi": KindDate},
	"model_absence_spans":             {"start_date": KindDate, "end_date": KindDate, "lo": KindDate, "hi": KindDate, "half_start": KindBool, "half_end": KindBool},
	"model_absence_days":              {"day": KindDate},
	"model_bradford":                  {"as_of": KindDate},
	// schema 0024
	"model_absences":   {"start_date": KindDate, "end_date": KindDate, "half_start": KindBool, "half_end": KindBool},
	"model_sicknesses": {"start_date": KindDate, "end_date": KindDate, "half_start": KindBool, "half_end": KindBool},
	// schema 0022
	"model_certificates_expiring": {"expires_on": KindDate},
	// schema 0027
	"model_people":          {"start_date": KindDate, "end_date": KindDate, "first_seen": KindDate},
	"model_left_out":        {"start_date": KindDate, "end_date": KindDate, "first_seen": KindDate},
	"model_starting_soon":   {"start_date": KindDate},
	"model_management_tree": {"manager_left": KindBool, "in_cycle": KindBool},
	// schema 0032
	"events":           {"effective_at": KindTimestamp, "recorded_at": KindTimestamp, "data": KindJSON},
	"event_deliveries": {"queued_at": KindTimestamp, "next_at": KindTimestamp, "done_at": KindTimestamp},
	"event_state":      {"present": KindBool, "join_date": KindDate, "leaving_date": KindDate, "left_at": KindTimestamp},
}

// ownSubjects are the columns naming the person a row of a warehouse's own table is about where
// it is not employee_id: a manager's row of the management tree is theirs.
var ownSubjects = map[string]string{"model_management_tree": "manager_id"}

// subjectSources are what a subject access reads, in the order of its tables (SubjectExport).
var subjectSources = func() []subjectSource {
	inv := map[string][]InventoryItem{}
	var own []string // the warehouse's own tables, in the inventory's order
	for _, it := range Inventory() {
		if _, ok := inv[it.Table]; !ok && tableOf(it.Table) == nil && !strings.HasSuffix(it.Table, "_history") {
			own = append(own, it.Table)
		}
		inv[it.Table] = append(inv[it.Table], it)
	}
	var out []subjectSource
	for _, t := range tables {
		kinds := maps.Clone(bookkeepingKinds)
		for _, c := range t.cols {
			kinds[c.name] = c.kind
		}
		owner, named := subjectRefs(t)
		names := []string{t.name}
		if t.history {
			names = append(names, t.name+"_history")
		}
		for _, name := range names {
			history := name != t.name
			order := "id"
			if history {
				order = "id, valid_from"
			}
			if owner != "" {
				own := theirsColumn{collection: t.name}
				src := subjectSource{name: name, table: name, where: owner + " = ?", order: order,
					theirs: map[string]theirsColumn{"nested": own, "sent": own}}
				for _, it := range inv[name] {
					src.cols = append(src.cols, subjectCol{it.Column, kinds[it.Column]})
				}
				out = append(out, src)
			}
			if len(named) > 0 {
				var ids []string
				for _, r := range named {
					ids = append(ids, r.column+" = ?")
				}
				where := "(" + strings.Join(ids, " OR ") + ")"
				if owner != "" { // the person's own records are above, whole
					where += " AND (" + owner + " IS NULL OR " + owner + " <> ?)"
				}
				out = append(out, subjectSource{name: "named_in_" + name, table: name, where: where, order: order,
					named: named, history: history})
			}
		}
	}
	for _, name := range own {
		src := subjectSource{name: name, table: name}
		has := map[string]bool{}
		for _, it := range inv[name] {
			src.cols = append(src.cols, subjectCol{name: it.Column, kind: ownKinds[name][it.Column]})
			has[it.Column] = true
		}
		subject := "employee_id"
		if c, ok := ownSubjects[name]; ok {
			subject = c
		}
		if !has[subject] {
			continue
		}
		src.where = subject + " = ?"
		if has[subjectEmail] {
			// By email only where the row names no one: a row that names an employee is theirs
			// by that id, and an address the person once had may since be another's.
			src.where += " OR (" + subject + " IS NULL AND lower(" + subjectEmail + ") IN (SELECT lower(" + subjectEmail + ") FROM " + string(Employees) +
				" WHERE id = ? UNION SELECT lower(" + subjectEmail + ") FROM " + string(Employees) + "_history WHERE id = ?))"
		}
		src.order = "id"
		if !has["id"] { // every column, by position: the same order on both backends
			src.order = "1"
			for i := 2; i <= len(src.cols); i++ {
				src.order += ", " + strconv.Itoa(i)
			}
		}
		if c, ok := employeeJSON[name]; ok {
			src.theirs = map[string]theirsColumn{c: {collection: string(Employees), envelope: true}}
		}
		out = append(out, src)
	}
	return out
}()

// subjectRefs are a table's references to employees: owner is the column whose value makes a
// row the person's own (employees: id; a collection of employees' records: its employee's
// foreign key; "" for neither), named the references naming a person that does not own the row.
func subjectRefs(t *table) (owner string, named []refDef) {
	if t.name == string(Employees) {
		owner = "id"
	}
	for _, r := range t.refs {
		if r.target != string(Employees) {
			continue
		}
		if r.field == "employee" && owner == "" {
			owner = r.column
			continue
		}
		named = append(named, r)
	}
	return owner, named
}

// read reads the source's rows about the person id.
func (src *subjectSource) read(ctx context.Context, tx *sqlx.Tx, d dialect, id int64) (SubjectTable, error) {
	if src.named != nil {
		return src.readNamed(ctx, tx, d, id)
	}
	out := SubjectTable{Name: src.name, Table: src.table}
	sel := make([]string, len(src.cols))
	for i, c := range src.cols {
		out.Columns = append(out.Columns, c.name)
		sel[i] = c.name
		if c.kind != 0 {
			sel[i] = d.read(c.kind, c.name)
		}
	}
	query := "SELECT " + strings.Join(sel, ", ") + " FROM " + src.table + " WHERE " + src.where + " ORDER BY " + src.order
	rows, err := tx.QueryContext(ctx, tx.Rebind(query), repeat(id, strings.Count(src.where, "?"))...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	cells := make([]cell, len(src.cols))
	anys := make([]any, len(src.cols))
	dest := make([]any, len(src.cols))
	for i, c := range src.cols {
		if c.kind != 0 {
			dest[i] = cells[i].dest(c.kind)
		} else {
			dest[i] = &anys[i]
		}
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return out, err
		}
		row := make(SubjectRow, len(src.cols))
		for i, c := range src.cols {
			if c.kind != 0 {
				row[i] = cellValue(c, &cells[i])
			} else {
				row[i] = anyValue(c.name, anys[i])
			}
			if own, ok := src.theirs[c.name]; ok && !row[i].Null {
				row[i].Text = onlyTheirs(own, row[i].Text, id)
				if c.kind == 0 && json.Valid([]byte(row[i].Text)) {
					row[i].Kind = KindJSON
				}
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out, rows.Err()
}

// readNamed reads the records of the source's table that name the person id in one of its
// references: a row per reference naming them, with the record's id, the field and the nested
// object as stored.
func (src *subjectSource) readNamed(ctx context.Context, tx *sqlx.Tx, d dialect, id int64) (SubjectTable, error) {
	out := SubjectTable{Name: src.name, Table: src.table, Columns: []string{"id", "field", "nested"}}
	sel := []string{"id", d.read(KindJSON, "nested")}
	for _, r := range src.named {
		sel = append(sel, r.column)
	}
	if src.history {
		out.Columns = append(out.Columns, "valid_from", "valid_to")
		sel = append(sel, d.read(KindTimestamp, "valid_from"), d.read(KindTimestamp, "valid_to"))
	}
	query := "SELECT " + strings.Join(sel, ", ") + " FROM " + src.table + " WHERE " + src.where + " ORDER BY " + src.order
	rows, err := tx.QueryContext(ctx, tx.Rebind(query), repeat(id, strings.Count(src.where, "?"))...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	var recordID int64
	var nested, from, to sql.NullString
	refs := make([]sql.NullInt64, len(src.named))
	dest := []any{&recordID, &nested}
	for i := range refs {
		dest = append(dest, &refs[i])
	}
	if src.history {
		dest = append(dest, &from, &to)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return out, err
		}
		for i, r := range src.named {
			if !refs[i].Valid || refs[i].Int64 != id {
				continue
			}
			obj := SubjectValue{Column: "nested", Kind: KindJSON, Null: true}
			if raw, ok := nestedForm(nested, r.field); ok {
				obj.Text, obj.Null = string(raw), false
			}
			row := SubjectRow{
				{Column: "id", Text: strconv.FormatInt(recordID, 10), Kind: KindID},
				{Column: "field", Text: r.field, Kind: KindText},
				obj,
			}
			if src.history {
				row = append(row, SubjectValue{Column: "valid_from", Text: from.String, Null: !from.Valid, Kind: KindTimestamp},
					SubjectValue{Column: "valid_to", Text: to.String, Null: !to.Valid, Kind: KindTimestamp})
			}
			out.Rows = append(out.Rows, row)
		}
	}
	return out, rows.Err()
}

func repeat(id int64, n int) []any {
	args := make([]any, n)
	for i := range args {
		args[i] = id
	}
	return args
}

// cellValue is the value of a column of a declared kind, as scanned.
func cellValue(c subjectCol, v *cell) SubjectValue {
	out := SubjectValue{Column: c.name, Kind: c.kind}
	switch c.kind {
	case KindID, KindInt:
		out.Text, out.Null = strconv.FormatInt(v.i.Int64, 10), !v.i.Valid
	case KindBool:
		out.Text, out.Null = strconv.FormatBool(v.b.Bool), !v.b.Valid
	default:
		out.Text, out.Null = text(v.s.String), !v.s.Valid
	}
	if out.Null {
		out.Text = ""
	}
	return out
}

// anyValue is the value of a column of the warehouse's own tables, as the driver handed it.
func anyValue(name string, v any) SubjectValue {
	out := SubjectValue{Column: name, Kind: KindText}
	switch x := v.(type) {
	case nil:
		out.Null = true
	case int64:
		out.Text, out.Kind = strconv.FormatInt(x, 10), KindInt
	case bool:
		out.Text, out.Kind = strconv.FormatBool(x), KindBool
	case float64:
		out.Text, out.Kind = strconv.FormatFloat(x, 'f', -1, 64), KindDecimal
	case time.Time:
		out.Text, out.Kind = x.UTC().Format(v1.TimestampLayout), KindTimestamp
	case []byte:
		out.Text = text(string(x))
	case string:
		out.Text = text(x)
	default:
		out.Text = text(fmt.Sprint(x))
	}
	return out
}

// text is s made valid UTF-8 (a hand-edited value may not be): what a JSON document and a CSV
// file can hold.
func text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// theirsColumn is a JSON column of records of the person's own: of collection, or, envelope, an
// answer's envelope of them ({"employees":[…]}).
type theirsColumn struct {
	collection string
	envelope   bool
}

// onlyTheirs is raw, a JSON value of the person id's own (col), with every nested person that is
// not them cut down to its id: what v1.EraseJSON leaves of a nested person whose every erasable
// class is erased. That their leave was approved by employee 7 is a fact of their record;
// employee 7's names are not theirs. Nothing of the record's own members is erased, so the
// members a configuration classes (Options.Declarations, a record's own only) change nothing
// here: the code's declarations are enough. A value that is not what col holds is kept as stored.
func onlyTheirs(col theirsColumn, raw string, id int64) string {
	fields, _, _ := v1.Declared(col.collection)
	var people []string
	for _, f := range fields {
		if f.Nested != nil && f.Nested.Target == string(Employees) {
			people = append(people, f.Name)
		}
	}
	others := func(field string, nid int64) []v1.Class {
		if nid == id || !slices.Contains(people, field) {
			return nil
		}
		return erasableClasses
	}
	var out []byte
	var err error
	if col.envelope {
		out, err = eraseEnvelope(v1.Declarations{}, []byte(raw), nil, others)
	} else {
		out, err = v1.EraseJSON(col.collection, []byte(raw), nil, others)
	}
	if err != nil {
		return raw
	}
	return string(out)
}

// nestedForm is the form of the nested object field in a record's nested column (an object
// keyed by field); false when the column holds none.
func nestedForm(nested sql.NullString, field string) (json.RawMessage, bool) {
	var forms map[string]json.RawMessage
	if !nested.Valid || json.Unmarshal([]byte(nested.String), &forms) != nil {
		return nil, false
	}
	raw, ok := forms[field]
	return raw, ok
}
