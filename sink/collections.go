package sink

import (
	"encoding/json"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// The collections, each declared once (see collection.go). The plain fields of every collection
// are the wire's (package v1): adding one takes its line there and a migration per dialect (its
// history's column too, for a table with history); nothing here.

// The shapes of the nested objects: the id, then the columns of the target's table each carries.
var (
	// The classes are those of the target's columns, where the carried values are written.
	refShape = []column[v1.Ref]{
		idColumn(func(r *v1.Ref) *int64 { return &r.ID }),
		textColumn("name", KindText, func(r *v1.Ref) *string { return &r.Name }).as(v1.NotPersonal),
		jsonColumn("extra", func(r *v1.Ref) *v1.Extra { return &r.Extra }).as(v1.Identifying),
	}
	personShape = []column[v1.PersonRef]{
		idColumn(func(p *v1.PersonRef) *int64 { return &p.ID }),
		textColumn("first_name", KindText, func(p *v1.PersonRef) *string { return &p.FirstName }).as(v1.Identifying),
		textColumn("last_name", KindText, func(p *v1.PersonRef) *string { return &p.LastName }).as(v1.Identifying),
		textColumn("email", KindText, func(p *v1.PersonRef) *string { return &p.Email }).as(v1.Identifying),
	}
	patternShape = []column[v1.PatternRef]{
		idColumn(func(p *v1.PatternRef) *int64 { return &p.ID }),
		textColumn("name", KindText, func(p *v1.PatternRef) *string { return &p.Name }).as(v1.NotPersonal),
		textColumn("total_hours", KindDecimal, func(p *v1.PatternRef) *string { return &p.TotalHours }).as(v1.NotPersonal),
		boolColumn("is_default", func(p *v1.PatternRef) **bool { return &p.Default }).as(v1.NotPersonal),
	}
)

// plainColumn is the column of a plain field the wire declares (v1.EmployeeFields,
// v1.PatternFields), of the kind its kind maps to (columnKinds; an Int naming a record is an id).
func plainColumn[T any](f v1.Plain[T]) column[T] {
	name := f.ColumnName()
	switch f.Kind {
	case v1.Int:
		kind := KindInt
		if f.ID {
			kind = KindID
		}
		return intColumn(name, kind, f.Int).as(f.Class)
	case v1.Bool:
		return boolColumn(name, f.Bool).as(f.Class)
	case v1.Opaque:
		return jsonColumn(name, f.Raw).as(f.Class)
	}
	return textColumn(name, columnKinds[f.Kind], f.Text).as(f.Class)
}

// employeeCollection is /v1/employees: the plain fields the wire declares (v1.EmployeeFields),
// then extra, nested and sent, and the nested references, each a foreign key to the table it
// points at (two of them, line manager and holiday approver, at employees itself).
var employeeCollection = func() *collection[v1.Employee] {
	type E = v1.Employee
	cols := []column[E]{idColumn(func(e *E) *int64 { return &e.ID }).as(v1.Employment)}
	for _, f := range v1.EmployeeFields {
		cols = append(cols, plainColumn(f))
	}
	c := declare(string(Employees), append(cols,
		// What no declaration names is taken as identifying (v1.Collection.ExtraClass).
		jsonColumn("extra", func(e *E) *v1.Extra { return &e.Extra }).as(v1.Identifying),
		// The record's nested objects exactly as the source embedded them (the source embeds
		// one person in different forms in different records, so the form belongs to the
		// reference), keyed by field in name order (v1.Employee.NestedRaw). Read back after the
		// references, whose forms it restores.
		column[E]{name: "nested", kind: KindJSON, class: sentClass(v1.EmployeeRefs, 0),
			value: func(e *E) any { return nullRaw(e.NestedRaw()) },
			set: func(e *E, c *cell) {
				if c.s.Valid {
					// A malformed column (hand-edited) leaves the forms built from the rows.
					_ = e.SetNestedRaw([]byte(c.s.String))
				}
			}},
		// The record as the source sent it, which serve mode gives back (see sentColumn);
		// the columns above are the analysts' normal forms.
		sentColumn(func(e *E) *json.RawMessage { return &e.Sent }).as(v1.Identifying)),
		refTo("working_pattern", "working_pattern_id", string(WorkingPatterns), patternShape, func(e *E) **v1.PatternRef { return &e.WorkingPattern }),
		refTo("holiday_allowance", "holiday_allowance_id", holidayAllowances, refShape, func(e *E) **v1.Ref { return &e.HolidayAllowance }),
		refTo("department", "department_id", departments, refShape, func(e *E) **v1.Ref { return &e.Department }),
		// Division and location are references only when the source sends an object (see
		// v1.Employee); a location given by name stays in extra.
		refTo("division", "division_id", v1.Divisions.Name, refShape, func(e *E) **v1.Ref { return &e.Division }),
		refTo("location", "location_id", v1.Locations.Name, refShape, func(e *E) **v1.Ref { return &e.Location }),
		refTo("line_manager", "line_manager_id", string(Employees), personShape, func(e *E) **v1.PersonRef { return &e.LineManager }),
		refTo("holiday_approver", "holiday_approver_id", string(Employees), personShape, func(e *E) **v1.PersonRef { return &e.HolidayApprover }),
	)
	c.json = func(e *E) []byte { return e.AppendJSON(nil) }
	c.sent = func(e *E) *json.RawMessage { return &e.Sent }
	c.decode = func(b []byte) (e E, err error) { err = e.UnmarshalJSON(b); return e, err }
	// A record created here ages: its length of service is reckoned at read time, as the
	// service reckons it, not frozen at creation.
	c.finish = func(e *E, origin string, now time.Time) {
		if origin == originLocal && e.CompanyJoinDate != "" {
			if m, ok := monthsSince(e.CompanyJoinDate, now); ok {
				e.LengthOfServiceInMonths = &m
			}
		}
	}
	return c
}()

// patternCollection is /v1/working_patterns: the plain fields the wire declares
// (v1.PatternFields), then extra and sent.
var patternCollection = func() *collection[v1.WorkingPattern] {
	type W = v1.WorkingPattern
	cols := []column[W]{idColumn(func(w *W) *int64 { return &w.ID }).as(v1.NotPersonal)}
	for _, f := range v1.PatternFields {
		cols = append(cols, plainColumn(f))
	}
	cols = append(cols,
		jsonColumn("extra", func(w *W) *v1.Extra { return &w.Extra }).as(v1.Identifying),
		sentColumn(func(w *W) *json.RawMessage { return &w.Sent }).as(v1.Identifying))
	c := declare(string(WorkingPatterns), cols)
	c.json = func(w *W) []byte { return w.AppendJSON(nil) }
	c.sent = func(w *W) *json.RawMessage { return &w.Sent }
	c.decode = func(b []byte) (w W, err error) { err = w.UnmarshalJSON(b); return w, err }
	return c
}()

// The reference data employees point at, declared on the wire (v1.Departments…) and derived
// from those declarations in records.go like every other collection there: listed by a walk,
// with unlisted rows for ids only references name.
const (
	departments       = "departments"
	holidayAllowances = "holiday_allowances"
)

// handWritten are the tables declared above, by hand: the seed's two records.
var handWritten = []*table{patternCollection.table, employeeCollection.table}

// tables are every declared table, in the order a sync loads them: the reference data (the
// collections the wire declares that point at nothing), then working patterns (before the
// employees, so that their patterns are listed ones), employees, then the rest the wire declares
// (the events, which point at employees and at the reference data), in the wire's order.
var tables = func() []*table {
	var reference, rest []*table
	for _, c := range v1.Collections {
		wc, ok := wireCollections[c.Name]
		switch {
		case !ok:
		case !hasNested(c):
			reference = append(reference, wc.table)
		default:
			rest = append(rest, wc.table)
		}
	}
	out := append(reference, handWritten...)
	out = append(out, rest...)
	for _, t := range out {
		t.history = historied[t.name]
	}
	return out
}()

// historied are the collections whose every version is kept in <name>_history, with the
// period it was current in the warehouse (history.go): employees, the events that change
// after they are first synced (a leave request goes pending -> approved -> cancelled, an
// ongoing sickness gets its end date), and the reference data they point at (a department
// renamed keeps its old name for its time). Their triggers are made from these declarations.
var historied = map[string]bool{string(Employees): true,
	v1.Absences.Name: true, v1.Sicknesses.Name: true, v1.LeaveRequests.Name: true, v1.EmployeeTrainingCourses.Name: true,
	departments: true, v1.Divisions.Name: true, v1.Locations.Name: true, holidayAllowances: true,
	v1.OtherLeaveReasons.Name: true, v1.StatutoryHolidayCountries.Name: true, v1.CompanyTrainingTypes.Name: true}

// hasNested reports whether the collection's records point at other records.
func hasNested(c *v1.Collection) bool {
	for _, f := range c.Fields {
		if f.Kind == v1.Nested {
			return true
		}
	}
	return false
}

// tableOf is the declared table of a collection, or nil.
func tableOf(name string) *table {
	for _, t := range tables {
		if t.name == name {
			return t
		}
	}
	return nil
}

// Loadable are the collections a walk of the source can be loaded into, in the order a sync
// loads them (see tables): reference data, working patterns, employees, then the events.
func Loadable() []Resource {
	var out []Resource
	for _, t := range tables {
		out = append(out, Resource(t.name))
	}
	return out
}
