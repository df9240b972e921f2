package sink_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestEraseConfiguredMembers: the members of records no declaration names that the
// configuration classes (Options.Declarations) are erased by their classes, everywhere an
// erasure reaches: a person's erasure keeps their cost_centre (employment) in extra and sent of
// their row and of every version, and in the answer kept for their create, while their
// unconfigured members (identifying) and the member configured health go; a sync stages them
// so again; a sickness's retention (health) keeps its member configured employment and takes its
// unconfigured ones (health, as the sicknesses' extra class). Without the configuration the
// same erasures take them all.
func TestEraseConfiguredMembers(t *testing.T) {
	t.Parallel()
	decls, err := v1.NewDeclarations(v1.Members{
		"employees":  {"cost_centre": v1.Employment, "diagnosis_code": v1.Health},
		"sicknesses": {"absence_code": v1.Employment},
	})
	if err != nil {
		t.Fatal(err)
	}
	const (
		kept   = "CC-kept-7731"   // employees' cost_centre
		kept2  = "AC-kept-5521"   // sicknesses' absence_code
		unconf = "ZQ-unconf-3310" // employees' payroll_ref: identifying
		health = "DX-health-4412" // employees' diagnosis_code
		gp     = "GP-unconf-9981" // sicknesses' gp: health
	)
	person := func(first string) string {
		return `{"id":42,"first_name":"` + first + `","job_title":"Chef","cost_centre":"` + kept + `","payroll_ref":"` + unconf +
			`","diagnosis_code":"` + health + `"}`
	}
	sickness := `{"id":5,"employee":{"id":42},"start_date":"2020-01-05","end_date":"2020-01-09","reason":"flu","absence_code":"` + kept2 + `","gp":"` + gp + `"}`
	markers := []string{kept, kept2, unconf, health, gp}
	for _, backend := range sinktest.Backends {
		for _, tc := range []struct {
			name  string
			decls v1.Declarations
			want  []string
		}{
			{"configured", decls, []string{
				"employees.extra: " + kept, "employees.sent: " + kept, "employees_history.extra: " + kept, "employees_history.sent: " + kept,
				"idempotency_keys.body: " + kept,
				"sicknesses.extra: " + kept2, "sicknesses.sent: " + kept2, "sicknesses_history.extra: " + kept2, "sicknesses_history.sent: " + kept2,
			}},
			{"plain", v1.Declarations{}, nil},
		} {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s := sinktest.Store(t, backend, sink.Options{Declarations: tc.decls, Now: func() time.Time { return fixedNow }})
				sync := func() {
					sinktest.WalkEmployees(t, s, sinktest.Employees(t, person("Ann")), 10, sink.MergeOptions{})
					sinktest.WalkRecords(t, s, v1.Sicknesses, sinktest.Records(t, v1.Sicknesses, sickness), sink.MergeOptions{})
				}
				sinktest.WalkEmployees(t, s, sinktest.Employees(t, person("Anne")), 10, sink.MergeOptions{})
				nextMillisecond()
				sync()
				if _, ok, err := s.ReserveIdempotency(ctx, v1.IdempotencyClaim{Client: "hr-app", Key: "k1", Hash: "h1", TTL: time.Hour, Stale: time.Minute}); err != nil || !ok {
					t.Fatalf("reserve: %v %v", ok, err)
				}
				if err := s.CompleteIdempotency(ctx, "hr-app", "k1", v1.IdempotencyRecord{Status: 201, EmployeeID: 42, Location: "http://x/v1/employees/42",
					Body: []byte(`{"employees":[` + person("Ann") + `]}` + "\n")}); err != nil {
					t.Fatal(err)
				}
				if found := markersIn(t, s, markers); len(found) < 10 {
					t.Fatalf("before the erasures, found only %q: the test cannot fail", found)
				}
				if _, err := s.EraseEmployee(ctx, 42, []v1.Class{v1.Identifying, v1.FreeText, v1.Financial}, "request"); err != nil {
					t.Fatal(err)
				}
				if _, err := s.EraseRecords(ctx, "sicknesses", []int64{5}, []v1.Class{v1.Health}, sink.ErasureCauseRetention+"sickness_details", ""); err != nil {
					t.Fatal(err)
				}
				if _, err := s.EraseEmployee(ctx, 42, []v1.Class{v1.Health}, "request"); err != nil {
					t.Fatal(err)
				}
				check := func(when string) {
					t.Helper()
					found := markersIn(t, s, markers)
					if !slices.Equal(found, tc.want) {
						t.Errorf("%s, found\n %s\nwant\n %s", when, strings.Join(found, "\n "), strings.Join(tc.want, "\n "))
					}
				}
				check("after the erasures")
				nextMillisecond()
				sync() // staged erased: nothing comes back, what was kept stays
				check("after a sync")
			})
		}
	}
}

// TestEraseConfiguredMemberInAnotherCase: a member sent in another case than the configuration
// names it (DIAGNOSIS_CODE for diagnosis_code: health) is erased by a health erasure too, in the
// row and every version, as serve hides it from a key denied health; the person's names, which a
// health erasure does not take, stay. Without the configuration it stays (identifying).
func TestEraseConfiguredMemberInAnotherCase(t *testing.T) {
	t.Parallel()
	decls, err := v1.NewDeclarations(v1.Members{"employees": {"diagnosis_code": v1.Health}})
	if err != nil {
		t.Fatal(err)
	}
	const (
		health = "DX-case-6620"  // employees' DIAGNOSIS_CODE
		name   = "Anwen-kept-55" // first_name: identifying
	)
	person := `{"id":42,"first_name":"` + name + `","job_title":"Chef","DIAGNOSIS_CODE":"` + health + `"}`
	all := []string{"employees.extra: " + health, "employees.first_name: " + name, "employees.sent: " + name, "employees.sent: " + health,
		"employees_history.extra: " + health, "employees_history.first_name: " + name, "employees_history.sent: " + name, "employees_history.sent: " + health}
	for _, backend := range sinktest.Backends {
		for _, tc := range []struct {
			name  string
			decls v1.Declarations
			want  []string
		}{
			{"configured", decls, []string{"employees.first_name: " + name, "employees.sent: " + name,
				"employees_history.first_name: " + name, "employees_history.sent: " + name}},
			{"plain", v1.Declarations{}, all},
		} {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := sinktest.Store(t, backend, sink.Options{Declarations: tc.decls, Now: func() time.Time { return fixedNow }})
				sinktest.WalkEmployees(t, s, sinktest.Employees(t, person), 10, sink.MergeOptions{})
				markers := []string{health, name}
				if found := markersIn(t, s, markers); !slices.Equal(found, all) {
					t.Fatalf("before the erasure, found\n %s\nwant\n %s", strings.Join(found, "\n "), strings.Join(all, "\n "))
				}
				if _, err := s.EraseEmployee(context.Background(), 42, []v1.Class{v1.Health}, "request"); err != nil {
					t.Fatal(err)
				}
				if found := markersIn(t, s, markers); !slices.Equal(found, tc.want) {
					t.Errorf("after a health erasure, found\n %s\nwant\n %s", strings.Join(found, "\n "), strings.Join(tc.want, "\n "))
				}
			})
		}
	}
}
