package fakeupstream

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"
)

// The rest of the API (UPSTREAM.md, "The rest of the API"): reference data and events, made by
// GenerateAccount in the same loose style as the employees. Where UPSTREAM.md marks a field list
// as recorded (absences, sicknesses, employee training courses) the records carry exactly those
// fields. Elsewhere they carry the fields it names, and some of them created_at and updated_at
// as the recorded absences do: leave requests are absences with a status (pending, approved,
// rejected, cancelled) instead of cancelled and without approved_by, leave_reason and the am/pm
// of their half days (members absent, not null: "", null and absent all occur, as in the real
// service), and every approved or cancelled request has its absence, under another id; departments, divisions, locations, holiday allowances and other
// leave reasons are id, name and the timestamps; statutory holiday countries and company
// training types id and name.

// AccountOptions configures GenerateAccount.
type AccountOptions struct {
	// Employees is the number of employees (Generate's n).
	Employees int
	// Seed makes the data: the same seed, the same bytes.
	Seed int64
	// AbsenceYears is how many years before the data's today (2026-06-01) absences, leave
	// requests, sicknesses and training courses go back (default 1); bookings also run half a
	// year ahead. An employee's events start no earlier than the employee's join date (join
	// dates spread over 2012-2026) and end no later than their leaving day (about a third of
	// the employees have left, most in the last three years). Ten years of 2,000 employees is
	// about 74,000 absences, 79,000 leave requests, 12,500 sicknesses and 10,500 training
	// courses: a few seconds to make, and as many for New to read.
	AbsenceYears int
}

// Account is a generated account: every collection a Service serves, consistent with each
// other. Serve it with New(a.Options()) (setting the other Options fields as needed).
type Account struct {
	// Employees are Generate's records for the same count and seed, except that location is
	// the nested {id, name} of a record of locations; that each carries a division (nested,
	// null or ""), a statutory_holiday_country ({id, name} of a record of
	// statutory_holiday_countries, or null) and a leaving_date (YYYY-MM-DD or null: see
	// employment.go); that a few work the zero-hours pattern (full_or_part_time "Part time"
	// where set); that a few current employees are future starters, their join date within
	// two months after the data's today (and their length of service 0, their record made
	// before that day); that about a sixth joined in the three years before the data's today
	// (their join date, job start date and timestamps moved with it), so starters come
	// steadily through those years, 2026 included; and that about a third of the Current
	// employees who had joined by then left in those three years (status Ex-employee, a
	// leaving_date but for about a tenth, their length of service to it): a 12-month turnover
	// of 11-14 %.
	Employees []json.RawMessage
	// WorkingPatterns are WorkingPatterns() and the zero-hours pattern (id 36: total_hours
	// "0.0", no day marked).
	WorkingPatterns []json.RawMessage
	// Collections holds the records of every other collection, by name: the reference data
	// (departments, divisions, locations, holiday_allowances, other_leave_reasons,
	// statutory_holiday_countries, company_training_types), the events (absences,
	// sicknesses, leave_requests, employee_training_courses) and the financial module
	// (salaries, bonuses, benefits: see financial.go), in id order.
	Collections map[string][]json.RawMessage
}

// Options are Options serving the account: its employees, working patterns and collections
// (the map is a copy: changing it leaves the account as it is).
func (a Account) Options() Options {
	return Options{Employees: a.Employees, WorkingPatterns: a.WorkingPatterns, Collections: maps.Clone(a.Collections)}
}

// Reference data: ids and names. Departments, holiday allowances, locations and divisions are
// in generate.go, with the employees that point at them.
var (
	otherLeaveReasons = []ref{
		{41, "Compassionate leave"}, {42, "Jury service"}, {43, "Maternity leave"}, {44, "Paternity leave"},
		{45, "Study leave"}, {46, "Unpaid leave"}, {47, "Medical appointment"}, {48, "Time off in lieu"},
		{49, "Dependant leave"},
	}
	statutoryHolidayCountries = []ref{
		{1, "England and Wales"}, {2, "Scotland"}, {3, "Northern Ireland"}, {4, "Ireland"}, {5, "Poland"}, {6, "Portugal"},
	}
	trainingTypes = []ref{
		{901, "Health & Safety"}, {902, "Compliance"}, {903, "Technical"}, {904, "Leadership & Management"},
		{905, "Professional qualification"}, {906, "Induction"},
	}
	// Nested only: no collection of these is served.
	sicknessTypes = []ref{
		{61, "Cold / flu"}, {62, "Back pain"}, {63, "Stomach upset"}, {64, "Stress / mental health"},
		{65, "COVID-19"}, {66, "Injury"}, {67, "Other"},
	}
	trainingCategories = []ref{{951, "Mandatory"}, {952, "Development"}, {953, "Certification"}}
	trainingProviders  = []ref{{971, "St John Ambulance"}, {972, "Internal"}, {973, "Pluralsight"}, {974, "ACCA"}, {975, "Formação Lda"}}
)

// course is a training course employees are booked on.
type course struct {
	name                     string
	typ, category, provider  int // indexes; provider -1: none
	days                     int
	hours                    string // "" written as null
	cost                     string
	expiresYears, currencyID int
}

var courses = []course{
	{"First Aid at Work", 0, 0, 0, 3, "", "450.0", 3, 1},
	{"Fire Marshal", 0, 0, 0, 1, "6.0", "120.0", 3, 1},
	{"GDPR awareness", 1, 0, 1, 1, "1.5", "0.0", 1, 1},
	{"Anti-bribery & corruption", 1, 0, -1, 1, "1.0", "0.0", 2, 1},
	{"Kubernetes for developers", 2, 1, 2, 2, "14.0", "750.0", 0, 1},
	{"Go in production", 2, 1, 1, 1, "", "0.0", 0, 1},
	{"New managers' programme", 3, 1, -1, 4, "30.0", "2400.0", 0, 1},
	{"ACCA Financial Reporting", 4, 2, 3, 5, "", "1350.5", 0, 1},
	{"Segurança no trabalho", 0, 0, 4, 1, "7.5", "95.0", 2, 3},
	{"Company induction", 5, 0, 1, 1, "3.5", "0.0", 0, 1},
}

var (
	sicknessReasons = []string{"", "", "Flu", "Migraine", "Back pain after the move", "Food poisoning", "Hospital appointment", "Sick child — own illness from Tuesday"}
	absenceNotes    = []string{"", "", "", "", "Family wedding", "Trip to Kraków", "Moving house", "Half term", "Dentist", "Approved by phone"}
)

// GenerateAccount returns an account of opts.Employees employees and every other collection,
// the same for the same options. Events point at the employees by id (nested employee
// objects), a few at people outside the employee list (ids from 900001, as the managers of
// Generate); approved_by is sometimes null and sometimes someone unlisted; some absences are
// cancelled; half days, "" and null, decimal strings and +01:00 timestamps are all there.
func GenerateAccount(opts AccountOptions) Account {
	years := opts.AbsenceYears
	if years <= 0 {
		years = 1
	}
	aux := rand.New(rand.NewPCG(uint64(opts.Seed)^0x5851f42d4c957f2d, 0x14057b7ef767814f))
	emps, who, outside := generate(opts.Employees, opts.Seed, aux)
	// People outside the list (left and gone from it) still have events of their own.
	for i, p := range outside {
		who = append(who, staff{person: p, join: reference.AddDate(-12, 0, 0), leaver: true,
			approver: &outside[(i+1)%len(outside)]})
	}
	salaries, bonuses, benefits := financial(who[:len(emps)], opts.Seed)
	g := &eventGen{rng: aux, from: reference.AddDate(-years, 0, 0)}
	for i := range who {
		g.employee(&who[i])
	}
	return Account{
		Employees:       emps,
		WorkingPatterns: accountPatterns(),
		Collections: map[string][]json.RawMessage{
			"departments":                 references(departments, true),
			"divisions":                   references(divisions, true),
			"locations":                   references(locations, true),
			"holiday_allowances":          references(allowances, true),
			"other_leave_reasons":         references(otherLeaveReasons, true),
			"statutory_holiday_countries": references(statutoryHolidayCountries, false),
			"company_training_types":      references(trainingTypes, false),
			"absences":                    g.absences.records(4000001, aux),
			"leave_requests":              g.requests.records(6000001, aux),
			"sicknesses":                  g.sicknesses.records(3000001, aux),
			"employee_training_courses":   g.courses.records(7000001, aux),
			"salaries":                    salaries,
			"bonuses":                     bonuses,
			"benefits":                    benefits,
		},
	}
}

// references are the records of reference data: id and name, and the timestamps when stamped.
func references(refs []ref, stamped bool) []json.RawMessage {
	out := make([]json.RawMessage, len(refs))
	for i, r := range refs {
		o := newObject().set("id", r.id).set("name", r.name)
		if stamped {
			created := date(2014, 3, 3, 9, 0, 0).AddDate(0, 0, 17*i).Add(time.Duration(i*4211) * time.Second)
			o.set("created_at", london(created)).set("updated_at", london(created.AddDate(0, 7, 0)))
		}
		out[i] = o.raw()
	}
	return out
}

// event is one generated record before it has its id: the collection's records are numbered
// in the order they were created, as the real service numbers them.
type event struct {
	created time.Time
	who     int64
	start   string
	write   func(o *object) // the members after id
}

type events []event

// records numbers the events from first (with an occasional gap) in creation order and writes
// them.
func (es events) records(first int64, rng *rand.Rand) []json.RawMessage {
	slices.SortStableFunc(es, func(a, b event) int {
		return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.who, b.who), cmp.Compare(a.start, b.start))
	})
	out := make([]json.RawMessage, len(es))
	id := first
	for i, e := range es {
		o := newObject().set("id", id)
		e.write(o)
		out[i] = o.raw()
		id++
		if chance(rng, 3) {
			id++ // deleted since
		}
	}
	return out
}

// eventGen makes the events of one employee after another, from one random source.
type eventGen struct {
	rng                                     *rand.Rand
	from                                    time.Time // no event ends before this day
	absences, requests, sicknesses, courses events
}

func (g *eventGen) employee(p *staff) {
	from := g.from
	if p.join.After(from) {
		from = p.join
	}
	until := reference.AddDate(0, 6, 0)
	switch {
	case !p.left.IsZero():
		// Nothing is booked after the leaving day (booked drops what would end after it).
		until = p.left.AddDate(0, 0, 1)
	case p.leaver:
		// Someone outside the collection: gone about a year ago.
		until = reference.AddDate(0, 0, -g.rng.IntN(400))
		if until.Before(from.AddDate(0, 3, 0)) {
			until = from.AddDate(0, 3, 0)
		}
	}
	for t := from.AddDate(0, 0, g.rng.IntN(60)); t.Before(until); {
		end := g.booking(p, t)
		t = end.AddDate(0, 0, 15+g.rng.IntN(60))
	}
	sickUntil := until
	if sickUntil.After(reference) {
		sickUntil = reference
	}
	for t := from.AddDate(0, 0, g.rng.IntN(300)); t.Before(sickUntil); {
		end := g.sickness(p, t)
		t = end.AddDate(0, 0, 30+g.rng.IntN(570))
	}
	for t := from.AddDate(0, 0, g.rng.IntN(200)); t.Before(until.AddDate(0, -2, 0)); {
		end := g.course(p, t)
		t = end.AddDate(0, 0, 150+g.rng.IntN(500))
	}
}

// half is one end of a booking: whether it is half a day, and the am/pm written.
type half struct {
	on   bool
	ampm any // "am", "pm", null or ""
}

func (g *eventGen) half(percent int) half {
	if chance(g.rng, percent) {
		return half{true, pick(g.rng, []string{"am", "pm"})}
	}
	if chance(g.rng, 60) {
		return half{false, nil}
	}
	return half{false, ""}
}

// span is a run of workdays working days from start: its first day (start, or the Monday after
// when start is at a weekend) and its last.
func span(start time.Time, workdays int) (time.Time, time.Time) {
	for weekend(start) {
		start = start.AddDate(0, 0, 1)
	}
	end := start
	for n := 1; n < workdays; {
		end = end.AddDate(0, 0, 1)
		if !weekend(end) {
			n++
		}
	}
	return start, end
}

func weekend(t time.Time) bool { return t.Weekday() == time.Saturday || t.Weekday() == time.Sunday }

func decimal(f float64) string { return fmt.Sprintf("%.1f", f) }

// stamps writes a record's timestamps in one style, as the service writes them: mostly in
// London time (+01:00 in summer, +00:00 in winter), some in UTC with Z, a few with
// milliseconds.
func (g *eventGen) stamps(ts ...time.Time) []string {
	style := g.rng.IntN(100)
	out := make([]string, len(ts))
	for i, t := range ts {
		switch {
		case style < 80:
			out[i] = london(t)
		case style < 96:
			out[i] = timestamp(t, 0)
		default:
			out[i] = timestamp(t, 95)
		}
	}
	return out
}

// london writes t in London time: British Summer Time (+01:00) from 01:00 UTC on the last
// Sunday of March to 01:00 UTC on the last Sunday of October, +00:00 otherwise.
func london(t time.Time) string {
	t = t.UTC()
	lastSunday := func(m time.Month) time.Time {
		d := time.Date(t.Year(), m+1, 0, 1, 0, 0, 0, time.UTC) // the last day of m, 01:00
		return d.AddDate(0, 0, -int(d.Weekday()))
	}
	if !t.Before(lastSunday(time.March)) && t.Before(lastSunday(time.October)) {
		return t.In(bst).Format(time.RFC3339)
	}
	return t.Format("2006-01-02T15:04:05") + "+00:00"
}

// createdBefore is when something about start was booked: days to weeks ahead, never after
// the data's today.
func (g *eventGen) createdBefore(start time.Time) time.Time {
	c := start.AddDate(0, 0, -(3 + g.rng.IntN(90)))
	if c.After(reference) {
		c = reference.AddDate(0, 0, -(1 + g.rng.IntN(30)))
	}
	return c.Add(time.Duration(7*3600+g.rng.IntN(11*3600)) * time.Second)
}

func personFull(p *person) any {
	if p == nil {
		return nil
	}
	return newObject().set("id", p.id).set("first_name", p.first).set("last_name", p.last).set("email", p.email).raw()
}

func personShort(p *person) any {
	if p == nil {
		return nil
	}
	return newObject().set("id", p.id).set("first_name", p.first).set("last_name", p.last).raw()
}

func idOnly(id int64) json.RawMessage { return newObject().set("id", id).raw() }

func nestedRef(r ref) json.RawMessage { return newObject().set("id", r.id).set("name", r.name).raw() }

// booking makes one request for leave starting about t, the leave request and (when it was
// approved, or approved and later cancelled) the absence, and returns its last day.
func (g *eventGen) booking(p *staff, t time.Time) time.Time {
	rng := g.rng
	holiday := chance(rng, 85)
	var workdays int
	var reason any
	switch r := rng.IntN(100); {
	case !holiday:
		lr := otherLeaveReasons[rng.IntN(len(otherLeaveReasons))]
		workdays = 1 + rng.IntN(3)
		if lr.id == 43 || lr.id == 44 {
			workdays = 10 + rng.IntN(120)
		}
		if chance(rng, 95) {
			reason = nestedRef(lr)
		}
	case r < 30:
		workdays = 1
	case r < 75:
		workdays = 2 + rng.IntN(4)
	default:
		workdays = 6 + rng.IntN(10)
	}
	start, end := span(t, workdays)
	hs := g.half(12)
	he := g.half(0)
	if workdays > 1 {
		if he = g.half(8); he.on {
			he.ampm = "am" // the last day ends at lunch
		}
	}
	deducted := float64(workdays)
	if hs.on {
		deducted -= 0.5
	}
	if he.on {
		deducted -= 0.5
	}
	future := start.After(reference)
	var status string
	switch r := rng.IntN(100); {
	case future && r < 25:
		status = "pending"
	case r < 5:
		status = "rejected"
	case r < 12:
		status = "cancelled"
	default:
		status = "approved"
	}
	approver := p.approver
	if approver == nil {
		approver = p.manager
	}
	if status == "pending" || chance(rng, 8) {
		approver = nil
	}
	typ := "Holiday"
	if !holiday {
		typ = "OtherLeave"
	}
	notes := pick(rng, absenceNotes)
	created := g.createdBefore(start)
	decided := created.Add(time.Duration(rng.IntN(72*3600)) * time.Second)  // approved or rejected
	absCreated := decided.Add(time.Duration(1+rng.IntN(300)) * time.Second) // the absence, on approval
	updated, absUpdated := decided, absCreated
	switch status {
	case "pending":
		updated = created
	case "cancelled":
		updated = absCreated.Add(time.Duration(1+rng.IntN(20*24*3600)) * time.Second)
		absUpdated = updated
	}
	// The members a request and its absence both have, in the order both write them: the days
	// taken, and the notes, type and stamps.
	days := func(o *object) {
		o.set("deducted", decimal(deducted))
		o.set("work_units", decimal(deducted))
		o.set("start_date", start.Format(time.DateOnly))
		o.set("end_date", end.Format(time.DateOnly))
	}
	described := func(o *object, stamps []string) {
		o.set("notes", notes)
		o.set("type", typ)
		o.set("created_at", stamps[0])
		o.set("updated_at", stamps[1])
	}
	reqStamps := g.stamps(created, updated)
	if !p.booked(end) {
		return end // it would run past their leaving day: never booked
	}
	// A leave request carries no approved_by, leave_reason or am/pm of its half days: those
	// members are absent from its record, not null (its absence has them).
	g.requests = append(g.requests, event{created: created, who: p.id, start: start.Format(time.DateOnly), write: func(o *object) {
		o.set("employee", personFull(&p.person))
		days(o)
		o.set("half_start", hs.on)
		o.set("half_end", he.on)
		o.set("status", status)
		described(o, reqStamps)
	}})
	if status == "approved" || status == "cancelled" {
		absStamps := g.stamps(absCreated, absUpdated)
		g.absences = append(g.absences, event{created: absCreated, who: p.id, start: start.Format(time.DateOnly), write: func(o *object) {
			o.set("employee", personFull(&p.person))
			o.set("approved_by", personShort(approver))
			o.set("leave_reason", reason)
			days(o)
			o.set("half_start", hs.on)
			o.set("half_start_am_pm", hs.ampm)
			o.set("half_end", he.on)
			o.set("half_end_am_pm", he.ampm)
			o.set("cancelled", status == "cancelled")
			described(o, absStamps)
		}})
	}
	return end
}

// sickness makes one sickness starting about t and returns its last day (for one still going
// on at the data's today, that day: its end_date is null).
// sickWorkdays draws a sickness's length in working days: mostly a day or a few, now and then
// weeks.
func sickWorkdays(rng *rand.Rand) int {
	switch r := rng.IntN(100); {
	case r < 40:
		return 1
	case r < 75:
		return 2 + rng.IntN(2)
	case r < 95:
		return 4 + rng.IntN(7)
	default:
		return 11 + rng.IntN(30)
	}
}

// sickness is one sickness record's fields, as the source writes them (write).
type sickness struct {
	emp             int64
	typ             json.RawMessage
	start, end      time.Time
	ongoing         bool
	hs, he          half
	deducted        float64
	reason          string
	review, fitNote any
}

// write sets the record's members after its id, in the source's order.
func (s sickness) write(o *object) {
	o.set("employee", idOnly(s.emp))
	o.set("company_sicknesstype", s.typ)
	o.set("start_date", s.start.Format(time.DateOnly))
	if s.ongoing {
		o.set("end_date", nil)
	} else {
		o.set("end_date", s.end.Format(time.DateOnly))
	}
	o.set("half_start", s.hs.on)
	o.set("half_start_am_pm", s.hs.ampm)
	o.set("half_end", s.he.on)
	o.set("half_end_am_pm", s.he.ampm)
	o.set("deducted", decimal(s.deducted))
	if s.ongoing {
		o.set("status", "ongoing")
	} else {
		o.set("status", "returned")
	}
	o.set("reason", s.reason)
	o.set("review_notes", s.review)
	o.set("fit_note_required", s.fitNote)
}

func (g *eventGen) sickness(p *staff, t time.Time) time.Time {
	rng := g.rng
	workdays := sickWorkdays(rng)
	start, end := span(t, workdays)
	hs, he := g.half(10), g.half(0)
	// Still off sick at the data's today: no end date yet. Not someone who has left by then.
	ongoing := end.After(reference) || (reference.Sub(start) < 45*24*time.Hour && chance(rng, 40))
	if !p.left.IsZero() && p.left.Before(reference) {
		ongoing = false
	}
	deducted := float64(workdays)
	if hs.on {
		deducted -= 0.5
	}
	st := nestedRef(sicknessTypes[rng.IntN(len(sicknessTypes))])
	reason := pick(rng, sicknessReasons)
	var review any
	switch r := rng.IntN(10); {
	case r < 6:
	case r < 7:
		review = ""
	default:
		review = pick(rng, []string{"Return to work interview held.", "Phased return agreed", "No concerns"})
	}
	var fitNote any
	if chance(rng, 50) {
		fitNote = workdays > 5
	}
	created := start.Add(time.Duration(8*3600+rng.IntN(4*3600)) * time.Second)
	if !p.booked(end) {
		return end // it would run past their leaving day
	}
	g.sicknesses = append(g.sicknesses, event{created: created, who: p.id, start: start.Format(time.DateOnly), write: func(o *object) {
		sickness{emp: p.id, typ: st, start: start, end: end, ongoing: ongoing, hs: hs, he: he, deducted: deducted,
			reason: reason, review: review, fitNote: fitNote}.write(o)
	}})
	if ongoing {
		return reference
	}
	return end
}

// course makes one booking on a training course about t and returns its last day.
func (g *eventGen) course(p *staff, t time.Time) time.Time {
	rng := g.rng
	c := courses[rng.IntN(len(courses))]
	start, end := span(t, c.days)
	halfDay := c.days == 1 && c.hours != "" && c.hours[0] < '4' && c.hours[1] == '.'
	var ampm any
	switch {
	case halfDay:
		ampm = pick(rng, []string{"am", "pm"})
	case chance(rng, 50):
		ampm = ""
	}
	var status, outcome string
	switch r := rng.IntN(100); {
	case start.After(reference) && r < 30:
		status = "Requested"
	case start.After(reference):
		status = "Booked"
	case r < 6:
		status = "Cancelled"
	default:
		status = "Completed"
		outcome = pick(rng, []string{"Passed", "Passed", "Passed", "Attended", "Failed", ""})
	}
	rejection := ""
	if status == "Cancelled" && chance(rng, 50) {
		rejection = pick(rng, []string{"Budget freeze", "Course full", "Clashes with the release"})
	}
	var expires, followup any
	if c.expiresYears > 0 && status == "Completed" && outcome != "Failed" {
		expires = end.AddDate(c.expiresYears, 0, 0).Format(time.DateOnly)
		if chance(rng, 40) {
			followup = end.AddDate(c.expiresYears, -2, 0).Format(time.DateOnly)
		}
	}
	var endOn any = end.Format(time.DateOnly)
	if c.days == 1 && chance(rng, 30) {
		endOn = nil
	}
	var hours any
	if c.hours != "" {
		hours = c.hours
	}
	var provider any
	if c.provider >= 0 {
		provider = nestedRef(trainingProviders[c.provider])
	}
	currency := c.currencyID
	notes := pick(rng, []string{"", "", "", "Manager approved", "Remote attendance"})
	created := g.createdBefore(start)
	if !p.booked(end) {
		return end // it would run past their leaving day
	}
	g.courses = append(g.courses, event{created: created, who: p.id, start: start.Format(time.DateOnly), write: func(o *object) {
		o.set("name", c.name)
		o.set("start_on", start.Format(time.DateOnly))
		o.set("end_on", endOn)
		o.set("expires_on", expires)
		o.set("half_day", halfDay)
		o.set("half_day_am_pm", ampm)
		o.set("hours", hours)
		o.set("cost", c.cost)
		o.set("status", status)
		o.set("outcome", outcome)
		o.set("rejection_reason", rejection)
		o.set("notes", notes)
		o.set("followup_date", followup)
		o.set("remuneration_currency_id", currency)
		o.set("employee", idOnly(p.id))
		o.set("company_training_type", nestedRef(trainingTypes[c.typ]))
		o.set("company_training_category", nestedRef(trainingCategories[c.category]))
		o.set("company_training_provider", provider)
	}})
	return end
}
