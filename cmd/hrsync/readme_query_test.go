package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/sync/walk"
)

// readmeQuery is the SQL of docs/warehouse.md's fenced block between "<!-- query: name -->" and
// "<!-- end query -->": the text a reader pastes, so the tests run what the page says.
func readmeQuery(t *testing.T, name string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "warehouse.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- query: "+name+" -->\n")
	block, _, closed := strings.Cut(rest, "<!-- end query -->")
	if !ok || !closed {
		t.Fatalf("docs/warehouse.md has no query %q between its markers", name)
	}
	block = strings.TrimSpace(block)
	sql, ok := strings.CutPrefix(block, "```sql\n")
	if !ok || !strings.HasSuffix(sql, "\n```") {
		t.Fatalf("docs/warehouse.md's query %q is not one ```sql block:\n%s", name, block)
	}
	return strings.TrimSuffix(sql, "\n```")
}

// The generated records, as the source writes them: what the figures are computed from.
type (
	genRef      struct{ ID int64 }
	genEmployee struct {
		ID         int64
		Department json.RawMessage // {id, name}, null or ""
	}
	genSickness struct {
		ID        int64
		Employee  genRef
		StartDate string  `json:"start_date"`
		EndDate   *string `json:"end_date"`
		HalfStart *bool   `json:"half_start"`
		HalfEnd   *bool   `json:"half_end"`
	}
)

// sicknessKey is one line of docs/warehouse.md's answer.
type sicknessKey struct{ month, department string }

// TestREADMESicknessDaysQuery syncs a generated account, gives some employees a department
// move in their history (the department they had before a date, and the one since), runs
// docs/warehouse.md's sickness-days query as it stands there, and checks each of its figures against the
// page's rules applied in Go to the generated records: weekdays, each in its month; half days
// 0.5; an open-ended sickness up to today (UTC); the department of the version last seen by the
// first day, or the first version when history begins later.
func TestREADMESicknessDaysQuery(t *testing.T) {
	t.Parallel()
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 80, Seed: 13, AbsenceYears: 3})

	// The account's departments, and each listed employee's.
	deptName := map[int64]string{}
	deptOf := map[int64]int64{} // employee → department id; absent: none
	listed := map[int64]bool{}
	for _, raw := range acct.Employees {
		var e genEmployee
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		listed[e.ID] = true
		var d struct {
			ID   int64
			Name string
		}
		if json.Unmarshal(e.Department, &d) == nil && d.ID != 0 { // null and "" are no department
			deptName[d.ID], deptOf[e.ID] = d.Name, d.ID
		}
	}
	var sick []genSickness
	byEmployee := map[int64][]genSickness{}
	for _, raw := range acct.Collections["sicknesses"] {
		var s genSickness
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		sick = append(sick, s)
		byEmployee[s.Employee.ID] = append(byEmployee[s.Employee.ID], s)
	}

	// The moves: every other listed employee with two sicknesses or more moved department at
	// noon (UTC) on the first day of their second sickness, from another department (one in
	// no department, from the first one). A sickness beginning that day is the new
	// department's: the move was seen by then.
	type move struct {
		at   time.Time
		from int64
	}
	moves := map[int64]move{}
	depts := slices.Sorted(maps.Keys(deptName))
	var ids []int64
	for id, ss := range byEmployee {
		if listed[id] && len(ss) >= 2 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for i, id := range ids {
		if i%2 != 0 {
			continue
		}
		ss := slices.SortedFunc(slices.Values(byEmployee[id]), func(a, b genSickness) int { return strings.Compare(a.StartDate, b.StartDate) })
		day, err := time.Parse(time.DateOnly, ss[1].StartDate)
		if err != nil {
			t.Fatal(err)
		}
		from := depts[0]
		if cur, ok := deptOf[id]; ok {
			from = depts[(slices.Index(depts, cur)+1)%len(depts)]
		}
		moves[id] = move{at: day.Add(12 * time.Hour), from: from}
	}
	if len(moves) < 5 {
		t.Fatalf("only %d employees to move: a larger account is needed", len(moves))
	}

	// want is the page's answer, computed from the records for the day today (UTC).
	want := func(today time.Time) map[sicknessKey]float64 {
		out := map[sicknessKey]float64{}
		for _, s := range sick {
			start, err := time.Parse(time.DateOnly, s.StartDate)
			if err != nil {
				t.Fatal(err)
			}
			last := today
			if s.EndDate != nil {
				if last, err = time.Parse(time.DateOnly, *s.EndDate); err != nil {
					t.Fatal(err)
				}
			}
			dept, ok := deptOf[s.Employee.ID]
			if m, moved := moves[s.Employee.ID]; moved && start.Before(m.at.Truncate(24*time.Hour)) {
				dept, ok = m.from, true
			}
			name := "(no department)"
			if ok {
				name = deptName[dept]
			}
			for day := start; !day.After(last); day = day.AddDate(0, 0, 1) {
				if day.Weekday() == time.Saturday || day.Weekday() == time.Sunday {
					continue
				}
				n := 1.0
				if (day.Equal(start) && s.HalfStart != nil && *s.HalfStart) ||
					(s.EndDate != nil && day.Equal(last) && s.HalfEnd != nil && *s.HalfEnd) {
					n = 0.5
				}
				out[sicknessKey{day.Format("2006-01"), name}] += n
			}
		}
		return out
	}

	// The rules are exercised: open-ended sicknesses, half days, and sicknesses on both sides
	// of a move.
	var open, halves, before, after int
	for _, s := range sick {
		if s.EndDate == nil {
			open++
		}
		if s.HalfStart != nil && *s.HalfStart || s.HalfEnd != nil && *s.HalfEnd {
			halves++
		}
		if m, ok := moves[s.Employee.ID]; ok {
			if s.StartDate < m.at.Format(time.DateOnly) {
				before++
			} else {
				after++
			}
		}
	}
	if open == 0 || halves == 0 || before == 0 || after == 0 {
		t.Fatalf("the account lacks a case: %d open-ended, %d with half days, %d before a move, %d after", open, halves, before, after)
	}

	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			up := sourcetest.NewServer(acct.Options())
			t.Cleanup(up.Close)
			c, err := up.NewFastClient(client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			store := sinktest.Store(t, backend, sink.Options{})
			rs, err := walk.New(c, store, walk.Options{Concurrency: 2}).
				Run(ctx, walk.Ordered([]sink.Resource{sink.WorkingPatterns, sink.Employees, "sicknesses"}))
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 3 {
				t.Fatalf("synced %d collections, want 3", len(rs))
			}

			// The history a warehouse synced since before the generated years would hold: the
			// first sync's version since the move, another department before it.
			for id, m := range moves {
				at := m.at.UTC().Format("2006-01-02T15:04:05.000Z")
				for _, q := range []string{
					fmt.Sprintf(`UPDATE employees_history SET valid_from = '%s' WHERE id = %d AND valid_to IS NULL`, at, id),
					fmt.Sprintf(`INSERT INTO employees_history (id, valid_from, valid_to, department_id, listed, origin)
						VALUES (%d, '2000-01-01T00:00:00.000Z', '%s', %d, true, 'source')`, id, at, m.from),
				} {
					if _, err := sinktest.DB(store).ExecContext(ctx, q); err != nil {
						t.Fatalf("move employee %d: %v", id, err)
					}
				}
			}

			query := readmeQuery(t, "sickness days, "+backend)
			// The query counts open-ended sicknesses up to today: asked again should the day
			// turn while it runs.
			for {
				today := time.Now().UTC().Truncate(24 * time.Hour)
				got := map[sicknessKey]float64{}
				rows, err := sinktest.DB(store).QueryContext(ctx, query)
				if err != nil {
					t.Fatalf("docs/warehouse.md's query: %v", err)
				}
				var months []string
				for rows.Next() {
					var k sicknessKey
					var days float64
					if err := rows.Scan(&k.month, &k.department, &days); err != nil {
						t.Fatal(err)
					}
					if _, dup := got[k]; dup {
						t.Errorf("%s %s answered twice", k.month, k.department)
					}
					got[k] = days
					months = append(months, k.month)
				}
				if err := rows.Close(); err != nil {
					t.Fatal(err)
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				if !time.Now().UTC().Truncate(24 * time.Hour).Equal(today) {
					continue
				}
				if !slices.IsSorted(months) {
					t.Error("the answer is not in month order")
				}
				w := want(today)
				for k, days := range w {
					if got[k] != days {
						t.Errorf("%s %s: %g sickness days, want %g", k.month, k.department, got[k], days)
					}
				}
				for k, days := range got {
					if _, ok := w[k]; !ok {
						t.Errorf("%s %s: %g sickness days, want none", k.month, k.department, days)
					}
				}
				if len(w) < 50 {
					t.Errorf("only %d lines: the account is too small to say much", len(w))
				}
				return
			}
		})
	}
}
