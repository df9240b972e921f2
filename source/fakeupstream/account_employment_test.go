package fakeupstream_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/v1"
)

// accountEmployee is what TestAccountEmployment reads of a generated employee.
type accountEmployee struct {
	ID                        int64
	Status                    string
	LeavingDate               *string     `json:"leaving_date"`
	LengthOfServiceInMonths   json.Number `json:"length_of_service_in_months"`
	ReceivesStatutoryHolidays bool        `json:"receives_statutory_holidays"`
	CreatedAt                 string      `json:"created_at"`
	UpdatedAt                 string      `json:"updated_at"`
	WorkingPattern            struct {
		ID         int64
		TotalHours string `json:"total_hours"`
	} `json:"working_pattern"`
	Location                json.RawMessage `json:"location"`
	StatutoryHolidayCountry *struct {
		ID   int64
		Name string
	} `json:"statutory_holiday_country"`
}

// TestAccountEmployment holds GenerateAccount's employees to what they stand for: leavers with
// a leaving date between joining and the data's today (2026-06-01), spread over the years, a
// few without one; Pending leavers leaving in the next one to three months; a few future
// starters and zero-hours staff; statutory holiday countries of the collection, in step with the
// office; and no event, salary or benefit of anyone after the day they leave.
func TestAccountEmployment(t *testing.T) {
	const today = "2026-06-01"
	a := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 2500, Seed: 42, AbsenceYears: 2})

	countries := map[int64]string{}
	for _, raw := range a.Collections["statutory_holiday_countries"] {
		var c struct {
			ID   int64
			Name string
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		countries[c.ID] = c.Name
	}
	var zeroPattern v1.WorkingPattern
	for _, raw := range a.WorkingPatterns {
		var wp v1.WorkingPattern
		if err := json.Unmarshal(raw, &wp); err != nil {
			t.Fatal(err)
		}
		if wp.TotalHours == "0.0" {
			zeroPattern = wp
		}
	}
	for d := range zeroPattern.Days {
		if zeroPattern.Days[d] == nil || *zeroPattern.Days[d] || (zeroPattern.Hours[d] != "0.0" && zeroPattern.Hours[d] != "") {
			t.Errorf("the zero-hours pattern %+v marks a day or gives it hours", zeroPattern)
		}
	}

	left := map[int64]string{} // employee → last day employed (known to the record)
	var exes, undated, pending, future, zero int
	byCountry := map[string]int{}
	leaversByYear := map[string]int{}
	for _, raw := range a.Employees {
		var e accountEmployee
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		join := joinOf(t, raw)
		switch e.Status {
		case "Ex-employee":
			exes++
			if e.LeavingDate == nil {
				undated++
				break
			}
			if d := *e.LeavingDate; d <= join || d >= today {
				t.Errorf("leaver %d joined %s, left %s: not between joining and %s", e.ID, join, d, today)
			}
			left[e.ID] = *e.LeavingDate
			leaversByYear[(*e.LeavingDate)[:4]]++
			// Their length of service runs to the leaving day: whole calendar months from the
			// join's month to the leaving day's.
			j, l := day(t, join), day(t, *e.LeavingDate)
			if want := 12*(l.Year()-j.Year()) + int(l.Month()-j.Month()); e.LengthOfServiceInMonths.String() != strconv.Itoa(want) {
				t.Errorf("leaver %d joined %s, left %s: %s months' service, want %d", e.ID, join, *e.LeavingDate, e.LengthOfServiceInMonths, want)
			}
		case "Pending leaver":
			pending++
			if e.LeavingDate == nil || *e.LeavingDate < "2026-07-01" || *e.LeavingDate > "2026-09-01" {
				t.Errorf("pending leaver %d leaves %v, want within 1–3 months of %s", e.ID, e.LeavingDate, today)
				break
			}
			left[e.ID] = *e.LeavingDate
		default:
			if e.LeavingDate != nil {
				t.Errorf("%s %d has a leaving date %s", e.Status, e.ID, *e.LeavingDate)
			}
		}
		if join > today {
			future++
			if e.Status != "Current employee" || join > "2026-07-31" || e.LengthOfServiceInMonths.String() != "0" ||
				e.CreatedAt[:10] >= today || e.UpdatedAt[:10] > today {
				t.Errorf("future starter %d: %s, joins %s, %s months, made %s, changed %s", e.ID, e.Status, join,
					e.LengthOfServiceInMonths, e.CreatedAt, e.UpdatedAt)
			}
		}
		if e.WorkingPattern.ID == zeroPattern.ID {
			zero++
			if e.WorkingPattern.TotalHours != "0.0" {
				t.Errorf("employee %d: zero-hours pattern nested with %s hours", e.ID, e.WorkingPattern.TotalHours)
			}
		}
		if c := e.StatutoryHolidayCountry; c != nil {
			if countries[c.ID] != c.Name {
				t.Errorf("employee %d: statutory holiday country %d %q is not the collection's (%q)", e.ID, c.ID, c.Name, countries[c.ID])
			}
			office := map[string]string{"Dublin": "Ireland", "Kraków": "Poland", "Lisboa": "Portugal", "London": "England and Wales", "Manchester": "England and Wales"}
			var l struct{ Name string }
			if json.Unmarshal(e.Location, &l) == nil && office[l.Name] != "" && office[l.Name] != c.Name {
				t.Errorf("employee %d at %s: statutory holidays of %s", e.ID, l.Name, c.Name)
			}
			if e.ReceivesStatutoryHolidays {
				byCountry[c.Name]++
			}
		} else if e.ReceivesStatutoryHolidays {
			byCountry["(not recorded)"]++
		}
	}
	// Shares: about a third have left (4 % Generate's Ex-employees, and 34 % of its Current
	// employees who joined before their quit day), a tenth of them undated; the new members
	// are a few percent each.
	t.Logf("%d leavers (%d without a date), %d pending leavers, %d future starters, %d on zero hours", exes, undated, pending, future, zero)
	if exes < 600 || exes > 1000 || undated*20 < exes || undated*7 > exes || pending < 50 || future == 0 || future > 75 || zero < 25 || zero > 150 {
		t.Errorf("%d leavers (%d without a date), %d pending leavers, %d future starters, %d on zero hours", exes, undated, pending, future, zero)
	}
	// Leavers of many years, more of them in the last five than in the first five.
	early, late := 0, 0
	for y, n := range leaversByYear {
		switch {
		case y <= "2016":
			early += n
		case y >= "2021":
			late += n
		}
	}
	if len(leaversByYear) < 10 || late <= early || leaversByYear["2025"]+leaversByYear["2026"] == 0 {
		t.Errorf("leavers by year %v: want most years, more lately, some in the last two", leaversByYear)
	}
	if byCountry["England and Wales"] < byCountry["Scotland"]+byCountry["Northern Ireland"]+byCountry["Ireland"] ||
		byCountry["Scotland"] == 0 || byCountry["Northern Ireland"] == 0 || byCountry["Northern Ireland"] >= byCountry["Scotland"] ||
		byCountry["(not recorded)"] == 0 {
		t.Errorf("statutory holiday countries of those who receive them: %v", byCountry)
	}

	// Nothing after the leaving day: events end by it, a sickness is open only for someone
	// still employed, a salary and a benefit end on it.
	var checked int
	for name, dates := range map[string][2]string{
		"absences": {"start_date", "end_date"}, "leave_requests": {"start_date", "end_date"},
		"sicknesses": {"start_date", "end_date"}, "employee_training_courses": {"start_on", "end_on"},
		"salaries": {"effective_date", "end_date"}, "benefits": {"start_date", "end_date"}, "bonuses": {"awarded_on", "awarded_on"},
	} {
		for _, raw := range a.Collections[name] {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			day := left[nestedIDOf(t, raw, "employee")]
			if day == "" {
				continue
			}
			checked++
			var start, end string
			_ = json.Unmarshal(m[dates[0]], &start)
			_ = json.Unmarshal(m[dates[1]], &end)
			switch {
			case start > day:
				t.Errorf("%s starts %s, after its employee left on %s: %s", name, start, day, raw)
			case end > day:
				t.Errorf("%s ends %s, after its employee left on %s: %s", name, end, day, raw)
			case end == "" && day < today && name != "employee_training_courses":
				t.Errorf("%s open, of someone who left on %s: %s", name, day, raw)
			case end == "" && (name == "salaries" || name == "benefits"):
				t.Errorf("%s open, of someone leaving on %s: %s", name, day, raw)
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d records of leavers checked", checked)
	}
	if !strings.Contains(joined(a.Employees), `"leaving_date":null`) {
		t.Error("no employee has leaving_date null")
	}
}

// TestAccountTurnover holds GenerateAccount's 2,500-person account to the movements of a real
// one over the three years before the data's today (2026-06-01), counted as the warehouse's
// models count them (docs/models.md: employed from the join date to the leaving date, both
// included; a leaver without a leaving date left out; a future starter not yet employed):
// starters and leavers in every month from June 2023 to May 2026, 2026's included, and a
// 12-month turnover (the 12 months' leavers over the mean of their months' average headcount)
// of 10 to 14 % at the end of every month from May 2024 (the first whose 12 months all lie in
// those three years) to June 2026.
func TestAccountTurnover(t *testing.T) {
	a := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 2500, Seed: 42})
	type span struct{ start, end string } // end "" while employed
	var spans []span
	for _, raw := range a.Employees {
		var e accountEmployee
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		s := span{start: joinOf(t, raw)}
		if e.LeavingDate != nil {
			s.end = *e.LeavingDate
		} else if e.Status == "Ex-employee" {
			continue // no leaving date: left out
		}
		spans = append(spans, s)
	}
	employed := func(day string) (n int) {
		for _, s := range spans {
			if s.start <= day && (s.end == "" || s.end >= day) {
				n++
			}
		}
		return n
	}
	const today = "2026-06-01"
	type month struct {
		first                     string
		starters, leavers, hs, he int
		avg                       float64
	}
	var months []month
	for m := time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC); !m.After(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)); m = m.AddDate(0, 1, 0) {
		first, last := m.Format(time.DateOnly), m.AddDate(0, 1, -1).Format(time.DateOnly)
		if last > today {
			last = today
		}
		mo := month{first: first, hs: employed(first), he: employed(last)}
		for _, s := range spans {
			if s.start >= first && s.start <= last {
				mo.starters++
			}
			if s.end != "" && s.end >= first && s.end <= last {
				mo.leavers++
			}
		}
		mo.avg = float64(mo.hs+mo.he) / 2
		months = append(months, mo)
	}
	byYear := map[string]int{}
	for i, mo := range months {
		byYear[mo.first[:4]] += mo.leavers
		if mo.first < "2026-06-01" && (mo.starters == 0 || mo.leavers == 0) {
			t.Errorf("%s: %d starters, %d leavers; want some of each", mo.first[:7], mo.starters, mo.leavers)
		}
		if i < 11 {
			continue
		}
		var leavers int
		var avg float64
		for _, w := range months[i-11 : i+1] {
			leavers += w.leavers
			avg += w.avg / 12
		}
		turnover := float64(leavers) / avg
		t.Logf("%s: headcount %d → %d, %d starters, %d leavers; 12 months: %d leavers, average headcount %.1f, turnover %.2f %%",
			mo.first[:7], mo.hs, mo.he, mo.starters, mo.leavers, leavers, avg, 100*turnover)
		if turnover < 0.10 || turnover > 0.14 {
			t.Errorf("12-month turnover to %s: %d leavers over %.1f, %.2f %%; want 10-14 %%", mo.first[:7], leavers, avg, 100*turnover)
		}
	}
	t.Logf("leavers by year (2023 from June, 2026 to June): %v; headcount on %s: %d", byYear, today, employed(today))
}

func day(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
