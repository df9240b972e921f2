package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// The collections beyond the seed's two records (UPSTREAM.md, "The rest of the API") are
// declared, not written out as types: a Collection lists its fields with their kinds, and one
// decoder and one writer serve every declared collection: lenient on the way in, each field read
// into its normal form (Values), every field the declaration does not name kept in Extra, each
// nested object's form kept as the source sent it, and the whole record kept as sent (Sent),
// which is what is written back out: the replica gives each record as the source sent it.

// Kind is what a declared field holds, how it is read leniently and how it is written.
type Kind uint8

// The kinds.
const (
	// String is text; a number or boolean is taken as its text. "" and null both mean none in
	// its Value, written as null when a record is built from its Values (a decoded record is
	// written as sent: see Record.Sent).
	String Kind = iota + 1
	// Int is an integer, from a JSON number or a numeric string.
	Int
	// Bool is a boolean, from true/false, 0/1 or their strings.
	Bool
	// Date is a date, written YYYY-MM-DD.
	Date
	// Timestamp is a point in time, written in UTC as YYYY-MM-DDTHH:MM:SSZ.
	Timestamp
	// Decimal is a decimal number, written as a string as the source wrote it ("3.5").
	Decimal
	// Opaque is any JSON value, kept as sent (compacted).
	Opaque
	// Nested is an object that references a record of another collection (Field.Nested): its
	// id and the fields it carries are read out, and its form is kept as sent.
	Nested
)

var kindNames = map[Kind]string{String: "string", Int: "int", Bool: "bool", Date: "date",
	Timestamp: "timestamp", Decimal: "decimal", Opaque: "opaque", Nested: "nested"}

func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Field is one declared field of a collection's records.
type Field struct {
	Name string
	Kind Kind
	// Class is what kind of personal data the field is (class.go). A Nested field's is that of
	// the reference itself (its id); the members it carries have their own.
	Class Class
	// Nested, for a Nested field, says what the object points at and carries.
	Nested *Nesting
}

// Nesting is what a nested object references: a record of the collection Target, by its id,
// carrying some of that record's fields (Fields: String, Int, Bool or Decimal kinds).
type Nesting struct {
	Target string
	Fields []Field
}

// Collection declares a collection: its name (its path under /v1, and the envelope's key) and
// its records' fields in the order they are written, id excluded (every record has one, first).
type Collection struct {
	Name   string
	Fields []Field
	// Window, when set, says how the source filters the collection by date: a collection that
	// grows without end (absences) can then be walked within a window around today.
	Window *DateWindow
	// Sensitive marks a collection of data most deployments should not copy (pay, bonuses,
	// benefits): a sync walks it only when it is named, never as part of "all".
	Sensitive bool
	// Extra is the class of the members the declaration does not name (see ExtraClass).
	Extra Class
}

// DateWindow is how the source filters a dated collection: the query parameters start_date and
// end_date (YYYY-MM-DD, both inclusive) keep the records whose dates, the fields Start and End
// (Date fields of the collection; an empty End never ends), overlap [start_date, end_date], or,
// when ByStart, whose Start lies within it (UPSTREAM.md: absences and sicknesses by overlap,
// leave requests by start date).
type DateWindow struct {
	Start, End string
	ByStart    bool
}

// WindowQuery is the query that filters a windowed collection to the records from..to (dates,
// inclusive) match: start_date and end_date, YYYY-MM-DD.
func WindowQuery(from, to time.Time) url.Values {
	return url.Values{"start_date": {from.Format(time.DateOnly)}, "end_date": {to.Format(time.DateOnly)}}
}

// Record is one record of a declared collection.
type Record struct {
	ID int64
	// Values holds one value per declared field, in the declaration's order.
	Values []Value
	// Extra holds every field the source sent that the declaration does not name.
	Extra Extra
	// Sent is the record exactly as the source sent it, compacted (its members in its order,
	// every value in the form it had: "", null and an absent member kept apart, numbers and
	// strings as written), with any invalid UTF-8 made U+FFFD: what AppendJSON writes when it
	// is set. Values and Extra are what was read out of it, in normal forms. Nil for a record
	// built locally.
	Sent json.RawMessage
}

// Value is one field's value. The zero Value is null.
type Value struct {
	// Valid is false for null (and for an empty String, Date, Timestamp or Decimal).
	Valid bool
	// Text is a String, Date, Timestamp or Decimal in its normal form.
	Text string
	// Int is an Int, or a Nested object's id.
	Int int64
	// Bool is a Bool.
	Bool bool
	// Raw is an Opaque value as sent, or a Nested object's form as the source embedded it
	// (its members in its order, the carried ones normalized); nil for one built locally.
	Raw json.RawMessage
	// Carried are a Nested object's carried fields, in the order of its Nesting's Fields.
	Carried []Value
}

// TextValue is a String, Date, Timestamp or Decimal value: "" is null.
func TextValue(s string) Value { return Value{Valid: s != "", Text: s} }

// IntValue is an Int value.
func IntValue(n int64) Value { return Value{Valid: true, Int: n} }

// BoolValue is a Bool value.
func BoolValue(b bool) Value { return Value{Valid: true, Bool: b} }

// Index is the position of the named field in c.Fields (and in a Record's Values), or -1.
func (c *Collection) Index(name string) int {
	for i, f := range c.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Get is the record's value of the named field: the zero Value when c does not declare it.
func (c *Collection) Get(r *Record, name string) Value {
	if i := c.Index(name); i >= 0 && i < len(r.Values) {
		return r.Values[i]
	}
	return Value{}
}

// Decode reads one record of the collection leniently (UPSTREAM.md): a malformed known field is
// a *FieldError naming it; unknown fields go to Extra.
func (c *Collection) Decode(data []byte) (Record, error) {
	m, err := members(c.Name+" record", data)
	if err != nil {
		return Record{}, err
	}
	d := decoder{m: m}
	r := Record{ID: d.id("id"), Values: make([]Value, len(c.Fields))}
	for i, f := range c.Fields {
		r.Values[i] = d.value(f)
	}
	r.Extra = d.extra()
	if d.err == nil {
		r.Sent, d.err = sentForm(data)
	}
	return r, d.err
}

// sentForm is a record's JSON as sent, compacted and made valid UTF-8 (see Record.Sent). Only
// whitespace between tokens is dropped: every member, its order and every value's text stay.
func sentForm(data []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.Grow(len(data))
	if err := json.Compact(&buf, data); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	b := buf.Bytes()
	if utf8.Valid(b) {
		return json.RawMessage(b), nil
	}
	// Bytes that are not UTF-8 can only be inside strings: each becomes U+FFFD there, as
	// encoding/json reads them, and the JSON stays valid.
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return json.RawMessage(out), nil
}

// ValidSent reports whether b can be a Record's Sent: a JSON object in valid UTF-8. A form read
// back from storage is checked with it before it is served, a hundred times a page: with the
// one-pass scanner (scan.go), which checks as json.Valid does in about a fifth of its time.
func ValidSent(b []byte) bool {
	return len(b) > 1 && b[0] == '{' && utf8.Valid(b) && validJSON(b)
}

// value reads the field f out of the decoder's members.
func (d *decoder) value(f Field) Value {
	switch f.Kind {
	case String:
		return TextValue(d.string(f.Name))
	case Date:
		return TextValue(d.date(f.Name))
	case Timestamp:
		return TextValue(d.timestamp(f.Name))
	case Decimal:
		return TextValue(d.decimal(f.Name))
	case Int:
		if n := d.int(f.Name); n != nil {
			return IntValue(*n)
		}
	case Bool:
		if b := d.bool(f.Name); b != nil {
			return BoolValue(*b)
		}
	case Opaque:
		if raw := d.opaque(f.Name); len(raw) > 0 {
			return Value{Valid: true, Raw: raw}
		}
	case Nested:
		return d.nested(f)
	default:
		d.setErr(&FieldError{Field: d.prefix + f.Name, Reason: "declared with no kind"})
	}
	return Value{}
}

// nested reads a Nested field: null, or an object with an id and the carried fields.
func (d *decoder) nested(f Field) Value {
	key := d.prefix + f.Name
	raw := take(d.m, f.Name)
	if isNull(raw) {
		return Value{}
	}
	ms, err := nestedMembers(key, raw)
	if err != nil {
		d.setErr(err)
		return Value{}
	}
	nd := decoder{m: memberMap(ms), prefix: key + "."}
	v := Value{Valid: true, Int: nd.id("id")}
	kinds := map[string]nestedKind{"id": kindID}
	if f.Nested != nil {
		v.Carried = make([]Value, len(f.Nested.Fields))
		for i, cf := range f.Nested.Fields {
			v.Carried[i] = nd.value(cf)
			kinds[cf.Name] = nestedKinds[cf.Kind]
		}
	}
	d.setErr(nd.err)
	if d.err == nil {
		v.Raw, err = normalizeNested(key, ms, len(raw), kinds)
		d.setErr(err)
	}
	return v
}

// nestedKinds is how a carried field of each kind is normalized in a nested object's form.
var nestedKinds = map[Kind]nestedKind{String: kindString, Int: kindID, Bool: kindBool, Decimal: kindDecimal}

// AppendJSON appends the record as the source sent it (Sent), or, for one without that form, in
// the declaration's order, id first, unmodelled fields after.
func (c *Collection) AppendJSON(b []byte, r *Record) []byte {
	if len(r.Sent) > 0 {
		return append(b, r.Sent...)
	}
	w := beginObject(b)
	w.int("id", r.ID)
	for i, f := range c.Fields {
		var v Value
		if i < len(r.Values) {
			v = r.Values[i]
		}
		w.value(f, v)
	}
	w.extra(r.Extra)
	return w.end()
}

// value writes one field.
func (w *objectWriter) value(f Field, v Value) {
	if !v.Valid {
		w.null(f.Name)
		return
	}
	switch f.Kind {
	case String, Date, Timestamp, Decimal:
		w.optString(f.Name, v.Text)
	case Int:
		w.int(f.Name, v.Int)
	case Bool:
		w.optBool(f.Name, &v.Bool)
	case Opaque:
		w.raw(f.Name, v.Raw)
	case Nested:
		if len(v.Raw) > 0 {
			w.raw(f.Name, v.Raw)
			return
		}
		// Built locally: {id, carried fields…}.
		w.key(f.Name)
		nw := beginObject(w.b)
		nw.int("id", v.Int)
		if f.Nested != nil {
			for i, cf := range f.Nested.Fields {
				var cv Value
				if i < len(v.Carried) {
					cv = v.Carried[i]
				}
				nw.value(cf, cv)
			}
		}
		w.b = nw.end()
	default:
		w.null(f.Name)
	}
}

// fieldName is a declared name: the warehouse names its tables and columns after them.
var fieldName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,50}$`)

// Validate reports what is wrong with a declaration: fields without a kind or a name, names
// twice, a Nested field without its Nesting, a nested field that cannot be carried.
func (c *Collection) Validate() error {
	var problems []string
	if !fieldName.MatchString(c.Name) {
		problems = append(problems, "no plain name (a-z, 0-9, _)")
	}
	seen := map[string]bool{"id": true}
	for _, f := range c.Fields {
		switch {
		case !fieldName.MatchString(f.Name) || seen[f.Name]:
			problems = append(problems, fmt.Sprintf("field %q: not a plain name (a-z, 0-9, _), or named twice (id is implied)", f.Name))
		case kindNames[f.Kind] == "":
			problems = append(problems, fmt.Sprintf("field %s: no kind", f.Name))
		case f.Kind == Nested && (f.Nested == nil || f.Nested.Target == ""):
			problems = append(problems, fmt.Sprintf("field %s: nested, but no target", f.Name))
		case f.Kind != Nested && f.Nested != nil:
			problems = append(problems, fmt.Sprintf("field %s: a nesting on a %s field", f.Name, f.Kind))
		}
		seen[f.Name] = true
		if !f.Class.Valid() {
			problems = append(problems, fmt.Sprintf("field %s: no personal-data class", f.Name))
		}
		if f.Kind == Nested && f.Nested != nil {
			for _, cf := range f.Nested.Fields {
				if _, ok := nestedKinds[cf.Kind]; !ok || cf.Name == "id" {
					problems = append(problems, fmt.Sprintf("field %s.%s: cannot be carried (%s)", f.Name, cf.Name, cf.Kind))
				}
				if !cf.Class.Valid() {
					problems = append(problems, fmt.Sprintf("field %s.%s: no personal-data class", f.Name, cf.Name))
				}
			}
		}
	}
	if w := c.Window; w != nil {
		for _, name := range []string{w.Start, w.End} {
			if i := c.Index(name); name != "" && (i < 0 || c.Fields[i].Kind != Date) {
				problems = append(problems, fmt.Sprintf("window: %q is not a date field", name))
			}
		}
		if w.Start == "" {
			problems = append(problems, "window: no start field")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("collection %q: %s", c.Name, strings.Join(problems, "; "))
	}
	return nil
}
