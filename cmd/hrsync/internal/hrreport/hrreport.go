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
	Title, Account, AsOf, Generated, Version string
	First, Last                              string // the months shown
	Empty                                    bool
	Headcount, HeadcountDepartments, FTE     *chart
	Movements, Turnover                      *chart
	Departments                              []departmentRow
	Total                                    departmentRow
	Absence                                  *chart
	AbsenceModels                            bool
	AbsenceRows                              []absenceRow
	BradfordAsOf                             string
	Bradford                                 []bradfordRow
	Names                                    bool
}

type departmentRow struct {
	Name              string
	Headcount         int64
	FTE               string
	Starters, Leavers int64
}

type absenceRow struct {
	Name                                  string
	Sick, Other, Holiday, Lost, Due, Rate string
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

func build(r sink.PeopleReport, o Options) view {
	v := view{Title: "HR overview", Account: o.Account, AsOf: r.AsOf, Version: o.Version,
		Generated: o.Generated.UTC().Format("2006-01-02 15:04 UTC"), Names: o.Names,
		AbsenceModels: r.AbsenceModels, BradfordAsOf: r.BradfordAsOf}
	if len(r.Months) > 0 {
		v.First, v.Last = monthLabel(r.Months[0]), monthLabel(r.Months[len(r.Months)-1])
	}
	if r.Employees == 0 {
		v.Empty = true
		return v
	}
	index := map[string]int{}
	for i, m := range r.Months {
		index[m] = i
	}

	// Headcount and FTE: the total and each department, by month.
	var names []string
	heads := map[string][]float64{}
	ftes := map[string][]float64{}
	total := make([]float64, len(r.Months))
	totalFTE := make([]float64, len(r.Months))
	series := func(m map[string][]float64, name string) []float64 {
		if m[name] == nil {
			m[name] = make([]float64, len(r.Months))
		}
		return m[name]
	}
	for _, h := range r.Headcount {
		i, ok := index[h.Month]
		if !ok {
			continue
		}
		name := departmentName(h.DepartmentID.Int64, h.DepartmentID.Valid, h.Department)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		series(heads, name)[i] += float64(h.Headcount)
		series(ftes, name)[i] += h.FTE
		total[i] += float64(h.Headcount)
		totalFTE[i] += h.FTE
	}
	slices.Sort(names)
	// The total on a chart of its own: on one axis with the departments it would flatten them.
	// The departments' charts are scaled to the largest department.
	hc := newFrame("headcount", "Headcount at each month's end", "people", r.Months, maxOf(total), false, true)
	hc.line("All", totalColour, "", 3, total)
	v.Headcount = hc.c
	deptMax, deptFTEMax := 0.0, 0.0
	for _, n := range names {
		deptMax, deptFTEMax = max(deptMax, maxOf(heads[n])), max(deptFTEMax, maxOf(ftes[n]))
	}
	hd := newFrame("headcount-departments", "Headcount by department at each month's end", "people", r.Months, deptMax, false, true)
	fte := newFrame("fte", "FTE by department at each month's end", "FTE", r.Months, deptFTEMax, false, false)
	for i, n := range names {
		colour, dash := seriesStyle(i)
		hd.line(n, colour, dash, 2, heads[n])
		fte.line(n, colour, dash, 2, ftes[n])
	}
	v.HeadcountDepartments = hd.c
	v.FTE = fte.c

	// Starters and leavers, the account's by month; each department's over the months shown.
	starters := make([]float64, len(r.Months))
	leavers := make([]float64, len(r.Months))
	moved := map[string]*departmentRow{}
	for _, m := range r.Movements {
		i, ok := index[m.Month]
		if !ok {
			continue
		}
		starters[i] += float64(m.Starters)
		leavers[i] += float64(m.Leavers)
		name := departmentName(m.DepartmentID.Int64, m.DepartmentID.Valid, m.Department)
		if moved[name] == nil {
			moved[name] = &departmentRow{}
		}
		moved[name].Starters += m.Starters
		moved[name].Leavers += m.Leavers
	}
	mv := newFrame("movements", "Starters and leavers per month", "people", r.Months, max(maxOf(starters), maxOf(leavers)), false, true)
	mv.bars([]barGroup{{"Starters", palette[2], starters}, {"Leavers", palette[5], leavers}})
	v.Movements = mv.c

	turnover := make([]float64, len(r.Months))
	for i := range turnover {
		turnover[i] = math.NaN()
	}
	for _, t := range r.Turnover {
		if i, ok := index[t.Month]; ok && t.Turnover12m.Valid {
			turnover[i] = t.Turnover12m.Float64
		}
	}
	to := newFrame("turnover", "Turnover over the last 12 months", "", r.Months, maxOf(turnover), true, false)
	to.line("Turnover 12m", palette[0], "", 2, turnover)
	v.Turnover = to.c

	// The table: each department at the last month's end, and its movements.
	last := len(r.Months) - 1
	for _, n := range names {
		row := departmentRow{Name: n, Headcount: int64(heads[n][last]), FTE: number(ftes[n][last])}
		if m := moved[n]; m != nil {
			row.Starters, row.Leavers = m.Starters, m.Leavers
		}
		v.Departments = append(v.Departments, row)
	}
	for name, m := range moved { // departments with movements but nobody at the end
		if !slices.Contains(names, name) {
			v.Departments = append(v.Departments, departmentRow{Name: name, FTE: "0", Starters: m.Starters, Leavers: m.Leavers})
		}
	}
	slices.SortFunc(v.Departments, func(a, b departmentRow) int { return strings.Compare(a.Name, b.Name) })
	v.Total = departmentRow{Name: "All", Headcount: int64(total[last]), FTE: number(totalFTE[last])}
	for _, d := range v.Departments {
		v.Total.Starters += d.Starters
		v.Total.Leavers += d.Leavers
	}

	if r.AbsenceModels {
		var rows []hbarRow
		for _, a := range r.Absence {
			name := departmentName(a.DepartmentID.Int64, a.DepartmentID.Valid, a.Department)
			rows = append(rows, hbarRow{name: name, parts: []float64{a.SickDays, a.OtherLeaveDays, a.HolidayDays}})
			rate := "–"
			if a.SicknessRate.Valid {
				rate = number(a.SicknessRate.Float64*100) + " %"
			}
			v.AbsenceRows = append(v.AbsenceRows, absenceRow{Name: name, Sick: number(a.SickDays), Other: number(a.OtherLeaveDays),
				Holiday: number(a.HolidayDays), Lost: number(a.DaysLost), Due: number(a.DaysDue), Rate: rate})
		}
		if len(rows) > 0 {
			v.Absence = hbars("absence", "Absence by department, "+v.First+" to "+v.Last, []string{"Sickness", "Other leave", "Holiday"}, rows)
		}
		for i, b := range r.Bradford {
			name, title := shortName(b.Name)
			v.Bradford = append(v.Bradford, bradfordRow{Rank: i + 1, EmployeeID: b.EmployeeID, Name: name, NameTitle: title,
				Department: departmentName(b.DepartmentID.Int64, b.DepartmentID.Valid, b.Department),
				Spells:     b.Spells, Days: number(b.Days), Bradford: number(b.Bradford)})
		}
	}
	return v
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
