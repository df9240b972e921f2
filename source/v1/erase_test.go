package v1

import (
	"bytes"
	"encoding/json"
	"testing"
)

// erasedPeople is a nested func erasing identifying members of the people 42 and 7.
func erasedPeople(field string, id int64) []Class {
	if id == 42 || id == 7 {
		return []Class{Identifying}
	}
	return nil
}

func TestEraseJSON(t *testing.T) {
	all := []Class{Identifying, FreeText, Financial, Health}
	for _, tc := range []struct {
		name, collection string
		own              []Class
		nested           func(string, int64) []Class
		in, want         string
	}{
		{"an employee's identifying members, undeclared ones whole; employment facts, the twin and references' ids stay",
			"employees", []Class{Identifying}, nil,
			`{"id":42,"first_name":"Ann","last_name":"Lee","email":"a@x","age":41,"job_title":"Chef","join_date":"2020-01-02",` +
				`"department":{"id":3,"name":"Kitchen","code":"K"},"line_manager":{"id":9,"first_name":"Bo","name":"Bo Berg","email":"b@x"},` +
				`"location":"Leeds","dob":{"y":1980},"personal_email":"ann@home"}`,
			`{"id":42,"job_title":"Chef","join_date":"2020-01-02","department":{"id":3,"name":"Kitchen"},"line_manager":{"id":9},"location":"Leeds"}`},
		{"nothing erased: the bytes as they were, whitespace and all",
			"employees", nil, nil,
			`{ "id": 1, "first_name": "Ann" , "x": [1, 2] }`,
			`{ "id": 1, "first_name": "Ann" , "x": [1, 2] }`},
		{"another record's copy of an erased person: only the person's carried members go",
			"employees", nil, erasedPeople,
			`{"id":5,"first_name":"Quinn","line_manager":{"id":42,"first_name":"Ann","last_name":"Lee","email":"a@x","name":"Ann Lee"},` +
				`"holiday_approver":{"id":8,"first_name":"Cy"},"extra_thing":"kept"}`,
			`{"id":5,"first_name":"Quinn","line_manager":{"id":42},"holiday_approver":{"id":8,"first_name":"Cy"},"extra_thing":"kept"}`},
		{"a person's id given as a string is still theirs",
			"absences", nil, erasedPeople,
			`{"id":1,"employee":{"id":"7","first_name":"Zed"},"approved_by":{"id":8,"first_name":"Cy"},"notes":"n"}`,
			`{"id":1,"employee":{"id":"7"},"approved_by":{"id":8,"first_name":"Cy"},"notes":"n"}`},
		{"a sickness's health members, its nested type and its undeclared members (health) go; dates and days stay",
			"sicknesses", []Class{Health}, nil,
			`{"id":5,"employee":{"id":1,"first_name":"Ann"},"company_sicknesstype":{"id":8,"name":"Flu"},"start_date":"2026-01-05",` +
				`"end_date":"2026-01-07","deducted":"2.0","status":"returned","reason":"flu","review_notes":"rest","fit_note_required":true,"gp":"Dr X"}`,
			`{"id":5,"employee":{"id":1,"first_name":"Ann"},"start_date":"2026-01-05","end_date":"2026-01-07","deducted":"2.0","status":"returned"}`},
		{"a salary: everything but its id and employee's id is financial or identifying",
			"salaries", all, nil,
			`{"id":3,"employee":{"id":1,"first_name":"Ann"},"amount":"50000.00","currency":"GBP","note":{"a":1}}`,
			`{"id":3,"employee":{"id":1}}`},
		{"free text of a leave request, a null nested person, duplicates",
			"leave_requests", []Class{FreeText}, nil,
			`{"id":2,"notes":"x","notes":"y","approved_by":null,"status":"approved","comment":"kept: undeclared is identifying"}`,
			`{"id":2,"approved_by":null,"status":"approved","comment":"kept: undeclared is identifying"}`},
		{"a warehouse's nested column (the nested forms keyed by field) erases the same way",
			"absences", nil, erasedPeople,
			`{"employee":{"id":42,"first_name":"Ann"},"approved_by":{"id":8,"first_name":"Cy"},"leave_reason":{"id":3,"name":"Jury"}}`,
			`{"employee":{"id":42},"approved_by":{"id":8,"first_name":"Cy"},"leave_reason":{"id":3,"name":"Jury"}}`},
		{"escaped names are the members they spell",
			"employees", []Class{Identifying}, nil,
			`{"id":1,"first\u005fname":"Ann","job_title":"Chef"}`,
			`{"id":1,"job_title":"Chef"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EraseJSON(tc.collection, []byte(tc.in), tc.own, tc.nested)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("EraseJSON =\n%s\nwant\n%s", got, tc.want)
			}
			again, err := EraseJSON(tc.collection, got, tc.own, tc.nested)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("again = %s, %v; want it unchanged", again, err)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"id":1,}`, `{"id":1} x`, `"a"`} {
		if _, err := EraseJSON("employees", []byte(bad), []Class{Identifying}, nil); err == nil {
			t.Errorf("EraseJSON(%q): no error", bad)
		}
	}
	if _, err := EraseJSON("nothing", []byte(`{}`), nil, nil); err == nil {
		t.Error("an undeclared collection: no error")
	}
}

// TestErasedRecordDecodesAgreeing: the typed form rebuilt from the erased JSON has none of the
// erased values, in any of its forms, and keeps the rest.
func TestErasedRecordDecodesAgreeing(t *testing.T) {
	raw := []byte(`{"id":42,"first_name":"Markerfirst","email":"marker@x","job_title":"Chef","company_join_date":"2020-01-02",` +
		`"line_manager":{"id":9,"first_name":"Bo"},"department":{"id":3,"name":"Kitchen"},"dob":"1980-01-01"}`)
	erased, err := EraseJSON("employees", raw, []Class{Identifying}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var e Employee
	if err := e.UnmarshalJSON(erased); err != nil {
		t.Fatal(err)
	}
	all := string(e.AppendJSON(nil)) + string(e.Extra) + string(e.NestedRaw()) + e.FirstName + e.Email
	for _, marker := range []string{"Marker", "marker", "1980", "Bo"} {
		if bytes.Contains([]byte(all), []byte(marker)) {
			t.Errorf("%q is still in the erased employee: %s", marker, all)
		}
	}
	if e.JobTitle != "Chef" || e.CompanyJoinDate != "2020-01-02" || e.Department == nil || e.Department.ID != 3 ||
		e.LineManager == nil || e.LineManager.ID != 9 {
		t.Errorf("erased employee lost an employment fact: %+v", e)
	}
}

func FuzzEraseJSON(f *testing.F) {
	for _, s := range []string{
		`{"id":42,"first_name":"Ann","line_manager":{"id":7,"first_name":"Bo","x":1},"dob":"1980"}`,
		`{"id":5,"employee":{"id":"42"},"company_sicknesstype":{"id":8,"name":"Flu"},"reason":"flu","gp":"X"}`,
		`{ "a" : { "b" : [ 1 , { "c" : null } ] } , "id" : 1 }`,
		`{"employee":{"id":7,"first_name":"A","first_name":"B"},"employee":null}`,
		`{}`, `[]`, `{"id":1,"notes":"\u00e9\ud83d\ude00"}`, `{"x":1`,
	} {
		f.Add("employees", []byte(s), uint8(4), uint8(0))
		f.Add("sicknesses", []byte(s), uint8(32), uint8(1))
		f.Add("absences", []byte(s), uint8(0), uint8(2))
		f.Add("employees", []byte(s), uint8(255), uint8(1))
	}
	f.Add("employees", []byte(`{"id":1,"a":{"b":1},"x":"kept","dob":"1980","a":null}`), uint8(8), uint8(3))
	collections := []string{"employees", "working_patterns", "absences", "sicknesses", "leave_requests", "salaries", "departments"}
	f.Fuzz(func(t *testing.T, collection string, raw []byte, own, people uint8) {
		c := collections[len(collection)%len(collections)]
		var classes []Class
		for _, cl := range Classes {
			if own&(1<<cl) != 0 && cl.Erasable() {
				classes = append(classes, cl)
			}
		}
		nested := func(_ string, id int64) []Class {
			if id%3 == int64(people%3) {
				return []Class{Identifying, Health}
			}
			return nil
		}
		// Half the inputs erase with members classed by configuration (people%2): the
		// record's members of those names are then declared fields of any JSON.
		d := Declarations{}
		if people%2 == 1 {
			d = fuzzDecls
		}
		out, err := d.EraseJSON(c, raw, classes, nested)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("EraseJSON(%s, %q) = %q: not JSON", c, raw, out)
		}
		if len(out) > len(raw) {
			t.Fatalf("EraseJSON(%s, %q) = %q: longer", c, raw, out)
		}
		again, err := d.EraseJSON(c, out, classes, nested)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("EraseJSON twice: %q, %v; once %q", again, err, out)
		}
	})
}

// fuzzDecls class the members a and x of every collection (kinds apart, "a" not personal, "x"
// employment), and an employee's cost_centre.
var fuzzDecls = func() Declarations {
	m := Members{"employees": {"cost_centre": Employment}}
	for _, c := range DeclaredCollections() {
		if m[c] == nil {
			m[c] = map[string]Class{}
		}
		m[c]["a"], m[c]["x"] = NotPersonal, Employment
	}
	d, err := NewDeclarations(m)
	if err != nil {
		panic(err)
	}
	return d
}()
