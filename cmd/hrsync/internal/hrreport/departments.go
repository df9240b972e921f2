package hrreport

import (
	"cmp"
	"database/sql"
	"slices"
	"strconv"

	"github.com/hrsync/hrsync/sink"
)

// maxSeries is how many departments a chart draws by name: the largest by headcount on the
// report's day; the rest are one "Other departments (N)" series, their sum. Seven lines can
// still be told apart; 41 cannot. A chart of maxSeries+1 departments draws them all (an
// "Other" of one department would hide a name for nothing).
const maxSeries = 6

// department is one department's figures over the report's months.
type department struct {
	key       string
	name      string    // as shown
	heads     []float64 // headcount by month
	ftes      []float64 // FTE by month
	starters  int64
	leavers   int64
	absence   sink.DepartmentAbsence
	inAbsence bool
}

// departmentKey tells departments apart: by id, else by name (no id: "" is no department).
func departmentKey(id sql.NullInt64, name string) string {
	if id.Valid {
		return "id:" + strconv.FormatInt(id.Int64, 10)
	}
	return "name:" + plainText(name)
}

// departmentName is how a department is shown: its name (plainText), else its id, else none.
func departmentName(id int64, valid bool, name string) string {
	switch {
	case plainText(name) != "":
		return plainText(name)
	case valid:
		return "Department " + strconv.FormatInt(id, 10)
	}
	return "(no department)"
}

// departments gathers r's departments from its headcount, movements and absence, ranked
// (rankDepartments). Two departments of one name are told apart by their ids.
func departments(r sink.PeopleReport, index map[string]int) []*department {
	byKey := map[string]*department{}
	get := func(id sql.NullInt64, name string) *department {
		k := departmentKey(id, name)
		d := byKey[k]
		if d == nil {
			d = &department{key: k, name: departmentName(id.Int64, id.Valid, name),
				heads: make([]float64, len(r.Months)), ftes: make([]float64, len(r.Months))}
			d.absence.DepartmentID, d.absence.Department = id, name
			byKey[k] = d
		}
		return d
	}
	for _, h := range r.Headcount {
		if i, ok := index[h.Month]; ok {
			d := get(h.DepartmentID, h.Department)
			d.heads[i] += float64(h.Headcount)
			d.ftes[i] += h.FTE
		}
	}
	for _, m := range r.Movements {
		if _, ok := index[m.Month]; ok {
			d := get(m.DepartmentID, m.Department)
			d.starters += m.Starters
			d.leavers += m.Leavers
		}
	}
	for _, a := range r.Absence {
		d := get(a.DepartmentID, a.Department)
		d.inAbsence = true
		d.absence.SickDays += a.SickDays
		d.absence.OtherLeaveDays += a.OtherLeaveDays
		d.absence.HolidayDays += a.HolidayDays
		d.absence.DaysLost += a.DaysLost
		d.absence.DaysDue += a.DaysDue
	}
	out := make([]*department, 0, len(byKey))
	names := map[string]int{}
	for _, d := range byKey {
		out = append(out, d)
		names[d.name]++
	}
	for _, d := range out {
		if names[d.name] > 1 && d.absence.DepartmentID.Valid {
			d.name += " (id " + strconv.FormatInt(d.absence.DepartmentID.Int64, 10) + ")"
		}
	}
	rankDepartments(out)
	return out
}

// lastOf is a series' value at the report's day (its last month); 0 with no months.
func lastOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1]
}

// rankDepartments orders ds as every table and chart shows them: by headcount on the report's
// day, the largest first; a tie in natural name order ("Dept 2" before "Dept 10").
func rankDepartments(ds []*department) {
	slices.SortFunc(ds, func(a, b *department) int {
		if c := cmp.Compare(lastOf(b.heads), lastOf(a.heads)); c != 0 {
			return c
		}
		if c := naturalCompare(a.name, b.name); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
}

// topAndOther splits ranked departments into those a chart draws by name and the rest (none
// when all of them fit: at most maxSeries+1).
func topAndOther(ranked []*department) (top, other []*department) {
	if len(ranked) <= maxSeries+1 {
		return ranked, nil
	}
	return ranked[:maxSeries], ranked[maxSeries:]
}

// otherName names the series of the departments a chart does not draw by name.
func otherName(n int) string {
	return "Other departments (" + strconv.Itoa(n) + ")"
}

// sumSeries is the month-by-month sum of the departments' series of pick.
func sumSeries(ds []*department, months int, pick func(*department) []float64) []float64 {
	out := make([]float64, months)
	for _, d := range ds {
		for i, v := range pick(d) {
			out[i] += v
		}
	}
	return out
}
