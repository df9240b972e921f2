package hrdata

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// employee columns written to employees and (with valid_from, valid_to) employees_history.
var employeeCols = []string{"id", "first_name", "last_name", "email", "job_title", "status",
	"company_join_date", "job_start_date", "length_of_service_in_months", "full_or_part_time",
	"working_pattern_id", "holiday_allowance_id", "department_id", "division_id", "location_id",
	"line_manager_id", "holiday_approver_id", "receives_statutory_holidays", "hr",
	"created_at", "updated_at", "leaving_date", "listed", "origin"}

// at is a moment of a day (seconds after its midnight).
func at(d day, seconds int) time.Time { return d.time().Add(time.Duration(seconds) * time.Second) }

func (f *firm) write(w *writer) error {
	syncedAt := stamp(f.today.time().Add(2 * time.Hour))
	ref := func(table string, names []string) error {
		return w.table(table, []string{"id", "name", "listed", "origin", "synced_at"}, func(emit func(...any) error) error {
			for i, n := range names {
				if err := emit(int64(i+1), n, true, "source", syncedAt); err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := w.table("working_patterns", []string{"id", "name", "is_default", "total_hours",
		"mon", "tue", "wed", "thu", "fri", "sat", "sun",
		"mon_hr", "tue_hr", "wed_hr", "thu_hr", "fri_hr", "sat_hr", "sun_hr", "listed", "origin", "synced_at"},
		func(emit func(...any) error) error {
			for _, p := range Patterns {
				row := []any{p.ID, p.Name, p.Default, decimal(float64(p.Days) * p.Hours)}
				for d := range 7 {
					row = append(row, d < p.Days)
				}
				for d := range 7 {
					h := 0.0
					if d < p.Days {
						h = p.Hours
					}
					row = append(row, decimal(h))
				}
				if err := emit(append(row, true, "source", syncedAt)...); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	var types []string
	for _, t := range TrainingTypes {
		types = append(types, t.Name)
	}
	for _, r := range []struct {
		table string
		names []string
	}{{"departments", Departments}, {"divisions", Divisions}, {"locations", Locations},
		{"holiday_allowances", []string{"Standard (25 days)"}}, {"other_leave_reasons", LeaveReasons},
		{"company_training_types", types}} {
		if err := ref(r.table, r.names); err != nil {
			return err
		}
	}
	if err := f.employees(w, syncedAt); err != nil {
		return err
	}
	return f.events(w)
}

// employeeRow is the columns of employeeCols of version i of p.
func (f *firm) employeeRow(p *person, i int) []any {
	v := p.versions[i]
	first, last := firstNames[p.first], lastNames[p.last]
	status := "Current employee"
	var leaving *date
	end := f.today
	if v.leaver {
		status = "Ex-employee"
		end = p.left
		if v.leavingDate {
			d := date(p.left)
			leaving = &d
		}
	}
	if i < len(p.versions)-1 {
		end = v.from // the length of service the source sent when this version was synced
	}
	months := int((end - p.join) * 12 / 365)
	fpt := "Full Time"
	if Patterns[v.pattern].FTE < 1 {
		fpt = "Part Time"
	}
	fptJSON, _ := json.Marshal(fpt)
	lvl := titles[v.dept]
	return []any{p.id, first, last,
		fmt.Sprintf("%s.%s.%d@example.com", strings.ToLower(first), strings.ToLower(last), p.id),
		lvl[min(v.level, len(lvl)-1)], status, date(p.join), date(p.join), months, string(fptJSON),
		Patterns[v.pattern].ID, int64(1), int64(v.dept + 1), int64(DepartmentDivision[v.dept] + 1), int64(v.loc + 1),
		v.manager, v.manager, true, v.dept == 4,
		stamp(at(p.join-14, 9*3600)), stamp(at(v.from, 2*3600)), leaving, true, "source"}
}

func (f *firm) employees(w *writer, syncedAt stamp) error {
	err := w.table("employees", append(append([]string{}, employeeCols...), "synced_at"), func(emit func(...any) error) error {
		for _, p := range f.people {
			if err := emit(append(f.employeeRow(p, len(p.versions)-1), syncedAt)...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return w.table("employees_history", append([]string{"valid_from", "valid_to"}, employeeCols...), func(emit func(...any) error) error {
		for _, p := range f.people {
			for i, v := range p.versions {
				var to *validity
				if i+1 < len(p.versions) {
					t := validity(p.versions[i+1].from.time())
					to = &t
				}
				if err := emit(append([]any{validity(v.from.time()), to}, f.employeeRow(p, i)...)...); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// span is the days an event of a person may start on: employed and within the last Years,
// first and last inclusive; ok is false when there are none.
func (f *firm) span(p *person) (first, last day, ok bool) {
	first = max(p.join, f.start)
	last = p.end(f.today)
	if p.current() {
		last = f.today - 1
	}
	return first, last, last >= first
}

// weekdayOn moves d forward to a Monday when it is a weekend.
func weekdayOn(d day) day {
	switch d.weekday() {
	case time.Saturday:
		return d + 2
	case time.Sunday:
		return d + 1
	}
	return d
}

// weekdays counts the weekdays from a to b inclusive.
func weekdays(a, b day) int {
	n := 0
	for d := a; d <= b; d++ {
		if wd := d.weekday(); wd != time.Saturday && wd != time.Sunday {
			n++
		}
	}
	return n
}

// draw makes events of p at random days of its span (rate a year), each by one, with a generator of its own.
func (f *firm) draw(stream uint64, rate float64, p *person, one func(r *rand.Rand, d day) error) error {
	first, last, ok := f.span(p)
	if !ok {
		return nil
	}
	r := rng(f.opts.Seed, stream, uint64(p.id))
	n := poisson(r, rate*float64(last-first+1)/365.25)
	days := make([]day, n)
	for i := range days {
		days[i] = first + day(r.IntN(int(last-first+1)))
	}
	slices.Sort(days)
	for _, d := range days {
		if err := one(r, d); err != nil {
			return err
		}
	}
	return nil
}

var (
	leaveCols = []string{"id", "employee_id", "approved_by_id", "leave_reason_id", "deducted", "work_units",
		"start_date", "end_date", "half_start", "half_end", "half_start_am_pm", "half_end_am_pm",
		"type", "created_at", "updated_at", "listed", "origin", "synced_at"}
	sickReasons = []string{"Cold", "Flu", "Back pain", "Migraine", "Stomach bug", "Injury", "Stress"}
)

// leave draws an absence or leave request starting on d: its last day, halves, days deducted.
func (f *firm) leave(r *rand.Rand, p *person, d day) (end day, halfStart, halfEnd bool, deducted float64) {
	start := weekdayOn(d)
	var n int
	switch x := r.IntN(100); {
	case x < 40:
		n = 1
	case x < 85:
		n = 2 + r.IntN(4)
	default:
		n = 6 + r.IntN(10)
	}
	end = start
	for k := 1; k < n; {
		end++
		if wd := end.weekday(); wd != time.Saturday && wd != time.Sunday {
			k++
		}
	}
	if !p.current() && end > p.left {
		end = max(p.left, start)
	}
	halfStart = r.IntN(100) < 10
	halfEnd = end > start && r.IntN(100) < 5
	deducted = float64(weekdays(start, end))
	if halfStart {
		deducted -= 0.5
	}
	if halfEnd {
		deducted -= 0.5
	}
	return end, halfStart, halfEnd, max(deducted, 0)
}

func ampm(on bool, v string) any {
	if on {
		return v
	}
	return nil
}

func (f *firm) events(w *writer) error {
	syncedAt := stamp(f.today.time().Add(2 * time.Hour))
	var id int64
	// absences: about AbsenceRate a person-year; some half days, some cancelled.
	err := w.table("absences", append(append([]string{}, leaveCols...), "cancelled"), func(emit func(...any) error) error {
		for _, p := range f.people {
			err := f.draw(10, AbsenceRate, p, func(r *rand.Rand, d day) error {
				id++
				start := weekdayOn(d)
				end, hs, he, ded := f.leave(r, p, d)
				typ, reason := "Holiday", int64(0)
				if r.IntN(100) < 10 {
					typ, reason = "OtherLeave", int64(1+r.IntN(len(LeaveReasons)))
				}
				created := at(max(start-day(1+r.IntN(60)), p.join), 9*3600+r.IntN(8*3600))
				cancelled := r.IntN(100) < 5
				updated := created
				if cancelled {
					updated = created.Add(time.Duration(1+r.IntN(10*24*3600)) * time.Second)
				}
				return emit(id, p.id, p.at(start).manager, reason, decimal(ded), decimal(ded),
					date(start), date(end), hs, he, ampm(hs, "pm"), ampm(he, "am"),
					typ, stamp(created), stamp(updated), true, "source", syncedAt, cancelled)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// leave_requests: about LeaveRate a person-year; some rejected, cancelled, pending.
	id = 0
	err = w.table("leave_requests", append(append([]string{}, leaveCols...), "status"), func(emit func(...any) error) error {
		for _, p := range f.people {
			err := f.draw(11, LeaveRate, p, func(r *rand.Rand, d day) error {
				id++
				start := weekdayOn(d)
				end, hs, he, ded := f.leave(r, p, d)
				status := "approved"
				switch x := r.IntN(100); {
				case start > f.today-30 && x < 25 && p.current():
					status = "pending"
				case x < 10:
					status = "rejected"
				case x < 15:
					status = "cancelled"
				}
				approver := p.at(start).manager
				if status == "pending" {
					approver = 0
				}
				created := at(max(start-day(1+r.IntN(60)), p.join), 9*3600+r.IntN(8*3600))
				return emit(id, p.id, approver, int64(0), decimal(ded), decimal(ded),
					date(start), date(end), hs, he, ampm(hs, "pm"), ampm(he, "am"),
					"Holiday", stamp(created), stamp(created), true, "source", syncedAt, status)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// sicknesses: about SicknessRate spells a person-year, mostly short, a few long; one running
	// today has no end.
	id = 0
	err = w.table("sicknesses", []string{"id", "employee_id", "company_sicknesstype_id", "start_date", "end_date",
		"half_start", "half_start_am_pm", "half_end", "half_end_am_pm", "deducted", "status", "reason",
		"fit_note_required", "listed", "origin", "synced_at"}, func(emit func(...any) error) error {
		for _, p := range f.people {
			err := f.draw(12, SicknessRate, p, func(r *rand.Rand, d day) error {
				id++
				start := weekdayOn(d)
				var n int
				switch x := r.IntN(100); {
				case x < 60:
					n = 1
				case x < 85:
					n = 2 + r.IntN(2)
				case x < 95:
					n = 4 + r.IntN(7)
				case x < 99:
					n = 11 + r.IntN(20)
				default:
					n = 31 + r.IntN(60)
				}
				end := start + day(n-1)
				if !p.current() && end > p.left {
					end = max(p.left, start)
				}
				var endDate *date
				status := "returned"
				ded := 0.0
				if p.current() && end >= f.today {
					status = "ongoing"
					ded = float64(weekdays(start, f.today))
				} else {
					e := date(end)
					endDate = &e
					ded = float64(weekdays(start, end))
				}
				hs := r.IntN(100) < 5
				he := endDate != nil && end > start && r.IntN(100) < 5
				if hs {
					ded -= 0.5
				}
				if he {
					ded -= 0.5
				}
				return emit(id, p.id, int64(1+r.IntN(6)), date(start), endDate,
					hs, ampm(hs, "pm"), he, ampm(he, "am"), decimal(max(ded, 0)), status,
					sickReasons[r.IntN(len(sickReasons))], n > 7, true, "source", syncedAt)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// employee_training_courses: about TrainingRate a person-year; some expire.
	id = 0
	return w.table("employee_training_courses", []string{"id", "name", "start_on", "end_on", "expires_on",
		"half_day", "half_day_am_pm", "hours", "cost", "status", "outcome", "employee_id",
		"company_training_type_id", "company_training_category_id", "company_training_provider_id",
		"listed", "origin", "synced_at"}, func(emit func(...any) error) error {
		for _, p := range f.people {
			err := f.draw(13, TrainingRate, p, func(r *rand.Rand, d day) error {
				id++
				t := r.IntN(len(TrainingTypes))
				start := weekdayOn(d)
				days := 1
				if x := r.IntN(100); x >= 70 {
					days = 2 + r.IntN(3)
				}
				end := start + day(days-1)
				half := days == 1 && r.IntN(100) < 20
				hours := float64(days) * 7.5
				if half {
					hours = 3.75
				}
				status, outcome := "Completed", any("Passed")
				switch x := r.IntN(100); {
				case x < 5:
					status, outcome = "Cancelled", nil
				case x < 10:
					outcome = "Failed"
				}
				var expires *date
				if y := TrainingTypes[t].ExpiryYears; y > 0 && status == "Completed" && outcome == "Passed" {
					e := dayOf(end.time().AddDate(y, 0, 0))
					e2 := date(e)
					expires = &e2
				}
				cost := 0.0
				if r.IntN(100) < 40 {
					cost = float64(100 + 50*r.IntN(30))
				}
				return emit(id, TrainingTypes[t].Name, date(start), date(end), expires,
					half, ampm(half, "am"), decimal(hours), decimal(cost), status, outcome, p.id,
					int64(t+1), int64(1+r.IntN(3)), int64(1+r.IntN(4)), true, "source", syncedAt)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}
