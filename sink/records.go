package sink

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hrsync/hrsync/source/v1"
)

// The collections the wire declares (v1.Collections) get their tables from those declarations:
// a column per field, of the kind the field's kind maps to; per nested reference, a foreign key
// <field>_id to a table the warehouse holds (and the fields the object carries, for the rows it
// leaves there), or a plain id column when the warehouse does not hold its target; extra, the
// fields the declaration does not name; nested, the nested objects' forms as the source sent
// them; and sent, the whole record as the source sent it, which is what serve mode gives back.
// The typed columns are the analysts': there "" and null are both NULL, dates, timestamps (UTC)
// and numbers are in their normal forms, and a member the source left out is NULL too. Nothing
// of such a collection is written by hand.

// columnKinds are the column kinds of the wire's field kinds (Nested has its own columns).
var columnKinds = map[v1.Kind]Kind{v1.String: KindText, v1.Int: KindInt, v1.Bool: KindBool, v1.Date: KindDate,
	v1.Timestamp: KindTimestamp, v1.Decimal: KindDecimal, v1.Opaque: KindJSON}

// recordCollection is the warehouse's declaration of a collection declared on the wire. held
// says whether the warehouse holds a table of that name.
func recordCollection(wire *v1.Collection, held func(string) bool) *collection[v1.Record] {
	cols := []column[v1.Record]{idColumn(func(r *v1.Record) *int64 { return &r.ID }).as(idClass(wire))}
	var refs []ref[v1.Record]
	var nested []int // the fields whose forms the nested column keeps
	for i, f := range wire.Fields {
		switch {
		case f.Kind == v1.Nested && held(f.Nested.Target):
			refs = append(refs, recordRef(i, f))
			nested = append(nested, i)
		case f.Kind == v1.Nested:
			cols = append(cols, nestedIDColumn(i, f))
			nested = append(nested, i)
		default:
			cols = append(cols, valueColumn(i, f))
		}
	}
	cols = append(cols, jsonColumn("extra", func(r *v1.Record) *v1.Extra { return &r.Extra }).as(wire.ExtraClass()))
	if len(nested) > 0 {
		cols = append(cols, formsColumn(wire, nested).as(mostSensitive(carried(wire.Fields, nested)...)))
	}
	cols = append(cols, sentColumn(func(r *v1.Record) *json.RawMessage { return &r.Sent }).as(sentClass(wire.Fields, wire.ExtraClass())))
	c := declare(wire.Name, cols, refs...)
	c.init = func(r *v1.Record) { r.Values = make([]v1.Value, len(wire.Fields)) }
	c.json = func(r *v1.Record) []byte { return wire.AppendJSON(nil, r) }
	c.sent = func(r *v1.Record) *json.RawMessage { return &r.Sent }
	c.decode = wire.Decode
	return c
}

// valueColumn is the column of a plain field: its value is r.Values[i].
func valueColumn(i int, f v1.Field) column[v1.Record] {
	kind := columnKinds[f.Kind]
	return column[v1.Record]{name: f.Name, kind: kind, class: f.Class,
		value: func(r *v1.Record) any { return sqlValue(kind, r.Values[i]) },
		set:   func(r *v1.Record, c *cell) { r.Values[i] = wireValue(kind, c) }}
}

// nestedIDColumn is the id of a nested object whose target the warehouse does not hold: its form
// is in the nested column.
func nestedIDColumn(i int, f v1.Field) column[v1.Record] {
	return column[v1.Record]{name: f.Name + "_id", kind: KindID, class: f.Class,
		value: func(r *v1.Record) any { return nestedID(r.Values[i]) },
		set: func(r *v1.Record, c *cell) {
			if c.i.Valid {
				r.Values[i] = v1.Value{Valid: true, Int: c.i.Int64}
			}
		}}
}

// recordRef is a nested reference to a table the warehouse holds: a foreign key and the
// carried fields.
func recordRef(i int, f v1.Field) ref[v1.Record] {
	carried := make([]colDef, len(f.Nested.Fields))
	for j, cf := range f.Nested.Fields {
		carried[j] = colDef{name: cf.Name, kind: columnKinds[cf.Kind], class: cf.Class}
	}
	return ref[v1.Record]{field: f.Name, column: f.Name + "_id", target: f.Nested.Target, class: f.Class, cols: carried,
		id: func(r *v1.Record) any { return nestedID(r.Values[i]) },
		carry: func(r *v1.Record, row []any) []any {
			v := r.Values[i]
			for j, c := range carried {
				if v.Valid && j < len(v.Carried) {
					row = append(row, sqlValue(c.kind, v.Carried[j]))
				} else {
					row = append(row, nil)
				}
			}
			return row
		},
		set: func(r *v1.Record, cells []cell) {
			if !cells[0].i.Valid {
				return
			}
			v := v1.Value{Valid: true, Int: cells[0].i.Int64, Carried: make([]v1.Value, len(carried))}
			for j, c := range carried {
				v.Carried[j] = wireValue(c.kind, &cells[1+j])
			}
			r.Values[i] = v
		}}
}

// formsColumn keeps the nested objects' forms as the source sent them, as one object keyed by
// field (as employees.nested does). It is read back after the references and the id columns,
// whose values it gives their forms.
func formsColumn(wire *v1.Collection, fields []int) column[v1.Record] {
	return column[v1.Record]{name: "nested", kind: KindJSON,
		value: func(r *v1.Record) any {
			// One object keyed by field, in the declaration's order: one text per set of
			// forms, and the forms' bytes as sent (json.Marshal would escape & < > in them).
			b := []byte{'{'}
			for _, i := range fields {
				if v := r.Values[i]; v.Valid && len(v.Raw) > 0 {
					if len(b) > 1 {
						b = append(b, ',')
					}
					b = strconv.AppendQuote(b, wire.Fields[i].Name) // a declared name: plain ASCII
					b = append(b, ':')
					b = append(b, v.Raw...)
				}
			}
			if len(b) == 1 {
				return nil
			}
			return string(append(b, '}'))
		},
		set: func(r *v1.Record, c *cell) {
			if !c.s.Valid {
				return
			}
			var forms map[string]json.RawMessage
			if json.Unmarshal([]byte(c.s.String), &forms) != nil {
				return // a malformed column (hand-edited) leaves the forms built from the rows
			}
			for _, i := range fields {
				if raw, ok := forms[wire.Fields[i].Name]; ok && r.Values[i].Valid {
					r.Values[i].Raw = raw
				}
			}
		}}
}

// sentColumn keeps a record exactly as the source sent it (v1.Record.Sent, v1.Employee.Sent,
// v1.WorkingPattern.Sent): "", null and an absent member kept apart, every value in its form.
// Serve mode gives the record back from it; a row without one (created here, or stored before
// it was kept, until the next sync writes it) is served from the typed columns. A value that is
// not a JSON object (edited by hand) is not served.
func sentColumn[T any](sent func(*T) *json.RawMessage) column[T] {
	return column[T]{name: "sent", kind: KindJSON,
		value: func(r *T) any { return nullRaw(*sent(r)) },
		set: func(r *T, c *cell) {
			if !c.s.Valid {
				return
			}
			// One copy, checked and kept (a hundred of these, about a kilobyte each, a page).
			if b := []byte(c.s.String); v1.ValidSent(b) {
				*sent(r) = b
			}
		}}
}

func nestedID(v v1.Value) any {
	if !v.Valid {
		return nil
	}
	return v.Int
}

// sqlValue is what is staged for a value of a column of kind k: nil for null.
func sqlValue(k Kind, v v1.Value) any {
	if !v.Valid {
		return nil
	}
	switch k {
	case KindID, KindInt:
		return v.Int
	case KindBool:
		return v.Bool
	case KindJSON:
		return nullRaw(v.Raw)
	}
	return nullStr(v.Text)
}

// wireValue is the value read back from a cell of a column of kind k.
func wireValue(k Kind, c *cell) v1.Value {
	switch k {
	case KindID, KindInt:
		if c.i.Valid {
			return v1.IntValue(c.i.Int64)
		}
	case KindBool:
		if c.b.Valid {
			return v1.BoolValue(c.b.Bool)
		}
	case KindJSON:
		if c.s.Valid && c.s.String != "" {
			return v1.Value{Valid: true, Raw: json.RawMessage(c.s.String)}
		}
	default:
		return v1.TextValue(c.s.String)
	}
	return v1.Value{}
}

// wireCollections are the warehouse's declarations of the collections the wire declares, by
// name, except any declared by hand in collections.go.
var wireCollections = func() map[string]*collection[v1.Record] {
	held := map[string]bool{}
	for _, t := range handWritten {
		held[t.name] = true
	}
	var derived []*v1.Collection
	for _, c := range v1.Collections {
		if err := c.Validate(); err != nil {
			panic(fmt.Sprintf("sink: %v", err)) // a declaration is code: TestDeclaredCollectionsAreValid fails first
		}
		if !held[c.Name] {
			derived = append(derived, c)
			held[c.Name] = true
		}
	}
	out := make(map[string]*collection[v1.Record], len(derived))
	for _, c := range derived {
		out[c.Name] = recordCollection(c, func(name string) bool { return held[name] })
	}
	return out
}()

// idClass is the class of a record's id: a pseudonymous key of a person (Employment) when the
// records are about people, not personal when every member of them is (reference data).
func idClass(wire *v1.Collection) v1.Class {
	for _, f := range wire.Fields {
		if f.Class.Personal() {
			return v1.Employment
		}
	}
	return v1.NotPersonal
}

// carried are the classes of the members the nested fields at indexes i carry, and of the
// references themselves.
func carried(fields []v1.Field, i []int) []v1.Class {
	var out []v1.Class
	for _, j := range i {
		out = append(out, fields[j].Class)
		for _, cf := range fields[j].Nested.Fields {
			out = append(out, cf.Class)
		}
	}
	return out
}

// sentClass is the class of a record as sent: the most sensitive of its members, the nested
// ones' and those no declaration names (of class extra) included.
func sentClass(fields []v1.Field, extra v1.Class) v1.Class {
	classes := []v1.Class{extra}
	for _, f := range fields {
		classes = append(classes, f.Class)
		if f.Nested != nil {
			for _, cf := range f.Nested.Fields {
				classes = append(classes, cf.Class)
			}
		}
	}
	return mostSensitive(classes...)
}

// mostSensitive is the most sensitive of classes (v1.Classes' order).
func mostSensitive(classes ...v1.Class) v1.Class {
	var most v1.Class
	for _, c := range classes {
		if c > most {
			most = c
		}
	}
	return most
}
