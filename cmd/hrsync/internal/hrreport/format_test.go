package hrreport

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
)

// TestNaturalCompare: digits by value, letters without regard to case, and a total order.
func TestNaturalCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"Dept 2", "Dept 10", -1},
		{"Dept 10", "Dept 2", 1},
		{"Dept 9", "Dept 9", 0},
		{"Dept 1", "Dept 1a", -1},
		{"Dept 01", "Dept 1", -1},  // the same value: by bytes, for a total order
		{"Dept 007", "Dept 8", -1}, // 7 < 8 whatever the zeros
		{"sales", "Support", -1},   // case does not decide
		{"Support", "support", -1}, // unless all else is equal
		{"a2b10", "a2b9", 1},       // each run of digits by itself
		{"Dept 99999999999999999999", "Dept 100000000000000000000", -1}, // beyond int64
		{"", "Dept", -1},
		{"Zoë", "Zoe", 1},
		{"研究開発部", "Dept 1", 1},
	} {
		if got := naturalCompare(c.a, c.b); got != c.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := naturalCompare(c.b, c.a); got != -c.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d (the other way)", c.b, c.a, got, -c.want)
		}
	}
	names := []string{"Dept 10", "Dept 1", "Dept 0", "Dept 2", "Dept 11", "Dept 20", "Dept 3"}
	slices.SortFunc(names, naturalCompare)
	if want := []string{"Dept 0", "Dept 1", "Dept 2", "Dept 3", "Dept 10", "Dept 11", "Dept 20"}; !slices.Equal(names, want) {
		t.Errorf("sorted %q, want %q", names, want)
	}
}

// TestMonthLabels: a month is "Jul 2024", a day "30 Jun 2026", a range "Jul 2024 to Jun 2026".
func TestMonthLabels(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{monthLabel("2024-07-01"), "Jul 2024"},
		{monthLabel("2026-12-01"), "Dec 2026"},
		{monthLabel("1999-01-01T00:00:00Z"), "Jan 1999"},
		{monthLabel("not a month"), "not a month"},
		{monthRange("2024-07-01", "2026-06-01"), "Jul 2024 to Jun 2026"},
		{monthRange("2026-06-01", "2026-06-01"), "Jun 2026"},
		{dayLabel("2026-06-30"), "30 Jun 2026"},
		{dayLabel("2025-01-05"), "5 Jan 2025"},
		{dayLabel(""), ""},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// TestNumbers: grouped thousands, at most 2 decimals, percentages to 1.
func TestNumbers(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{number(0), "0"}, {number(-0.001), "0"}, {number(12.5), "12.5"}, {number(1806.123), "1,806.12"},
		{number(1234567), "1,234,567"}, {number(-2500), "-2,500"}, {number(999.999), "1,000"},
		{fixed(26.1, 2), "26.10"}, {fixed(1806.123, 2), "1,806.12"}, {fixed(3, 1), "3.0"}, {fixed(2.5, 1), "2.5"},
		{fixed(1234.5, 2), "1,234.50"}, {fixed(0, 2), "0.00"}, {fixed(-0.001, 1), "0.0"},
		{count(2076), "2,076"}, {percent(0.02083, true), "2.1 %"}, {percent(0, false), "–"}, {percent(math.NaN(), true), "–"},
		{plural(1, "person", "people"), "1 person"}, {plural(1200, "person", "people"), "1,200 people"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// TestMonthAxis: the month axis labels months far enough apart for "May 2024" and a gap,
// on the calendar's quarters, half years or years, never two closer than a label's width.
func TestMonthAxis(t *testing.T) {
	for _, n := range []int{1, 2, 12, 24, 60, 240} {
		var months []string
		for i := range n {
			months = append(months, fmt.Sprintf("%04d-%02d-01", 2000+(i+6)/12, (i+6)%12+1)) // from Jul 2000
		}
		f := newFrame("x", "x", "people", 260, months, 10, false, true)
		if len(f.c.XLabels) == 0 {
			t.Errorf("%d months: no label", n)
		}
		w := textWidth("May 2024", fontSize)
		for i, l := range f.c.XLabels {
			if l.X-w/2 < 0 || l.X+w/2 > chartWidth {
				t.Errorf("%d months: label %q at %.0f leaves the chart", n, l.Text, l.X)
			}
			if i > 0 && l.X-f.c.XLabels[i-1].X < w+labelGap-0.01 {
				t.Errorf("%d months: %q and %q %.0f apart, want at least %.0f", n, f.c.XLabels[i-1].Text, l.Text, l.X-f.c.XLabels[i-1].X, w+labelGap)
			}
		}
		if n == 24 && (f.c.XLabels[0].Text != "Jul 2000" || f.c.XLabels[1].Text != "Oct 2000") {
			t.Errorf("24 months: labels %v, want the quarters from Jul 2000", f.c.XLabels)
		}
		// The unit's label ends above the top tick's label begins (12 px text: 3 below the
		// baseline, 11 above).
		top := f.c.Grid[len(f.c.Grid)-1].Label
		if unitY+3 > top.Y-11 {
			t.Errorf("the unit's label (baseline %d) meets the top tick's (baseline %.0f)", unitY, top.Y)
		}
	}
}

// departmentReport is a report of one month with departments of these names and headcounts,
// each with starters and leavers of a tenth of their headcount (at least 1) and absence.
func departmentReport(heads map[string]int64) sink.PeopleReport {
	r := sink.PeopleReport{AsOf: "2026-06-30", Months: []string{"2026-06-01"}, Employees: 1, AbsenceModels: true}
	id := int64(0)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range heads {
			if !yield(k) {
				return
			}
		}
	}) {
		id++
		h := heads[name]
		dept := sql.NullInt64{Int64: id, Valid: true}
		r.Headcount = append(r.Headcount, sink.DepartmentMonth{Month: "2026-06-01", DepartmentID: dept, Department: name, Headcount: h, FTE: float64(h) * 0.5})
		r.Movements = append(r.Movements, sink.Movement{Month: "2026-06-01", DepartmentID: dept, Department: name, Starters: max(1, h/10), Leavers: 1})
		r.Absence = append(r.Absence, sink.DepartmentAbsence{DepartmentID: dept, Department: name, SickDays: float64(h), OtherLeaveDays: 1,
			HolidayDays: 2, DaysLost: float64(h) + 1, DaysDue: float64(h) * 20})
	}
	return r
}

// TestTopAndOther: the charts draw the maxSeries largest departments by headcount (a tie in
// natural name order) and the rest as one series, their sum; up to maxSeries+1 departments,
// all of them. The tables list every department in the same order, with totals.
//
// Worked: 10 departments; Dept 0..9 of 50, 40, 30, 30, 30, 20, 20, 10, 10, 5 people. The six
// largest: Dept 0 (50), Dept 1 (40), Dept 2, Dept 3, Dept 4 (30 each: natural order), Dept 5
// (20 — before Dept 6, also 20, by name). Other departments (4): Dept 6, 7, 8, 9: 20 + 10 + 10 + 5
// = 45 people, FTE 22.5. All: 245 people, FTE 122.5; starters 5+4+3+3+3+2+2+1+1+1 = 25;
// leavers 10. Sick days 245 over days due 4,900: 5.0 %; Other's 45 over 900: 5.0 %.
func TestTopAndOther(t *testing.T) {
	heads := map[string]int64{"Dept 0": 50, "Dept 1": 40, "Dept 2": 30, "Dept 3": 30, "Dept 4": 30, "Dept 5": 20,
		"Dept 6": 20, "Dept 7": 10, "Dept 8": 10, "Dept 9": 5}
	v := build(departmentReport(heads), Options{})
	var legend []string
	for _, l := range v.ByDepartment.Legend {
		legend = append(legend, l.Name)
	}
	if want := []string{"Dept 0", "Dept 1", "Dept 2", "Dept 3", "Dept 4", "Dept 5", "Other departments (4)"}; !slices.Equal(legend, want) {
		t.Errorf("legend %q, want %q", legend, want)
	}
	other := v.ByDepartment.Series[len(v.ByDepartment.Series)-1]
	if len(other.Dots) != 1 || !strings.HasSuffix(other.Dots[0].Text, ": 45") {
		t.Errorf("other departments' headcount %+v, want 45", other.Dots)
	}
	if f := v.FTE.Series[len(v.FTE.Series)-1]; len(f.Dots) != 1 || !strings.HasSuffix(f.Dots[0].Text, ": 22.5") {
		t.Errorf("other departments' FTE %+v, want 22.5", f.Dots)
	}
	var rows []string
	for _, d := range v.Departments {
		rows = append(rows, d.Name+"|"+d.Headcount)
	}
	if want := []string{"Dept 0|50", "Dept 1|40", "Dept 2|30", "Dept 3|30", "Dept 4|30", "Dept 5|20", "Dept 6|20", "Dept 7|10", "Dept 8|10", "Dept 9|5"}; !slices.Equal(rows, want) {
		t.Errorf("table %q, want %q", rows, want)
	}
	if want := (departmentRow{Name: "All departments", Headcount: "245", FTE: "122.50", Starters: "25", Leavers: "10"}); v.Total != want {
		t.Errorf("totals %+v, want %+v", v.Total, want)
	}
	if want := (absenceRow{Name: "All departments", Due: "4,900.0", Sick: "245.0", Rate: "5.0 %", Other: "10.0", Lost: "255.0", Holiday: "20.0"}); v.AbsenceTotal != want {
		t.Errorf("absence totals %+v, want %+v", v.AbsenceTotal, want)
	}
	if len(v.AbsenceRows) != 10 || v.AbsenceRows[9].Name != "Dept 9" {
		t.Errorf("absence rows %+v, want the ten departments by headcount", v.AbsenceRows)
	}
	var bars []string
	for _, l := range v.Absence.RowLabels {
		bars = append(bars, l.Text)
	}
	if want := []string{"Dept 0", "Dept 1", "Dept 2", "Dept 3", "Dept 4", "Dept 5", "Other departments (4)", "All departments"}; !slices.Equal(bars, want) {
		t.Errorf("absence chart rows %q, want %q", bars, want)
	}
	if l := v.Absence.ValueLabels[6].Text; l != "5.0 %" {
		t.Errorf("other departments' sickness absence rate %s, want 5.0 %%", l)
	}

	// Seven departments: all drawn, no "other".
	delete(heads, "Dept 7")
	delete(heads, "Dept 8")
	delete(heads, "Dept 9")
	v = build(departmentReport(heads), Options{})
	if n := len(v.ByDepartment.Legend); n != 7 || strings.HasPrefix(v.ByDepartment.Legend[6].Name, "Other") {
		t.Errorf("seven departments: legend %+v, want all seven", v.ByDepartment.Legend)
	}
	// One: no chart of departments (the total's is the same).
	v = build(departmentReport(map[string]int64{"Sales": 3}), Options{})
	if v.ByDepartment != nil || v.FTE == nil || len(v.Departments) != 1 {
		t.Errorf("one department: by department %v, FTE %v, table %v", v.ByDepartment, v.FTE, v.Departments)
	}
}

// TestNotices: the sentences saying who the counts leave out or count apart, and what days
// due leave out, singular and plural.
func TestBandLabel(t *testing.T) {
	bands := []float64{51, 201, 401, 601}
	for _, c := range []struct{ band, want string }{
		{"1", "51–200"}, {"2", "201–400"}, {"3", "401–600"}, {"4", "601+"}, {"", ""}, {"0", "0"}, {"5", "5"}, {"Medium", "Medium"},
	} {
		if got := bandLabel(c.band, bands); got != c.want {
			t.Errorf("band %q: %q, want %q", c.band, got, c.want)
		}
	}
}

func TestNotices(t *testing.T) {
	r := sink.PeopleReport{AsOf: "2026-06-30", LeftOut: []sink.LeftOutCount{{Reason: "no_leaving_date", People: 37},
		{Reason: "no_join_date", People: 1}, {Reason: "no_department", People: 0}, {Reason: "seed_rows", People: 2}},
		StartingSoon: 1, ZeroHours: 12, HolidayCalendar: "england-and-wales",
		UnknownHolidayCountries: []sink.CountryCount{{Country: "Portugal", People: 40}, {Country: "Atlantis", People: 1}}}
	want := []string{
		"37 leavers have no leaving date in the HR system and are left out of every count.",
		"1 person has no join date in the HR system and is left out of every count.",
		"2 people are left out of every count: seed rows.",
		"1 person starts after 30 Jun 2026: not counted yet.",
		"40 people's statutory holiday country, Portugal, has no calendar in hrsync: their days due leave out England and Wales's bank holidays.",
		"1 person's statutory holiday country, Atlantis, has no calendar in hrsync: their days due leave out England and Wales's bank holidays.",
		"12 people on zero-hours patterns count in headcount with FTE 0 and no days due.",
	}
	if got := notices(r); !slices.Equal(got, want) {
		t.Errorf("notices\n%q\nwant\n%q", got, want)
	}
	for _, c := range []struct {
		calendar string
		closure  int
		want     string
	}{
		{"england-and-wales", 3, "Days due leave out the public holidays of each person's statutory holiday country (England and Wales where the HR system names none) for people who receive statutory holidays, and 3 company closure days."},
		{"scotland", 0, "Days due leave out the public holidays of each person's statutory holiday country (Scotland where the HR system names none) for people who receive statutory holidays."},
		{"isle-of-man", 1, "Days due leave out the public holidays of each person's statutory holiday country (Isle of Man where the HR system names none) for people who receive statutory holidays, and 1 company closure day."},
		{"", 2, "Days due leave out 2 company closure days, and the public holidays of a statutory holiday country only where the HR system names one (no default calendar is set)."},
		{"", 0, "Days due leave out public holidays only where the HR system names a person's statutory holiday country (no default calendar is set)."},
	} {
		if got := daysDueRule(sink.PeopleReport{HolidayCalendar: c.calendar, ClosureDays: c.closure}); got != c.want {
			t.Errorf("%s, %d: %q, want %q", c.calendar, c.closure, got, c.want)
		}
	}
}

// TestTextFits: a name cut to a width fits it and ends in an ellipsis; one that fits is whole.
func TestTextFits(t *testing.T) {
	long := "Research, Development and Regulatory Affairs (Europe, Middle East and Africa)"
	if got := fitText(long, 200, fontSize); textWidth(got, fontSize) > 200 || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("cut %q", got)
	}
	if got := fitText("Sales", 200, fontSize); got != "Sales" {
		t.Errorf("cut %q, want Sales", got)
	}
}

// TestBradfordList: the list names its window (the models' 52 weeks, or the one set) to the
// report's day; the raw score has a column only where one differs from the factor, a cell only
// where it does; the band a column where one is given; how to read it says the bands and the
// types left out.
func TestBradfordList(t *testing.T) {
	r := departmentReport(map[string]int64{"Sales": 3})
	r.Bradford = []sink.BradfordEntry{
		{EmployeeID: 1, Spells: 3, Days: 4, Bradford: 36, Raw: sql.NullFloat64{Float64: 64, Valid: true}, Band: "Medium"},
		{EmployeeID: 2, Spells: 1, Days: 2, Bradford: 2, Raw: sql.NullFloat64{Float64: 2, Valid: true}},
	}
	v := build(r, Options{})
	if v.BradfordWindow != "sickness in the 52 weeks to 30 Jun 2026" || !v.BradfordRaw || !v.BradfordBand {
		t.Errorf("window %q, raw column %v, band column %v", v.BradfordWindow, v.BradfordRaw, v.BradfordBand)
	}
	if v.Bradford[0].Raw != "64" || v.Bradford[1].Raw != "" || v.Bradford[0].Band != "Medium" {
		t.Errorf("rows %+v", v.Bradford)
	}
	r.BradfordWindowWeeks, r.BradfordBands, r.BradfordExcludedTypes = 26, []float64{51, 201, 401, 601}, []string{"Disability-related"}
	r.Bradford[0].Raw, r.Bradford[0].Band = sql.NullFloat64{}, ""
	v = build(r, Options{})
	if v.BradfordWindow != "sickness in the 26 weeks to 30 Jun 2026" || v.BradfordRaw || v.BradfordBand {
		t.Errorf("window %q, raw column %v, band column %v", v.BradfordWindow, v.BradfordRaw, v.BradfordBand)
	}
	want := "S × S × D, where S is a person's spells of sickness and D their working days of sickness in the 26 weeks to 30 Jun 2026." +
		" The bands start at 51, 201, 401 and 601. Sickness of the type Disability-related is left out. A prompt for a conversation, never a verdict."
	if got := v.Terms[len(v.Terms)-1]; got.Name != "Bradford factor" || got.Text != want {
		t.Errorf("how to read the Bradford factor:\n%q\nwant\n%q", got.Text, want)
	}
}
