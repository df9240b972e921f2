// Package hrreport draws hrsync report's page: one self-contained HTML file of the people
// models' figures (sink.PeopleReport) — the headcount trend, starters and leavers, turnover,
// absence by department and the Bradford list — its charts inline SVG drawn here, its style
// inline, nothing fetched when it is opened (no script, font, style sheet or image from
// anywhere), so that it can be mailed, archived or opened offline.
package hrreport

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hrsync/hrsync/sink"
)

// Options are what the page says beside the figures.
type Options struct {
	// Account names the account, where the configuration has several; "" for none.
	Account string
	// Generated is when the report was made; Version the build that made it.
	Generated time.Time
	Version   string
	// Names is whether the Bradford list was asked for with names (sink.PeopleReportOptions).
	Names bool
}

//go:embed report.html.tmpl
var pageText string

var page = template.Must(template.New("report").Parse(pageText))

// view is what the template reads.
type view struct {
	Title, Account     string
	AsOf               string // "30 Jun 2026": the one day every figure is of
	Period             string // "Jul 2024 to Jun 2026": the months shown
	Generated, Version string
	Empty              bool
	Notices            []string // who is left out of the counts, or counted apart
	Figures            []figure
	Headcount          *chart
	ByDepartment       *chart
	FTE                *chart
	Movements          *chart
	Turnover           *chart
	Departments        []departmentRow
	Total              departmentRow
	AbsenceModels      bool
	Absence            *chart
	AbsenceRows        []absenceRow
	AbsenceTotal       absenceRow
	BradfordWindow     string // "sickness in the 52 weeks to 30 Jun 2026"
	Bradford           []bradfordRow
	BradfordBand       bool // a column of bands
	BradfordRaw        bool // a column of raw factors
	Names              bool
	Terms              []term // how to read this report
	Caveats            []string
}

// figure is one of the key figures at the top of the page.
type figure struct {
	Label, Value, Note string
}

// term is a figure's definition.
type term struct {
	Name, Text string
}

type departmentRow struct {
	Name                              string
	Headcount, FTE, Starters, Leavers string
}

type absenceRow struct {
	Name                                  string
	Due, Sick, Rate, Other, Lost, Holiday string
}

type bradfordRow struct {
	Rank       int
	EmployeeID int64
	// Name is the name as shown (shortName); NameTitle the whole of it when Name is cut, for
	// the cell's title.
	Name, NameTitle string
	Department      string
	Spells          int64
	Days            string
	Bradford        string
	Raw             string // "" where it is the factor
	Band            string
}

// Render writes the page of r.
func Render(w io.Writer, r sink.PeopleReport, o Options) error {
	v := build(r, o)
	var b bytes.Buffer // nothing written of a page that fails half way
	if err := page.Execute(&b, v); err != nil {
		return fmt.Errorf("report page: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func build(r sink.PeopleReport, o Options) view {
	v := view{Title: "HR overview", Account: o.Account, AsOf: dayLabel(r.AsOf), Version: o.Version,
		Generated: dayLabel(o.Generated.UTC().Format(time.DateOnly)) + ", " + o.Generated.UTC().Format("15:04") + " UTC",
		Names:     o.Names, AbsenceModels: r.AbsenceModels}
	if len(r.Months) > 0 {
		v.Period = monthRange(r.Months[0], r.Months[len(r.Months)-1])
	}
	v.Notices = notices(r)
	v.Terms, v.Caveats = howToRead(r, v.AsOf)
	if r.Employees == 0 || len(r.Months) == 0 {
		v.Empty = true
		return v
	}
	index := map[string]int{}
	for i, m := range r.Months {
		index[m] = i
	}
	months := len(r.Months)
	ranked := departments(r, index)
	top, other := topAndOther(ranked)
	heads := func(d *department) []float64 { return d.heads }
	ftes := func(d *department) []float64 { return d.ftes }
	total := sumSeries(ranked, months, heads)
	totalFTE := sumSeries(ranked, months, ftes)

	// Headcount: the total on a chart of its own (on one axis with the departments it would
	// flatten them); the largest departments and the rest as one, by headcount and by FTE.
	hc := newFrame("headcount", "Headcount at each month's end", "people", 260, r.Months, maxOf(total), false, true)
	hc.line("All departments", totalColour, "", maxLineWidth, total, false)
	v.Headcount = hc.c
	title := "by department at each month's end"
	if other != nil {
		title = fmt.Sprintf("of the %d largest departments and the other %d together, at each month's end", len(top), len(other))
	}
	otherHeads, otherFTE := sumSeries(other, months, heads), sumSeries(other, months, ftes)
	deptMax, fteMax := maxOf(otherHeads), maxOf(otherFTE)
	for _, d := range top {
		deptMax, fteMax = max(deptMax, maxOf(d.heads)), max(fteMax, maxOf(d.ftes))
	}
	hd := newFrame("headcount-departments", "Headcount "+title, "people", 320, r.Months, deptMax, false, true)
	fte := newFrame("fte", "FTE "+title, "FTE", 320, r.Months, fteMax, false, false)
	for i, d := range top {
		hd.line(d.name, palette[i], "", 2, d.heads, true)
		fte.line(d.name, palette[i], "", 2, d.ftes, true)
	}
	if other != nil {
		hd.line(otherName(len(other)), otherColour, otherDash, 2, otherHeads, true)
		fte.line(otherName(len(other)), otherColour, otherDash, 2, otherFTE, true)
	}
	v.FTE = fte.c
	if len(ranked) > 1 { // one department's headcount is the total's chart
		v.ByDepartment = hd.c
	}
	if other != nil {
		v.Caveats = append(v.Caveats, fmt.Sprintf("The charts draw the %d largest departments by headcount on %s and the other %d as one; the tables list every department, the largest first.",
			len(top), v.AsOf, len(other)))
	}

	// Starters and leavers of the account by month, and turnover.
	starters := make([]float64, months)
	leavers := make([]float64, months)
	for _, m := range r.Movements {
		if i, ok := index[m.Month]; ok {
			starters[i] += float64(m.Starters)
			leavers[i] += float64(m.Leavers)
		}
	}
	mv := newFrame("movements", "Starters and leavers in each month", "people", 260, r.Months, max(maxOf(starters), maxOf(leavers)), false, true)
	mv.bars([]barGroup{{"Starters", palette[2], starters}, {"Leavers", palette[5], leavers}})
	v.Movements = mv.c
	turnover := make([]float64, months)
	for i := range turnover {
		turnover[i] = math.NaN()
	}
	for _, t := range r.Turnover {
		if i, ok := index[t.Month]; ok && t.Turnover12m.Valid {
			turnover[i] = t.Turnover12m.Float64
		}
	}
	to := newFrame("turnover", "Turnover over the 12 months to each month's end", "", 260, r.Months, maxOf(turnover), true, false)
	to.line("Turnover, 12 months", palette[0], "", 2, turnover, false)
	v.Turnover = to.c

	// Every department in the table, in the charts' order, and the totals.
	var tot department
	for _, d := range ranked {
		v.Departments = append(v.Departments, departmentRow{Name: d.name, Headcount: number(lastOf(d.heads)),
			FTE: fixed(lastOf(d.ftes), 2), Starters: count(d.starters), Leavers: count(d.leavers)})
		tot.starters += d.starters
		tot.leavers += d.leavers
	}
	v.Total = departmentRow{Name: "All departments", Headcount: number(lastOf(total)), FTE: fixed(lastOf(totalFTE), 2),
		Starters: count(tot.starters), Leavers: count(tot.leavers)}
	v.Figures = []figure{
		{"Headcount", number(lastOf(total)), "on " + v.AsOf},
		{"FTE", number(lastOf(totalFTE)), "on " + v.AsOf},
		{"Starters", count(tot.starters), v.Period},
		{"Leavers", count(tot.leavers), v.Period},
		{"Turnover, 12 months", percent(lastOf(turnover), !math.IsNaN(lastOf(turnover))), "12 months to " + v.AsOf},
	}

	if r.AbsenceModels {
		absence(&v, ranked, top, other)
		window := r.BradfordWindowWeeks
		if window <= 0 {
			window = 52
		}
		day := r.AsOf
		if r.BradfordAsOf != "" {
			day = r.BradfordAsOf // the same day, from the models that count it
		}
		v.BradfordWindow = fmt.Sprintf("sickness in the %d weeks to %s", window, dayLabel(day))
		for i, b := range r.Bradford {
			name, title := shortName(b.Name)
			row := bradfordRow{Rank: i + 1, EmployeeID: b.EmployeeID, Name: name, NameTitle: title,
				Department: departmentName(b.DepartmentID.Int64, b.DepartmentID.Valid, b.Department),
				Spells:     b.Spells, Days: number(b.Days), Bradford: number(b.Bradford), Band: bandLabel(b.Band, r.BradfordBands)}
			if b.Raw.Valid && number(b.Raw.Float64) != row.Bradford {
				row.Raw = number(b.Raw.Float64)
				v.BradfordRaw = true
			}
			v.BradfordBand = v.BradfordBand || row.Band != ""
			v.Bradford = append(v.Bradford, row)
		}
	}
	return v
}

// absence fills v's absence chart, table and key figure: every department's days and its
// sickness absence rate (sick days over days due); the chart compares the rates of the
// largest departments, the others together and the account.
func absence(v *view, ranked, top, other []*department) {
	var all sink.DepartmentAbsence
	sum := func(ds []*department) (a sink.DepartmentAbsence, any bool) {
		for _, d := range ds {
			if !d.inAbsence {
				continue
			}
			any = true
			a.SickDays += d.absence.SickDays
			a.OtherLeaveDays += d.absence.OtherLeaveDays
			a.HolidayDays += d.absence.HolidayDays
			a.DaysLost += d.absence.DaysLost
			a.DaysDue += d.absence.DaysDue
		}
		return a, any
	}
	row := func(name string, a sink.DepartmentAbsence) absenceRow {
		return absenceRow{Name: name, Due: fixed(a.DaysDue, 1), Sick: fixed(a.SickDays, 1), Rate: percent(rate(a)),
			Other: fixed(a.OtherLeaveDays, 1), Lost: fixed(a.DaysLost, 1), Holiday: fixed(a.HolidayDays, 1)}
	}
	for _, d := range ranked {
		if d.inAbsence {
			v.AbsenceRows = append(v.AbsenceRows, row(d.name, d.absence))
		}
	}
	all, anyAbsence := sum(ranked)
	if !anyAbsence {
		return
	}
	v.AbsenceTotal = row("All departments", all)
	r, ok := rate(all)
	v.Figures = append(v.Figures, figure{"Sickness absence rate", percent(r, ok), v.Period})
	var rows []hbarRow
	for i, d := range top {
		if d.inAbsence {
			r, ok := rate(d.absence)
			rows = append(rows, hbarRow{name: d.name, value: r, ok: ok, colour: palette[i]})
		}
	}
	if a, any := sum(other); any {
		r, ok := rate(a)
		rows = append(rows, hbarRow{name: otherName(len(other)), value: r, ok: ok, colour: otherColour})
	}
	rows = append(rows, hbarRow{name: "All departments", value: r, ok: ok, colour: totalColour})
	title := "Sickness absence rate by department, " + v.Period
	if other != nil {
		title = fmt.Sprintf("Sickness absence rate of the %d largest departments, the other %d together and all, %s", len(top), len(other), v.Period)
	}
	v.Absence = rateBars("absence", title, rows)
}

// rate is a's sickness absence rate: sick days over days due; not ok when none were due.
func rate(a sink.DepartmentAbsence) (float64, bool) {
	if a.DaysDue <= 0 {
		return 0, false
	}
	return a.SickDays / a.DaysDue, true
}

// notices are the sentences that say who the counts leave out or count apart.
func notices(r sink.PeopleReport) []string {
	var out []string
	for _, l := range r.LeftOut {
		if l.People <= 0 {
			continue
		}
		switch l.Reason {
		case sink.LeftOutNoLeavingDate:
			out = append(out, plural(l.People, "leaver has", "leavers have")+" no leaving date in the HR system and "+
				pick(l.People, "is", "are")+" left out of every count.")
		case sink.LeftOutNoJoinDate:
			out = append(out, plural(l.People, "person has", "people have")+" no join date in the HR system and "+
				pick(l.People, "is", "are")+" left out of every count.")
		default:
			out = append(out, plural(l.People, "person is", "people are")+" left out of every count: "+
				strings.ReplaceAll(plainText(l.Reason), "_", " ")+".")
		}
	}
	if r.StartingSoon > 0 {
		out = append(out, plural(r.StartingSoon, "person starts", "people start")+" after "+dayLabel(r.AsOf)+": not counted yet.")
	}
	for _, c := range r.UnknownHolidayCountries {
		if c.People <= 0 {
			continue
		}
		cal := "no public holidays"
		if r.HolidayCalendar != "" {
			cal = calendarName(r.HolidayCalendar) + "'s bank holidays"
		}
		out = append(out, plural(c.People, "person's", "people's")+" statutory holiday country, "+plainText(c.Country)+
			", has no calendar in hrsync: their days due leave out "+cal+".")
	}
	if r.ZeroHours > 0 {
		out = append(out, plural(r.ZeroHours, "person on a zero-hours pattern counts", "people on zero-hours patterns count")+
			" in headcount with FTE 0 and no days due.")
	}
	return out
}

func pick(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// calendarName is a calendar's name as sink has it; another is shown by its code's words.
func calendarName(code string) string {
	if n, ok := sink.CalendarName(strings.ToLower(code)); ok {
		return n
	}
	words := strings.FieldsFunc(plainText(code), func(r rune) bool { return r == '-' || r == '_' || r == ' ' })
	for i, w := range words {
		if i == 0 || w != "and" && w != "of" && w != "the" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// daysDueRule is the sentence of what days due leave out: bank holidays and closure days.
func daysDueRule(r sink.PeopleReport) string {
	closure := ""
	if r.ClosureDays > 0 {
		closure = plural(int64(r.ClosureDays), "company closure day", "company closure days")
	}
	and := ""
	if closure != "" {
		and = ", and " + closure
	}
	switch {
	case r.HolidayCalendar != "":
		return "Days due leave out the public holidays of each person's statutory holiday country (" + calendarName(r.HolidayCalendar) +
			" where the HR system names none) for people who receive statutory holidays" + and + "."
	case closure != "":
		return "Days due leave out " + closure + ", and the public holidays of a statutory holiday country only where the HR system names one (no default calendar is set)."
	}
	return "Days due leave out public holidays only where the HR system names a person's statutory holiday country (no default calendar is set)."
}

// howToRead is each figure's definition, and what to bear in mind reading them.
func howToRead(r sink.PeopleReport, asOf string) ([]term, []string) {
	window := r.BradfordWindowWeeks
	if window <= 0 {
		window = 52
	}
	bradford := fmt.Sprintf("S × S × D, where S is a person's spells of sickness and D their working days of sickness in the %d weeks to %s.", window, asOf)
	if len(r.BradfordBands) > 0 {
		var bands []string
		for _, b := range r.BradfordBands {
			bands = append(bands, number(b))
		}
		bradford += " The bands start at " + joinAnd(bands) + "."
	}
	if len(r.BradfordExcludedTypes) > 0 {
		var types []string
		for _, t := range r.BradfordExcludedTypes {
			types = append(types, plainText(t))
		}
		bradford += " Sickness of " + pick(int64(len(types)), "the type ", "the types ") + joinAnd(types) + " is left out."
	}
	if slices.ContainsFunc(r.Bradford, func(b sink.BradfordEntry) bool { return b.Raw.Valid && number(b.Raw.Float64) != number(b.Bradford) }) {
		bradford += " The raw score, before any adjustment, is shown where it differs."
	}
	bradford += " A prompt for a conversation, never a verdict."
	terms := []term{
		{"Headcount", "People employed on the day (joined on or before it and not yet left), each counted once, in the department they were in that day. A month's figure is at its last day; the last month's at " + asOf + "."},
		{"FTE", "Full-time equivalent: each person's contracted weekly hours over the account's full-time hours (its default working pattern's), at most 1, added up."},
		{"Starters", "People whose join date falls in the months shown, in the department they joined."},
		{"Leavers", "People whose leaving day falls in the months shown, in the department they left."},
		{"Turnover, 12 months", "The leavers of the 12 months to a month's end over the average headcount of those months."},
		{"Days due", "The working days people were employed and due to work by their working pattern (Monday to Friday where they have none), whether absent or not. " + daysDueRule(r)},
		{"Sickness absence rate", "Sickness days over days due: the share of working time lost to sickness, the rate HR compares. Days lost add other leave (not holiday) to sickness."},
		{"Sickness, other leave and holiday days", "Working days of each, a half day counting 0.5."},
		{"Bradford factor", bradford},
	}
	caveats := []string{
		"Departments are named as they are now: a renamed department shows its new name in past months.",
	}
	return terms, caveats
}

// joinAnd is "a, b and c".
func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// maxNameRunes is the most of a name the Bradford list shows: a longer one (a data-entry slip,
// or a name meant to push the table off the page) is cut, with an ellipsis.
const maxNameRunes = 60

// shortName is how a name is shown in the Bradford list: plainText, cut to maxNameRunes with an
// ellipsis; title is the whole of it when it is cut, "" otherwise.
func shortName(name string) (shown, title string) {
	name = plainText(name)
	if utf8.RuneCountInString(name) <= maxNameRunes {
		return name, ""
	}
	runes := []rune(name)
	return strings.TrimRightFunc(string(runes[:maxNameRunes]), unicode.IsSpace) + "…", name
}

// plainText is s without the characters that reorder the text after them (bidirectional
// embeddings, overrides, isolates and marks): a name holding U+202E would show the cells after
// it backwards. The page isolates each name too (<bdi>), so a right-to-left name still reads
// right.
func plainText(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c':
			return -1
		}
		return r
	}, s)
}

func maxOf(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		if !math.IsNaN(v) {
			m = max(m, v)
		}
	}
	return m
}

// fileMode is the report's: it may hold personal data, so it is its owner's alone, whatever
// the umask.
const fileMode = 0o600

// WriteFile writes the page of r to path atomically: a private temporary file beside it,
// synced, then renamed over path, so that a reader never sees half a report and a report
// already there is replaced whole or not at all.
func WriteFile(path string, r sink.PeopleReport, o Options) (err error) {
	var b bytes.Buffer
	if err := Render(&b, r, o); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("report file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	err = f.Chmod(fileMode) // CreateTemp's 0600 less the umask: set it whatever the umask
	if err == nil {
		_, err = f.Write(b.Bytes())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("report file: %w", err)
	}
	return nil
}

// Summary is the report of r in a few words, for the line that says where it was written.
func Summary(r sink.PeopleReport) string {
	s := fmt.Sprintf("as of %s, %d months", r.AsOf, len(r.Months))
	switch {
	case r.Employees == 0:
		return s + ": no data yet"
	case !r.AbsenceModels:
		return s + "; absence models not available in this warehouse"
	}
	return s
}

// bandLabel writes a Bradford band as the scores it holds: the models number the bands from 1
// (the first threshold reached), so with thresholds 51, 201, 401 and 601 band 2 is "201–400"
// and band 4 "601+". A band that is not such a number is shown as it is.
func bandLabel(band string, thresholds []float64) string {
	k, err := strconv.Atoi(band)
	if err != nil || k < 1 || k > len(thresholds) {
		return plainText(band)
	}
	if k == len(thresholds) {
		return number(thresholds[k-1]) + "+"
	}
	return number(thresholds[k-1]) + "–" + number(thresholds[k]-1)
}
