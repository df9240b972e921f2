package sink

import (
	"slices"
	"strings"
	"time"

	"github.com/rickar/cal/v2"
	"github.com/rickar/cal/v2/gb"
	"github.com/rickar/cal/v2/ie"
	"github.com/rickar/cal/v2/pl"
)

// The public holiday calendars the absence models count working days by (docs/models.md,
// "Working days"): the UK's three, and Ireland's and Poland's, from the maintained library
// github.com/rickar/cal/v2 (its gb, ie and pl packages), with the days it lacks defined here in its own terms (cal.Holiday), never as a list
// of dates. Each calendar's days off are the observed (substitute) days: a holiday on a weekend
// is off on the Monday (or Tuesday) after, as gov.uk lists them.
const (
	CalendarEnglandAndWales = "england-and-wales"
	CalendarScotland        = "scotland"
	CalendarNorthernIreland = "northern-ireland"
	// CalendarIreland and CalendarPoland are the public holidays of the Republic of Ireland and
	// of Poland, for staff in offices there (the library's ie and pl packages).
	CalendarIreland = "ireland"
	CalendarPoland  = "poland"
	// CalendarNone are the days off of people who do not receive statutory holidays
	// (employees.receives_statutory_holidays false or unknown): the company's closure days only.
	CalendarNone = "none"
)

// weekendToMonday is the UK's substitution of a holiday on a weekend: the Monday after.
var weekendToMonday = []cal.AltDay{{Day: time.Saturday, Offset: 2}, {Day: time.Sunday, Offset: 1}}

var (
	// StateFuneral is the State Funeral of Queen Elizabeth II, Monday 19 September 2022, a bank
	// holiday in all of the UK (the library, at v2.1.13, does not have it).
	stateFuneral = &cal.Holiday{Name: "State Funeral of Queen Elizabeth II", Type: cal.ObservanceBank,
		Month: time.September, Day: 19, Func: cal.CalcDayOfMonth, StartYear: 2022, EndYear: 2022}

	// secondJanuary is Scotland's 2 January; it follows New Year's Day's substitute the way
	// Boxing Day follows Christmas Day's (a Saturday or Sunday: the Monday or Tuesday after the
	// weekend; a Monday taken by New Year's Day's substitute: the Tuesday).
	secondJanuary = &cal.Holiday{Name: "2nd January", Type: cal.ObservanceBank, Month: time.January, Day: 2,
		Func: cal.CalcDayOfMonth, Observed: []cal.AltDay{
			{Day: time.Saturday, Offset: 2}, {Day: time.Sunday, Offset: 2}, {Day: time.Monday, Offset: 1}}}

	// stAndrewsDay is Scotland's 30 November (a weekend: the Monday after).
	stAndrewsDay = &cal.Holiday{Name: "St Andrew's Day", Type: cal.ObservanceBank, Month: time.November, Day: 30,
		Func: cal.CalcDayOfMonth, Observed: weekendToMonday}

	// stPatricksDay and battleOfTheBoyne are Northern Ireland's 17 March and 12 July (a weekend:
	// the Monday after).
	stPatricksDay = &cal.Holiday{Name: "St Patrick's Day", Type: cal.ObservanceBank, Month: time.March, Day: 17,
		Func: cal.CalcDayOfMonth, Observed: weekendToMonday}
	// polishChristmasEve is 24 December, a public holiday in Poland since 2025 (the library, at
	// v2.1.13, does not have it); Poland moves no holiday off a weekend.
	polishChristmasEve = &cal.Holiday{Name: "Wigilia Bożego Narodzenia", Type: cal.ObservancePublic,
		Month: time.December, Day: 24, Func: cal.CalcDayOfMonth, StartYear: 2025}

	battleOfTheBoyne = &cal.Holiday{Name: "Battle of the Boyne (Orangemen's Day)", Type: cal.ObservanceBank,
		Month: time.July, Day: 12, Func: cal.CalcDayOfMonth, Observed: weekendToMonday}
)

// holidayCalendars are the calendars by name: the library's England and Wales list, and
// Scotland's and Northern Ireland's made from its definitions and the ones above. Scotland has
// no Easter Monday, and its summer bank holiday is the first Monday of August (the library's
// SummerHolidayScotland), not the last.
var holidayCalendars = map[string][]*cal.Holiday{
	CalendarEnglandAndWales: append(slices.Clone(gb.Holidays), stateFuneral),
	CalendarScotland: {
		gb.NewYear, secondJanuary, gb.GoodFriday, gb.EarlyMay, gb.VEDay, gb.CoronationDay, gb.SpringHoliday,
		gb.SpringHoliday2022, gb.PlatinumJubilee, gb.SummerHolidayScotland, stateFuneral, stAndrewsDay,
		gb.ChristmasDay, gb.BoxingDay,
	},
	CalendarNorthernIreland: append(slices.Clone(gb.Holidays), stateFuneral, stPatricksDay, battleOfTheBoyne),
	CalendarIreland:         slices.Clone(ie.Holidays),
	CalendarPoland:          append(slices.Clone(pl.Holidays), polishChristmasEve),
}

// calendarNames are the calendars' names as a reader writes them.
var calendarNames = map[string]string{
	CalendarEnglandAndWales: "England and Wales",
	CalendarScotland:        "Scotland",
	CalendarNorthernIreland: "Northern Ireland",
	CalendarIreland:         "Ireland",
	CalendarPoland:          "Poland",
}

// CalendarName is calendar's name as a reader writes it ("England and Wales"); ok is false
// for a calendar hrsync does not have.
func CalendarName(calendar string) (name string, ok bool) {
	name, ok = calendarNames[calendar]
	return name, ok
}

// HolidayCalendars are the names models.holiday_calendar takes, sorted.
func HolidayCalendars() []string {
	names := make([]string, 0, len(holidayCalendars))
	for n := range holidayCalendars {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Holiday is a day off of a calendar: its observed day (UTC midnight) and name.
type Holiday struct {
	Day  time.Time
	Name string
}

// Holidays are calendar's days off in the years from through to, in order; two holidays
// observed on one day (none in the UK's rules today) are one, their names joined by " / ". An
// unknown calendar has none.
func Holidays(calendar string, from, to int) []Holiday {
	var out []Holiday
	for y := from; y <= to; y++ {
		byDay := map[time.Time][]string{}
		for _, h := range holidayCalendars[calendar] {
			_, obs := h.Calc(y)
			if obs.IsZero() {
				continue
			}
			d := time.Date(obs.Year(), obs.Month(), obs.Day(), 0, 0, 0, 0, time.UTC)
			byDay[d] = append(byDay[d], h.Name)
		}
		for d, names := range byDay {
			out = append(out, Holiday{Day: d, Name: strings.Join(names, " / ")})
		}
	}
	slices.SortFunc(out, func(a, b Holiday) int { return a.Day.Compare(b.Day) })
	return out
}
