package sink

import (
	"encoding/json"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// The collections, each declared once (see collection.go). Adding a plain field to one takes a
// migration per dialect, its line here, and the field in the wire type (package v1).

// The shapes of the nested objects: the id, then the columns of the target's table each carries.
var (
	refShape = []column[v1.Ref]{
		idColumn(func(r *v1.Ref) *int64 { return &r.ID }),
		textColumn("name", KindText, func(r *v1.Ref) *string { return &r.Name }),
		jsonColumn("extra", func(r *v1.Ref) *v1.Extra { return &r.Extra }),
	}
	personShape = []column[v1.PersonRef]{
		idColumn(func(p *v1.PersonRef) *int64 { return &p.ID }),
		textColumn("first_name", KindText, func(p *v1.PersonRef) *string { return &p.FirstName }),
		textColumn("last_name", KindText, func(p *v1.PersonRef) *string { return &p.LastName }),
		textColumn("email", KindText, func(p *v1.PersonRef) *string { return &p.Email }),
	}
	patternShape = []column[v1.PatternRef]{
		idColumn(func(p *v1.PatternRef) *int64 { return &p.ID }),
		textColumn("name", KindText, func(p *v1.PatternRef) *string { return &p.Name }),
		textColumn("total_hours", KindDecimal, func(p *v1.PatternRef) *string { return &p.TotalHours }),
		boolColumn("is_default", func(p *v1.PatternRef) **bool { return &p.Default }),
	}
)

// employeeCollection is /v1/employees.
var employeeCollection = func() *collection[v1.Employee] {
	type E = v1.Employee
	c := declare(string(Employees), []column[E]{
		idColumn(func(e *E) *int64 { return &e.ID }),
		intColumn("account_id", KindID, func(e *E) **int64 { return &e.AccountID }),
		textColumn("first_name", KindText, func(e *E) *string { return &e.FirstName }),
		textColumn("last_name", KindText, func(e *E) *string { return &e.LastName }),
		textColumn("email", KindText, func(e *E) *string { return &e.Email }),
		textColumn("job_title", KindText, func(e *E) *string { return &e.JobTitle }),
		textColumn("status", KindText, func(e *E) *string { return &e.Status }),
		textColumn("company_join_date", KindDate, func(e *E) *string { return &e.CompanyJoinDate }),
		textColumn("job_start_date", KindDate, func(e *E) *string { return &e.JobStartDate }),
		intColumn("length_of_service_in_months", KindInt, func(e *E) **int64 { return &e.LengthOfServiceInMonths }),
		jsonColumn("age", func(e *E) *json.RawMessage { return &e.Age }),
		jsonColumn("full_or_part_time", func(e *E) *json.RawMessage { return &e.FullOrPartTime }),
		jsonColumn("notice_period", func(e *E) *json.RawMessage { return &e.NoticePeriod }),
		boolColumn("receives_statutory_holidays", func(e *E) **bool { return &e.ReceivesStatutoryHolidays }),
		boolColumn("hr", func(e *E) **bool { return &e.HR }),
		textColumn("created_at", KindTimestamp, func(e *E) *string { return &e.CreatedAt }),
		textColumn("updated_at", KindTimestamp, func(e *E) *string { return &e.UpdatedAt }),
		jsonColumn("extra", func(e *E) *v1.Extra { return &e.Extra }),
		// The record's nested objects exactly as the source embedded them (the source embeds
		// one person in different forms in different records, so the form belongs to the
		// reference), keyed by field in name order (v1.Employee.NestedRaw). Read back after the
		// references, whose forms it restores.
		{name: "nested", kind: KindJSON,
			value: func(e *E) any { return nullRaw(e.NestedRaw()) },
			set: func(e *E, c *cell) {
				if c.s.Valid {
					// A malformed column (hand-edited) leaves the forms built from the rows.
					_ = e.SetNestedRaw([]byte(c.s.String))
				}
			}},
		// The record as the source sent it, which serve mode gives back (see sentColumn);
		// the columns above are the analysts' normal forms.
		sentColumn(func(e *E) *json.RawMessage { return &e.Sent }),
	},
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

// patternCollection is /v1/working_patterns.
var patternCollection = func() *collection[v1.WorkingPattern] {
	type W = v1.WorkingPattern
	cols := []column[W]{
		idColumn(func(w *W) *int64 { return &w.ID }),
		textColumn("name", KindText, func(w *W) *string { return &w.Name }),
		boolColumn("is_default", func(w *W) **bool { return &w.Default }),
		textColumn("total_hours", KindDecimal, func(w *W) *string { return &w.TotalHours }),
	}
	for i, day := range v1.Weekdays {
		cols = append(cols, boolColumn(day, func(w *W) **bool { return &w.Days[i] }))
	}
	for i, day := range v1.Weekdays {
		cols = append(cols, textColumn(day+"_hr", KindDecimal, func(w *W) *string { return &w.Hours[i] }))
	}
	cols = append(cols,
		textColumn("created_at", KindTimestamp, func(w *W) *string { return &w.CreatedAt }),
		textColumn("updated_at", KindTimestamp, func(w *W) *string { return &w.UpdatedAt }),
		jsonColumn("extra", func(w *W) *v1.Extra { return &w.Extra }),
		sentColumn(func(w *W) *json.RawMessage { return &w.Sent }))
	return declare(string(WorkingPatterns), cols)
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
