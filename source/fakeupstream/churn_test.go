package fakeupstream_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/v1"
)

func TestChurnIsTheSameForTheSameSeed(t *testing.T) {
	opts := fakeupstream.ChurnOptions{Employees: 80, Seed: 11, Nights: 60}
	var first []fakeupstream.Night
	for n := range fakeupstream.Churn(opts) {
		first = append(first, n)
	}
	if len(first) != 60 {
		t.Fatalf("%d nights, want 60", len(first))
	}
	i := 0
	for n := range fakeupstream.Churn(opts) {
		if !sameNight(first[i], n) {
			t.Fatalf("night %d differs between two runs of the same options", i)
		}
		i++
	}
	opts.Seed++
	differs := false
	i = 0
	for n := range fakeupstream.Churn(opts) {
		differs = differs || !sameNight(first[i], n)
		i++
	}
	if !differs {
		t.Error("another seed made the same nights")
	}
}

func sameNight(a, b fakeupstream.Night) bool {
	same := func(x, y []json.RawMessage) bool {
		return slices.EqualFunc(x, y, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })
	}
	if a.N != b.N || !a.Day.Equal(b.Day) || !same(a.Employees, b.Employees) || !same(a.WorkingPatterns, b.WorkingPatterns) {
		return false
	}
	for name, rs := range a.Collections {
		if !same(rs, b.Collections[name]) {
			return false
		}
	}
	return len(a.Collections) == len(b.Collections)
}

// TestChurnIsOrdinary holds the year's churn to the rates it claims, and its records to what
// the source sends: every record decodes, leavers stay listed, and the one-off changes happen.
func TestChurnIsOrdinary(t *testing.T) {
	type employee struct{ status, leaving string }
	var (
		prev                       map[int64]employee
		hired, left, current       int
		booked, cancelled, removed int
		sick                       int
		events                     []string
		last                       fakeupstream.Night
	)
	for n := range fakeupstream.Churn(fakeupstream.ChurnOptions{Employees: 250, Seed: 5}) {
		if want := fakeupstream.Today().AddDate(0, 0, n.N); !n.Day.Equal(want) {
			t.Fatalf("night %d is %s, want %s", n.N, n.Day, want)
		}
		now := map[int64]employee{}
		for _, raw := range n.Employees {
			var e struct {
				ID          int64  `json:"id"`
				Status      string `json:"status"`
				LeavingDate string `json:"leaving_date"`
			}
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("night %d: employee %s: %v", n.N, raw, err)
			}
			now[e.ID] = employee{e.Status, e.LeavingDate}
			if e.Status != "Ex-employee" {
				current++
			}
			if e.Status != "Current employee" && e.LeavingDate == "" && prev != nil && prev[e.ID].status != "" && prev[e.ID].status != e.Status {
				t.Errorf("night %d: %d became %s without a leaving date", n.N, e.ID, e.Status)
			}
		}
		for id, was := range prev {
			if _, ok := now[id]; !ok && n.Changes.Deleted == 0 {
				t.Errorf("night %d: employee %d (%s) is no longer listed", n.N, id, was.status)
			}
			if was.status == "Ex-employee" && now[id].status != "Ex-employee" && now[id].status != "" {
				t.Errorf("night %d: Ex-employee %d is %s again", n.N, id, now[id].status)
			}
		}
		prev = now
		if n.N%30 == 0 {
			for name, rs := range n.Collections {
				c := v1.CollectionNamed(name)
				if c == nil {
					t.Fatalf("night %d: %s is not a declared collection", n.N, name)
				}
				for _, raw := range rs {
					if _, err := c.Decode(raw); err != nil {
						t.Fatalf("night %d: %s %s: %v", n.N, name, raw, err)
					}
				}
			}
			for _, raw := range n.Employees {
				var e v1.Employee
				if err := e.UnmarshalJSON(raw); err != nil {
					t.Fatalf("night %d: employee %s: %v", n.N, raw, err)
				}
			}
			for _, raw := range n.WorkingPatterns {
				var wp v1.WorkingPattern
				if err := wp.UnmarshalJSON(raw); err != nil {
					t.Fatalf("night %d: working pattern %s: %v", n.N, raw, err)
				}
			}
		}
		hired += n.Changes.Hired
		left += n.Changes.Left
		booked += n.Changes.Booked
		cancelled += n.Changes.Cancelled
		removed += n.Changes.Removed
		sick += n.Changes.Sick
		events = append(events, n.Changes.Events...)
		last = n
	}
	if last.N != 364 {
		t.Fatalf("last night %d, want 364", last.N)
	}
	// Rates a month, of the mean headcount still employed.
	headcount := float64(current) / 365
	for _, r := range []struct {
		what     string
		n        int
		min, max float64
	}{
		{"hires", hired, 0.01, 0.025},
		{"leavers", left, 0.01, 0.025},
	} {
		if rate := float64(r.n) / 12 / headcount; rate < r.min || rate > r.max {
			t.Errorf("%s: %d in the year, %.2f %% of %.0f a month; want %.1f-%.1f %%", r.what, r.n, 100*rate, headcount, 100*r.min, 100*r.max)
		}
	}
	if perHead := float64(booked) / headcount; perHead < 5 || perHead > 9 {
		t.Errorf("absences: %d booked, %.1f a person; want 5-9", booked, perHead)
	}
	if cancelled == 0 || removed == 0 || cancelled+removed > booked/5 {
		t.Errorf("absences: %d cancelled and %d removed of %d booked; want a few of each", cancelled, removed, booked)
	}
	if perHead := float64(sick) / headcount; perHead < 0.8 || perHead > 2 {
		t.Errorf("sicknesses: %d, %.1f a person; want 0.8-2", sick, perHead)
	}
	joined := strings.Join(events, "\n")
	for _, want := range []string{"department 509 Data & Analytics added", "department 503 renamed People", "department 508 closed",
		"reorganisation", "year end", "working pattern 37 added", "entered twice", "deleted"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q among the year's events:\n%s", want, joined)
		}
	}
	if got := strings.Count(joined, "reorganisation"); got != 3 {
		t.Errorf("%d reorganisations, want 3 (September, December, March)", got)
	}

	// The window is what the source's date filter keeps: overlapping records only.
	from, to := last.Day.AddDate(0, 0, -30), last.Day.AddDate(0, 0, 90)
	win := last.Window("absences", from, to)
	if len(win) == 0 || len(win) >= len(last.Collections["absences"]) {
		t.Fatalf("window %s..%s: %d of %d absences", from.Format(time.DateOnly), to.Format(time.DateOnly), len(win), len(last.Collections["absences"]))
	}
	for _, raw := range win {
		var a struct{ StartDate, EndDate string }
		if err := json.Unmarshal(raw, &struct {
			S *string `json:"start_date"`
			E *string `json:"end_date"`
		}{&a.StartDate, &a.EndDate}); err != nil {
			t.Fatal(err)
		}
		if a.StartDate > to.Format(time.DateOnly) || a.EndDate < from.Format(time.DateOnly) {
			t.Errorf("window %s..%s keeps %s", from.Format(time.DateOnly), to.Format(time.DateOnly), raw)
		}
	}
}
