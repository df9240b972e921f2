// Package hrdata generates a realistic warehouse for benchmarks and demos: a firm of N current
// employees and the people who left over the years before, with every version of each employee
// (transfers, pattern changes, promotions, leaving) in employees_history under its own dates, and
// their absences, sicknesses, leave requests and training courses. It is deterministic: the same
// Options give the same rows.
//
//	s := sinktest.Store(t, backend, sink.Options{})
//	stats, err := hrdata.Load(ctx, s, hrdata.Options{Employees: 200})
//	firm := hrdata.Generate(hrdata.Options{Employees: 200}) // the same firm, in memory
//
// Generate gives the people and their versions in memory, for a test to reckon what a model
// should answer; Count what Load would write, without a warehouse.
//
// Load writes into an empty, migrated warehouse in one transaction, with the tables' own triggers
// (history, meta's totals) off while it writes, then writes the history tables and meta's totals
// itself: the history is what the triggers would have written had each version been synced on the
// day it took effect.
package hrdata

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// Version identifies what Load writes for given Options: bump it with any change to the rows,
// so that caches of generated warehouses (BenchmarkModels) are rebuilt.
const Version = 1

// DefaultToday is the last day of the generated data when Options.Today is zero.
var DefaultToday = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// Options shape the generated firm. The zero value is the benchmark's firm: 20,000 current
// employees, ten years of history and events ending on DefaultToday, seed 1.
type Options struct {
	Employees int       // current employees on Today (default 20,000)
	Years     int       // years of events and of leavers before Today (default 10)
	Seed      uint64    // default 1
	Today     time.Time // the data's today, a UTC date (default DefaultToday)
}

func (o Options) withDefaults() Options {
	if o.Employees <= 0 {
		o.Employees = 20_000
	}
	if o.Years <= 0 {
		o.Years = 10
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Today.IsZero() {
		o.Today = DefaultToday
	}
	o.Today = time.Date(o.Today.Year(), o.Today.Month(), o.Today.Day(), 0, 0, 0, 0, time.UTC)
	return o
}

// Rates of the firm (per person and year unless said).
const (
	Turnover        = 0.15 // share of the staff leaving in a year
	StartShare      = 0.8  // headcount Years ago, as a share of today's (the firm grows)
	TransferRate    = 0.10 // moves between departments
	PatternRate     = 0.05 // changes of working pattern
	PromotionRate   = 0.06 // changes of job title
	AbsenceRate     = 5.0
	SicknessRate    = 2.0
	LeaveRate       = 1.5 // leave requests
	TrainingRate    = 2.0
	LeavingDateSeen = 0.7 // share of leavers whose leaving_date the source sends
	ManagerFanout   = 8   // direct reports of a manager in the line-management tree
)

// Reference data.
var (
	Departments = []string{"Engineering", "Sales", "Marketing", "Finance", "People", "Operations", "Customer Support", "Legal"}
	Divisions   = []string{"Product", "Commercial", "Corporate", "Services"}
	Locations   = []string{"London", "Manchester", "Edinburgh", "Bristol", "Leeds", "Remote"}
	// DepartmentDivision is the division of each department (index to index).
	DepartmentDivision = []int{0, 1, 1, 2, 2, 3, 3, 2}
	LeaveReasons       = []string{"Compassionate leave", "Jury service", "Study leave", "Unpaid leave"}
	TrainingTypes      = []struct {
		Name        string
		ExpiryYears int // 0: the course does not expire
	}{{"Fire safety", 1}, {"First aid", 3}, {"Data protection", 2}, {"Leadership", 0}, {"Health and safety", 2}, {"Technical", 0}}
)

// WorkingPattern is a row of working_patterns; FTE is its share of the full-time week.
type WorkingPattern struct {
	ID      int64
	Name    string
	Default bool
	Days    int     // Monday to Days
	Hours   float64 // a day
	FTE     float64
}

// Patterns are the firm's working patterns: full time 37.5 h, and part time at 0.8, 0.6, 0.5.
var Patterns = []WorkingPattern{
	{1, "Full time (37.5 h)", true, 5, 7.5, 1},
	{2, "Part time 0.8 (30 h)", false, 4, 7.5, 0.8},
	{3, "Part time 0.6 (22.5 h)", false, 3, 7.5, 0.6},
	{4, "Part time 0.5 (18.75 h)", false, 5, 3.75, 0.5},
}

var (
	firstNames = []string{"Olivia", "Amelia", "Isla", "Ava", "Mia", "Ivy", "Lily", "Isabella", "Rosie", "Sophia",
		"Grace", "Freya", "Emily", "Poppy", "Ella", "Noah", "Oliver", "George", "Arthur", "Muhammad", "Leo",
		"Harry", "Oscar", "Archie", "Henry", "Theodore", "Freddie", "Jack", "Charlie", "Thomas", "Priya",
		"Aisha", "Chen", "Kofi", "Siobhan", "Rhys", "Fatima", "Tomasz", "Ana", "Yusuf"}
	lastNames = []string{"Smith", "Jones", "Taylor", "Brown", "Williams", "Wilson", "Johnson", "Davies", "Patel",
		"Robinson", "Wright", "Thompson", "Evans", "Walker", "White", "Roberts", "Green", "Hall", "Thomas",
		"Clarke", "Jackson", "Wood", "Harris", "Edwards", "Turner", "Martin", "Cooper", "Hill", "Ward", "Hughes",
		"Khan", "Ali", "Singh", "Murphy", "Kelly", "Nowak", "Okafor", "Campbell", "Stewart", "Lewis"}
	titles = [][]string{
		{"Software Engineer", "Senior Software Engineer", "Principal Engineer"},
		{"Account Executive", "Senior Account Executive", "Sales Director"},
		{"Marketing Executive", "Marketing Manager", "Head of Marketing"},
		{"Accountant", "Senior Accountant", "Finance Manager"},
		{"People Advisor", "People Partner", "Head of People"},
		{"Operations Analyst", "Operations Manager", "Head of Operations"},
		{"Support Agent", "Senior Support Agent", "Support Manager"},
		{"Paralegal", "Solicitor", "General Counsel"},
	}
)

// day is a date: days since 1970-01-01.
type day int32

func dayOf(t time.Time) day   { return day(t.Unix() / 86400) }
func (d day) time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }
func (d day) weekday() time.Weekday {
	return time.Weekday((int(d) + 4) % 7) // 1970-01-01 was a Thursday
}

// version is one version of an employee, valid from its day to the next version's.
type version struct {
	from        day
	dept, loc   int // indexes into Departments, Locations
	pattern     int // index into Patterns
	level       int // index into the department's titles
	leaver      bool
	leavingDate bool // the source sends leaving_date
	manager     int64
}

type person struct {
	id          int64
	first, last int
	join        day
	left        day // last day employed; 0 while current
	versions    []version
}

func (p *person) current() bool { return p.left == 0 }

// end is the last day the person was employed (today for the current).
func (p *person) end(today day) day {
	if p.current() {
		return today
	}
	return p.left
}

// at is the version in effect on d (the first one before it begins).
func (p *person) at(d day) *version {
	i := sort.Search(len(p.versions), func(i int) bool { return p.versions[i].from > d })
	return &p.versions[max(i-1, 0)]
}

// firm is the generated people, ids 1..len(people) in order.
type firm struct {
	opts         Options
	today, start day // start: Years before today
	people       []*person
}

func rng(seed uint64, stream, id uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream<<40^id))
}

// poisson draws a count of mean lambda (normal approximation above 30).
func poisson(r *rand.Rand, lambda float64) int {
	if lambda <= 0 {
		return 0
	}
	if lambda > 30 {
		return max(0, int(math.Round(lambda+r.NormFloat64()*math.Sqrt(lambda))))
	}
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// newFirm simulates the firm month by month: a tenth and a half of the staff leave in a year, and
// hires bring the headcount from StartShare of Employees up to Employees on today.
func newFirm(o Options) *firm {
	o = o.withDefaults()
	f := &firm{opts: o, today: dayOf(o.Today), start: dayOf(o.Today.AddDate(-o.Years, 0, 0))}
	r := rng(o.Seed, 1, 0)
	var joins []day
	h0 := int(math.Round(StartShare * float64(o.Employees)))
	for range h0 {
		// Tenure at the start: mostly recent, up to 15 years.
		years := min(r.ExpFloat64()*4, 15)
		joins = append(joins, f.start-day(years*365)-1)
	}
	sort.Slice(joins, func(i, j int) bool { return joins[i] < joins[j] })
	var active []*person
	add := func(join day) *person {
		p := &person{id: int64(len(f.people) + 1), join: join}
		f.people = append(f.people, p)
		active = append(active, p)
		return p
	}
	for _, j := range joins {
		add(j)
	}
	months := o.Years * 12
	for m := range months {
		from := dayOf(o.Today.AddDate(-o.Years, m, 0))
		to := dayOf(o.Today.AddDate(-o.Years, m+1, 0)) // exclusive
		if m == months-1 {
			to = f.today // nobody joins or leaves after today; a leaver's last day is before it
		}
		span := int(to - from)
		kept := active[:0]
		for _, p := range active {
			if r.Float64() < Turnover/12 {
				p.left = max(from+day(r.IntN(span)), p.join)
				continue
			}
			kept = append(kept, p)
		}
		active = kept
		target := h0 + (o.Employees-h0)*(m+1)/months
		hires := make([]day, max(0, target-len(active)))
		for i := range hires {
			hires[i] = from + day(r.IntN(span))
		}
		sort.Slice(hires, func(i, j int) bool { return hires[i] < hires[j] })
		for _, d := range hires {
			add(d)
		}
	}
	// Whoever left on the day they joined left the next day.
	for _, p := range f.people {
		if !p.current() && p.left < p.join {
			p.left = p.join
		}
	}
	for _, p := range f.people {
		f.careers(p)
	}
	f.managers()
	return f
}

// careers draws each person's names and versions: a first version from their join date, one at
// each transfer, pattern change and promotion, and for a leaver a last one (Ex-employee) from the
// day after their leaving date.
func (f *firm) careers(p *person) {
	r := rng(f.opts.Seed, 2, uint64(p.id))
	p.first, p.last = r.IntN(len(firstNames)), r.IntN(len(lastNames))
	v := version{from: p.join, dept: r.IntN(len(Departments)), loc: r.IntN(len(Locations))}
	switch x := r.Float64(); {
	case x < 0.70:
		v.pattern = 0
	case x < 0.82:
		v.pattern = 1
	case x < 0.92:
		v.pattern = 2
	default:
		v.pattern = 3
	}
	if r.Float64() < 0.2 {
		v.level = 1
	}
	p.versions = append(p.versions, v)
	end := p.end(f.today)
	rate := TransferRate + PatternRate + PromotionRate
	d := float64(p.join)
	for {
		d += r.ExpFloat64() / rate * 365
		at := day(d)
		if at >= end || (!p.current() && at >= p.left) {
			break
		}
		if at <= p.versions[len(p.versions)-1].from {
			continue
		}
		n := p.versions[len(p.versions)-1]
		n.from = at
		switch x := r.Float64() * rate; {
		case x < TransferRate:
			n.dept = (n.dept + 1 + r.IntN(len(Departments)-1)) % len(Departments)
			if r.Float64() < 0.3 {
				n.loc = r.IntN(len(Locations))
			}
		case x < TransferRate+PatternRate:
			// Full-timers go part time; part-timers mostly back to full time.
			if n.pattern == 0 || r.Float64() < 0.4 {
				n.pattern = (n.pattern + 1 + r.IntN(len(Patterns)-1)) % len(Patterns)
			} else {
				n.pattern = 0
			}
		default:
			if n.level == len(titles[n.dept])-1 {
				continue
			}
			n.level++
		}
		p.versions = append(p.versions, n)
	}
	if !p.current() {
		n := p.versions[len(p.versions)-1]
		n.from = p.left + 1
		n.leaver = true
		n.leavingDate = r.Float64() < LeavingDateSeen
		p.versions = append(p.versions, n)
	}
}

// managers builds the line-management tree of today: the longest-serving current employee
// heads the firm, the longest-serving of each department heads it, and the rest of a department
// report by seniority, ManagerFanout to a manager (about six levels at 20,000). An earlier
// version reports to its current manager if they were there, else to one of its department's
// managers of that day, else to its head or the firm's.
func (f *firm) managers() {
	var current []*person
	for _, p := range f.people {
		if p.current() {
			current = append(current, p)
		}
	}
	if len(current) == 0 {
		return
	}
	byJoin := func(ps []*person) {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].join < ps[j].join })
	}
	byJoin(current)
	ceo := current[0]
	lastDept := func(p *person) int { return p.versions[len(p.versions)-1].dept }
	depts := make([][]*person, len(Departments))
	for _, p := range current[1:] {
		depts[lastDept(p)] = append(depts[lastDept(p)], p)
	}
	final := map[int64]int64{} // today's manager
	mgrs := make([][]*person, len(Departments))
	for d, ps := range depts {
		for i, p := range ps {
			// Node i+1 of a tree numbered from 1 (the head) with ManagerFanout children each.
			if i == 0 {
				final[p.id] = ceo.id
				continue
			}
			parent := (i-1)/ManagerFanout + 1
			final[p.id] = ps[parent-1].id
		}
		for i := 0; i < len(ps) && (i == 0 || i <= (len(ps)-2)/ManagerFanout); i++ {
			mgrs[d] = append(mgrs[d], ps[i]) // those with reports, by seniority
		}
	}
	joined := map[int64]day{}
	for _, p := range f.people {
		joined[p.id] = p.join
	}
	for _, p := range f.people {
		r := rng(f.opts.Seed, 3, uint64(p.id))
		for i := range p.versions {
			v := &p.versions[i]
			if p == ceo {
				v.manager = 0
				continue
			}
			if m, ok := final[p.id]; ok && v.dept == lastDept(p) && joined[m] <= v.from {
				v.manager = m
				continue
			}
			ms := mgrs[v.dept]
			n := sort.Search(len(ms), func(i int) bool { return ms[i].join > v.from })
			if k := n; k > 0 {
				m := ms[r.IntN(k)]
				if m != p {
					v.manager = m.id
					continue
				}
			}
			if ceo.join <= v.from {
				v.manager = ceo.id
			}
		}
	}
}

func (f *firm) String() string {
	return fmt.Sprintf("%d people, %d current", len(f.people), f.opts.Employees)
}
