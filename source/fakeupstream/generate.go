package fakeupstream

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// Records in the real service's loose style (UPSTREAM.md): some numbers as strings, decimals as
// strings ("40.0"), join_date where the docs say company_join_date, timestamps with Z, with
// +01:00 and with milliseconds, "" as well as null for empty values, fields the seed does not
// list (middle_name, dob, location, custom_fields), nested working_pattern, holiday_allowance,
// department, line_manager and holiday_approver objects, and some managers who are not in the
// collection.

// pattern is a working pattern of the generated data set.
type pattern struct {
	id      int64
	name    string
	dflt    bool
	hours   [7]string // mon … sun
	total   string
	created time.Time
	offset  bool // timestamps written with +01:00
	weight  int  // share of employees, in percent
}

var patterns = []pattern{
	{31, "Office hours (37.5h)", true, [7]string{"7.5", "7.5", "7.5", "7.5", "7.5", "0.0", "0.0"}, "37.5", date(2015, 6, 1, 9, 12, 44), false, 60},
	{32, "Full time (40h)", false, [7]string{"8.0", "8.0", "8.0", "8.0", "8.0", "0.0", "0.0"}, "40.0", date(2016, 3, 14, 16, 2, 9), true, 15},
	{33, "Part time mornings", false, [7]string{"4.0", "4.0", "4.0", "4.0", "4.0", "0.0", "0.0"}, "20.0", date(2017, 9, 4, 8, 0, 0), false, 10},
	{34, "Four-day week", false, [7]string{"8.0", "8.0", "8.0", "8.0", "0.0", "0.0", "0.0"}, "32.0", date(2021, 7, 19, 10, 30, 0), true, 10},
	{35, "Weekend cover", false, [7]string{"0.0", "0.0", "0.0", "0.0", "0.0", "12.0", "12.0"}, "24.0", date(2022, 1, 10, 12, 0, 0), false, 5},
}

// zeroHours is the zero-hours pattern of GenerateAccount's account (not among Generate's: its
// employees never use it): no contracted hours, no day marked, the weekdays' hours "0.0" and
// the weekend's null (written "" here), as accounts write casual staff.
var zeroHours = pattern{36, "Zero hours (casual)", false, [7]string{"0.0", "0.0", "0.0", "0.0", "0.0", "", ""}, "0.0", date(2023, 2, 6, 11, 20, 0), true, 0}

var departments = []ref{
	{501, "Engineering"}, {502, "Finance"}, {503, "People & Culture"}, {504, "Sales"},
	{505, "Customer Support"}, {506, "Operações"}, {507, "Marketing"}, {508, "Legal"},
}

var allowances = []ref{{12, "Standard (25 days)"}, {13, "Senior (28 days)"}, {14, "Part time pro rata"}}

var firstNames = []string{
	"José", "Zoë", "Łukasz", "Siobhán", "Björn", "Renée", "Chloé", "Inés", "François", "Ana",
	"Mohammed", "Aoife", "Søren", "Małgorzata", "Priya", "James", "Olivia", "Oliver", "Amelia",
	"Jürgen", "Çağla", "Émilie", "Niamh", "Tomás", "Kateřina", "Mateo", "Yūki", "Wei", "Fatima",
	"Grace",
}

var lastNames = []string{
	"López", "Müller", "Ó Briain", "Nørgaard", "Dvořák", "Smith", "O'Connor", "García", "Nguyễn",
	"Kowalski", "Andersson", "Jones", "Brown", "Patel", "Williams", "Şahin", "Fernández",
	"Dubois", "Rossi", "MacDonald", "Taylor", "Öztürk", "Novák", "Murphy", "Davies", "Lefèvre",
	"Håkansson", "Wilson", "Evans", "Khan",
}

var jobTitles = []string{
	"Software Engineer", "Senior Software Engineer", "Accountant", "HR Business Partner",
	"Account Executive", "Support Specialist", "Head of Engineering", "Marketing Manager",
	"Legal Counsel", "Office Manager", "Data Analyst", "Product Designer",
}

// ref is a record of reference data: an id and a name.
type ref struct {
	id   int64
	name string
}

// locations are the offices employees are at; Generate writes an employee's location as the
// name alone, GenerateAccount as the nested {id, name}.
var locations = []ref{
	{701, "London"}, {702, "Manchester"}, {703, "Dublin"}, {704, "Kraków"}, {705, "Lisboa"}, {706, "Remote"},
}

// divisions group the departments; only GenerateAccount's employees carry one.
var divisions = []ref{{801, "UK & Ireland"}, {802, "Central Europe"}, {803, "Iberia"}, {804, "Group functions"}}

// reference is the "today" of generated data, so that it does not depend on when it is made.
var reference = date(2026, 6, 1, 0, 0, 0)

// Today is the "today" of generated data (2026-06-01, UTC), whenever it is made: GenerateAccount's
// events run from AccountOptions.AbsenceYears before it to half a year after, and a sickness
// still going on at it has no end date.
func Today() time.Time { return reference }

var bst = time.FixedZone("+01:00", 3600)

func date(y int, m time.Month, d, hh, mm, ss int) time.Time {
	return time.Date(y, m, d, hh, mm, ss, 0, time.UTC)
}

// person is who an employee record is about, or names as a manager.
type person struct {
	id          int64
	first, last string
	email       string
}

// Generate returns n employee records, the same for the same seed, with ids rising (with gaps)
// from 1001, unique emails, and managers and holiday approvers across the whole collection,
// some of them (ids from 900001) not in it. They embed the working patterns of
// WorkingPatterns, and the departments and holiday allowances above. (GenerateAccount makes
// the same employees with nested location and division, and the other collections with them.)
func Generate(n int, seed int64) []json.RawMessage {
	raws, _, _ := generate(n, seed, nil)
	return raws
}

// staff is what the other collections of a generated account need to know of an employee.
type staff struct {
	person
	join   time.Time
	leaver bool // Ex-employee: nothing booked after leaving
	// left is the last day employed of an Ex-employee (whether or not the record says so: an
	// account that does not record it still knew when nothing more was booked) or a Pending
	// leaver's leaving day to come; zero for everyone else, and for the people outside the
	// collection, whose events end about a year before the data's today.
	left     time.Time
	manager  *person
	approver *person
	dept     int64 // 0 when none
}

// booked reports whether an event ending on end can be on p's record: not after the day they
// leave.
func (p *staff) booked(end time.Time) bool { return p.left.IsZero() || !end.After(p.left) }

// generate makes the employees of Generate. With aux (GenerateAccount) an employee's location
// is nested and it carries a division, a statutory holiday country and a leaving date, and a
// few are zero-hours staff or future starters (accountDraws), all drawn from aux without
// touching rng's sequence, so the rest of every record is Generate's. It also returns who the
// records are about and the people outside the collection they name.
func generate(n int, seed int64, aux *rand.Rand) ([]json.RawMessage, []staff, []person) {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
	people := make([]person, n)
	id := int64(1000)
	for i := range people {
		id += 1 + rng.Int64N(3)
		first, last := pick(rng, firstNames), pick(rng, lastNames)
		people[i] = person{id: id, first: first, last: last,
			email: fmt.Sprintf("%s.%s%d@example.com", fold(first), fold(last), id)}
	}
	outside := make([]person, 5)
	for i := range outside {
		first, last := pick(rng, firstNames), pick(rng, lastNames)
		pid := int64(900001 + i)
		outside[i] = person{id: pid, first: first, last: last,
			email: fmt.Sprintf("%s.%s%d@example.com", fold(first), fold(last), pid)}
	}
	out := make([]json.RawMessage, n)
	who := make([]staff, n)
	for i, p := range people {
		out[i], who[i] = employee(rng, aux, p, i, people, outside)
	}
	return out, who, outside
}

func employee(rng, aux *rand.Rand, p person, i int, people, outside []person) (json.RawMessage, staff) {
	who := staff{person: p}
	var x *accountDraws // GenerateAccount's members; nil for Generate
	if aux != nil {
		x = drawAccount(aux)
	}
	o := newObject()
	o.set("id", p.id)
	if chance(rng, 30) {
		o.set("account_id", "77")
	} else {
		o.set("account_id", 77)
	}
	o.set("first_name", p.first)
	switch r := rng.IntN(10); {
	case r < 7:
		o.set("middle_name", nil)
	case r < 8:
		o.set("middle_name", "")
	default:
		o.set("middle_name", pick(rng, firstNames))
	}
	o.set("last_name", p.last)
	o.set("email", p.email)
	if chance(rng, 5) {
		o.set("job_title", "")
	} else {
		o.set("job_title", pick(rng, jobTitles))
	}
	status := "Ex-employee"
	switch r := rng.IntN(100); {
	case r < 90:
		status = "Current employee"
	case r < 96:
		status = "Pending leaver"
	}
	join := joinsFrom.AddDate(0, 0, rng.IntN(14*365))
	if x != nil {
		status, join, who.left = x.dates(status, join)
	}
	who.leaver = status == "Ex-employee"
	o.set("status", status)
	who.join = join
	switch r := rng.IntN(100); {
	case r < 80:
		o.set("company_join_date", join.Format(time.DateOnly))
	case r < 95:
		o.set("join_date", join.Format(time.DateOnly))
	default:
		o.set("join_date", join.Format("2006/01/02"))
	}
	if chance(rng, 10) {
		o.set("job_start_date", nil)
	} else {
		o.set("job_start_date", join.AddDate(0, rng.IntN(3)*6, 0).Format(time.DateOnly))
	}
	if x != nil {
		o.set("leaving_date", x.leavingDate(who.left))
	}
	// Service runs to the data's today, or to the leaving day when that came first; a future
	// starter has none yet.
	served := reference
	if !who.left.IsZero() && who.left.Before(served) {
		served = who.left
	}
	months := max(0, int64(served.Year()-join.Year())*12+int64(served.Month()-join.Month()))
	if chance(rng, 20) {
		o.set("length_of_service_in_months", strconv.FormatInt(months, 10))
	} else {
		o.set("length_of_service_in_months", months)
	}
	if chance(rng, 30) {
		o.set("dob", nil)
	} else {
		o.set("dob", date(1960, 1, 1, 0, 0, 0).AddDate(0, 0, rng.IntN(40*365)).Format(time.DateOnly))
	}
	switch r := rng.IntN(10); {
	case r < 8:
		o.set("age", nil)
	case r < 9:
		o.set("age", 25+rng.IntN(40))
	default:
		o.set("age", strconv.Itoa(25+rng.IntN(40)))
	}
	wp := weighted(rng)
	if x != nil && x.zeroHours {
		wp = zeroHours
	}
	if chance(rng, 70) {
		o.set("full_or_part_time", nil)
	} else if wp.total == "20.0" || wp.total == "24.0" || wp.total == "0.0" {
		o.set("full_or_part_time", "Part time")
	} else {
		o.set("full_or_part_time", "Full time")
	}
	if chance(rng, 80) {
		o.set("notice_period", nil)
	} else {
		o.set("notice_period", pick(rng, []string{"1 month", "3 months", ""}))
	}
	o.set("working_pattern", nested(wp))
	al := allowances[rng.IntN(len(allowances))]
	if chance(rng, 10) {
		o.set("holiday_allowance", newObject().set("id", strconv.FormatInt(al.id, 10)).set("name", al.name).raw())
	} else {
		o.set("holiday_allowance", newObject().set("id", al.id).set("name", al.name).raw())
	}
	manager := managerOf(rng, i, people, outside)
	o.set("line_manager", personRef(rng, manager))
	who.manager = manager
	switch r := rng.IntN(10); {
	case r < 7:
		o.set("holiday_approver", personRef(rng, manager))
		who.approver = manager
	case r < 9:
		o.set("holiday_approver", nil)
	default:
		who.approver = managerOf(rng, i, people, outside)
		o.set("holiday_approver", personRef(rng, who.approver))
	}
	dept := departments[rng.IntN(len(departments))]
	switch r := rng.IntN(100); {
	case r < 10:
		o.set("department", nil)
	case r < 13:
		o.set("department", "")
	default:
		o.set("department", newObject().set("id", dept.id).set("name", dept.name).raw())
		who.dept = dept.id
	}
	if aux != nil {
		// Divisions follow the location, mostly; a few employees have none, written both ways.
		switch r := aux.IntN(100); {
		case r < 5:
			o.set("division", nil)
		case r < 7:
			o.set("division", "")
		default:
			d := divisions[aux.IntN(len(divisions))]
			o.set("division", newObject().set("id", d.id).set("name", d.name).raw())
		}
	}
	var location int64 // 0 when none
	if chance(rng, 20) {
		o.set("location", nil)
	} else if l := locations[rng.IntN(len(locations))]; aux == nil {
		o.set("location", l.name)
	} else {
		o.set("location", newObject().set("id", l.id).set("name", l.name).raw())
		location = l.id
	}
	receives := chance(rng, 85)
	o.set("receives_statutory_holidays", receives)
	if x != nil {
		o.set("statutory_holiday_country", x.country(location, receives))
	}
	o.set("hr", dept.name == "People & Culture" && chance(rng, 50))
	switch r := rng.IntN(10); {
	case r < 5:
		o.set("custom_fields", json.RawMessage(`{}`))
	case r < 7:
		o.set("custom_fields", json.RawMessage(`[]`))
	default:
		o.set("custom_fields", newObject().set("t_shirt_size", pick(rng, []string{"S", "M", "L"})).set("parking_space", strconv.Itoa(rng.IntN(80))).raw())
	}
	created := join.AddDate(0, 0, -rng.IntN(30)).Add(time.Duration(rng.IntN(86400)) * time.Second)
	updated := created.Add(time.Duration(rng.IntN(3*365*24)) * time.Hour)
	if x != nil && join.After(reference) {
		// A future starter's record was made before the data's today, weeks before they start.
		created, updated = x.futureStamps(created)
	}
	style := rng.IntN(100)
	o.set("created_at", timestamp(created, style))
	o.set("updated_at", timestamp(updated, style))
	if who.manager != nil && who.manager.id == 0 {
		who.manager = nil
	}
	if who.approver != nil && who.approver.id == 0 {
		who.approver = nil
	}
	return o.raw(), who
}

// managerOf picks a line manager: none for the first few employees and some others, "" for a
// few, someone outside the collection for a few, otherwise anyone else in it (so managers are
// on other pages, earlier or later).
func managerOf(rng *rand.Rand, i int, people, outside []person) *person {
	switch r := rng.IntN(100); {
	case i < 3 || r < 8:
		return nil
	case r < 11:
		return &person{} // written as ""
	case r < 15:
		return &outside[rng.IntN(len(outside))]
	}
	j := rng.IntN(len(people))
	if j == i {
		j = (j + 1) % len(people)
	}
	if j == i {
		return nil
	}
	return &people[j]
}

func personRef(rng *rand.Rand, p *person) any {
	switch {
	case p == nil:
		return nil
	case p.id == 0:
		return ""
	}
	o := newObject().set("id", p.id)
	if chance(rng, 70) {
		o.set("first_name", p.first).set("last_name", p.last).set("email", p.email)
	} else {
		o.set("name", p.first+" "+p.last)
	}
	return o.raw()
}

func weighted(rng *rand.Rand) pattern {
	r := rng.IntN(100)
	for _, p := range patterns {
		if r < p.weight {
			return p
		}
		r -= p.weight
	}
	return patterns[0]
}

func nested(p pattern) json.RawMessage {
	return newObject().set("id", p.id).set("name", p.name).set("total_hours", p.total).set("default", p.dflt).raw()
}

// timestamp writes t in one of the styles seen: Z (most), +01:00, or with milliseconds.
func timestamp(t time.Time, style int) string {
	switch {
	case style < 65:
		return t.UTC().Format(v1.TimestampLayout)
	case style < 90:
		return t.In(bst).Format(time.RFC3339)
	default:
		return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
}

// WorkingPatterns returns the full working pattern records Generate's employees embed; the
// first is the default.
func WorkingPatterns() []json.RawMessage {
	out := make([]json.RawMessage, len(patterns))
	for i, p := range patterns {
		out[i] = p.record()
	}
	return out
}

// record is the full working pattern record: a day is marked when it has hours, and hours
// written "" are null.
func (p pattern) record() json.RawMessage {
	o := newObject().set("id", p.id).set("name", p.name).set("default", p.dflt).set("total_hours", p.total)
	for d, day := range v1.Weekdays {
		o.set(day, p.hours[d] != "0.0" && p.hours[d] != "")
	}
	for d, day := range v1.Weekdays {
		if p.hours[d] == "" {
			o.set(day+"_hr", nil)
		} else {
			o.set(day+"_hr", p.hours[d])
		}
	}
	style := 0
	if p.offset {
		style = 70
	}
	o.set("created_at", timestamp(p.created, style))
	o.set("updated_at", timestamp(p.created.AddDate(1, 0, 0), style))
	return o.raw()
}

// defaultPattern is the nested form of the default working pattern among raws (the first when
// none is marked default), for created records.
func defaultPattern(raws []json.RawMessage) json.RawMessage {
	var first json.RawMessage
	for _, raw := range raws {
		var wp v1.WorkingPattern
		if json.Unmarshal(raw, &wp) != nil {
			continue
		}
		o := newObject().set("id", wp.ID).set("name", wp.Name).set("total_hours", wp.TotalHours).
			set("default", wp.Default != nil && *wp.Default).raw()
		if wp.Default != nil && *wp.Default {
			return o
		}
		if first == nil {
			first = o
		}
	}
	if first == nil {
		return nested(patterns[0])
	}
	return first
}

// createdRecord is a new employee as the real service answers a create: defaults for what the
// create cannot set, join date as company_join_date YYYY-MM-DD, timestamps in UTC.
func createdRecord(id, account int64, ne v1.NewEmployee, pattern json.RawMessage, now time.Time) json.RawMessage {
	ts := now.UTC().Format(v1.TimestampLayout)
	return newObject().
		set("id", id).
		set("account_id", account).
		set("first_name", ne.FirstName).
		set("middle_name", nil).
		set("last_name", ne.LastName).
		set("email", ne.Email).
		set("job_title", ne.JobTitle).
		set("status", "Current employee").
		set("company_join_date", ne.JoinDate).
		set("job_start_date", ne.JoinDate).
		set("length_of_service_in_months", 0).
		set("age", nil).
		set("full_or_part_time", nil).
		set("notice_period", nil).
		set("working_pattern", pattern).
		set("holiday_allowance", newObject().set("id", allowances[0].id).set("name", allowances[0].name).raw()).
		set("line_manager", nil).
		set("holiday_approver", nil).
		set("department", nil).
		set("receives_statutory_holidays", false).
		set("hr", false).
		set("custom_fields", json.RawMessage(`{}`)).
		set("created_at", ts).
		set("updated_at", ts).
		raw()
}

// object writes a JSON object with its members in the order set.
type object struct{ b []byte }

func newObject() *object { return &object{b: []byte{'{'}} }

func (o *object) set(k string, v any) *object {
	if len(o.b) > 1 {
		o.b = append(o.b, ',')
	}
	kb, _ := json.Marshal(k)
	o.b = appendValue(append(append(o.b, kb...), ':'), k, v)
	return o
}

// appendValue appends v, the value of member k, as object.set writes it.
func appendValue(b []byte, k string, v any) []byte {
	switch v := v.(type) {
	case nil:
		b = append(b, "null"...)
	case int64:
		b = strconv.AppendInt(b, v, 10)
	case int:
		b = strconv.AppendInt(b, int64(v), 10)
	case bool:
		b = strconv.AppendBool(b, v)
	case string:
		if plain(v) {
			b = append(append(append(b, '"'), v...), '"')
		} else {
			vb, _ := json.Marshal(v) // a string always encodes
			b = append(b, vb...)
		}
	case json.RawMessage:
		if v == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, v...)
		}
	default:
		vb, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("fakeupstream: encode %s: %v", k, err))
		}
		b = append(b, vb...)
	}
	return b
}

// plain reports whether s is written in JSON as itself in quotes, as json.Marshal writes it:
// printable ASCII without the characters it escapes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

func (o *object) raw() json.RawMessage { return json.RawMessage(append(o.b, '}')) }

func pick(rng *rand.Rand, from []string) string { return from[rng.IntN(len(from))] }

func chance(rng *rand.Rand, percent int) bool { return rng.IntN(100) < percent }

// fold writes a name as the ASCII letters of an email address.
func fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r)
		case r > 127:
			if a, ok := ascii[r]; ok {
				b.WriteString(a)
			}
		}
	}
	return b.String()
}

var ascii = map[rune]string{
	'á': "a", 'à': "a", 'ä': "a", 'å': "a", 'ã': "a", 'ç': "c", 'č': "c", 'é': "e", 'è': "e",
	'ë': "e", 'ě': "e", 'ễ': "e", 'í': "i", 'ı': "i", 'ł': "l", 'ñ': "n", 'ó': "o", 'ö': "o",
	'ø': "o", 'ő': "o", 'ř': "r", 'ş': "s", 'ğ': "g", 'ú': "u", 'ü': "u", 'ū': "u", 'ý': "y",
	'ž': "z", 'š': "s", 'ę': "e", 'ą': "a", 'ś': "s", 'ć': "c", 'ń': "n", 'ż': "z", 'ź': "z",
	'ư': "u", 'ơ': "o",
}
