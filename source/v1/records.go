package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The records of the /v1 interface. Values the seed types loosely are kept in their normalized
// text: dates as YYYY-MM-DD, timestamps as YYYY-MM-DDTHH:MM:SSZ (UTC), decimals as the source
// wrote them. The empty string, a nil pointer and a nil RawMessage all mean null. A decoded
// record also keeps its JSON as the source sent it (Sent), which is what it is written back as:
// the normal forms are what the warehouse's typed columns hold.

// Employee is one employee record (seed 2.1).
type Employee struct {
	ID                      int64
	AccountID               *int64
	FirstName               string
	LastName                string
	Email                   string
	JobTitle                string
	Status                  string
	CompanyJoinDate         string
	JobStartDate            string
	LengthOfServiceInMonths *int64
	Age                     json.RawMessage
	FullOrPartTime          json.RawMessage
	NoticePeriod            json.RawMessage
	WorkingPattern          *PatternRef
	HolidayAllowance        *Ref
	LineManager             *PersonRef
	HolidayApprover         *PersonRef
	Department              *Ref
	// Division and Location are undocumented (UPSTREAM.md): nested {id, name} objects in real
	// records, but seed-style records carry a location as its name alone. Only an object is a
	// reference; any other value (a name, null, "") stays in Extra, served back as sent.
	Division                  *Ref
	Location                  *Ref
	ReceivesStatutoryHolidays *bool
	HR                        *bool
	CreatedAt                 string
	UpdatedAt                 string
	// LeavingDate is undocumented (UPSTREAM.md): where the account records it, a leaver's
	// leaving date arrives as leaving_date.
	LeavingDate string
	// Extra holds every field the source sent that is not modelled above.
	Extra Extra
	// Sent is the record exactly as the source sent it (see Record.Sent): join_date under its
	// own name, "" apart from null, an absent member absent, numbers, dates and timestamps as
	// written. AppendJSON writes it when set. Nil for a record built locally, which is written
	// from the fields above in the interface document's forms.
	Sent json.RawMessage
}

// Ref is a nested holiday allowance, department, division or location.
type Ref struct {
	ID    int64
	Name  string
	Extra Extra
	// Raw is the nested object exactly as the source embedded it, compacted; nil for a full
	// record or one built locally.
	Raw json.RawMessage
}

// NestedRaw returns the employee's nested objects as the source embedded them, as one canonical
// JSON object keyed by field name (nil when there are none): what the warehouse keeps per record
// so the replica gives each record back exactly. SetNestedRaw puts such an object back.
func (e *Employee) NestedRaw() []byte {
	w := beginObject(nil)
	// In the order of the field names: the warehouse's migrations build this object in SQL, by
	// sorting the names, and the merge compares it as text.
	for _, f := range e.nestedForms() {
		if len(*f.raw) > 0 {
			w.raw(f.name, *f.raw)
		}
	}
	if w.first {
		return nil
	}
	return w.end()
}

// SetNestedRaw gives the employee's references the raw forms of a NestedRaw object; references
// it does not name keep their built form.
//
// It reads nested as json.Unmarshal into a map[string]json.RawMessage would (null names none,
// a later duplicate wins, anything but an object or null is an error that changes nothing), in
// one pass of the scanner and without the map: every page of employees read from the warehouse
// puts back a hundred of these.
func (e *Employee) SetNestedRaw(nested []byte) error {
	if len(nested) == 0 {
		return nil
	}
	forms := e.nestedForms()
	s := scanner{data: nested}
	if i := s.ws(0); i < len(nested) && nested[i] == 'n' {
		if end, err := s.literal(i, "null"); err != nil || s.ws(end) != len(nested) {
			return fmt.Errorf("nested objects: %w", s.fail(i, "invalid literal"))
		}
		for _, f := range forms {
			*f.raw = nil
		}
		return nil
	}
	// The values found, by form, checked whole before any is given: a malformed object leaves
	// the employee as it was.
	var found [7][]byte
	err := s.whole('{', errNotObject, func(i int) (int, error) {
		return s.container(i, 1, '}', func(key []byte, escaped bool, val []byte) error {
			if escaped {
				k, err := unquote(key, escaped)
				if err != nil {
					return err
				}
				key = []byte(k)
			}
			for j, f := range forms {
				if string(key) == f.name { // compared, not allocated
					found[j] = val
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("nested objects: %w", err)
	}
	// One copy for all the forms, each capped at its own end, so that nothing appended to one
	// reaches another or the caller's bytes.
	n := 0
	for _, v := range found[:len(forms)] {
		n += len(v)
	}
	buf := make([]byte, 0, n)
	for j, f := range forms {
		if found[j] == nil {
			*f.raw = nil
			continue
		}
		start := len(buf)
		buf = append(buf, found[j]...)
		*f.raw = json.RawMessage(buf[start:len(buf):len(buf)])
	}
	return nil
}

// nestedForm is where the raw form of one of an employee's references is kept.
type nestedForm struct {
	name string
	raw  *json.RawMessage
}

// nestedForms are the employee's references present, in the order of their field names.
func (e *Employee) nestedForms() []nestedForm {
	forms := make([]nestedForm, 0, 7)
	for _, r := range []struct {
		name string
		ref  *Ref
	}{{"department", e.Department}, {"division", e.Division}, {"holiday_allowance", e.HolidayAllowance}} {
		if r.ref != nil {
			forms = append(forms, nestedForm{r.name, &r.ref.Raw})
		}
	}
	if e.HolidayApprover != nil {
		forms = append(forms, nestedForm{"holiday_approver", &e.HolidayApprover.Raw})
	}
	if e.LineManager != nil {
		forms = append(forms, nestedForm{"line_manager", &e.LineManager.Raw})
	}
	if e.Location != nil {
		forms = append(forms, nestedForm{"location", &e.Location.Raw})
	}
	if e.WorkingPattern != nil {
		forms = append(forms, nestedForm{"working_pattern", &e.WorkingPattern.Raw})
	}
	return forms
}

// PatternRef is the nested form of a working pattern (seed 2.3): id, name, total_hours, default.
type PatternRef struct {
	ID         int64
	Name       string
	TotalHours string
	Default    *bool
	// Raw is the object exactly as the source embedded it, compacted; nil when built locally.
	Raw json.RawMessage
}

// PersonRef is a nested line manager or holiday approver. The seed does not show its fields, so
// the object is kept as sent (Raw) and the known ones are read out of it.
type PersonRef struct {
	ID        int64
	FirstName string
	LastName  string
	Email     string
	// Raw is the object as the source embedded it (its members, in its order; the known ones
	// normalized as the seed prescribes); nil when built locally.
	Raw json.RawMessage
}

// Weekdays are the day prefixes of a working pattern, in the seed's order.
var Weekdays = [7]string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// WorkingPattern is the full working pattern record (seed 2.3).
type WorkingPattern struct {
	ID         int64
	Name       string
	Default    *bool
	TotalHours string
	Days       [7]*bool  // mon … sun
	Hours      [7]string // mon_hr … sun_hr
	CreatedAt  string
	UpdatedAt  string
	Extra      Extra
	// Sent is the record exactly as the source sent it, as Employee.Sent.
	Sent json.RawMessage
}

// UnmarshalJSON decodes an employee leniently (UPSTREAM.md).
func (e *Employee) UnmarshalJSON(data []byte) error {
	m, err := members("employee", data)
	if err != nil {
		return err
	}
	d := decoder{m: m}
	*e = Employee{ID: d.id("id")}
	for _, f := range EmployeeFields[:EmployeeFieldsBefore] {
		f.decode(&d, e)
	}
	// Real records were seen with join_date where the docs say company_join_date.
	if jd := d.date("join_date"); e.CompanyJoinDate == "" {
		e.CompanyJoinDate = jd
	}
	if raw := take(m, "working_pattern"); !isNull(raw) {
		e.WorkingPattern = new(PatternRef)
		d.setErr(e.WorkingPattern.decode("working_pattern", raw))
	}
	e.HolidayAllowance = d.ref("holiday_allowance")
	e.LineManager = d.person("line_manager")
	e.HolidayApprover = d.person("holiday_approver")
	e.Department = d.ref("department")
	e.Division = d.objectRef("division")
	e.Location = d.objectRef("location")
	for _, f := range EmployeeFields[EmployeeFieldsBefore:] {
		f.decode(&d, e)
	}
	e.Extra = d.extra()
	if d.err == nil {
		e.Sent, d.err = sentForm(data)
	}
	return d.err
}

// AppendJSON appends the employee as the source sent it (Sent), or, for one without that form,
// in the seed's field order, unmodelled fields after.
func (e *Employee) AppendJSON(b []byte) []byte {
	if len(e.Sent) > 0 {
		return append(b, e.Sent...)
	}
	w := beginObject(b)
	w.int("id", e.ID)
	for _, f := range EmployeeFields[:EmployeeFieldsBefore] {
		f.write(&w, e)
	}
	w.key("working_pattern")
	if e.WorkingPattern == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.b = e.WorkingPattern.AppendJSON(w.b)
	}
	w.key("holiday_allowance")
	w.b = e.HolidayAllowance.AppendJSON(w.b)
	w.key("line_manager")
	w.b = e.LineManager.AppendJSON(w.b)
	w.key("holiday_approver")
	w.b = e.HolidayApprover.AppendJSON(w.b)
	w.key("department")
	w.b = e.Department.AppendJSON(w.b)
	// Written only when the source sent an object; otherwise whatever it sent is in Extra.
	if e.Division != nil {
		w.key("division")
		w.b = e.Division.AppendJSON(w.b)
	}
	if e.Location != nil {
		w.key("location")
		w.b = e.Location.AppendJSON(w.b)
	}
	for _, f := range EmployeeFields[EmployeeFieldsBefore:] {
		f.write(&w, e)
	}
	w.extra(e.Extra)
	return w.end()
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (e Employee) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

func (r *Ref) decode(field string, raw json.RawMessage) error {
	ms, err := nestedMembers(field, raw)
	if err != nil {
		return err
	}
	return r.decodeMembers(field, ms)
}

func (r *Ref) decodeMembers(field string, ms []member) error {
	d := decoder{m: memberMap(ms), prefix: field + "."}
	r.ID = d.id("id")
	r.Name = d.string("name")
	r.Extra = d.extra()
	return d.err
}

// UnmarshalJSON decodes a holiday allowance or department.
func (r *Ref) UnmarshalJSON(data []byte) error { return r.decode("record", data) }

// AppendJSON appends the reference as the source embedded it, or built from its fields; null
// for a nil one.
func (r *Ref) AppendJSON(b []byte) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	if len(r.Raw) > 0 {
		return append(b, r.Raw...)
	}
	w := beginObject(b)
	w.int("id", r.ID)
	w.optString("name", r.Name)
	w.extra(r.Extra)
	return w.end()
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (r Ref) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

func (p *PatternRef) decode(field string, raw json.RawMessage) error {
	ms, err := nestedMembers(field, raw)
	if err != nil {
		return err
	}
	d := decoder{m: memberMap(ms), prefix: field + "."}
	p.ID = d.id("id")
	p.Name = d.string("name")
	p.TotalHours = d.decimal("total_hours")
	p.Default = d.bool("default")
	if d.err != nil {
		return d.err
	}
	p.Raw, err = normalizeNested(field, ms, len(raw), patternKinds)
	return err
}

// AppendJSON appends the nested working pattern as the source embedded it, or, for one never
// embedded by the source, as {id, name, total_hours, default}.
func (p *PatternRef) AppendJSON(b []byte) []byte {
	if len(p.Raw) > 0 {
		return append(b, p.Raw...)
	}
	w := beginObject(b)
	w.int("id", p.ID)
	w.optString("name", p.Name)
	w.optString("total_hours", p.TotalHours)
	w.optBool("default", p.Default)
	return w.end()
}

func (p *PersonRef) decode(field string, raw json.RawMessage) error {
	ms, err := nestedMembers(field, raw)
	if err != nil {
		return err
	}
	d := decoder{m: memberMap(ms), prefix: field + "."}
	p.ID = d.id("id")
	p.FirstName = d.string("first_name")
	p.LastName = d.string("last_name")
	p.Email = d.string("email")
	if d.err != nil {
		return d.err
	}
	p.Raw, err = normalizeNested(field, ms, len(raw), personKinds)
	return err
}

// AppendJSON appends the person as the source embedded it, or, for one never embedded by the
// source, as {id, first_name, last_name, email}.
func (p *PersonRef) AppendJSON(b []byte) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	if len(p.Raw) > 0 {
		return append(b, p.Raw...)
	}
	w := beginObject(b)
	w.int("id", p.ID)
	w.optString("first_name", p.FirstName)
	w.optString("last_name", p.LastName)
	w.optString("email", p.Email)
	return w.end()
}

// UnmarshalJSON decodes a working pattern leniently.
func (p *WorkingPattern) UnmarshalJSON(data []byte) error {
	m, err := members("working pattern", data)
	if err != nil {
		return err
	}
	d := decoder{m: m}
	*p = WorkingPattern{ID: d.id("id")}
	for _, f := range PatternFields {
		f.decode(&d, p)
	}
	p.Extra = d.extra()
	if d.err == nil {
		p.Sent, d.err = sentForm(data)
	}
	return d.err
}

// AppendJSON appends the working pattern as the source sent it (Sent), or, for one without
// that form, in the seed's field order.
func (p *WorkingPattern) AppendJSON(b []byte) []byte {
	if len(p.Sent) > 0 {
		return append(b, p.Sent...)
	}
	w := beginObject(b)
	w.int("id", p.ID)
	w.optString("name", p.Name)
	w.optBool("default", p.Default)
	w.optString("total_hours", p.TotalHours)
	for i, day := range Weekdays {
		w.optBool(day, p.Days[i])
	}
	for i, day := range Weekdays {
		w.optString(day+"_hr", p.Hours[i])
	}
	w.optString("created_at", p.CreatedAt)
	w.optString("updated_at", p.UpdatedAt)
	w.extra(p.Extra)
	return w.end()
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (p WorkingPattern) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil), nil }

// decoder takes modelled members out of an object one by one, keeping the first error; what is
// left at the end is the record's Extra.
type decoder struct {
	m      map[string]json.RawMessage
	prefix string
	err    error
}

func (d *decoder) setErr(err error) {
	if d.err == nil && err != nil {
		d.err = err
	}
}

func (d *decoder) id(k string) int64 {
	v, err := decodeID(d.prefix+k, take(d.m, k))
	d.setErr(err)
	return v
}

func (d *decoder) int(k string) *int64 {
	v, err := decodeInt(d.prefix+k, take(d.m, k))
	d.setErr(err)
	return v
}

func (d *decoder) string(k string) string {
	v, err := decodeString(d.prefix+k, take(d.m, k))
	d.setErr(err)
	return v
}

func (d *decoder) bool(k string) *bool {
	v, err := decodeBool(d.prefix+k, take(d.m, k))
	d.setErr(err)
	return v
}

func (d *decoder) decimal(k string) string {
	v, err := decodeDecimal(d.prefix+k, take(d.m, k))
	d.setErr(err)
	return v
}

func (d *decoder) date(k string) string {
	v, err := decodeDate(d.prefix+k, take(d.m, k))
	d.setErr(err)
	return v
}

func (d *decoder) timestamp(k string) string {
	v, err := decodeTimestamp(d.prefix+k, take(d.m, k))
	d.setErr(err)
	return v
}

func (d *decoder) opaque(k string) json.RawMessage {
	v, err := decodeOpaque(d.prefix+k, take(d.m, k))
	d.setErr(err)
	return v
}

func (d *decoder) ref(k string) *Ref {
	raw := take(d.m, k)
	if isNull(raw) {
		return nil
	}
	r := new(Ref)
	ms, err := nestedMembers(d.prefix+k, raw)
	if err == nil {
		err = r.decodeMembers(d.prefix+k, ms)
	}
	d.setErr(err)
	if d.err == nil {
		r.Raw, d.err = normalizeNested(d.prefix+k, ms, len(raw), refKinds)
	}
	return r
}

// objectRef is ref for a member that is a reference only when it is an object (an employee's
// division or location): any other value is left for Extra.
func (d *decoder) objectRef(k string) *Ref {
	if raw := bytes.TrimSpace(d.m[k]); len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	return d.ref(k)
}

func (d *decoder) person(k string) *PersonRef {
	raw := take(d.m, k)
	if isNull(raw) {
		return nil
	}
	p := new(PersonRef)
	d.setErr(p.decode(d.prefix+k, raw))
	return p
}

func (d *decoder) extra() Extra {
	e, err := newExtra(d.m)
	if err != nil {
		d.setErr(fmt.Errorf("%sextra: %w", d.prefix, err))
	}
	return e
}

// Envelope reads the records of an answer {"key":[...]}: a body that is not an object, or has no
// array under key, is an error.
func Envelope(key string, body []byte) ([]json.RawMessage, error) {
	ms, err := objectMembers(body)
	if err != nil {
		return nil, fmt.Errorf("decode answer: %w", err)
	}
	var raw []byte
	found := false
	for _, m := range ms { // the last of duplicate names, as encoding/json
		if m.key == key {
			raw, found = m.val, true
		}
	}
	if !found {
		return nil, fmt.Errorf("decode answer: no %q member", key)
	}
	raws, err := arrayElements(raw)
	if err != nil {
		return nil, fmt.Errorf("decode answer: %q is not an array", key)
	}
	return raws, nil
}
