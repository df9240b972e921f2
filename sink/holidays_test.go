package sink_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
)

// TestHolidayCalendarsMatchGovUK: each UK calendar's days off for 2022–2025 are the bank
// holidays gov.uk publishes (www.gov.uk/bank-holidays, and its bank-holidays.json), substitute
// days included, and Ireland's and Poland's their governments' public holidays: written out
// here by hand, not computed.
func TestHolidayCalendarsMatchGovUK(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		calendar string
		want     string
	}{
		{sink.CalendarEnglandAndWales, `
2022-01-03 2022-04-15 2022-04-18 2022-05-02 2022-06-02 2022-06-03 2022-08-29 2022-09-19 2022-12-26 2022-12-27
2023-01-02 2023-04-07 2023-04-10 2023-05-01 2023-05-08 2023-05-29 2023-08-28 2023-12-25 2023-12-26
2024-01-01 2024-03-29 2024-04-01 2024-05-06 2024-05-27 2024-08-26 2024-12-25 2024-12-26
2025-01-01 2025-04-18 2025-04-21 2025-05-05 2025-05-26 2025-08-25 2025-12-25 2025-12-26`},
		// Scotland: 2 January, St Andrew's Day (2024 and 2025 on a weekend: Monday 2 and 1
		// December), the first Monday of August, no Easter Monday.
		{sink.CalendarScotland, `
2022-01-03 2022-01-04 2022-04-15 2022-05-02 2022-06-02 2022-06-03 2022-08-01 2022-09-19 2022-11-30 2022-12-26 2022-12-27
2023-01-02 2023-01-03 2023-04-07 2023-05-01 2023-05-08 2023-05-29 2023-08-07 2023-11-30 2023-12-25 2023-12-26
2024-01-01 2024-01-02 2024-03-29 2024-05-06 2024-05-27 2024-08-05 2024-12-02 2024-12-25 2024-12-26
2025-01-01 2025-01-02 2025-04-18 2025-05-05 2025-05-26 2025-08-04 2025-12-01 2025-12-25 2025-12-26`},
		// Northern Ireland: St Patrick's Day (2024 a Sunday: Monday 18 March) and the Battle of
		// the Boyne (2025 a Saturday: Monday 14 July).
		{sink.CalendarNorthernIreland, `
2022-01-03 2022-03-17 2022-04-15 2022-04-18 2022-05-02 2022-06-02 2022-06-03 2022-07-12 2022-08-29 2022-09-19 2022-12-26 2022-12-27
2023-01-02 2023-03-17 2023-04-07 2023-04-10 2023-05-01 2023-05-08 2023-05-29 2023-07-12 2023-08-28 2023-12-25 2023-12-26
2024-01-01 2024-03-18 2024-03-29 2024-04-01 2024-05-06 2024-05-27 2024-07-12 2024-08-26 2024-12-25 2024-12-26
2025-01-01 2025-03-17 2025-04-18 2025-04-21 2025-05-05 2025-05-26 2025-07-14 2025-08-25 2025-12-25 2025-12-26`},
		// Ireland (gov.ie, citizensinformation.ie): St Brigid's Day from 2023 (the first Monday
		// of February, or 1 February when a Friday), the one-off 18 March 2022, no Good Friday,
		// the first Mondays of May, June and August, the last of October. Irish law moves no
		// public holiday off a weekend (an employee gets a benefit in lieu, which the employer
		// chooses): New Year's Day 2022 and St Patrick's Day 2024 stay on their Saturday and
		// Sunday, Christmas 2022 on its Sunday.
		{sink.CalendarIreland, `
2022-01-01 2022-03-17 2022-03-18 2022-04-18 2022-05-02 2022-06-06 2022-08-01 2022-10-31 2022-12-25 2022-12-26
2023-01-01 2023-02-06 2023-03-17 2023-04-10 2023-05-01 2023-06-05 2023-08-07 2023-10-30 2023-12-25 2023-12-26
2024-01-01 2024-02-05 2024-03-17 2024-04-01 2024-05-06 2024-06-03 2024-08-05 2024-10-28 2024-12-25 2024-12-26
2025-01-01 2025-02-03 2025-03-17 2025-04-21 2025-05-05 2025-06-02 2025-08-04 2025-10-27 2025-12-25 2025-12-26`},
		// Poland (gov.pl): no day moves off a weekend (Epiphany 2024 on a Saturday is not moved);
		// Corpus Christi 60 days after Easter; Christmas Eve from 2025.
		{sink.CalendarPoland, `
2022-01-01 2022-01-06 2022-04-18 2022-05-01 2022-05-03 2022-06-16 2022-08-15 2022-11-01 2022-11-11 2022-12-25 2022-12-26
2023-01-01 2023-01-06 2023-04-10 2023-05-01 2023-05-03 2023-06-08 2023-08-15 2023-11-01 2023-11-11 2023-12-25 2023-12-26
2024-01-01 2024-01-06 2024-04-01 2024-05-01 2024-05-03 2024-05-30 2024-08-15 2024-11-01 2024-11-11 2024-12-25 2024-12-26
2025-01-01 2025-01-06 2025-04-21 2025-05-01 2025-05-03 2025-06-19 2025-08-15 2025-11-01 2025-11-11 2025-12-24 2025-12-25 2025-12-26`},
		{"atlantis", ""},
	} {
		t.Run(tc.calendar, func(t *testing.T) {
			var got []string
			for _, h := range sink.Holidays(tc.calendar, 2022, 2025) {
				if h.Name == "" || h.Day.Location() != time.UTC || h.Day.Hour() != 0 {
					t.Errorf("%v: %q: want a UTC day with a name", h.Day, h.Name)
				}
				got = append(got, h.Day.Format(time.DateOnly))
			}
			if g, w := strings.Join(got, " "), strings.Join(strings.Fields(tc.want), " "); g != w {
				t.Errorf("days off\n got %s\nwant %s", g, w)
			}
		})
	}
	if got := strings.Join(sink.HolidayCalendars(), ","); got != "england-and-wales,ireland,northern-ireland,poland,scotland" {
		t.Errorf("HolidayCalendars() = %s", got)
	}
	for _, c := range sink.HolidayCalendars() {
		if n, ok := sink.CalendarName(c); !ok || n == "" {
			t.Errorf("calendar %s has no name for readers", c)
		}
	}
}
