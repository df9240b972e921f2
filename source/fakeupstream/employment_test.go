package fakeupstream

import (
	"encoding/json"
	"testing"
	"time"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// The dates GenerateAccount gives by status, worked by hand from the data's today, 2026-06-01.
func TestAccountDates(t *testing.T) {
	for _, tt := range []struct {
		name               string
		status             string
		x                  accountDraws
		join               string
		wantStatus         string // "" for status
		wantJoin, wantLeft string // "" for none
	}{
		// A future starter starts startsIn days after today: 1 → 2 June, 60 → 31 July.
		{"future starter, next day", "Current employee", accountDraws{future: true, startsIn: 1}, "2019-04-02", "", "2026-06-02", ""},
		{"future starter, two months", "Current employee", accountDraws{future: true, startsIn: 60}, "2019-04-02", "", "2026-07-31", ""},
		{"current employee", "Current employee", accountDraws{startsIn: 60}, "2019-04-02", "", "2019-04-02", ""},
		// A Pending leaver leaves a month after today (1 July) plus notice days: 0 → 1 July,
		// 61 (the most noticeDays draws) → 31 August.
		{"pending leaver, a month", "Pending leaver", accountDraws{notice: 0}, "2019-04-02", "", "2019-04-02", "2026-07-01"},
		{"pending leaver, three months", "Pending leaver", accountDraws{notice: noticeDays - 1}, "2019-04-02", "", "2019-04-02", "2026-08-31"},
		// An Ex-employee at u = 0 left the day after joining.
		{"leaver, earliest", "Ex-employee", accountDraws{tenure: 0}, "2019-04-02", "", "2019-04-02", "2019-04-03"},
		// A future starter's draw means nothing to a leaver.
		{"leaver drawn a future start", "Ex-employee", accountDraws{future: true, startsIn: 9}, "2019-04-02", "", "2019-04-02", "2019-04-03"},
		{"other status", "Suspended", accountDraws{future: true, startsIn: 9}, "2019-04-02", "", "2019-04-02", ""},
		// A Current employee drawn to quit at u = 0.5 of the 1,096 days from 2023-06-01 to
		// 2026-06-01 (2024 a leap year): 548 days on, 366 to 2024-06-01 and 182 more
		// (30+31+31+30+31 = 153 to 1 November, 29 more) = 2024-11-30.
		{"quits", "Current employee", accountDraws{quit: true, quitAt: 0.5}, "2019-04-02", "Ex-employee", "2019-04-02", "2024-11-30"},
		// u = 0 is 2023-06-01; u just below 1 is day 1,095, 2026-05-31.
		{"quits first day", "Current employee", accountDraws{quit: true}, "2019-04-02", "Ex-employee", "2019-04-02", "2023-06-01"},
		{"quits last day", "Current employee", accountDraws{quit: true, quitAt: 0.99999}, "2019-04-02", "Ex-employee", "2019-04-02", "2026-05-31"},
		// Not before joining, nor on the day: they stay.
		{"quit day before joining", "Current employee", accountDraws{quit: true, quitAt: 0.5}, "2025-01-10", "", "2025-01-10", ""},
		{"quit day the join day", "Current employee", accountDraws{quit: true, quitAt: 0.5}, "2024-11-30", "", "2024-11-30", ""},
		// A quit day means nothing to a future starter, a Pending leaver or an Ex-employee.
		{"future starter drawn to quit", "Current employee", accountDraws{future: true, startsIn: 1, quit: true, quitAt: 0.5}, "2019-04-02", "", "2026-06-02", ""},
		{"pending leaver drawn to quit", "Pending leaver", accountDraws{quit: true, quitAt: 0.5}, "2019-04-02", "", "2019-04-02", "2026-07-01"},
		{"leaver drawn to quit", "Ex-employee", accountDraws{quit: true, quitAt: 0.5}, "2019-04-02", "", "2019-04-02", "2019-04-03"},
		// A recent hire at u = 0 joins on the first day of the gap after Generate's joins,
		// 2025-12-28; at u just above the gap's share (0.278), on 2023-06-01; then as above.
		{"recent hire, the gap", "Current employee", accountDraws{hired: true}, "2014-09-09", "", "2025-12-28", ""},
		{"recent hire, three years ago", "Current employee", accountDraws{hired: true, hiredAt: 0.2785}, "2014-09-09", "", "2023-06-01", ""},
		// u = 0.9999 of the 940 days from 2023-06-01 to 2025-12-27 (941 − 1) is day 939 of
		// them (0.9999−0.278)/(1−0.278)·941 = 940.87 → 940: 2025-12-27; a quit day of
		// 2026-05-31 comes after it.
		{"recent hire who quits", "Current employee", accountDraws{hired: true, hiredAt: 0.9999, quit: true, quitAt: 0.99999}, "2014-09-09", "Ex-employee", "2025-12-27", "2026-05-31"},
		{"recent hire, a pending leaver", "Pending leaver", accountDraws{hired: true}, "2014-09-09", "", "2025-12-28", "2026-07-01"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, join, left := tt.x.dates(tt.status, day(tt.join))
			var gotLeft string
			if !left.IsZero() {
				gotLeft = left.Format(time.DateOnly)
			}
			if tt.wantStatus == "" {
				tt.wantStatus = tt.status
			}
			if status != tt.wantStatus || join.Format(time.DateOnly) != tt.wantJoin || gotLeft != tt.wantLeft {
				t.Errorf("%s, join %s, left %q; want %s, %s, %q", status, join.Format(time.DateOnly), gotLeft, tt.wantStatus, tt.wantJoin, tt.wantLeft)
			}
		})
	}
}

// leftAfter: the truncated exponential's inverse, worked by hand.
func TestLeftAfter(t *testing.T) {
	for _, tt := range []struct {
		join string
		u    float64
		want string
	}{
		// n = days(2026-06-01 − 2026-05-01) − 1 = 30 days to choose from (2 … 31 May);
		// u = 0 → 0 days → the day after joining.
		{"2026-05-01", 0, "2026-05-02"},
		// u just below 1 → just below 30 days, 29 whole ones → 2 May + 29 = 31 May, the day
		// before today.
		{"2026-05-01", 0.9999999999, "2026-05-31"},
		// A long span: join 2016-06-01, 3,652 days to today (ten years and the 29 Februaries
		// of 2020 and 2024), n = 3,651. u = 0.5: e^(−3651/1460) = 0.082029, so days =
		// −1460·ln(1 − 0.5·0.917971) = −1460·ln(0.541014) = −1460·(−0.614309) = 896.9 → 896
		// whole days after 2 June 2016 = 2018-11-15.
		{"2016-06-01", 0.5, "2018-11-15"},
	} {
		if got := leftAfter(day(tt.join), tt.u).Format(time.DateOnly); got != tt.want {
			t.Errorf("leftAfter(%s, %v) = %s, want %s", tt.join, tt.u, got, tt.want)
		}
	}
	// Whatever u, after the join and before today.
	for _, join := range []string{"2012-01-01", "2020-02-29", "2025-12-28"} {
		for u := 0.0; u < 1; u += 0.01 {
			if l := leftAfter(day(join), u); !l.After(day(join)) || !l.Before(reference) {
				t.Fatalf("leftAfter(%s, %v) = %s: not between the join and 2026-06-01", join, u, l)
			}
		}
	}
}

func TestLeavingDateMember(t *testing.T) {
	for _, tt := range []struct {
		name string
		x    accountDraws
		left string
		want any
	}{
		{"not leaving", accountDraws{}, "", nil},
		{"a leaver", accountDraws{}, "2024-03-31", "2024-03-31"},
		{"a leaver the account did not record", accountDraws{undated: true}, "2024-03-31", nil},
		// A Pending leaver's date is always there: the account records who is leaving.
		{"a pending leaver", accountDraws{undated: true}, "2026-07-15", "2026-07-15"},
	} {
		var left time.Time
		if tt.left != "" {
			left = day(tt.left)
		}
		if got := tt.x.leavingDate(left); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestStatutoryHolidayCountry(t *testing.T) {
	// The names are those the collection serves.
	for i, want := range []string{"England and Wales", "Scotland", "Northern Ireland", "Ireland", "Poland", "Portugal"} {
		if statutoryHolidayCountries[i].name != want {
			t.Fatalf("statutoryHolidayCountries[%d] = %v, want %s: country's indexes are out of step", i, statutoryHolidayCountries[i], want)
		}
	}
	for _, tt := range []struct {
		name     string
		location int64
		receives bool
		x        accountDraws
		want     string // "null" when not recorded
	}{
		{"London", 701, true, accountDraws{region: 99}, `{"id":1,"name":"England and Wales"}`},
		{"Manchester", 702, true, accountDraws{region: 80}, `{"id":1,"name":"England and Wales"}`},
		{"Dublin", 703, true, accountDraws{}, `{"id":4,"name":"Ireland"}`},
		{"Kraków", 704, true, accountDraws{}, `{"id":5,"name":"Poland"}`},
		{"Lisboa", 705, false, accountDraws{recorded: 39}, `{"id":6,"name":"Portugal"}`},
		{"remote, in England", 706, true, accountDraws{region: 74}, `{"id":1,"name":"England and Wales"}`},
		{"remote, in Scotland", 706, true, accountDraws{region: 75}, `{"id":2,"name":"Scotland"}`},
		{"no location, in Scotland", 0, true, accountDraws{region: 91}, `{"id":2,"name":"Scotland"}`},
		{"no location, in Northern Ireland", 0, true, accountDraws{region: 92}, `{"id":3,"name":"Northern Ireland"}`},
		{"not recorded (receives)", 701, true, accountDraws{recorded: recordedPercent}, "null"},
		{"not recorded (does not receive)", 701, false, accountDraws{recorded: recordedWithoutPercent}, "null"},
	} {
		b, _ := json.Marshal(tt.x.country(tt.location, tt.receives))
		if string(b) != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, b, tt.want)
		}
	}
}

// The zero-hours pattern: no contracted hours and no day marked, its weekdays "0.0" and its
// weekend null; its nested form says 0.0 hours.
func TestZeroHoursPattern(t *testing.T) {
	want := `{"id":36,"name":"Zero hours (casual)","default":false,"total_hours":"0.0",` +
		`"mon":false,"tue":false,"wed":false,"thu":false,"fri":false,"sat":false,"sun":false,` +
		`"mon_hr":"0.0","tue_hr":"0.0","wed_hr":"0.0","thu_hr":"0.0","fri_hr":"0.0","sat_hr":null,"sun_hr":null,` +
		`"created_at":"2023-02-06T12:20:00+01:00","updated_at":"2024-02-06T12:20:00+01:00"}`
	if got := string(zeroHours.record()); got != want {
		t.Errorf("zero-hours pattern\n got %s\nwant %s", got, want)
	}
	if got := string(nested(zeroHours)); got != `{"id":36,"name":"Zero hours (casual)","total_hours":"0.0","default":false}` {
		t.Errorf("nested %s", got)
	}
	pats := accountPatterns()
	if len(pats) != len(patterns)+1 || string(pats[len(pats)-1]) != want {
		t.Errorf("the account's patterns: %d, the last %s", len(pats), pats[len(pats)-1])
	}
}
