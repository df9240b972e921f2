package server_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// TestDenyClassesConfiguredMembers: members of records no declaration names, classed by the
// account's configuration (Account.Declarations), are served by their classes: a key denying
// identifying sees an employee's cost_centre (employment) and not their dob (unconfigured:
// identifying); a key denying health does not see the diagnosis_code configured health, at the
// record's depth, in any case it is sent in. Without the configuration the same keys see the
// opposite.
func TestDenyClassesConfiguredMembers(t *testing.T) {
	t.Parallel()
	decls, err := v1.NewDeclarations(v1.Members{"employees": {"cost_centre": v1.Employment, "diagnosis_code": v1.Health}})
	if err != nil {
		t.Fatal(err)
	}
	const (
		identifying = "deny-identifying-key-3e9a7c1f5b2d8a4c6e0f"
		health      = "deny-health-key-3e9a7c1f5b2d8a4c6e0f"
	)
	keys := []server.Key{
		{Name: "deny-identifying", Key: identifying, Scope: server.Scope{DenyClasses: []v1.Class{v1.Identifying}}},
		{Name: "deny-health", Key: health, Scope: server.Scope{DenyClasses: []v1.Class{v1.Health}}},
	}
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			store := sinktest.Store(t, backend, sink.Options{Now: func() time.Time { return fixedNow }})
			f := &fixture{store: store}
			f.put(t, `{"id":1,"first_name":"Ann","job_title":"Chef","cost_centre":"CC-7","dob":"1980-01-01","diagnosis_code":"J11"}`,
				`{"id":2,"first_name":"Bo","cost_centre":"CC-8","DIAGNOSIS_CODE":"K22"}`)
			serve := func(d v1.Declarations) *fixture {
				h, err := server.New(server.Options{Keys: keys, Accounts: []server.Account{{Store: store, Declarations: d}}})
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				return &fixture{store: store, srv: srv}
			}
			configured, plain := serve(decls), serve(v1.Declarations{})
			for _, tc := range []struct {
				f        *fixture
				key      string
				has, not []string // members of employee 1
			}{
				{configured, identifying, []string{"cost_centre", "diagnosis_code", "job_title"}, []string{"first_name", "dob"}},
				{configured, health, []string{"cost_centre", "first_name", "dob"}, []string{"diagnosis_code"}},
				{plain, identifying, []string{"job_title"}, []string{"cost_centre", "diagnosis_code", "dob"}},
				{plain, health, []string{"cost_centre", "diagnosis_code", "dob"}, nil},
			} {
				recs := records(t, tc.f, tc.key, "/v1/employees")
				if len(recs) != 2 {
					t.Fatalf("%d records", len(recs))
				}
				for _, m := range tc.has {
					if _, ok := recs[0][m]; !ok {
						t.Errorf("%s: %s went: %v", tc.key, m, recs[0])
					}
				}
				for _, m := range tc.not {
					if _, ok := recs[0][m]; ok {
						t.Errorf("%s: %s served: %v", tc.key, m, recs[0])
					}
				}
			}
			if recs := records(t, configured, health, "/v1/employees/2"); recs[0]["DIAGNOSIS_CODE"] != nil {
				t.Errorf("deny health: DIAGNOSIS_CODE served: %v", recs[0])
			}
		})
	}
}

// TestConfiguredMembersFingerprint: a key's scope fingerprint (mixed into its ETags and cache
// keys) changes when the configuration classes a member so that the key's answers change: a
// client never revalidates an answer made under another configuration as current.
func TestConfiguredMembersFingerprint(t *testing.T) {
	t.Parallel()
	fp := func(c v1.Class, m v1.Members) string {
		t.Helper()
		d, err := v1.NewDeclarations(m)
		if err != nil {
			t.Fatal(err)
		}
		f, err := server.ScopeFingerprint(server.Scope{DenyClasses: []v1.Class{c}}, d)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	employment := v1.Members{"employees": {"cost_centre": v1.Employment}}
	health := v1.Members{"employees": {"cost_centre": v1.Health}}
	// Denying identifying, cost_centre classed employment is served where unclassed it is not;
	// denying health, classed health it is not served where unclassed it is. Where the answers
	// are the same, so is the fingerprint (employment or health, to a key denying identifying).
	if fp(v1.Identifying, nil) == fp(v1.Identifying, employment) {
		t.Error("deny identifying: cost_centre classed employment leaves the fingerprint as it was")
	}
	if fp(v1.Health, nil) == fp(v1.Health, health) {
		t.Error("deny health: cost_centre classed health leaves the fingerprint as it was")
	}
	if fp(v1.Identifying, employment) != fp(v1.Identifying, health) || fp(v1.Health, nil) != fp(v1.Health, employment) {
		t.Error("the same answers, another fingerprint")
	}
	if again := fp(v1.Identifying, v1.Members{"employees": {"cost_centre": v1.Employment}}); again != fp(v1.Identifying, employment) {
		t.Error("one configuration, two fingerprints")
	}
}
