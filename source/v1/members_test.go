package v1

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// testMembers class an employee's cost_centre as employment, payroll_number as identifying and
// diagnosis_code as health, and an absence's approval_code as not personal.
var testMembers = Members{
	"employees": {"cost_centre": Employment, "payroll_number": Identifying, "diagnosis_code": Health},
	"absences":  {"approval_code": NotPersonal},
}

// TestDeclarationsEraseConfiguredMembers: a member classed by configuration is erased by its
// class, not the extra class (identifying); the members nothing classes still are, and the zero
// Declarations erase as EraseJSON does. A member named as a declared or configured one in
// another case is erased by either class: its extra class, or the one serve hides it by.
func TestDeclarationsEraseConfiguredMembers(t *testing.T) {
	d, err := NewDeclarations(testMembers)
	if err != nil {
		t.Fatal(err)
	}
	const employee = `{"id":42,"first_name":"Ann","cost_centre":"CC-7","payroll_number":"P1","diagnosis_code":"J11","dob":"1980","job_title":"Chef"}`
	for _, tc := range []struct {
		name, collection string
		d                Declarations
		own              []Class
		in, want         string
	}{
		{"identifying: the configured employment and health members stay, the unconfigured and the identifying one go",
			"employees", d, []Class{Identifying}, employee,
			`{"id":42,"cost_centre":"CC-7","diagnosis_code":"J11","job_title":"Chef"}`},
		{"health: the configured health member goes, and nothing else",
			"employees", d, []Class{Health}, employee,
			`{"id":42,"first_name":"Ann","cost_centre":"CC-7","payroll_number":"P1","dob":"1980","job_title":"Chef"}`},
		{"every erasable class: the employment member stays",
			"employees", d, []Class{Identifying, FreeText, Financial, Health}, employee,
			`{"id":42,"cost_centre":"CC-7","job_title":"Chef"}`},
		{"the zero value: every undeclared member is identifying",
			"employees", Declarations{}, []Class{Identifying}, employee,
			`{"id":42,"job_title":"Chef"}`},
		{"an absence's approval code, not personal, stays; its other undeclared members go",
			"absences", d, []Class{Identifying}, `{"id":1,"approval_code":"A-1","gp":"Dr X","notes":"n"}`,
			`{"id":1,"approval_code":"A-1","notes":"n"}`},
		{"health: a configured health member's name in another case goes too (serve leaves it out as that member)",
			"employees", d, []Class{Health}, `{"id":42,"DIAGNOSIS_CODE":"J11","Cost_Centre":"CC-7","Dob":"1980"}`,
			`{"id":42,"Cost_Centre":"CC-7","Dob":"1980"}`},
		{"identifying: members named as configured or declared ones in another case are undeclared, and go",
			"employees", d, []Class{Identifying}, `{"id":42,"DIAGNOSIS_CODE":"J11","Cost_Centre":"CC-7","Job_Title":"Chef"}`,
			`{"id":42}`},
		{"free text: a declared free-text member's name in another case goes, in the zero value too",
			"absences", Declarations{}, []Class{FreeText}, `{"id":1,"NOTES":"n","Type":"holiday"}`,
			`{"id":1,"Type":"holiday"}`},
		{"a nested object's member of the same name is not the record's: the person's undeclared members go",
			"employees", d, nil, `{"id":5,"line_manager":{"id":42,"first_name":"Ann","cost_centre":"CC-7"},"cost_centre":"CC-1"}`,
			`{"id":5,"line_manager":{"id":42},"cost_centre":"CC-1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nested := func(string, int64) []Class { return []Class{Identifying} }
			got, err := tc.d.EraseJSON(tc.collection, []byte(tc.in), tc.own, nested)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("EraseJSON =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestDeclarationsDeclared: the configured members are declared fields of any JSON, of their
// class, after the code's; another collection's fields, and the zero value's, are Declared's.
func TestDeclarationsDeclared(t *testing.T) {
	d, err := NewDeclarations(testMembers)
	if err != nil {
		t.Fatal(err)
	}
	fields, extra, ok := d.Declared("employees")
	base, baseExtra, _ := Declared("employees")
	if !ok || extra != baseExtra || len(fields) != len(base)+3 {
		t.Fatalf("employees: %d fields, extra %v; want %d and %v", len(fields), extra, len(base)+3, baseExtra)
	}
	want := []Field{{Name: "cost_centre", Kind: Opaque, Class: Employment}, {Name: "diagnosis_code", Kind: Opaque, Class: Health},
		{Name: "payroll_number", Kind: Opaque, Class: Identifying}}
	for i, f := range fields[len(base):] {
		if f.Name != want[i].Name || f.Kind != want[i].Kind || f.Class != want[i].Class || f.Nested != nil {
			t.Errorf("configured field %d: %+v, want %+v", i, f, want[i])
		}
	}
	if got, _, _ := d.Declared("sicknesses"); len(got) != len(CollectionNamed("sicknesses").Fields) {
		t.Errorf("sicknesses: %d fields", len(got))
	}
	if got, _, _ := (Declarations{}).Declared("employees"); len(got) != len(base) {
		t.Errorf("zero value: %d fields", len(got))
	}
	if _, _, ok := d.Declared("nothing"); ok {
		t.Error("an undeclared collection is declared")
	}
	if m := d.Members(); len(m) != 2 || m["absences"]["approval_code"] != NotPersonal {
		t.Errorf("Members = %v", m)
	}
}

// TestNewDeclarationsRefuses: a member the code declares (in any case, its twin, the id), an
// unknown collection, no class or no name, one member in two cases classed apart are refused,
// each with its own message.
func TestNewDeclarationsRefuses(t *testing.T) {
	for _, tc := range []struct {
		members  Members
		declared Class
		says     string
	}{
		{Members{"employees": {"first_name": Employment}}, Identifying, "employees.first_name: declared as identifying already"},
		{Members{"employees": {"Job_Title": NotPersonal}}, Employment, "declared as employment already"},
		{Members{"employees": {"join_date": Identifying}}, Employment, "employees.join_date: declared as employment already"},
		{Members{"employees": {"line_manager": NotPersonal}}, Employment, "declared as employment already"},
		{Members{"sicknesses": {"reason": Employment}}, Health, "sicknesses.reason: declared as health already"},
		{Members{"absences": {"id": NotPersonal}}, NotPersonal, "id is declared already"},
		{Members{"absense": {"x": NotPersonal}}, 0, `no collection "absense"`},
		{Members{"absences": {"x": 0}}, 0, "absences.x: no class"},
		{Members{"absences": {" ": Employment}}, 0, "a member with no name"},
		{Members{"employees": {"cost_centre": Employment, "Cost_Centre": Health}}, 0,
			"employees.cost_centre: classed employment, and employees.Cost_Centre health: one member in two cases"},
	} {
		_, err := NewDeclarations(tc.members)
		var me *MemberError
		if !errors.As(err, &me) || me.Declared != tc.declared || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v (declared %v), want a MemberError saying %q", tc.members, err, tc.declared, tc.says)
		}
	}
	if _, err := NewDeclarations(Members{"employees": {"cost_centre": Employment, "COST_CENTRE": Employment}}); err != nil {
		t.Errorf("one member in two cases classed alike: %v", err)
	}
	if d, err := NewDeclarations(nil); err != nil || d.erase != nil {
		t.Errorf("no members: %+v, %v; want the zero value", d, err)
	}
	if got := DeclaredCollections(); !slices.Contains(got, "employees") || !slices.Contains(got, "absences") {
		t.Errorf("DeclaredCollections = %v", got)
	}
}
