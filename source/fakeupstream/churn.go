package fakeupstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// ChurnOptions configures Churn.
type ChurnOptions struct {
	// Employees is the size of night 0's account (GenerateAccount's Employees).
	Employees int
	// Seed makes the data: the same options, the same nights, byte for byte.
	Seed int64
	// Nights is how many nights Churn yields (default 365).
	Nights int
}

// Night is one night's snapshot: every record of the collections Churn models, as the source
// lists them that night, in id order. The slices are the night's own.
type Night struct {
	// N is the night's number, 0 for the first; Day the date walked (the data's today + N).
	N   int
	Day time.Time
	// Employees and WorkingPatterns are the two collections of the seed.
	Employees, WorkingPatterns []json.RawMessage
	// Collections holds the others, by name: the reference data (departments, divisions,
	// locations, holiday_allowances, other_leave_reasons, statutory_holiday_countries,
	// company_training_types), absences and sicknesses.
	Collections map[string][]json.RawMessage
	// Changes counts what changed since the night before (nothing, for night 0).
	Changes ChurnChanges
}

// ChurnChanges counts a night's changes.
type ChurnChanges struct {
	// Hired are new employee records; Resigned employees became Pending leavers (or left at
	// once), Left became Ex-employees; Retitled, Moved (department), Managed (line manager),
	// Repatterned, Reallowanced changed one member each; Filled are starters whose blank
	// members were filled; Deleted employee records left the list.
	Hired, Resigned, Left, Retitled, Moved, Managed, Repatterned, Reallowanced, Filled, Deleted int
	// Booked, Cancelled and Removed are absences; Sick and Returned sicknesses recorded and
	// ended.
	Booked, Cancelled, Removed, Sick, Returned int
	// Events names the night's one-off changes ("reorganisation: 38 moved", …).
	Events []string
}

// Window is the records of the dated collection name (absences, sicknesses) the source's date
// filter keeps for from..to: those overlapping it, a record without an end date still open.
func (n Night) Window(name string, from, to time.Time) []json.RawMessage {
	m := match{from: from.Format(time.DateOnly), to: to.Format(time.DateOnly)}
	var out []json.RawMessage
	for _, raw := range n.Collections[name] {
		it := newItem(raw)
		if m.keeps(&it, nil) {
			out = append(out, raw)
		}
	}
	return out
}

// Churn yields opts.Nights nights of one account, as a nightly sync would walk it: night 0 is
// GenerateAccount's account on the data's today (2026-06-01); each later night is the account
// one day on, after the ordinary changes of a working day. It is the fixture of "ordinary
// churn": nothing in it is a fault, so a guard that holds a load of it holds a good one.
//
// What changes, at the rates of a real account (weekends about a fifth as busy):
//   - hires, about 1.5 % of the current employees a month, future starters whose record is
//     made one to six weeks before they start; two in five arrive with job title, department,
//     line manager, holiday approver and location blank, filled one to six nights later;
//   - leavers, about 1.5 % a month: Pending leaver with a leaving_date two weeks to three months
//     ahead (a tenth leave at once), Ex-employee the day after it, and still listed, as the
//     real service lists them (UPSTREAM.md); their bookings after it removed, their reports
//     given another manager within a fortnight;
//   - promotions and new job titles (about 1 % a month), moves between departments (0.5 %) and
//     to another manager (1 %), changes of working pattern (0.3 %);
//   - a reorganisation on the first of September, December and March moving 15 % of the
//     current employees to another department (a third of them to another manager);
//   - a department added (509 Data & Analytics, 15 August), one renamed (503 People & Culture
//     to People, 9 October), one closed (508 Legal, its people moved to Finance on 27 January,
//     the department gone from the list three nights later; its Ex-employees keep pointing at
//     it, as a leaver's record is not edited), a working pattern added (37, 29 September);
//   - one record created twice by mistake (8 November) and the copy deleted two nights later;
//   - every month, the length of service of everyone still employed, as the service reckons it;
//   - at the year end (1 January) the Standard allowance renamed for its 26 days, and those of
//     five years' service or more moved to Senior;
//   - absences booked every day (about seven a person a year, mostly days to months ahead),
//     a few cancelled (cancelled true) and a few deleted (gone from the list);
//   - sicknesses recorded (about 1.3 spells a person a year): half on the first day, with no
//     end date and status ongoing until the person returns, half on return.
//
// Records are GenerateAccount's, changed member by member: the loose styles of each record
// (numbers as strings, join_date, "" and null, +01:00) stay as they were. A record that
// changes gets a new updated_at (a name carried by a nested object does not change it). Leave
// requests, training courses and the financial module are not modelled (Night leaves them out).
func Churn(opts ChurnOptions) iter.Seq[Night] {
	return func(yield func(Night) bool) {
		c := newChurner(opts)
		nights := opts.Nights
		if nights <= 0 {
			nights = 365
		}
		for n := range nights {
			if n > 0 {
				c.advance()
			}
			if !yield(c.night()) {
				return
			}
		}
	}
}

// Rates of the changes, per current employee per month (30 days) unless said otherwise.
const (
	churnHireRate     = 0.015
	churnResignRate   = 0.015
	churnTitleRate    = 0.01
	churnMoveRate     = 0.005
	churnManagerRate  = 0.01
	churnPatternRate  = 0.003
	churnBookingsYear = 7.0 // absences booked per current employee a year
	churnSickYear     = 1.3 // sickness spells per current employee a year
	churnReorgShare   = 0.15
	churnBlankShare   = 40 // percent of hires arriving with blanks
	churnCancelNight  = 0.25
	churnRemoveNight  = 0.06
)

// The one-off changes, by date.
var (
	churnDeptAdded   = ref{509, "Data & Analytics"}
	churnAddOn       = date(2026, 8, 15, 0, 0, 0)
	churnRenameOn    = date(2026, 10, 9, 0, 0, 0)
	churnRenamed     = ref{503, "People"}
	churnCloseMoveOn = date(2027, 1, 27, 0, 0, 0)
	churnCloseOn     = date(2027, 1, 30, 0, 0, 0)
	churnClosed      = int64(508) // Legal
	churnClosedTo    = int64(502) // Finance
	churnPatternOn   = date(2026, 9, 29, 0, 0, 0)
	churnDuplicateOn = date(2026, 11, 8, 0, 0, 0)
	churnYearEnd     = date(2027, 1, 1, 0, 0, 0)
	churnStandard    = ref{12, "Standard (26 days)"}
	churnSenior      = int64(13)
	churnReorgMonths = []time.Month{time.September, time.December, time.March}
	churnCompressed  = pattern{37, "Compressed hours (36h)", false, [7]string{"8.0", "8.0", "8.0", "8.0", "4.0", "0.0", "0.0"}, "36.0", date(2026, 9, 29, 10, 4, 0), true, 0}
	churnLongService = 5 // years
)

// rec is a JSON object kept member by member, in the order the source wrote them.
type rec struct {
	keys []string
	vals map[string]json.RawMessage
	raw  json.RawMessage // the object as written; nil after a change
}

func parseRec(raw json.RawMessage) *rec {
	r := &rec{vals: map[string]json.RawMessage{}, raw: raw}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		panic(fmt.Sprintf("fakeupstream: churn: %v", err))
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			panic(fmt.Sprintf("fakeupstream: churn: %v", err))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			panic(fmt.Sprintf("fakeupstream: churn: %v", err))
		}
		k := t.(string)
		r.keys = append(r.keys, k)
		r.vals[k] = v
	}
	return r
}

// set writes member k (added at the end when the record has none).
func (r *rec) set(k string, v any) {
	if _, ok := r.vals[k]; !ok {
		r.keys = append(r.keys, k)
	}
	r.vals[k] = appendValue(nil, k, v)
	r.raw = nil
}

func (r *rec) get(k string) json.RawMessage { return r.vals[k] }

func (r *rec) bytes() json.RawMessage {
	if r.raw == nil {
		o := newObject()
		for _, k := range r.keys {
			o.set(k, r.vals[k])
		}
		r.raw = o.raw()
	}
	return r.raw
}

// churnEmployee is an employee record and what the churn needs to know of it.
type churnEmployee struct {
	r       *rec
	p       person
	status  string
	join    time.Time
	left    time.Time // the leaving day of a Pending leaver or an Ex-employee; zero otherwise
	dept    int64
	manager int64
	allow   int64
	months  int64
	style   int // the timestamp style of its updated_at
	fillOn  int // the night its blank members are filled; 0 none
	deleted bool
}

func (e *churnEmployee) current(day time.Time) bool {
	return e.status != "Ex-employee" && !e.deleted && !e.join.After(day)
}

// churnEvent is an absence or a sickness.
type churnEvent struct {
	r          *rec
	id, emp    int64
	start, end time.Time
	cancelled  bool
	ongoing    bool      // a sickness without an end date
	closeOn    time.Time // when an ongoing sickness ends
	workdays   int
	deleted    bool
}

type churner struct {
	rng               *rand.Rand
	n                 int
	day               time.Time
	emps              []*churnEmployee
	byID              map[int64]*churnEmployee
	nextEmp           int64
	depts             []*rec // listed departments, in id order
	deptNames         map[int64]string
	allowNames        map[int64]string
	patterns          []pattern
	collections       map[string][]json.RawMessage // the reference data that does not change
	allowances        []*rec
	absences, sick    []*churnEvent
	nextAbs, nextSick int64
	changes           ChurnChanges
	reassign          map[int64]int // reports of a leaver (by id) reassigned on that night
	duplicate         *churnEmployee
	duplicateDeleteOn int
	outside           []person // managers not among the employees
}

func newChurner(opts ChurnOptions) *churner {
	a := GenerateAccount(AccountOptions{Employees: opts.Employees, Seed: opts.Seed, AbsenceYears: 1})
	c := &churner{
		rng:         rand.New(rand.NewPCG(uint64(opts.Seed)^0xc4ceb9fe1a85ec53, 0x2545f4914f6cdd1d)),
		day:         reference,
		byID:        map[int64]*churnEmployee{},
		deptNames:   map[int64]string{},
		allowNames:  map[int64]string{},
		patterns:    append(slices.Clone(patterns), zeroHours),
		collections: map[string][]json.RawMessage{},
		reassign:    map[int64]int{},
	}
	for _, d := range departments {
		c.deptNames[d.id] = d.name
	}
	for _, al := range allowances {
		c.allowNames[al.id] = al.name
	}
	for _, raw := range a.Collections["departments"] {
		c.depts = append(c.depts, parseRec(raw))
	}
	for _, raw := range a.Collections["holiday_allowances"] {
		c.allowances = append(c.allowances, parseRec(raw))
	}
	for _, name := range []string{"divisions", "locations", "other_leave_reasons", "statutory_holiday_countries", "company_training_types"} {
		c.collections[name] = a.Collections[name]
	}
	var named []person // the line managers records name, with their names
	for _, raw := range a.Employees {
		var e v1.Employee
		if err := e.UnmarshalJSON(raw); err != nil {
			panic(fmt.Sprintf("fakeupstream: churn: employee: %v", err))
		}
		ce := &churnEmployee{r: parseRec(raw), p: person{id: e.ID, first: e.FirstName, last: e.LastName, email: e.Email},
			status: e.Status, style: c.rng.IntN(100)}
		ce.join, _ = time.Parse(time.DateOnly, e.CompanyJoinDate)
		if e.LeavingDate != "" {
			ce.left, _ = time.Parse(time.DateOnly, e.LeavingDate)
		} else if e.Status == "Ex-employee" {
			ce.left = reference.AddDate(-1, 0, 0) // not recorded: some time before
		}
		if e.Department != nil {
			ce.dept = e.Department.ID
		}
		if e.LineManager != nil {
			ce.manager = e.LineManager.ID
			if lm := e.LineManager; lm.FirstName != "" {
				named = append(named, person{id: lm.ID, first: lm.FirstName, last: lm.LastName, email: lm.Email})
			}
		}
		if e.HolidayAllowance != nil {
			ce.allow = e.HolidayAllowance.ID
		}
		if e.LengthOfServiceInMonths != nil {
			ce.months = *e.LengthOfServiceInMonths
		}
		c.emps = append(c.emps, ce)
		c.byID[e.ID] = ce
		c.nextEmp = max(c.nextEmp, e.ID)
	}
	for _, p := range named {
		if c.byID[p.id] == nil && !slices.ContainsFunc(c.outside, func(o person) bool { return o.id == p.id }) {
			c.outside = append(c.outside, p)
		}
	}
	if len(c.outside) == 0 {
		c.outside = []person{{id: 900001, first: "Ana", last: "López", email: "ana.lopez900001@example.com"}}
	}
	for _, raw := range a.Collections["absences"] {
		c.absences = append(c.absences, c.event(raw))
		c.nextAbs = max(c.nextAbs, c.absences[len(c.absences)-1].id)
	}
	for _, raw := range a.Collections["sicknesses"] {
		ev := c.event(raw)
		if ev.ongoing {
			ev.closeOn = reference.AddDate(0, 0, 1+c.rng.IntN(15))
		}
		c.sick = append(c.sick, ev)
		c.nextSick = max(c.nextSick, ev.id)
	}
	return c
}

func (c *churner) event(raw json.RawMessage) *churnEvent {
	it := newItem(raw)
	ev := &churnEvent{r: parseRec(raw), id: it.id, emp: it.employee, cancelled: it.cancelled}
	ev.start, _ = time.Parse(time.DateOnly, it.start)
	if it.end == "" {
		ev.ongoing = true
	} else {
		ev.end, _ = time.Parse(time.DateOnly, it.end)
	}
	return ev
}

// night is the snapshot of the account as it stands.
func (c *churner) night() Night {
	n := Night{N: c.n, Day: c.day, Collections: map[string][]json.RawMessage{}, Changes: c.changes}
	for _, e := range c.emps {
		if !e.deleted {
			n.Employees = append(n.Employees, e.r.bytes())
		}
	}
	for _, p := range c.patterns {
		n.WorkingPatterns = append(n.WorkingPatterns, p.record())
	}
	for name, rs := range c.collections {
		n.Collections[name] = slices.Clone(rs)
	}
	for _, name := range []string{"departments", "holiday_allowances"} {
		rs := c.depts
		if name == "holiday_allowances" {
			rs = c.allowances
		}
		out := make([]json.RawMessage, len(rs))
		for i, r := range rs {
			out[i] = r.bytes()
		}
		n.Collections[name] = out
	}
	for name, evs := range map[string][]*churnEvent{"absences": c.absences, "sicknesses": c.sick} {
		var out []json.RawMessage
		for _, ev := range evs {
			if !ev.deleted {
				out = append(out, ev.r.bytes())
			}
		}
		n.Collections[name] = out
	}
	return n
}

// at is a time during the working day of the night being made.
func (c *churner) at() time.Time {
	return c.day.Add(time.Duration(8*3600+c.rng.IntN(10*3600)) * time.Second)
}

// poisson draws how many of something happening lambda times on average happen.
func (c *churner) poisson(lambda float64) int {
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= c.rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

func (c *churner) current() []*churnEmployee {
	var out []*churnEmployee
	for _, e := range c.emps {
		if e.current(c.day) {
			out = append(out, e)
		}
	}
	return out
}

// touch marks e changed now.
func (c *churner) touch(e *churnEmployee) { e.r.set("updated_at", timestamp(c.at(), e.style)) }

// advance makes the next night: one day's changes.
func (c *churner) advance() {
	c.n++
	c.day = c.day.AddDate(0, 0, 1)
	c.changes = ChurnChanges{}
	busy := 1.0
	if weekend(c.day) {
		busy = 0.2
	}
	cur := c.current()
	perDay := func(monthly float64) float64 { return monthly * float64(len(cur)) / 30 * busy }

	c.oneOffs(cur)
	// Leavers whose day has passed.
	for _, e := range c.emps {
		if e.status == "Pending leaver" && e.left.Before(c.day) {
			c.leave(e)
		}
	}
	for range c.poisson(perDay(churnHireRate)) {
		c.hire(cur)
	}
	for range c.poisson(perDay(churnResignRate)) {
		c.resign(cur)
	}
	for range c.poisson(perDay(churnTitleRate)) {
		if e := c.pickCurrent(cur); e != nil {
			c.setTitle(e)
		}
	}
	for range c.poisson(perDay(churnMoveRate)) {
		if e := c.pickCurrent(cur); e != nil {
			c.move(e, c.otherDept(e.dept), cur, c.rng.IntN(2) == 0)
		}
	}
	for range c.poisson(perDay(churnManagerRate)) {
		if e := c.pickCurrent(cur); e != nil {
			c.setManager(e, cur)
		}
	}
	for range c.poisson(perDay(churnPatternRate)) {
		if e := c.pickCurrent(cur); e != nil {
			c.setPattern(e)
		}
	}
	for _, e := range c.emps {
		if e.fillOn == c.n {
			c.fill(e, cur)
		}
		if id, ok := c.reassign[e.manager]; ok && id <= c.n && e.current(c.day) {
			c.setManager(e, cur)
		}
	}
	c.service()
	c.book(cur, busy)
	c.sickness(cur, busy)
}

func (c *churner) pickCurrent(cur []*churnEmployee) *churnEmployee {
	// Someone still employed tonight (cur was taken before the night's leavers).
	for range 8 {
		if e := cur[c.rng.IntN(len(cur))]; e.current(c.day) && e.status == "Current employee" {
			return e
		}
	}
	return nil
}

// oneOffs makes the changes of the night's date, if any.
func (c *churner) oneOffs(cur []*churnEmployee) {
	switch {
	case c.day.Equal(churnAddOn):
		r := parseRec(references([]ref{churnDeptAdded}, true)[0])
		r.set("created_at", london(c.at()))
		r.set("updated_at", r.get("created_at"))
		c.depts = append(c.depts, r)
		c.deptNames[churnDeptAdded.id] = churnDeptAdded.name
		c.note("department %d %s added", churnDeptAdded.id, churnDeptAdded.name)
	case c.day.Equal(churnRenameOn):
		c.rename(churnRenamed)
	case c.day.Equal(churnCloseMoveOn):
		moved := 0
		for _, e := range c.emps {
			if e.dept == churnClosed && e.status != "Ex-employee" && !e.deleted {
				c.move(e, churnClosedTo, cur, false)
				moved++
			}
		}
		c.note("department %d closing: %d moved to %d", churnClosed, moved, churnClosedTo)
	case c.day.Equal(churnCloseOn):
		c.depts = slices.DeleteFunc(c.depts, func(r *rec) bool { return string(r.get("id")) == fmt.Sprint(churnClosed) })
		delete(c.deptNames, churnClosed)
		c.note("department %d closed", churnClosed)
	case c.day.Equal(churnPatternOn):
		c.patterns = append(c.patterns, churnCompressed)
		c.note("working pattern %d added", churnCompressed.id)
	case c.day.Equal(churnDuplicateOn):
		e := c.hire(cur)
		d := c.hire(cur)
		// The same person, entered twice: the copy has the first record's names.
		d.p.first, d.p.last = e.p.first, e.p.last
		d.r.set("first_name", e.p.first)
		d.r.set("last_name", e.p.last)
		c.duplicate, c.duplicateDeleteOn = d, c.n+2
		c.note("employee %d entered twice (%d)", e.p.id, d.p.id)
	case c.duplicate != nil && c.n == c.duplicateDeleteOn:
		c.duplicate.deleted = true
		c.changes.Deleted++
		c.note("employee %d deleted", c.duplicate.p.id)
		c.duplicate = nil
	case c.day.Equal(churnYearEnd):
		c.yearEnd(cur)
	case c.day.Day() == 1 && slices.Contains(churnReorgMonths, c.day.Month()):
		c.reorganise(cur)
	}
}

func (c *churner) note(format string, args ...any) {
	c.changes.Events = append(c.changes.Events, fmt.Sprintf(format, args...))
}

// listedDepts are the ids of the departments listed tonight.
func (c *churner) listedDepts() []int64 {
	var out []int64
	for _, r := range c.depts {
		var id int64
		_ = json.Unmarshal(r.get("id"), &id)
		out = append(out, id)
	}
	return out
}

func (c *churner) otherDept(not int64) int64 {
	closing := !c.day.Before(churnCloseMoveOn)
	ids := slices.DeleteFunc(c.listedDepts(), func(id int64) bool { return id == not || closing && id == churnClosed })
	return ids[c.rng.IntN(len(ids))]
}

// rename renames a department: its record, and the name every employee's nested department
// carries (not a change of the employee's record: updated_at stays).
func (c *churner) rename(to ref) {
	for _, r := range c.depts {
		if string(r.get("id")) == fmt.Sprint(to.id) {
			r.set("name", to.name)
			r.set("updated_at", london(c.at()))
		}
	}
	c.deptNames[to.id] = to.name
	for _, e := range c.emps {
		if e.dept == to.id {
			e.r.set("department", nestedRef(to))
		}
	}
	c.note("department %d renamed %s", to.id, to.name)
}

func (c *churner) reorganise(cur []*churnEmployee) {
	moved := 0
	for _, e := range cur {
		if e.status == "Current employee" && c.rng.Float64() < churnReorgShare {
			c.move(e, c.otherDept(e.dept), cur, c.rng.IntN(3) == 0)
			moved++
		}
	}
	c.note("reorganisation: %d moved", moved)
}

func (c *churner) yearEnd(cur []*churnEmployee) {
	for _, r := range c.allowances {
		if string(r.get("id")) == fmt.Sprint(churnStandard.id) {
			r.set("name", churnStandard.name)
			r.set("updated_at", london(c.at()))
		}
	}
	c.allowNames[churnStandard.id] = churnStandard.name
	moved := 0
	for _, e := range c.emps {
		if e.allow != churnStandard.id {
			continue
		}
		if e.current(c.day) && e.status == "Current employee" && !e.join.After(c.day.AddDate(-churnLongService, 0, 0)) {
			e.allow = churnSenior
			e.r.set("holiday_allowance", nestedRef(ref{churnSenior, c.allowNames[churnSenior]}))
			c.touch(e)
			moved++
			c.changes.Reallowanced++
			continue
		}
		e.r.set("holiday_allowance", nestedRef(churnStandard))
	}
	c.note("year end: allowance %d renamed, %d moved to %d", churnStandard.id, moved, churnSenior)
}

// hire makes a new starter's record: GenerateAccount's shape (employee), starting one to six
// weeks from now, sometimes with the optional members blank until a few nights later.
func (c *churner) hire(cur []*churnEmployee) *churnEmployee {
	c.nextEmp += 1 + int64(c.rng.IntN(3))
	first, last := pick(c.rng, firstNames), pick(c.rng, lastNames)
	p := person{id: c.nextEmp, first: first, last: last, email: fmt.Sprintf("%s.%s%d@example.com", fold(first), fold(last), c.nextEmp)}
	people := make([]person, 0, len(cur)+1)
	for _, e := range cur {
		people = append(people, e.p)
	}
	people = append(people, p)
	raw, _ := employee(c.rng, c.rng, p, len(people)-1, people, c.outside)
	e := &churnEmployee{r: parseRec(raw), p: p, status: "Current employee", style: c.rng.IntN(100)}
	e.join = c.day.AddDate(0, 0, 7+c.rng.IntN(36))
	for _, k := range []string{"company_join_date", "join_date"} {
		if v := e.r.get(k); v != nil {
			// The loose forms stay: YYYY/MM/DD where the record wrote it so.
			layout := time.DateOnly
			if bytes.Contains(v, []byte("/")) {
				layout = "2006/01/02"
			}
			e.r.set(k, e.join.Format(layout))
		}
	}
	e.r.set("status", e.status)
	e.r.set("job_start_date", e.join.Format(time.DateOnly))
	e.r.set("leaving_date", nil)
	e.r.set("length_of_service_in_months", 0)
	created := c.at()
	e.r.set("created_at", timestamp(created, e.style))
	e.r.set("updated_at", timestamp(created, e.style))
	e.dept = c.otherDept(0)
	e.r.set("department", nestedRef(ref{e.dept, c.deptNames[e.dept]}))
	var al v1.Ref
	_ = json.Unmarshal(e.r.get("holiday_allowance"), &al)
	e.allow = al.ID
	e.r.set("holiday_allowance", nestedRef(ref{e.allow, c.allowNames[e.allow]}))
	var lm v1.PersonRef
	if json.Unmarshal(e.r.get("line_manager"), &lm) == nil {
		e.manager = lm.ID
	}
	if c.rng.IntN(100) < churnBlankShare {
		// Entered in a hurry: the rest comes a few nights later.
		e.r.set("job_title", "")
		e.r.set("department", nil)
		e.r.set("line_manager", nil)
		e.r.set("holiday_approver", nil)
		e.r.set("location", nil)
		e.dept, e.manager = 0, 0
		e.fillOn = c.n + 1 + c.rng.IntN(6)
	}
	c.emps = append(c.emps, e)
	c.byID[p.id] = e
	c.changes.Hired++
	return e
}

// fill fills a starter's blank members.
func (c *churner) fill(e *churnEmployee, cur []*churnEmployee) {
	if e.deleted {
		return
	}
	e.r.set("job_title", pick(c.rng, jobTitles))
	e.dept = c.otherDept(0)
	e.r.set("department", nestedRef(ref{e.dept, c.deptNames[e.dept]}))
	l := locations[c.rng.IntN(len(locations))]
	e.r.set("location", nestedRef(l))
	c.setManager(e, cur)
	c.touch(e)
	c.changes.Filled++
}

// resign makes someone a Pending leaver (a tenth an Ex-employee at once): the leaving date
// recorded, the bookings after it deleted.
func (c *churner) resign(cur []*churnEmployee) {
	e := c.pickCurrent(cur)
	if e == nil {
		return
	}
	if c.rng.IntN(10) == 0 {
		e.left = c.day.AddDate(0, 0, -1)
	} else {
		e.left = c.day.AddDate(0, 0, 14+c.rng.IntN(77))
		e.status = "Pending leaver"
		e.r.set("status", e.status)
	}
	e.r.set("leaving_date", e.left.Format(time.DateOnly))
	c.touch(e)
	for _, ev := range c.absences {
		if ev.emp == e.p.id && !ev.deleted && ev.end.After(e.left) {
			ev.deleted = true
			c.changes.Removed++
		}
	}
	c.changes.Resigned++
	if e.status != "Pending leaver" {
		c.leave(e)
	}
}

// leave makes a leaver an Ex-employee (still listed); their reports get another manager within
// a fortnight.
func (c *churner) leave(e *churnEmployee) {
	e.status = "Ex-employee"
	e.r.set("status", e.status)
	c.touch(e)
	c.reassign[e.p.id] = c.n + c.rng.IntN(14)
	c.changes.Left++
}

func (c *churner) setTitle(e *churnEmployee) {
	var old string
	_ = json.Unmarshal(e.r.get("job_title"), &old)
	t := pick(c.rng, jobTitles)
	for t == old {
		t = pick(c.rng, jobTitles)
	}
	e.r.set("job_title", t)
	c.touch(e)
	c.changes.Retitled++
}

// move moves e to department dept, and to one of its people as manager when newManager.
func (c *churner) move(e *churnEmployee, dept int64, cur []*churnEmployee, newManager bool) {
	e.dept = dept
	e.r.set("department", nestedRef(ref{dept, c.deptNames[dept]}))
	c.touch(e)
	c.changes.Moved++
	if newManager {
		var in []*churnEmployee
		for _, m := range cur {
			if m.dept == dept && m != e && m.status == "Current employee" {
				in = append(in, m)
			}
		}
		if len(in) > 0 {
			c.manage(e, in[c.rng.IntN(len(in))])
		}
	}
}

// setManager gives e another manager among the current employees.
func (c *churner) setManager(e *churnEmployee, cur []*churnEmployee) {
	for range 8 {
		if m := cur[c.rng.IntN(len(cur))]; m != e && m.current(c.day) && m.status == "Current employee" {
			c.manage(e, m)
			return
		}
	}
}

func (c *churner) manage(e, m *churnEmployee) {
	old := e.manager
	e.manager = m.p.id
	e.r.set("line_manager", personRef(c.rng, &m.p))
	var approver v1.PersonRef
	if json.Unmarshal(e.r.get("holiday_approver"), &approver) == nil && (approver.ID == old || approver.ID == 0) {
		e.r.set("holiday_approver", personRef(c.rng, &m.p))
	}
	c.touch(e)
	c.changes.Managed++
}

func (c *churner) setPattern(e *churnEmployee) {
	p := c.patterns[c.rng.IntN(len(c.patterns))]
	e.r.set("working_pattern", nested(p))
	c.touch(e)
	c.changes.Repatterned++
}

// service reckons everyone's length of service as the service does: whole months from joining
// to tonight, or to the leaving day.
func (c *churner) service() {
	for _, e := range c.emps {
		if e.status == "Ex-employee" || e.deleted {
			continue
		}
		m := max(0, int64(c.day.Year()-e.join.Year())*12+int64(c.day.Month()-e.join.Month()))
		if m == e.months {
			continue
		}
		e.months = m
		if v := e.r.get("length_of_service_in_months"); len(v) > 0 && v[0] == '"' {
			e.r.set("length_of_service_in_months", fmt.Sprint(m))
		} else {
			e.r.set("length_of_service_in_months", m)
		}
	}
}

// book books the night's absences, and cancels and deletes a few.
func (c *churner) book(cur []*churnEmployee, busy float64) {
	n := c.poisson(churnBookingsYear / 365 * float64(len(cur)) * busy * 7 / 5.4)
	for range n {
		e := c.pickCurrent(cur)
		if e == nil {
			continue
		}
		c.nextAbs += 1 + int64(c.rng.IntN(40)/39)
		c.absences = append(c.absences, c.absence(c.nextAbs, e))
		c.changes.Booked++
	}
	var future []*churnEvent
	for _, ev := range c.absences {
		if !ev.deleted && !ev.cancelled && ev.start.After(c.day) {
			future = append(future, ev)
		}
	}
	for range c.poisson(churnCancelNight * busy) {
		if len(future) > 0 {
			ev := future[c.rng.IntN(len(future))]
			ev.cancelled = true
			ev.r.set("cancelled", true)
			ev.r.set("updated_at", london(c.at()))
			c.changes.Cancelled++
		}
	}
	for range c.poisson(churnRemoveNight * busy) {
		if len(future) > 0 {
			if ev := future[c.rng.IntN(len(future))]; !ev.deleted {
				ev.deleted = true
				c.changes.Removed++
			}
		}
	}
}

// absence is a booking made tonight by e, as booking writes an approved one: mostly holiday
// days to months ahead, some other leave (a few recorded after the day).
func (c *churner) absence(id int64, e *churnEmployee) *churnEvent {
	rng := c.rng
	holiday := chance(rng, 85)
	var workdays int
	var reason any
	start := c.day.AddDate(0, 0, 3+rng.IntN(120))
	switch r := rng.IntN(100); {
	case !holiday:
		lr := otherLeaveReasons[rng.IntN(len(otherLeaveReasons))]
		workdays = 1 + rng.IntN(3)
		if chance(rng, 40) {
			start = c.day.AddDate(0, 0, -rng.IntN(5)) // recorded after the day
		}
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
	g := eventGen{rng: rng}
	start, end := span(start, workdays)
	hs, he := g.half(12), g.half(0)
	if workdays > 1 {
		if he = g.half(8); he.on {
			he.ampm = "am"
		}
	}
	deducted := float64(workdays)
	if hs.on {
		deducted -= 0.5
	}
	if he.on {
		deducted -= 0.5
	}
	var approver *person
	if m := c.byID[e.manager]; m != nil && !chance(rng, 8) {
		approver = &m.p
	}
	typ := "Holiday"
	if !holiday {
		typ = "OtherLeave"
	}
	at := c.at()
	stamps := g.stamps(at, at)
	o := newObject().set("id", id)
	o.set("employee", personFull(&e.p))
	o.set("approved_by", personShort(approver))
	o.set("leave_reason", reason)
	o.set("deducted", decimal(deducted))
	o.set("work_units", decimal(deducted))
	o.set("start_date", start.Format(time.DateOnly))
	o.set("end_date", end.Format(time.DateOnly))
	o.set("half_start", hs.on)
	o.set("half_start_am_pm", hs.ampm)
	o.set("half_end", he.on)
	o.set("half_end_am_pm", he.ampm)
	o.set("cancelled", false)
	o.set("notes", pick(rng, absenceNotes))
	o.set("type", typ)
	o.set("created_at", stamps[0])
	o.set("updated_at", stamps[1])
	return &churnEvent{r: parseRec(o.raw()), id: id, emp: e.p.id, start: start, end: end, workdays: workdays}
}

// sickness records the night's sicknesses and ends those whose people returned.
func (c *churner) sickness(cur []*churnEmployee, busy float64) {
	for _, ev := range c.sick {
		if ev.ongoing && !ev.closeOn.After(c.day) {
			ev.ongoing = false
			end := c.day.AddDate(0, 0, -1)
			if end.Before(ev.start) {
				end = ev.start
			}
			ev.end = end
			ev.r.set("end_date", end.Format(time.DateOnly))
			ev.r.set("status", "returned")
			c.changes.Returned++
		}
	}
	for range c.poisson(churnSickYear / 365 * float64(len(cur)) * busy * 7 / 5.4) {
		e := c.pickCurrent(cur)
		if e == nil {
			continue
		}
		rng := c.rng
		workdays := sickWorkdays(rng)
		ongoing := chance(rng, 50)
		var start, end time.Time
		if ongoing {
			start, end = span(c.day, workdays)
		} else {
			// Recorded on return: the spell ended yesterday or so.
			start = c.day.AddDate(0, 0, -(workdays + workdays/5*2 + 1))
			start, end = span(start, workdays)
		}
		g := eventGen{rng: rng}
		hs, he := g.half(10), g.half(0)
		deducted := float64(workdays)
		if hs.on {
			deducted -= 0.5
		}
		var review any
		if chance(rng, 30) {
			review = pick(rng, []string{"Return to work interview held.", "Phased return agreed", "No concerns"})
		}
		var fitNote any
		if chance(rng, 50) {
			fitNote = workdays > 5
		}
		c.nextSick += 1 + int64(rng.IntN(40)/39)
		o := newObject().set("id", c.nextSick)
		typ := nestedRef(sicknessTypes[rng.IntN(len(sicknessTypes))]) // drawn before the reason, as ever
		sickness{emp: e.p.id, typ: typ, start: start, end: end, ongoing: ongoing, hs: hs, he: he, deducted: deducted,
			reason: pick(rng, sicknessReasons), review: review, fitNote: fitNote}.write(o)
		ev := &churnEvent{r: parseRec(o.raw()), id: c.nextSick, emp: e.p.id, start: start, workdays: workdays, ongoing: ongoing}
		if ongoing {
			ev.closeOn = end.AddDate(0, 0, 1)
		} else {
			ev.end = end
		}
		c.sick = append(c.sick, ev)
		c.changes.Sick++
	}
}
