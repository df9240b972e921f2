package fakeupstream

import (
	"testing"

	"github.com/hrsync/hrsync/source/v1"
)

// TestAccountMatchesTheWireDeclarations: every generated record of every collection the wire
// declares decodes by its declaration (source/v1/collections.go), so the fake and the client
// agree on the shapes UPSTREAM.md records; and the recorded collections carry nothing the
// declaration does not name.
func TestAccountMatchesTheWireDeclarations(t *testing.T) {
	a := GenerateAccount(AccountOptions{Employees: 60, Seed: 7, AbsenceYears: 2})
	recorded := map[string]bool{"absences": true, "sicknesses": true, "employee_training_courses": true}
	for _, c := range v1.Collections {
		raws := a.Collections[c.Name]
		if len(raws) == 0 {
			t.Errorf("%s: the account generates none", c.Name)
			continue
		}
		for _, raw := range raws {
			r, err := c.Decode(raw)
			if err != nil {
				t.Errorf("%s: %v\n%s", c.Name, err, raw)
				break
			}
			if recorded[c.Name] && len(r.Extra) > 0 {
				t.Errorf("%s: fields the declaration does not name: %s", c.Name, r.Extra)
				break
			}
		}
	}
}
