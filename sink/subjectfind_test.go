package sink_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestSubjectFindEmployees: FindEmployees finds people by a name (every word a word of their
// first or last name, case and accents ignored, in their current record or an earlier one) or
// an email (any they had, case and spaces ignored), the same on both backends, and gives what
// tells several apart.
func TestSubjectFindEmployees(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := sinktest.Store(t, backend, sink.Options{})
			sinktest.LoadSubject(t, s) // 100: Pversionone, Pversiontwo, Pversionthree Plast; 200, 300
			sinktest.WalkEmployees(t, s, sinktest.Employees(t,
				`{"id":1,"first_name":"Zoë","last_name":"Brontë","email":"zoe.b@example.com","status":"Current employee","company_join_date":"2020-01-06","department":{"id":5,"name":"Research"}}`,
				`{"id":2,"first_name":"ZOE","last_name":"Bronte-Smith","email":"zoe@example.com","status":"Ex-employee","leaving_date":"2024-05-31"}`,
				`{"id":3,"first_name":"Anne","last_name":"Brontë","email":"anne@example.com","personal_email":"Anne.B@Home.example","Mobile_Email":7}`), 10, sink.MergeOptions{})
			ctx := context.Background()
			for _, tc := range []struct {
				q    sink.EmployeeQuery
				want string
			}{
				{sink.EmployeeQuery{Name: "zoe bronte"}, "[1 2]"},
				{sink.EmployeeQuery{Name: "Brontë"}, "[1 2 3]"},
				{sink.EmployeeQuery{Name: "smith zoe"}, "[2]"},
				{sink.EmployeeQuery{Name: "pversionone"}, "[100]"}, // an earlier name
				{sink.EmployeeQuery{Name: "zo"}, "[]"},             // words, not parts of them
				{sink.EmployeeQuery{Name: "  "}, "[]"},
				{sink.EmployeeQuery{Email: "P.ONE@example.com "}, "[100]"}, // an earlier email
				{sink.EmployeeQuery{Email: "zoe@example.com"}, "[2]"},
				{sink.EmployeeQuery{Email: "nobody@example.com"}, "[]"},
				{sink.EmployeeQuery{Email: "anne.b@home.example"}, "[3]"}, // a personal address the source sent
				{sink.EmployeeQuery{Email: "7"}, "[]"},                    // a member named email that holds no text
			} {
				found, err := s.FindEmployees(ctx, tc.q)
				if err != nil {
					t.Fatal(err)
				}
				ids := []int64{}
				for _, m := range found {
					ids = append(ids, m.ID)
				}
				if got := fmt.Sprint(ids); got != tc.want {
					t.Errorf("%+v: %s, want %s", tc.q, got, tc.want)
				}
			}
			found, err := s.FindEmployees(ctx, sink.EmployeeQuery{Name: "zoe"})
			if err != nil || len(found) != 2 {
				t.Fatalf("%v, %v", found, err)
			}
			want := []sink.EmployeeMatch{
				{ID: 1, FirstName: "Zoë", LastName: "Brontë", Department: "Research", Status: "Current employee", JoinDate: "2020-01-06"},
				{ID: 2, FirstName: "ZOE", LastName: "Bronte-Smith", Status: "Ex-employee", LeavingDate: "2024-05-31"},
			}
			for i := range want {
				if found[i] != want[i] {
					t.Errorf("match %d: %+v, want %+v", i, found[i], want[i])
				}
			}
			if found[0].Name() != "Zoë Brontë" || (sink.EmployeeMatch{ID: 9}).Name() != "employee 9" {
				t.Errorf("names %q, %q", found[0].Name(), (sink.EmployeeMatch{ID: 9}).Name())
			}
		})
	}
}

// FuzzSubjectFindName: any name asked for is a query that fails nothing and finds only people
// whose names hold its words.
func FuzzSubjectFindName(f *testing.F) {
	s := sinktest.Store(f, "sqlite", sink.Options{})
	sinktest.WalkEmployees(f, s, sinktest.Employees(f,
		`{"id":1,"first_name":"Zoë","last_name":"Brontë","email":"zoe.b@example.com"}`), 10, sink.MergeOptions{})
	for _, seed := range []string{"zoe", "Brontë", "ZOË BRONTË", "", "\xff\xfe", "a'b-c", "ﬁ", "Zoe\u0308"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		found, err := s.FindEmployees(context.Background(), sink.EmployeeQuery{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if len(found) > 1 || len(found) == 1 && found[0].ID != 1 {
			t.Errorf("%q found %+v", name, found)
		}
	})
}
