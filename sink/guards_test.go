package sink_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// visibleState is what a held load must leave as it was: the warehouse's version (serve's
// ETags), every served employee, and the history's rows.
func visibleState(t *testing.T, s *sink.Store) string {
	t.Helper()
	v, err := s.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	history := sinktest.QueryString(t, s, `SELECT count(*) FROM employees_history`)
	rows := served(t, s)
	ids := make([]int64, 0, len(rows))
	for id := range rows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	fmt.Fprintf(&b, "version %d, history %s\n", v, history)
	for _, id := range ids {
		b.WriteString(rows[id] + "\n")
	}
	return b.String()
}

func titled(es []v1.Employee, title string) []v1.Employee {
	out := make([]v1.Employee, len(es))
	for i, e := range es {
		out[i] = sinktest.Employee(e.ID, int64(i%3+1), 1, title)
	}
	return out
}

func TestGuardsHoldABlankedColumn(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		es := titled(people(200), "Engineer")
		first := sinktest.WalkEmployees(t, s, es, 100, sink.MergeOptions{Complete: true})
		if len(first.Holds) != 0 || first.Profile.Before != 0 || first.Profile.After != 200 {
			t.Fatalf("first sync: holds %v, profile %d → %d", first.Holds, first.Profile.Before, first.Profile.After)
		}
		title := column(t, first.Profile, "job_title")
		if title.FilledAfter != 200 || title.Distinct != 1 || title.Capped {
			t.Errorf("job_title profile %+v, want 200 filled, 1 distinct", title)
		}
		if c := column(t, first.Profile, "email"); c.Distinct != 200 {
			t.Errorf("email profile %+v, want 200 distinct", c)
		}
		before := visibleState(t, s)

		blank := titled(es, "")
		for _, dry := range []bool{true, false} {
			res := sinktest.WalkEmployees(t, s, blank, 100, sink.MergeOptions{Complete: true, DryRun: dry})
			const want = "employees.job_title: 100% → 0% filled (200 of 200 records → 0 of 200)"
			if !res.Held() || len(res.Holds) != 1 || res.Holds[0].Message != want || res.Holds[0].Key() != "fill:employees.job_title" {
				t.Fatalf("dry run %v: held %v, holds %+v; want one: %s", dry, res.Held(), res.Holds, want)
			}
			if after := visibleState(t, s); after != before {
				t.Fatalf("dry run %v: a held load changed what is visible:\n%s\nwas\n%s", dry, after, before)
			}
		}
		// The same load, accepted: published, and the hold recorded as accepted.
		res := sinktest.WalkEmployees(t, s, blank, 100, sink.MergeOptions{Complete: true, Accept: []string{"fill:employees.job_title"}})
		if res.Held() || len(res.Holds) != 1 || !res.Holds[0].Accepted || res.Updated != 200 {
			t.Fatalf("accepted: %+v", res)
		}
		if got := sinktest.QueryString(t, s, `SELECT count(*) FROM employees WHERE job_title <> ''`); got != "0" {
			t.Errorf("%s employees keep a job title after the accepted load, want 0", got)
		}
		// From now on blank is the normal: the next night holds nothing, and a title coming back
		// is no hold either.
		if res := sinktest.WalkEmployees(t, s, blank, 100, sink.MergeOptions{Complete: true}); len(res.Holds) != 0 {
			t.Errorf("the night after: %v", res.Holds)
		}
		if res := sinktest.WalkEmployees(t, s, es, 100, sink.MergeOptions{Complete: true}); len(res.Holds) != 0 || res.Updated != 200 {
			t.Errorf("titles back: %+v", res)
		}
		_ = ctx
	})
}

func column(t *testing.T, p sink.LoadProfile, name string) sink.ColumnProfile {
	t.Helper()
	for _, c := range p.Columns {
		if c.Column == name {
			return c
		}
	}
	t.Fatalf("no column %s in the profile", name)
	return sink.ColumnProfile{}
}

func TestGuardsNoHoldOnFirstSyncsAndTinyAccounts(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		es := titled(people(5), "Engineer")
		if res := sinktest.WalkEmployees(t, s, titled(es, ""), 5, sink.MergeOptions{Complete: true}); len(res.Holds) != 0 {
			t.Errorf("first sync of blank titles: %v", res.Holds)
		}
		steps := []struct {
			name string
			es   []v1.Employee
		}{
			{"titles filled", es},
			{"every title blank", titled(es, "")},
			{"titles back", es},
			{"three of five leave", es[:2]},
			{"twenty join", titled(people(22), "Engineer")},
		}
		for _, st := range steps {
			if res := sinktest.WalkEmployees(t, s, st.es, 5, sink.MergeOptions{Complete: true}); len(res.Holds) != 0 {
				t.Errorf("%s: %v", st.name, res.Holds)
			}
		}
	})
}

func TestGuardsShrinkGrowthAndReferences(t *testing.T) {
	t.Parallel()
	depts := func(t *testing.T, ids ...int64) []v1.Record {
		var bodies []string
		for _, id := range ids {
			bodies = append(bodies, fmt.Sprintf(`{"id":%d,"name":"Dept %d"}`, id, id))
		}
		return sinktest.Records(t, v1.Departments, bodies...)
	}
	inDept := func(es []v1.Employee, base int64) []v1.Employee {
		out := make([]v1.Employee, len(es))
		for i, e := range es {
			out[i] = sinktest.Employee(e.ID, base+int64(i%3), 1, "Engineer")
		}
		return out
	}
	tests := []struct {
		name string
		next []v1.Employee
		want string // the hold's message; "" for none
	}{
		{"ordinary churn", inDept(append(people(205)[:1:1], people(205)[6:]...), 1), ""},
		{"40% gone", inDept(people(120), 1), "employees: 200 → 120 records (80, 40%, would be deleted; at most 10% allowed)"},
		{"90 new", inDept(people(290), 1), ""},
		{"more than doubled", inDept(people(500), 1), "employees: 200 → 500 records (300 new, more than the 100% allowed)"},
		{"departments renumbered", inDept(people(200), 101), "employees.department_id: 0% → 100% point at no listed record (0 of 200 → 200 of 200)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			backends(t, func(t *testing.T, s *sink.Store) {
				sinktest.WalkRecords(t, s, v1.Departments, depts(t, 1, 2, 3), sink.MergeOptions{Complete: true})
				first := sinktest.WalkEmployees(t, s, inDept(people(200), 1), 100, sink.MergeOptions{Complete: true})
				if len(first.Holds) != 0 {
					t.Fatalf("first sync: %v", first.Holds)
				}
				before := visibleState(t, s)
				res := sinktest.WalkEmployees(t, s, tt.next, 100, sink.MergeOptions{Complete: true})
				if got := holdMessages(res); got != tt.want || res.Held() != (tt.want != "") {
					t.Fatalf("holds %q, want %q", got, tt.want)
				}
				if tt.want != "" {
					if after := visibleState(t, s); after != before {
						t.Errorf("a held load changed what is visible")
					}
				}
			})
		})
	}
}

// TestGuardsModuleAmounts: the financial module's amounts are members hrsync does not declare
// (kept as sent); a permission change that blanks them is held like a column.
func TestGuardsModuleAmounts(t *testing.T) {
	t.Parallel()
	salaries := func(t *testing.T, amount bool) []v1.Record {
		var bodies []string
		for id := 1; id <= 60; id++ {
			a := "null"
			if amount {
				a = fmt.Sprintf(`"%d.00"`, 30000+id*100)
			}
			bodies = append(bodies, fmt.Sprintf(`{"id":%d,"employee":{"id":%d},"amount":%s,"currency":"GBP"}`, id, id, a))
		}
		return sinktest.Records(t, v1.Salaries, bodies...)
	}
	backends(t, func(t *testing.T, s *sink.Store) {
		first := sinktest.WalkRecords(t, s, v1.Salaries, salaries(t, true), sink.MergeOptions{Complete: true})
		if len(first.Holds) != 0 {
			t.Fatalf("first sync: %v", first.Holds)
		}
		if c := column(t, first.Profile, "amount"); !c.Member || c.FilledAfter != 60 || c.Distinct != 60 {
			t.Errorf("amount profile %+v, want a member, 60 filled, 60 distinct", c)
		}
		res := sinktest.WalkRecords(t, s, v1.Salaries, salaries(t, false), sink.MergeOptions{Complete: true})
		const want = "salaries.amount: 100% → 0% filled (60 of 60 records → 0 of 60)"
		if got := holdMessages(res); got != want || !res.Held() || res.Holds[0].Key() != "fill:salaries.amount" {
			t.Fatalf("holds %q, want %q", got, want)
		}
		if err := sink.ValidGuardKey(res.Holds[0].Key()); err != nil {
			t.Errorf("the hold's key is no valid setting: %v", err)
		}
		if got := sinktest.QueryString(t, s, `SELECT count(*) FROM salaries WHERE CAST(extra AS text) LIKE '%"amount":"3%'`); got != "60" {
			t.Errorf("%s salaries keep their amount, want all 60", got)
		}
	})
}

func TestGuardsRecordedInTheLedger(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		es := titled(people(50), "Engineer")
		sinktest.WalkEmployees(t, s, es, 50, sink.MergeOptions{Complete: true})
		res := sinktest.WalkEmployees(t, s, titled(es, ""), 50, sink.MergeOptions{Complete: true})
		id, err := s.StartRun(ctx, "run-1", sink.Employees, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		r := sink.Run{ID: id, Status: sink.RunHeld, FinishedAt: time.Now(), Holds: res.Holds, Profile: &res.Profile}
		if err := s.FinishRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Hold(ctx, sink.Employees)
		if err != nil || !ok || len(got.Holds) != 1 || got.Holds[0] != res.Holds[0] {
			t.Fatalf("hold %+v %v %v, want %+v", got, ok, err, res.Holds)
		}
		p, err := s.Profile(ctx, id)
		if err != nil || p == nil || fmt.Sprint(*p) != fmt.Sprint(res.Profile) {
			t.Fatalf("profile\n got %+v (%v)\nwant %+v", p, err, res.Profile)
		}
		// Accepted: the next run ends ok and records who and why; no hold stands.
		id, _ = s.StartRun(ctx, "run-2", sink.Employees, time.Now())
		if err := s.FinishRun(ctx, sink.Run{ID: id, Status: sink.RunOK, FinishedAt: time.Now(), AcceptedBy: "dpo", AcceptReason: "titles moved to the new field"}); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.Hold(ctx, sink.Employees); ok || err != nil {
			t.Errorf("a hold stands after an ok run (%v)", err)
		}
		runs, _ := s.Runs(ctx, 1)
		if runs[0].AcceptedBy != "dpo" || runs[0].AcceptReason != "titles moved to the new field" {
			t.Errorf("ledger row %+v", runs[0])
		}
	})
}

// TestGuardsProfileIsExact holds the profile's served side, worked out from the staged counts
// and the few rows that differ (profile.go), to what is served: after a published complete
// walk the warehouse serves exactly what was staged, so each load's Before is the last load's
// After, column by column and member by member, whatever changed in between.
func TestGuardsProfileIsExact(t *testing.T) {
	t.Parallel()
	titles := []string{"Engineer", "Lead", "", "  ", "Analyst"}
	members := []string{``, `,"nickname":null`, `,"nickname":""`, `,"nickname":" "`, `,"nickname":[]`, `,"nickname":{}`,
		`,"nickname":"Bo"`, `,"nickname":["x"]`, `,"nickname":{"a":1}`, `,"nickname":0`, `,"nickname":false`}
	backends(t, func(t *testing.T, s *sink.Store) {
		rng := rand.New(rand.NewPCG(7, 9))
		var prev *sink.LoadProfile
		for round := range 6 {
			var es []v1.Employee
			for id := int64(1); id <= 300; id++ {
				if rng.IntN(10) == 0 && round > 0 {
					continue // gone this round
				}
				raw := fmt.Sprintf(`{"id":%d,"first_name":"F","last_name":"L%d","email":"e%d@example.com","job_title":%q,"status":"Current employee","department":{"id":%d,"name":"D"}`,
					id, id, id, titles[rng.IntN(len(titles))], 1+rng.IntN(4))
				if m := rng.IntN(3); m > 0 {
					raw += fmt.Sprintf(`,"line_manager":{"id":%d,"name":"B"}`, m*100+rng.IntN(3))
				}
				raw += members[rng.IntN(len(members))]
				if rng.IntN(2) == 0 {
					raw += `,"middle_name":"M"`
				}
				es = append(es, sinktest.Employees(t, raw+"}")[0])
			}
			if round == 4 {
				es = append(es, es[:5]...) // a walk the source shifted: some records twice
			}
			res := sinktest.WalkEmployees(t, s, es, 50, sink.MergeOptions{Complete: true, Accept: []string{
				"shrink:employees", "growth:employees", "fill:employees.job_title", "fill:employees.line_manager_id",
				"fill:employees.nickname", "fill:employees.middle_name", "unlisted:employees.line_manager_id"}})
			if res.Held() {
				t.Fatalf("round %d held: %v", round, res.Holds)
			}
			if prev != nil {
				if got, want := profileSide(res.Profile, true), profileSide(*prev, false); got != want {
					t.Errorf("round %d: the served side\n%s\nwant the last load's staged side\n%s", round, got, want)
				}
			}
			// The staged side, counted in Go (or, for the shifted walk, in SQL), is what is now
			// served.
			want := sinktest.QueryString(t, s, `SELECT count(*) FROM employees WHERE listed AND deleted_at IS NULL`)
			if got := fmt.Sprint(res.Profile.After); got != want {
				t.Errorf("round %d: %s staged, %s served", round, got, want)
			}
			want = sinktest.QueryString(t, s, `SELECT count(*) FROM employees WHERE listed AND deleted_at IS NULL AND trim(job_title) <> ''`)
			if got := fmt.Sprint(column(t, res.Profile, "job_title").FilledAfter); got != want {
				t.Errorf("round %d: %s staged job titles, %s served", round, got, want)
			}
			prev = &res.Profile
		}
	})
}

// profileSide writes one side of a profile's counts, the members that hold a value on it.
func profileSide(p sink.LoadProfile, before bool) string {
	var b strings.Builder
	n := p.After
	if before {
		n = p.Before
	}
	fmt.Fprintf(&b, "records %d\n", n)
	for _, c := range p.Columns {
		f := c.FilledAfter
		if before {
			f = c.FilledBefore
		}
		if c.Member && f == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s %d\n", c.Column, f)
	}
	return b.String()
}

func TestValidGuardKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key, errHas string
	}{
		{"fill:employees.job_title", ""},
		{"fill:salaries.amount", ""}, // a member the source sends that hrsync does not declare
		{"unlisted:employees.department_id", ""},
		{"shrink:absences", ""},
		{"growth:departments", ""},
		{"fill:employees", "needs a column"},
		{"shrink:employees.job_title", "without a column"},
		{"unlisted:employees.job_title", "no column \"job_title\" the unlisted guard watches"},
		{"fill:employees.id", "no column"},
		{"fill:employees.job title", "no column"},
		{"fill:payroll.amount", "not a collection hrsync loads"},
		{"blank:employees.job_title", "no guard \"blank\""},
		{"employees.job_title", "want fill:COLLECTION.COLUMN"},
	}
	for _, tt := range tests {
		err := sink.ValidGuardKey(tt.key)
		if (tt.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.errHas)) {
			t.Errorf("ValidGuardKey(%q) = %v, want an error with %q", tt.key, err, tt.errHas)
		}
	}
}

func TestGuardSettingsOver(t *testing.T) {
	t.Parallel()
	account := sink.GuardSettings{MinRecords: 20, MaxShrink: 0.05}
	got := account.Over(sink.GuardSettings{MaxShrink: 0.3, MaxGrowth: -1})
	want := sink.GuardSettings{MinRecords: 20, MaxShrink: 0.3, MaxGrowth: -1}
	if got != want {
		t.Errorf("Over = %+v, want %+v", got, want)
	}
	if d := sink.DefaultGuards.Over(sink.GuardSettings{}); d != sink.DefaultGuards {
		t.Errorf("zero settings over the defaults = %+v", d)
	}
}

// TestGuardsLeaveCreatesAlone: a create's answer written into the replica (PutEmployee) is one
// record, not a walk of the collection; weighed against the 200 served it would look like every
// column gone blank, and a held write would be lost.
func TestGuardsLeaveCreatesAlone(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		sinktest.WalkEmployees(t, s, titled(people(200), "Engineer"), 100, sink.MergeOptions{Complete: true})
		hire := sinktest.Employees(t, `{"id":900,"first_name":"New","last_name":"Hire","email":"new@example.com","status":"Current employee"}`)[0]
		if err := s.PutEmployee(context.Background(), hire); err != nil {
			t.Fatal(err)
		}
		if _, ok := served(t, s)[900]; !ok {
			t.Error("the create's answer is not served")
		}
	})
}

// TestGuardsNeedReferencesToCompare: a few records served before a collection's first real
// walk (created here, with no department) are nothing to weigh references against.
func TestGuardsNeedReferencesToCompare(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		for id := int64(1); id <= 3; id++ {
			e := sinktest.Employees(t, fmt.Sprintf(`{"id":%d,"first_name":"F","last_name":"L","email":"e%d@example.com","status":"Current employee"}`, id, id))[0]
			if err := s.PutEmployee(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
		res := sinktest.WalkEmployees(t, s, titled(people(33), "Engineer"), 100, sink.MergeOptions{Complete: true})
		if len(res.Holds) != 0 {
			t.Errorf("holds %s", holdMessages(res))
		}
	})
}
