package hrdata

import "time"

// Firm is the firm Load writes for some Options, in memory: for a test to reckon what a model
// should answer from the people themselves rather than from the warehouse.
type Firm struct {
	Today  time.Time // the data's today (a UTC midnight)
	Start  time.Time // Years before Today: the first day of events
	People []Person  // by id, ids 1…len(People)
}

// Person is an employee, current or not, as Load writes them.
type Person struct {
	ID   int64
	Join time.Time // company_join_date
	// Left is the last day employed (the leaving_date, sent or not); zero for a current
	// employee.
	Left time.Time
	// Versions are the rows of employees_history, in order: each valid from its From to the
	// next's, the last open; a leaver's last is Ex-employee, from the day after Left.
	Versions []EmployeeVersion
}

// EmployeeVersion is one row of employees_history.
type EmployeeVersion struct {
	From         time.Time
	Status       string // "Current employee" or "Ex-employee"
	DepartmentID int64
	DivisionID   int64
	LocationID   int64
	PatternID    int64   // working_pattern_id
	FTE          float64 // the pattern's share of full time (1, 0.8, 0.6, 0.5)
	ManagerID    int64   // line_manager_id; 0 for none
	LeavingDate  bool    // leaving_date is set (to Left)
}

// At is the version of p in effect on day d, and whether there is one (none before Join).
func (p Person) At(d time.Time) (EmployeeVersion, bool) {
	var v EmployeeVersion
	ok := false
	for _, x := range p.Versions {
		if x.From.After(d) {
			break
		}
		v, ok = x, true
	}
	return v, ok
}

// Generate is the firm Load writes for o.
func Generate(o Options) Firm {
	f := newFirm(o)
	out := Firm{Today: f.today.time(), Start: f.start.time(), People: make([]Person, len(f.people))}
	for i, p := range f.people {
		q := Person{ID: p.id, Join: p.join.time()}
		if !p.current() {
			q.Left = p.left.time()
		}
		for _, v := range p.versions {
			status := "Current employee"
			if v.leaver {
				status = "Ex-employee"
			}
			q.Versions = append(q.Versions, EmployeeVersion{From: v.from.time(), Status: status,
				DepartmentID: int64(v.dept + 1), DivisionID: int64(DepartmentDivision[v.dept] + 1),
				LocationID: int64(v.loc + 1), PatternID: Patterns[v.pattern].ID, FTE: Patterns[v.pattern].FTE,
				ManagerID: v.manager, LeavingDate: v.leavingDate})
		}
		out.People[i] = q
	}
	return out
}
