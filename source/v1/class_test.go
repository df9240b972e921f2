package v1

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestEveryMemberIsClassified: every declared field, every member a nested object carries, and
// every plain field of the seed's two records has a personal-data class.
func TestEveryMemberIsClassified(t *testing.T) {
	for _, c := range Collections {
		if err := c.Validate(); err != nil {
			t.Error(err)
		}
		if !c.ExtraClass().Valid() {
			t.Errorf("%s: extra has no class", c.Name)
		}
	}
	for _, f := range EmployeeFields {
		if !f.Class.Valid() {
			t.Errorf("employees.%s: no personal-data class", f.Name)
		}
	}
	for _, f := range PatternFields {
		if !f.Class.Valid() {
			t.Errorf("working_patterns.%s: no personal-data class", f.Name)
		}
	}
	for _, f := range EmployeeRefs {
		if !f.Class.Valid() || f.Kind != Nested || f.Nested == nil {
			t.Errorf("employees.%s: not a classified nested reference", f.Name)
			continue
		}
		for _, cf := range f.Nested.Fields {
			if !cf.Class.Valid() {
				t.Errorf("employees.%s.%s: no personal-data class", f.Name, cf.Name)
			}
		}
	}
}

// TestEmployeeRefsAreTheRecords: EmployeeRefs declares exactly the references an employee's
// decoding knows, each carrying what the decoding reads out of it.
func TestEmployeeRefsAreTheRecords(t *testing.T) {
	var e Employee
	in := `{"id":1,"working_pattern":{"id":2,"name":"w","total_hours":"1","default":true},` +
		`"holiday_allowance":{"id":3,"name":"h"},"department":{"id":4,"name":"d"},"division":{"id":5,"name":"v"},` +
		`"location":{"id":6,"name":"l"},"line_manager":{"id":7,"first_name":"a","last_name":"b","email":"c"},` +
		`"holiday_approver":{"id":8,"first_name":"a","last_name":"b","email":"c"}}`
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	var decoded []string
	for _, f := range e.nestedForms() {
		decoded = append(decoded, f.name)
	}
	var declared []string
	for _, f := range EmployeeRefs {
		declared = append(declared, f.Name)
	}
	slices.Sort(declared)
	if !slices.Equal(decoded, declared) {
		t.Errorf("EmployeeRefs declares %v; an employee's references are %v", declared, decoded)
	}
	carried := map[string][]string{"working_pattern": {"name", "total_hours", "default"},
		"line_manager": {"first_name", "last_name", "email"}, "holiday_approver": {"first_name", "last_name", "email"}}
	for _, f := range EmployeeRefs {
		want, ok := carried[f.Name]
		if !ok {
			want = []string{"name"}
		}
		var got []string
		for _, cf := range f.Nested.Fields {
			got = append(got, cf.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("EmployeeRefs %s carries %v, the decoding reads %v", f.Name, got, want)
		}
	}
}

func TestParseClass(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Class
		ok   bool
	}{
		{"identifying", Identifying, true},
		{"Health", Health, true},
		{" free-text ", FreeText, true},
		{"free_text", FreeText, true},
		{"not_personal", NotPersonal, true},
		{"financial", Financial, true},
		{"employment", Employment, true},
		{"medical", 0, false},
		{"", 0, false},
	} {
		got, err := ParseClass(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseClass(%q) = %v, %v; want %v (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
	for _, c := range Classes {
		if got, err := ParseClass(c.String()); err != nil || got != c {
			t.Errorf("ParseClass(%q) = %v, %v", c.String(), got, err)
		}
	}
	if !Health.Erasable() || !Identifying.Erasable() || !FreeText.Erasable() || !Financial.Erasable() ||
		Employment.Erasable() || NotPersonal.Erasable() || Class(0).Erasable() {
		t.Error("Erasable: want identifying, free text, financial and health only")
	}
}

// FuzzParseClass: any text is a class or a clear error, never a panic; a class read back is one
// of Classes and names itself.
func FuzzParseClass(f *testing.F) {
	for _, s := range []string{"health", "FREE-TEXT", "", "x\x00", "not_personal "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseClass(s)
		if err != nil {
			return
		}
		if !slices.Contains(Classes, c) {
			t.Fatalf("ParseClass(%q) = %v, not one of Classes", s, c)
		}
		if back, err := ParseClass(c.String()); err != nil || back != c {
			t.Fatalf("ParseClass(%q) = %v does not read back: %v, %v", s, c, back, err)
		}
	})
}
