package v1

import "encoding/json"

// The plain fields of the two records the seed documents, employees and working patterns, are
// declared once, like the fields of every other collection (collections.go): each with its
// name on the wire, its kind, its personal-data class (class.go) and where the typed record holds
// it. The record's lenient decoding (UnmarshalJSON), its writing (AppendJSON) and the
// warehouse's columns (package sink) are all derived from these lists; what is not a plain field
// (the id, the nested references, the join_date alias, Extra and Sent) is written once, by hand,
// beside them (records.go), the references' classes in EmployeeRefs (class.go).

// Plain is a plain field of a record of type T: a value of one Kind, held in one field of T.
// Exactly one accessor is set, the one the kind reads: Text for String, Date, Timestamp and
// Decimal (""is none), Int for Int, Bool for Bool, Raw for Opaque (nil is none).
type Plain[T any] struct {
	Name string
	Kind Kind
	// Class is what kind of personal data the field is (class.go).
	Class Class
	// Column is the warehouse's name for it when that is not Name (default is a SQL keyword).
	Column string
	// ID says an Int field names a record (an account): the warehouse keeps it as an id.
	ID bool
	// Undocumented says the seed does not document the field: a record built here writes it
	// only when it has a value, where the seed's fields are written null.
	Undocumented bool
	Text         func(*T) *string
	Int          func(*T) **int64
	Bool         func(*T) **bool
	Raw          func(*T) *json.RawMessage
}

// ColumnName is the warehouse's column of the field.
func (p Plain[T]) ColumnName() string {
	if p.Column != "" {
		return p.Column
	}
	return p.Name
}

// TextField declares a String, Date, Timestamp or Decimal field.
func TextField[T any](name string, kind Kind, class Class, f func(*T) *string) Plain[T] {
	return Plain[T]{Name: name, Kind: kind, Class: class, Text: f}
}

// IntField declares an Int field.
func IntField[T any](name string, class Class, f func(*T) **int64) Plain[T] {
	return Plain[T]{Name: name, Kind: Int, Class: class, Int: f}
}

// BoolField declares a Bool field.
func BoolField[T any](name string, class Class, f func(*T) **bool) Plain[T] {
	return Plain[T]{Name: name, Kind: Bool, Class: class, Bool: f}
}

// OpaqueField declares an Opaque field.
func OpaqueField[T any](name string, class Class, f func(*T) *json.RawMessage) Plain[T] {
	return Plain[T]{Name: name, Kind: Opaque, Class: class, Raw: f}
}

// decode takes the field's member out of d into t.
func (p Plain[T]) decode(d *decoder, t *T) {
	switch p.Kind {
	case Int:
		*p.Int(t) = d.int(p.Name)
	case Bool:
		*p.Bool(t) = d.bool(p.Name)
	case Opaque:
		*p.Raw(t) = d.opaque(p.Name)
	case Date:
		*p.Text(t) = d.date(p.Name)
	case Timestamp:
		*p.Text(t) = d.timestamp(p.Name)
	case Decimal:
		*p.Text(t) = d.decimal(p.Name)
	default:
		*p.Text(t) = d.string(p.Name)
	}
}

// write writes the field of t, when it has a value (else null, or, for an undocumented field,
// nothing).
func (p Plain[T]) write(w *objectWriter, t *T) {
	if p.Undocumented && p.Text != nil && *p.Text(t) == "" {
		return
	}
	switch p.Kind {
	case Int:
		w.optInt(p.Name, *p.Int(t))
	case Bool:
		w.optBool(p.Name, *p.Bool(t))
	case Opaque:
		w.raw(p.Name, *p.Raw(t))
	default:
		w.optString(p.Name, *p.Text(t))
	}
}

// EmployeeFields are an employee's plain fields (seed 2.1) in the seed's order: those before the
// nested references (EmployeeFieldsBefore of them), then those after. A field added here (and to
// Employee) is decoded, written and, with a migration adding its column, warehoused.
var EmployeeFields = []Plain[Employee]{
	{Name: "account_id", Kind: Int, Class: NotPersonal, ID: true, Int: func(e *Employee) **int64 { return &e.AccountID }},
	TextField("first_name", String, Identifying, func(e *Employee) *string { return &e.FirstName }),
	TextField("last_name", String, Identifying, func(e *Employee) *string { return &e.LastName }),
	TextField("email", String, Identifying, func(e *Employee) *string { return &e.Email }),
	TextField("job_title", String, Employment, func(e *Employee) *string { return &e.JobTitle }),
	TextField("status", String, Employment, func(e *Employee) *string { return &e.Status }),
	TextField("company_join_date", Date, Employment, func(e *Employee) *string { return &e.CompanyJoinDate }),
	TextField("job_start_date", Date, Employment, func(e *Employee) *string { return &e.JobStartDate }),
	IntField("length_of_service_in_months", Employment, func(e *Employee) **int64 { return &e.LengthOfServiceInMonths }),
	// An age (or the date of birth some accounts send in its place) narrows a person down.
	OpaqueField("age", Identifying, func(e *Employee) *json.RawMessage { return &e.Age }),
	OpaqueField("full_or_part_time", Employment, func(e *Employee) *json.RawMessage { return &e.FullOrPartTime }),
	OpaqueField("notice_period", Employment, func(e *Employee) *json.RawMessage { return &e.NoticePeriod }),
	// the nested references
	BoolField("receives_statutory_holidays", Employment, func(e *Employee) **bool { return &e.ReceivesStatutoryHolidays }),
	BoolField("hr", Employment, func(e *Employee) **bool { return &e.HR }),
	TextField("created_at", Timestamp, Employment, func(e *Employee) *string { return &e.CreatedAt }),
	TextField("updated_at", Timestamp, Employment, func(e *Employee) *string { return &e.UpdatedAt }),
	// Not in the seed: a leaver's leaving date, where the account records it (UPSTREAM.md).
	{Name: "leaving_date", Kind: Date, Class: Employment, Undocumented: true, Text: func(e *Employee) *string { return &e.LeavingDate }},
}

// EmployeeFieldsBefore is how many of EmployeeFields come before the nested references.
const EmployeeFieldsBefore = 12

// PatternFields are a working pattern's plain fields (seed 2.3), in the seed's order.
var PatternFields = func() []Plain[WorkingPattern] {
	type W = WorkingPattern
	fs := []Plain[W]{
		TextField("name", String, NotPersonal, func(p *W) *string { return &p.Name }),
		{Name: "default", Column: "is_default", Kind: Bool, Class: NotPersonal, Bool: func(p *W) **bool { return &p.Default }},
		TextField("total_hours", Decimal, NotPersonal, func(p *W) *string { return &p.TotalHours }),
	}
	for i, day := range Weekdays {
		fs = append(fs, BoolField(day, NotPersonal, func(p *W) **bool { return &p.Days[i] }))
	}
	for i, day := range Weekdays {
		fs = append(fs, TextField(day+"_hr", Decimal, NotPersonal, func(p *W) *string { return &p.Hours[i] }))
	}
	return append(fs,
		TextField("created_at", Timestamp, NotPersonal, func(p *W) *string { return &p.CreatedAt }),
		TextField("updated_at", Timestamp, NotPersonal, func(p *W) *string { return &p.UpdatedAt }))
}()
