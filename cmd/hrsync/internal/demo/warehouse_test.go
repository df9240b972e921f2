package demo

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// demoBackends runs test on an empty migrated warehouse of each backend, as sink's tests do.
func demoBackends(t *testing.T, test func(t *testing.T, s *sink.Store)) {
	t.Helper()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			test(t, sinktest.Store(t, backend, sink.Options{}))
		})
	}
}

func TestHeadcountByDepartment(t *testing.T) {
	demoBackends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		today := time.Now().UTC()
		tomorrow := today.AddDate(0, 0, 1)
		got, err := headcountByDepartment(ctx, s, today)
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("an empty warehouse: %v %v, want no lines", got, err)
		}
		// Dept 1: 3; Dept 2: 3, one of whom (8) the second walk no longer lists: seen employed,
		// so they left the day it stopped listing them (today), still in today's headcount, not
		// in tomorrow's. Dept 3: 2, one of whom (5) the source now lists as Ex-employee: left
		// today, as first seen so after being seen employed. Everyone joined in January 2020.
		// Employee 1's manager is never listed, so the warehouse holds an unlisted row for
		// them, which is not counted.
		es := []v1.Employee{
			sinktest.Employee(1, 1, 9999, "Engineer"), sinktest.Employee(2, 1, 1, "Engineer"), sinktest.Employee(3, 1, 1, "Engineer"),
			sinktest.Employee(4, 3, 1, "Engineer"), sinktest.Employee(5, 3, 1, "Engineer"),
			sinktest.Employee(6, 2, 1, "Engineer"), sinktest.Employee(7, 2, 1, "Engineer"), sinktest.Employee(8, 2, 1, "Engineer"),
		}
		sinktest.WalkEmployees(t, s, es, 5, sink.MergeOptions{Complete: true})
		es[4].Status = "Ex-employee"
		if res := sinktest.WalkEmployees(t, s, es[:7], 5, sink.MergeOptions{Complete: true, AllowMassDelete: true}); res.Deleted != 1 {
			t.Fatalf("the second walk: %+v, want 1 deleted", res)
		}
		var unlisted int
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT count(*) FROM employees WHERE NOT listed`).Scan(&unlisted); err != nil || unlisted != 1 {
			t.Fatalf("unlisted rows: %d %v, want employee 1's manager", unlisted, err)
		}
		// Created here, with no department.
		if _, err := s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Zoë", LastName: "Ødegård", Email: "zoe@example.com", JoinDate: "2025-08-31"}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			day  time.Time
			want []departmentCount
		}{
			// Largest first, a tie by name, no department last.
			{today, []departmentCount{{"Dept 1", 3}, {"Dept 2", 3}, {"Dept 3", 2}, {"(none)", 1}}},
			{tomorrow, []departmentCount{{"Dept 1", 3}, {"Dept 2", 2}, {"Dept 3", 1}, {"(none)", 1}}},
			// Before Zoë joined.
			{time.Date(2025, 8, 30, 0, 0, 0, 0, time.UTC), []departmentCount{{"Dept 1", 3}, {"Dept 2", 3}, {"Dept 3", 2}}},
		} {
			got, err = headcountByDepartment(ctx, s, c.day)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("headcount on %s\n got %v\nwant %v", c.day.Format(time.DateOnly), got, c.want)
			}
		}
		// The text a person is shown is the query that was run: the same answer from the
		// database handle directly.
		rows, err := sinktest.DB(s).QueryContext(ctx, headcountByDepartmentQuery(tomorrow.Format(time.DateOnly)))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if cols, err := rows.Columns(); err != nil || !slices.Equal(cols, []string{"department", "headcount"}) {
			t.Errorf("columns %v %v, want department, headcount (the demo prints them)", cols, err)
		}
		var direct []departmentCount
		for rows.Next() {
			var c departmentCount
			if err := rows.Scan(&c.Department, &c.Headcount); err != nil {
				t.Fatal(err)
			}
			direct = append(direct, c)
		}
		want := []departmentCount{{"Dept 1", 3}, {"Dept 2", 2}, {"Dept 3", 1}, {"(none)", 1}}
		if err := rows.Err(); err != nil || !slices.Equal(direct, want) {
			t.Errorf("the query run directly: %v %v", direct, err)
		}
	})
}
