package fakeupstream_test

import (
	"encoding/json"
	"strings"
	"testing"

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
	// Shares: about 4 % leave (Generate's statuses), a tenth of them undated; the new members
	// are a few percent each.
	if exes < 50 || undated == 0 || undated*5 > exes || pending < 50 || future == 0 || future > 75 || zero < 25 || zero > 150 {
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
