package v1

import (
	"bytes"
	"encoding/json"
	"testing"
)

// nestedReference is what SetNestedRaw did with encoding/json: the forms of the references
// present from a map of the object's members.
func nestedReference(e *Employee, nested []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(nested, &m); err != nil {
		return err
	}
	for _, f := range e.nestedForms() {
		*f.raw = m[f.name]
	}
	return nil
}

func employeeWithRefs() Employee {
	return Employee{ID: 1,
		WorkingPattern:   &PatternRef{ID: 2, Raw: json.RawMessage(`{"id":2}`)},
		HolidayAllowance: &Ref{ID: 3}, Department: &Ref{ID: 4}, Division: &Ref{ID: 5},
		LineManager: &PersonRef{ID: 7}, HolidayApprover: &PersonRef{ID: 8, Raw: json.RawMessage(`{"id":8}`)}}
}

func forms(e *Employee) [][]byte {
	var out [][]byte
	for _, f := range e.nestedForms() {
		out = append(out, *f.raw)
	}
	return out
}

// TestSetNestedRawAsUnmarshal: SetNestedRaw gives the forms json.Unmarshal into a map gave, for
// the objects the warehouse writes and for the odd ones a hand-edited column may hold, and
// changes nothing when the column is not an object (or null).
func TestSetNestedRawAsUnmarshal(t *testing.T) {
	for _, in := range []string{
		`{"department":{"id":4,"name":"Sales"},"division":{"id":5},"holiday_allowance":{"id":3,"name":"Std"},"holiday_approver":{"id":8,"first_name":"A","email":null},"line_manager":{"id":7,"first_name":"Zoë"},"working_pattern":{"id":2,"name":"FT","total_hours":"37.5","default":true}}`,
		`{"department":{"id":4}}`,
		`{}`,
		`null`,
		` null `,
		` { "department" : { "id" : 4 } , "line_manager":[1, 2] ,"location":{"id":9}} `,
		`{"department":{"id":1},"department":{"id":2}}`,
		`{"depart\u006dent":{"id":6},"other":"x"}`,
		`{"department":"a string","working_pattern":12.5e3,"division":false,"line_manager":null}`,
		`{"department":{"id":4}`,
		`{"department":{"id":4}} x`,
		`[{"department":1}]`,
		`"department"`,
		`true`,
		`nul`,
		`{"department":{"id":04}}`,
		"{\"department\":{\"name\":\"\xff\"}}",
	} {
		want, got := employeeWithRefs(), employeeWithRefs()
		werr := nestedReference(&want, []byte(in))
		gerr := got.SetNestedRaw([]byte(in))
		if (werr != nil) != (gerr != nil) {
			t.Errorf("%s: error %v, want %v", in, gerr, werr)
			continue
		}
		w, g := forms(&want), forms(&got)
		for i := range w {
			if !bytes.Equal(w[i], g[i]) || (w[i] == nil) != (g[i] == nil) {
				t.Errorf("%s: form %d is %q, want %q", in, i, g[i], w[i])
			}
		}
	}
}

// TestSetNestedRawOwnsItsForms: the forms are not the caller's bytes, and appending to one
// does not reach another.
func TestSetNestedRawOwnsItsForms(t *testing.T) {
	in := []byte(`{"department":{"id":4},"division":{"id":5}}`)
	e := employeeWithRefs()
	if err := e.SetNestedRaw(in); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = ' '
	}
	_ = append(e.Department.Raw, "XXXXXXXX"...)
	if string(e.Department.Raw) != `{"id":4}` || string(e.Division.Raw) != `{"id":5}` {
		t.Errorf("forms %s and %s, want {\"id\":4} and {\"id\":5}", e.Department.Raw, e.Division.Raw)
	}
}

// TestSetNestedRawAllocations: putting back an employee's forms costs a constant few
// allocations (the forms' one copy, their list), not a map and a value per member: a page of
// employees read from the warehouse does it a hundred times.
func TestSetNestedRawAllocations(t *testing.T) {
	in := []byte(`{"department":{"id":4,"name":"Sales"},"division":{"id":5,"name":"North"},"holiday_allowance":{"id":3,"name":"Std"},"holiday_approver":{"id":8,"first_name":"A","last_name":"B","email":"a@example.com"},"line_manager":{"id":7,"first_name":"C","last_name":"D","email":"c@example.com"},"working_pattern":{"id":2,"name":"FT","total_hours":"37.5","default":true}}`)
	e := employeeWithRefs()
	allocs := testing.AllocsPerRun(100, func() {
		if err := e.SetNestedRaw(in); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 3 {
		t.Errorf("SetNestedRaw: %.0f allocations a record, want at most 3", allocs)
	}
}
