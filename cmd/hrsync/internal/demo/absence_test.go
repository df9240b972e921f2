package demo

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/sync/walk"
)

// TestAbsenceDaysByDepartment syncs a generated account's employees and absences and holds the
// demo's absence report to the same figures computed from the generated records: the absences
// starting in the year and not cancelled, counted and their deducted days summed by the
// employee's department ("(none)" for no department, null or "", and for someone not listed),
// most days first, ties by name, "(none)" last. The query a person is shown is the one run.
func TestAbsenceDaysByDepartment(t *testing.T) {
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 60, Seed: 5, AbsenceYears: 1})
	year := fakeupstream.Today().Year()

	dept := map[int64]string{}
	for _, raw := range acct.Employees {
		var e struct {
			ID         int64
			Department json.RawMessage
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		var d struct{ Name string }
		if json.Unmarshal(e.Department, &d) == nil && d.Name != "" {
			dept[e.ID] = d.Name
		}
	}
	sums := map[string]*departmentAbsence{}
	var cancelled, otherYears int
	for _, raw := range acct.Collections["absences"] {
		var a struct {
			Employee  struct{ ID int64 }
			StartDate string `json:"start_date"`
			Deducted  string
			Cancelled bool
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		switch {
		case a.Cancelled:
			cancelled++
			continue
		case a.StartDate[:4] != strconv.Itoa(year):
			otherYears++
			continue
		}
		name := cmp.Or(dept[a.Employee.ID], "(none)")
		if sums[name] == nil {
			sums[name] = &departmentAbsence{Department: name}
		}
		days, err := strconv.ParseFloat(a.Deducted, 64)
		if err != nil {
			t.Fatal(err)
		}
		sums[name].Absences++
		sums[name].Days += days
	}
	var want []departmentAbsence
	for _, s := range sums {
		want = append(want, *s)
	}
	slices.SortFunc(want, func(a, b departmentAbsence) int {
		return cmp.Or(cmp.Compare(boolInt(a.Department == "(none)"), boolInt(b.Department == "(none)")),
			cmp.Compare(b.Days, a.Days), cmp.Compare(a.Department, b.Department))
	})
	if cancelled == 0 || otherYears == 0 || len(want) < 5 || want[len(want)-1].Department != "(none)" {
		t.Fatalf("the account lacks a case: %d cancelled, %d of other years, lines %v", cancelled, otherYears, want)
	}

	demoBackends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		up := sourcetest.NewServer(acct.Options())
		t.Cleanup(up.Close)
		c, err := up.NewFastClient(client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := absenceDaysByDepartment(ctx, s, year)
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("an empty warehouse: %v %v, want no lines", got, err)
		}
		if _, err := walk.New(c, s, walk.Options{Concurrency: 2}).Run(ctx, []sink.Resource{sink.WorkingPatterns, sink.Employees, "absences"}); err != nil {
			t.Fatal(err)
		}
		if got, err = absenceDaysByDepartment(ctx, s, year); err != nil || !slices.Equal(got, want) {
			t.Errorf("absence days by department (%v)\n got %v\nwant %v", err, got, want)
		}
		rows, err := sinktest.DB(s).QueryContext(ctx, absenceDaysQuery(year))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if cols, err := rows.Columns(); err != nil || !slices.Equal(cols, []string{"department", "absences", "days"}) {
			t.Errorf("columns %v %v, want department, absences, days (the demo prints them)", cols, err)
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
