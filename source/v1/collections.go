package v1

// The declared collections: the rest of the API beyond the seed's employees and working
// patterns (UPSTREAM.md, "The rest of the API"). Each field UPSTREAM.md lists is declared with
// its kind, in the order the source writes it where that is recorded; anything else a record
// carries is kept in its Extra.

// The nested forms: a person (an employee, an approver) and a named reference.
var (
	personNesting = func(target string) *Nesting {
		return &Nesting{Target: target, Fields: []Field{
			{Name: "first_name", Kind: String}, {Name: "last_name", Kind: String}, {Name: "email", Kind: String}}}
	}
	namedNesting = func(target string) *Nesting {
		return &Nesting{Target: target, Fields: []Field{{Name: "name", Kind: String}}}
	}
)

func person(name string) Field {
	return Field{Name: name, Kind: Nested, Nested: personNesting("employees")}
}

func named(name, target string) Field {
	return Field{Name: name, Kind: Nested, Nested: namedNesting(target)}
}

func reference(name string) *Collection {
	return &Collection{Name: name, Fields: []Field{{Name: "name", Kind: String}}}
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
	{Name: "half_start", Kind: Bool}, {Name: "half_end", Kind: Bool},
	{Name: "half_start_am_pm", Kind: String}, {Name: "half_end_am_pm", Kind: String},
}

// Absences are recorded absences (UPSTREAM.md, recorded: the field list is complete).
var Absences = &Collection{Name: "absences", Fields: concat(
	[]Field{person("employee"), person("approved_by"), named("leave_reason", "other_leave_reasons"),
		{Name: "deducted", Kind: Decimal}, {Name: "work_units", Kind: Decimal},
		{Name: "start_date", Kind: Date}, {Name: "end_date", Kind: Date}},
	halfDays,
	[]Field{{Name: "cancelled", Kind: Bool}, {Name: "notes", Kind: String}, {Name: "type", Kind: String},
		{Name: "created_at", Kind: Timestamp}, {Name: "updated_at", Kind: Timestamp}},
), Window: &DateWindow{Start: "start_date", End: "end_date"}}

// Sicknesses are recorded sicknesses (recorded).
var Sicknesses = &Collection{Name: "sicknesses", Fields: []Field{
	person("employee"), named("company_sicknesstype", "company_sickness_types"),
	{Name: "start_date", Kind: Date}, {Name: "end_date", Kind: Date},
	{Name: "half_start", Kind: Bool}, {Name: "half_start_am_pm", Kind: String},
	{Name: "half_end", Kind: Bool}, {Name: "half_end_am_pm", Kind: String},
	{Name: "deducted", Kind: Decimal}, {Name: "status", Kind: String}, {Name: "reason", Kind: String},
	{Name: "review_notes", Kind: String}, {Name: "fit_note_required", Kind: Bool},
}, Window: &DateWindow{Start: "start_date", End: "end_date"}}

// LeaveRequests are like absences, with a status (pending, approved, rejected, cancelled) and no
// cancelled flag; what else they carry is not recorded and is kept in Extra.
var LeaveRequests = &Collection{Name: "leave_requests", Fields: concat(
	[]Field{person("employee"), person("approved_by"), named("leave_reason", "other_leave_reasons"),
		{Name: "deducted", Kind: Decimal}, {Name: "work_units", Kind: Decimal},
		{Name: "start_date", Kind: Date}, {Name: "end_date", Kind: Date}},
	halfDays,
	[]Field{{Name: "status", Kind: String}, {Name: "notes", Kind: String}, {Name: "type", Kind: String},
		{Name: "created_at", Kind: Timestamp}, {Name: "updated_at", Kind: Timestamp}},
), Window: &DateWindow{Start: "start_date", End: "end_date", ByStart: true}}

// EmployeeTrainingCourses are recorded training courses (recorded).
var EmployeeTrainingCourses = &Collection{Name: "employee_training_courses", Fields: []Field{
	{Name: "name", Kind: String},
	{Name: "start_on", Kind: Date}, {Name: "end_on", Kind: Date}, {Name: "expires_on", Kind: Date},
	{Name: "half_day", Kind: Bool}, {Name: "half_day_am_pm", Kind: String},
	{Name: "hours", Kind: Decimal}, {Name: "cost", Kind: Decimal},
	{Name: "status", Kind: String}, {Name: "outcome", Kind: String}, {Name: "rejection_reason", Kind: String},
	{Name: "notes", Kind: String}, {Name: "followup_date", Kind: Date},
	{Name: "remuneration_currency_id", Kind: Int},
	person("employee"),
	named("company_training_type", "company_training_types"),
	named("company_training_category", "company_training_categories"),
	named("company_training_provider", "company_training_providers"),
}}

// financial is a collection of the financial module (UPSTREAM.md: shapes unknown, sensitive):
// only its id and the employee it belongs to are declared; everything else it carries is kept in
// Extra and served back as sent.
func financial(name string) *Collection {
	return &Collection{Name: name, Fields: []Field{person("employee")}, Sensitive: true}
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
