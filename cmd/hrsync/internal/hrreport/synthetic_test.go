package hrreport_test

import (
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/hrsync/hrsync/sink"
)

// syntheticAsOf is the day of the synthetic reports: a month's end, so that the models'
// monthly figures and the Bradford list are of that day.
const syntheticAsOf = "2026-06-30"

// departmentNames are n departments' names: "Dept 0".."Dept n-1" (so that text order and
// natural order differ from 11 on), three of them, where there are enough, renamed long or
// non-ASCII (a name that may wrap, right-to-left text, accents and CJK), and from 8 on one
// department with no name, shown by its id.
func departmentNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("Dept %d", i)
	}
	special := []string{"Research, Development and Regulatory Affairs (Europe, Middle East and Africa)",
		"Zoë’s Bäckerei & Café – Münchener Straße", "研究開発部", "قسم المبيعات"}
	for k, s := range special {
		if i := 3 + 5*k; i < n {
			names[i] = s
		}
	}
	if n >= 8 {
		names[n-1] = "" // no name: shown as "Department <id>"
	}
	return names
}

// syntheticReport is a report of n departments over 24 months to syntheticAsOf, of about 2,000
// people at 41 departments: department i's headcount falls with i (a few large departments and
// a long tail, as a real account's), some departments tie, every month has starters and
// leavers, and everyone has absence and a Bradford list of 20.
func syntheticReport(n int) sink.PeopleReport {
	asOf, _ := time.Parse(time.DateOnly, syntheticAsOf)
	r := sink.PeopleReport{AsOf: syntheticAsOf, AbsenceModels: true, BradfordAsOf: syntheticAsOf}
	last := time.Date(asOf.Year(), asOf.Month(), 1, 0, 0, 0, 0, time.UTC)
	for m := last.AddDate(0, -23, 0); !m.After(last); m = m.AddDate(0, 1, 0) {
		r.Months = append(r.Months, m.Format(time.DateOnly))
	}
	names := departmentNames(n)
	for i, name := range names {
		id := sql.NullInt64{Int64: int64(100 + i), Valid: true}
		size := 8 + int64(400/(1+i)) // ties from the tail: 400/(1+i) repeats
		for k, m := range r.Months {
			h := size + int64(k%5) - 2
			if h < 1 {
				h = 1
			}
			r.Headcount = append(r.Headcount, sink.DepartmentMonth{Month: m, DepartmentID: id, Department: name,
				Headcount: h, FTE: math.Round(float64(h)*0.87*100) / 100})
			if k%3 == i%3 {
				r.Movements = append(r.Movements, sink.Movement{Month: m, DepartmentID: id, Department: name,
					Starters: 1 + size/40, Leavers: 1 + int64(k+i)%3})
			}
		}
		due := float64(size) * 21 * 24
		sick := due * (0.01 + float64(i%7)/200)
		other := due * 0.008
		hol := due * 0.1
		r.Absence = append(r.Absence, sink.DepartmentAbsence{DepartmentID: id, Department: name,
			SickDays: math.Round(sick*2) / 2, OtherLeaveDays: math.Round(other*2) / 2, HolidayDays: math.Round(hol*2) / 2,
			DaysLost: math.Round(sick*2)/2 + math.Round(other*2)/2, DaysDue: due,
			SicknessRate: sql.NullFloat64{Float64: math.Round(sick*2) / 2 / due, Valid: true}})
	}
	for k := range r.Months {
		r.Turnover = append(r.Turnover, sink.TurnoverMonth{Month: r.Months[k], Leavers12m: int64(30 + k),
			Turnover12m: sql.NullFloat64{Float64: 0.08 + float64(k%6)/200, Valid: true}})
	}
	r.Employees = 0
	for _, h := range r.Headcount {
		if h.Month == r.Months[0] {
			r.Employees += h.Headcount
		}
	}
	r.LeftOut = []sink.LeftOutCount{{Reason: sink.LeftOutNoLeavingDate, People: 37}, {Reason: sink.LeftOutNoJoinDate, People: 1}}
	r.StartingSoon, r.ZeroHours = 4, 12
	r.HolidayCalendar, r.ClosureDays = "england-and-wales", 3
	r.BradfordBands, r.BradfordExcludedTypes = []float64{51, 201, 401, 601}, []string{"Disability-related", "Pregnancy-related"}
	bands := []string{"Low", "Medium", "High", "Serious"}
	for k := range min(20, 3*n) {
		i := k % n
		spells := int64(6 - k/4)
		days := float64(20 - k/2)
		r.Bradford = append(r.Bradford, sink.BradfordEntry{EmployeeID: int64(5000 + k), DepartmentID: sql.NullInt64{Int64: int64(100 + i), Valid: true},
			Department: names[i], Spells: spells, Days: days, Bradford: float64(spells*spells) * days,
			Band: bands[min(3, int(float64(spells*spells)*days)/200)]})
		if k%4 == 0 { // one more spell before adjustment
			r.Bradford[k].Raw = sql.NullFloat64{Float64: float64((spells+1)*(spells+1)) * days, Valid: true}
		}
	}
	return r
}
