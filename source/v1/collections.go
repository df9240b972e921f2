package v1

// The declared collections: the rest of the API beyond the seed's employees and working
// patterns (UPSTREAM.md, "The rest of the API"). Each field UPSTREAM.md lists is declared with
// its kind and its personal-data class (class.go), in the order the source writes it where that
// is recorded; anything else a record carries is kept in its Extra, of the collection's
// ExtraClass.

// f declares a plain field.
func f(name string, kind Kind, class Class) Field { return Field{Name: name, Kind: kind, Class: class} }

// person is a nested person (an employee, an approver): who it is, by id, is a fact of the
// record (Employment); the names and email it carries identify them.
func person(name string) Field {
	return Field{Name: name, Kind: Nested, Class: Employment, Nested: &Nesting{Target: "employees", Fields: []Field{
		f("first_name", String, Identifying), f("last_name", String, Identifying), f("email", String, Identifying)}}}
}

// named is a nested named reference to the reference data target, its id and name of class.
func named(name, target string, class Class) Field {
	return Field{Name: name, Kind: Nested, Class: class, Nested: &Nesting{Target: target, Fields: []Field{f("name", String, class)}}}
}

// reference is a collection of reference data: names of things, about no one (what else a
// record carries is still taken as identifying, as nothing says otherwise).
func reference(name string) *Collection {
	return &Collection{Name: name, Fields: []Field{f("name", String, NotPersonal)}}
}

// The reference data: id and name are all that is known of each (UPSTREAM.md).
var (
	Departments               = reference("departments")
	Divisions                 = reference("divisions")
	Locations                 = reference("locations")
	HolidayAllowances         = reference("holiday_allowances")
	OtherLeaveReasons         = reference("other_leave_reasons")
	StatutoryHolidayCountries = reference("statutory_holiday_countries")
	CompanyTrainingTypes      = reference("company_training_types")
)

// halfDays are an absence's half-day fields, in its order, shared with leave requests.
var halfDays = []Field{
	f("half_start", Bool, Employment), f("half_end", Bool, Employment),
	f("half_start_am_pm", String, Employment), f("half_end_am_pm", String, Employment),
}

// Absences are recorded absences (UPSTREAM.md, recorded: the field list is complete).
var Absences = &Collection{Name: "absences", Fields: concat(
	[]Field{person("employee"), person("approved_by"), named("leave_reason", "other_leave_reasons", Employment),
		f("deducted", Decimal, Employment), f("work_units", Decimal, Employment),
		f("start_date", Date, Employment), f("end_date", Date, Employment)},
	halfDays,
	[]Field{f("cancelled", Bool, Employment), f("notes", String, FreeText), f("type", String, Employment),
		f("created_at", Timestamp, Employment), f("updated_at", Timestamp, Employment)},
), Window: &DateWindow{Start: "start_date", End: "end_date"}}

// Sicknesses are recorded sicknesses (recorded).
//
// When someone was off sick, and for how many days, is kept as a fact of employment (absence
// figures add up without it otherwise); what they were sick with, why, and what was said and
// required of it are health data. Anything else a sickness carries is taken as health data too.
var Sicknesses = &Collection{Name: "sicknesses", Fields: []Field{
	person("employee"), named("company_sicknesstype", "company_sickness_types", Health),
	f("start_date", Date, Employment), f("end_date", Date, Employment),
	f("half_start", Bool, Employment), f("half_start_am_pm", String, Employment),
	f("half_end", Bool, Employment), f("half_end_am_pm", String, Employment),
	f("deducted", Decimal, Employment), f("status", String, Employment), f("reason", String, Health),
	f("review_notes", String, Health), f("fit_note_required", Bool, Health),
}, Window: &DateWindow{Start: "start_date", End: "end_date"}, Extra: Health}

// LeaveRequests are like absences, with a status (pending, approved, rejected, cancelled) and no
// cancelled flag; what else they carry is not recorded and is kept in Extra.
var LeaveRequests = &Collection{Name: "leave_requests", Fields: concat(
	[]Field{person("employee"), person("approved_by"), named("leave_reason", "other_leave_reasons", Employment),
		f("deducted", Decimal, Employment), f("work_units", Decimal, Employment),
		f("start_date", Date, Employment), f("end_date", Date, Employment)},
	halfDays,
	[]Field{f("status", String, Employment), f("notes", String, FreeText), f("type", String, Employment),
		f("created_at", Timestamp, Employment), f("updated_at", Timestamp, Employment)},
), Window: &DateWindow{Start: "start_date", End: "end_date", ByStart: true}}

// EmployeeTrainingCourses are recorded training courses (recorded).
var EmployeeTrainingCourses = &Collection{Name: "employee_training_courses", Fields: []Field{
	f("name", String, Employment),
	f("start_on", Date, Employment), f("end_on", Date, Employment), f("expires_on", Date, Employment),
	f("half_day", Bool, Employment), f("half_day_am_pm", String, Employment),
	f("hours", Decimal, Employment), f("cost", Decimal, Employment),
	f("status", String, Employment), f("outcome", String, Employment), f("rejection_reason", String, FreeText),
	f("notes", String, FreeText), f("followup_date", Date, Employment),
	f("remuneration_currency_id", Int, Employment),
	person("employee"),
	named("company_training_type", "company_training_types", Employment),
	named("company_training_category", "company_training_categories", Employment),
	named("company_training_provider", "company_training_providers", Employment),
}}

// financial is a collection of the financial module (UPSTREAM.md: shapes unknown, sensitive):
// only its id and the employee it belongs to are declared; everything else it carries is kept in
// Extra, financial data, and served back as sent.
func financial(name string) *Collection {
	return &Collection{Name: name, Fields: []Field{person("employee")}, Sensitive: true, Extra: Financial}
}

// The financial collections: walked only when named (Collection.Sensitive).
var (
	Salaries = financial("salaries")
	Bonuses  = financial("bonuses")
	Benefits = financial("benefits")
)

// Collections are the declared collections, reference data first (events point at it), the
// sensitive ones last.
var Collections = []*Collection{
	Departments, Divisions, Locations, HolidayAllowances, OtherLeaveReasons, StatutoryHolidayCountries,
	CompanyTrainingTypes, Absences, Sicknesses, LeaveRequests, EmployeeTrainingCourses,
	Salaries, Bonuses, Benefits,
}

// CollectionNamed is the declared collection of that name, or nil.
func CollectionNamed(name string) *Collection {
	for _, c := range Collections {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func concat(parts ...[]Field) []Field {
	var out []Field
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
