package onboard

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// Join dates as people and spreadsheets write them. Read, in this order:
//
//   - YYYY-MM-DD and YYYY/MM/DD, always;
//   - the configured layout (onboarding.date_layout), when it has no day-month order of its
//     own (e.g. "20060102", "06/01/02");
//   - numbers: day, month and year separated by '/', '.' or '-' (25/12/2026, 25.12.26,
//     5-1-2026), read day first, as UK and European Excel writes them, or month first when
//     the configured layout writes the month first ("01/02/2006", US files);
//   - with the month's English name: 25 Dec 2026, 25-Dec-26, 25 December 2026, Dec 25, 2026;
//   - the configured layout as it is (with or without the day's and month's leading zeros).
//
// A two-digit year is in 2000-2099 (26 is 2026), configured layouts included: join dates are
// recent. Numbers that make a date in both orders (03/04/2026) are read in the file's order;
// but in a file where a date can only be read in the other order (12/25/2026 read day first),
// they are ambiguous and rejected, with how to settle it (hireReader.settle).

// dateOrder is how a numeric date is read: day first or month first.
type dateOrder uint8

const (
	dayFirst dateOrder = iota
	monthFirst
)

func (o dateOrder) String() string {
	if o == monthFirst {
		return "month first"
	}
	return "day first"
}

// dateKind is what reading a join date found, for the file's check of its numeric dates.
type dateKind uint8

const (
	dateOther     dateKind = iota // no numeric date in two orders: ISO, named, the layout, none
	dateAmbiguous                 // read in the file's order, another date in the other order
	dateContrary                  // a date only in the other order (rejected)
	dateProven                    // numbers that are a date only in the file's order
)

// dateReading is how a file's join dates are read: its order and configured layout.
type dateReading struct {
	order   dateOrder
	layout  string // the configured layout, "" when none
	ordered bool   // the layout has a day-month order: order is its own
	example string // dateExample written in layout
}

// newDateReading checks layout ("" for none) and returns how dates are read under it.
func newDateReading(layout string) (dateReading, error) {
	if layout == "" {
		return dateReading{}, nil
	}
	if err := checkDateLayout(layout); err != nil {
		return dateReading{}, err
	}
	r := dateReading{layout: layout, example: dateExample.Format(layout)}
	if a, b, _, _, ok := numericDate(r.example); ok {
		switch {
		case a == dateExample.Day() && b == int(dateExample.Month()):
			r.ordered = true
		case a == int(dateExample.Month()) && b == dateExample.Day():
			r.order, r.ordered = monthFirst, true
		}
	}
	return r, nil
}

// CheckDateLayout refuses a layout (Go's notation) that is not the layout of a whole date:
// onboarding.date_layout's check at start.
func CheckDateLayout(layout string) error {
	_, err := newDateReading(layout)
	return err
}

// ParseJoinDate reads one join date, as a row of a file whose other dates say nothing of their
// order, under layout ("" for none): YYYY-MM-DD, or an error saying why not, naming the value
// and the setting that would accept it. An empty s is an error too.
func ParseJoinDate(s, layout string) (string, error) {
	r, err := newDateReading(layout)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", errors.New("missing")
	}
	d, problem, _ := r.read(strings.TrimSpace(s))
	if problem != "" {
		return "", errors.New(problem)
	}
	return d, nil
}

// read reads a join date, trimmed, not empty: YYYY-MM-DD, or why not.
func (r dateReading) read(s string) (date, problem string, kind dateKind) {
	if isoShaped(s) {
		if d, err := v1.ParseDate(s); err == nil {
			return d, "", dateOther
		}
		return "", shown(s) + " is not a calendar date", dateOther
	}
	if r.layout != "" && !r.ordered {
		if d, ok := r.parseLayout(s); ok {
			return d, "", dateOther
		}
	}
	if a, b, y, two, ok := numericDate(s); ok {
		return r.numeric(s, a, b, y, two)
	}
	if d, shaped, ok := namedDate(s); shaped {
		if !ok {
			return "", shown(s) + " is not a calendar date", dateOther
		}
		return d, "", dateOther
	}
	if r.layout != "" {
		if d, ok := r.parseLayout(s); ok {
			return d, "", dateOther
		}
	}
	return "", r.notADate(s), dateOther
}

// numeric reads a, b and year (two: written with two digits) in the file's order.
func (r dateReading) numeric(s string, a, b, y int, two bool) (date, problem string, kind dateKind) {
	if two {
		y += 2000
	}
	ours, ok := civil(y, b, a) // day first
	theirs, okTheirs := civil(y, a, b)
	if r.order == monthFirst {
		ours, ok, theirs, okTheirs = theirs, okTheirs, ours, ok
	}
	switch {
	case ok && okTheirs && ours != theirs:
		return ours, "", dateAmbiguous
	case ok && !okTheirs:
		return ours, "", dateProven
	case ok:
		return ours, "", dateOther
	case okTheirs && r.order == dayFirst:
		return "", fmt.Sprintf("%s is not a date read day first, as UK and European Excel write dates (25/12/2026); "+
			"if the file's dates are month first (12/25/2026), set onboarding.date_layout: 01/02/2006", shown(s)), dateContrary
	case okTheirs:
		return "", fmt.Sprintf("%s is not a date read month first (onboarding.date_layout: %s); read day first it is %s: "+
			"if the file's dates are day first, leave onboarding.date_layout empty", shown(s), r.layout, longDate(theirs)), dateContrary
	}
	return "", fmt.Sprintf("%s is not a calendar date, read %s or %s", shown(s), dayFirst, monthFirst), dateOther
}

// ambiguous is the reason of a date read in the file's order that is another date in the
// other order, in a file whose date on line (written as value) is only a date in the other
// order; proof, when not 0, is a line whose date (proofValue) is only one in the file's order.
func (r dateReading) ambiguous(s, date string, line int, value string, proof int, proofValue string) string {
	a, b, y, two, _ := numericDate(s)
	if two {
		y += 2000
	}
	other, _ := civil(y, a, b)
	if r.order == monthFirst {
		other, _ = civil(y, b, a)
	}
	settle := "if the file's dates are month first, set onboarding.date_layout: 01/02/2006"
	ours := "read day first"
	if r.order == monthFirst {
		settle = "if the file's dates are day first, leave onboarding.date_layout empty"
		ours = "read month first (onboarding.date_layout: " + r.layout + ")"
	}
	theirs := dayFirst
	if r.order == dayFirst {
		theirs = monthFirst
	}
	if proof != 0 {
		return fmt.Sprintf("%s is ambiguous in this file, which has dates in both orders: %s it is %s, %s %s (line %d's %s can only be %s, line %d's %s only %s); write the file's dates one way, or as YYYY-MM-DD, which is never ambiguous",
			shown(s), ours, longDate(date), theirs, longDate(other), line, shown(value), theirs, proof, shown(proofValue), r.order)
	}
	return fmt.Sprintf("%s is ambiguous in this file: %s it is %s, %s %s, and line %d's %s can only be %s; %s, or correct line %d (YYYY-MM-DD is never ambiguous)",
		shown(s), ours, longDate(date), theirs, longDate(other), line, shown(value), theirs, settle, line)
}

// notADate is the reason of a value that is no date at all.
func (r dateReading) notADate(s string) string {
	if len(s) == 5 && allDigits(s) {
		return shown(s) + " is an Excel date serial number, not a date: format the column as a date in Excel (or write YYYY-MM-DD) before saving as CSV"
	}
	forms := "write it as YYYY-MM-DD, day first (25/12/2026, 25.12.26) or with the month's name (25 Dec 2026); for month-first dates (12/25/2026) set onboarding.date_layout: 01/02/2006"
	if r.order == monthFirst {
		forms = "write it as YYYY-MM-DD, month first as onboarding.date_layout (" + r.layout + ") says (" + r.example + ") or with the month's name (25 Dec 2026)"
	} else if r.layout != "" {
		forms = "write it as YYYY-MM-DD, day first (25/12/2026, 25.12.26), with the month's name (25 Dec 2026) or as onboarding.date_layout (" + r.layout + ") says (" + r.example + ")"
	}
	return shown(s) + " is not a date: " + forms
}

// parseLayout reads s in the configured layout, or in it without the day's and month's leading
// zeros; a two-digit year is in 2000-2099.
func (r dateReading) parseLayout(s string) (string, bool) {
	for _, l := range []string{r.layout, unpadded.Replace(r.layout)} {
		t, err := time.Parse(l, s)
		if err != nil {
			continue
		}
		if t.Year() < 2000 && strings.Contains(strings.ReplaceAll(l, "2006", ""), "06") {
			t = t.AddDate(100, 0, 0)
		}
		if t.Year() >= 1 && t.Year() <= 9999 {
			return t.Format(time.DateOnly), true
		}
	}
	return "", false
}

// unpadded turns a layout's zero-padded month and day into ones that take one digit or two.
var unpadded = strings.NewReplacer("01", "1", "02", "2")

// numericDate splits s into three groups of digits, separated by one of '/', '.' and '-' used
// twice: the first two of one or two digits, the year of two (two is then true) or four.
func numericDate(s string) (a, b, year int, two, ok bool) {
	if s == "" {
		return 0, 0, 0, false, false
	}
	i := strings.IndexAny(s, "/.-")
	if i < 0 {
		return 0, 0, 0, false, false
	}
	parts := strings.Split(s, s[i:i+1])
	if len(parts) != 3 {
		return 0, 0, 0, false, false
	}
	var n [3]int
	for k, p := range parts {
		if !allDigits(p) || (k < 2 && len(p) > 2) || (k == 2 && len(p) != 2 && len(p) != 4) {
			return 0, 0, 0, false, false
		}
		n[k], _ = strconv.Atoi(p)
	}
	return n[0], n[1], n[2], len(parts[2]) == 2, true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// months are the months' English names, from January.
var months = [...]string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}

// monthName reads a month's English name, whole or cut after its third letter or later (Dec,
// Sept, Decem), any case.
func monthName(s string) (time.Month, bool) {
	s = strings.ToLower(s)
	if len(s) < 3 {
		return 0, false
	}
	for i, m := range months {
		if strings.HasPrefix(m, s) {
			return time.Month(i + 1), true
		}
	}
	return 0, false
}

// namedDate reads a date with the month's name: a day, the month and a year (25 Dec 2026,
// 25-Dec-26, 25th December 2026), or the month first (Dec 25, 2026), separated by spaces, '-',
// '.', '/' or ','. shaped is true when s is written so, whether or not it is a date.
func namedDate(s string) (date string, shaped, ok bool) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" -./,", r) })
	if len(parts) != 3 {
		return "", false, false
	}
	m, named := monthName(parts[1])
	dayPart := parts[0]
	if !named {
		if m, named = monthName(parts[0]); !named {
			return "", false, false
		}
		dayPart = parts[1]
	}
	dayPart = strings.ToLower(dayPart)
	for _, suffix := range []string{"st", "nd", "rd", "th"} {
		dayPart = strings.TrimSuffix(dayPart, suffix)
	}
	yearPart := parts[2]
	if !allDigits(dayPart) || len(dayPart) > 2 || !allDigits(yearPart) || (len(yearPart) != 2 && len(yearPart) != 4) {
		return "", false, false
	}
	day, _ := strconv.Atoi(dayPart)
	year, _ := strconv.Atoi(yearPart)
	if len(yearPart) == 2 {
		year += 2000
	}
	d, ok := civil(year, int(m), day)
	return d, true, ok
}

// civil writes year-month-day as YYYY-MM-DD when it is a date of years 1 to 9999.
func civil(year, month, day int) (string, bool) {
	if year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 {
		return "", false
	}
	t := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	if t.Day() != day {
		return "", false
	}
	return t.Format(time.DateOnly), true
}

// longDate writes a YYYY-MM-DD date for people: "25 Dec 2026".
func longDate(date string) string {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return date
	}
	return t.Format("2 Jan 2006")
}

// maxShown is how much of a cell a reason shows, in bytes: a date is short, and a reason is
// not the place for a whole cell of anything else.
const maxShown = 40

// shown is a cell's value for a reason: made printable, cut to maxShown bytes (a whole
// character, marked …), and quoted, escaping what is not printable.
func shown(s string) string {
	return strconv.Quote(cut(printable(s), maxShown))
}

// ambiguousDate is a hire whose join date is another date read in the other order.
type ambiguousDate struct {
	hire int    // in hires
	raw  string // the cell
}

// joinDate reads a join date (see dates.go) as YYYY-MM-DD. It returns why s is not one; "" is
// neither (the validator reports it missing).
func (h *hireReader) joinDate(s string) (date, problem string, kind dateKind) {
	if s == "" {
		return "", "", dateOther
	}
	return h.dates.read(s)
}

// settle rejects the hires whose join date is ambiguous when a row's join date can only be read
// in the other order: the file's dates may all be written in that order, and read in the file's
// they would be wrong without a word.
func (h *hireReader) settle() {
	if h.contrary == 0 || len(h.ambiguous) == 0 {
		return
	}
	drop := make(map[int]bool, len(h.ambiguous))
	for _, a := range h.ambiguous {
		x := h.hires[a.hire]
		drop[a.hire] = true
		e := x.Employee
		h.problems = append(h.problems, RowProblem{Line: x.Line, Email: SafeCell(e.Email), FirstName: cut(oneLine(e.FirstName), maxNameBytes),
			LastName: cut(oneLine(e.LastName), maxNameBytes), Reason: oneLine(fieldJoinDate + ": " + h.dates.ambiguous(a.raw, e.JoinDate, h.contrary, h.contraryValue, h.proof, h.proofValue))})
	}
	kept := h.hires[:0]
	for i, x := range h.hires {
		if !drop[i] {
			kept = append(kept, x)
		}
	}
	clear(h.hires[len(kept):])
	h.hires = kept
	slices.SortStableFunc(h.problems, func(a, b RowProblem) int { return a.Line - b.Line })
}

// isoShaped reports whether s is written YYYY-MM-DD or YYYY/MM/DD, whether or not it exists.
func isoShaped(s string) bool {
	if len(s) != 10 || (s[4] != '-' && s[4] != '/') || s[7] != s[4] {
		return false
	}
	for i := range len(s) {
		if i != 4 && i != 7 && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

// dateExample is written in a configured layout to show it in reasons, to check it, and to tell
// its order (31 comes before 1 day first).
var dateExample = time.Date(2025, time.January, 31, 0, 0, 0, 0, time.UTC)

// checkDateLayout refuses a layout that does not give back the dates written in it.
func checkDateLayout(layout string) error {
	for _, d := range []time.Time{dateExample, time.Date(1999, time.November, 7, 0, 0, 0, 0, time.UTC)} {
		t, err := time.Parse(layout, d.Format(layout))
		if err != nil || t.Format(time.DateOnly) != d.Format(time.DateOnly) {
			return fmt.Errorf("DateLayout %q is not the layout of a whole date (year, month and day, e.g. \"02/01/2006\")", layout)
		}
	}
	return nil
}
