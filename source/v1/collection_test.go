package v1

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDeclaredCollectionsAreValid(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Collections {
		if err := c.Validate(); err != nil {
			t.Error(err)
		}
		if seen[c.Name] {
			t.Errorf("%s declared twice", c.Name)
		}
		seen[c.Name] = true
		if CollectionNamed(c.Name) != c {
			t.Errorf("CollectionNamed(%q) does not find it", c.Name)
		}
	}
	if CollectionNamed("payslips") != nil {
		t.Error("payslips is not declared")
	}
	// The financial module is declared, and sensitive: never part of "all".
	for _, c := range Collections {
		if financial := c == Salaries || c == Bonuses || c == Benefits; c.Sensitive != financial {
			t.Errorf("%s: sensitive %v", c.Name, c.Sensitive)
		}
	}
}

func TestValidateRefusesBadDeclarations(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Collection
		want string
	}{
		{"no name", Collection{Fields: []Field{{Name: "x", Kind: String}}}, "no plain name"},
		{"odd name", Collection{Name: "c", Fields: []Field{{Name: "x; DROP", Kind: String}}}, "not a plain name"},
		{"no kind", Collection{Name: "c", Fields: []Field{{Name: "x"}}}, "field x: no kind"},
		{"twice", Collection{Name: "c", Fields: []Field{{Name: "x", Kind: String}, {Name: "x", Kind: Int}}}, "named twice"},
		{"id declared", Collection{Name: "c", Fields: []Field{{Name: "id", Kind: Int}}}, "named twice"},
		{"nested without target", Collection{Name: "c", Fields: []Field{{Name: "e", Kind: Nested}}}, "no target"},
		{"nesting on a string", Collection{Name: "c", Fields: []Field{{Name: "e", Kind: String, Nested: &Nesting{Target: "t"}}}}, "a nesting on a string field"},
		{"carried opaque", Collection{Name: "c", Fields: []Field{{Name: "e", Kind: Nested, Nested: &Nesting{Target: "t",
			Fields: []Field{{Name: "o", Kind: Opaque}}}}}}, "e.o: cannot be carried"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// A recorded absence, in the shapes UPSTREAM.md lists: offsets on the timestamps, "" for an
// am/pm, a null approver, decimals as strings, an unlisted field.
const recordedAbsence = `{"id":901,"employee":{"id":12,"first_name":"Ana","last_name":"Lopez","email":"ana@example.com"},
"approved_by":null,"leave_reason":{"id":3,"name":"Compassionate","colour":"#fff"},"deducted":"1.5","work_units":3.5,
"start_date":"2026-03-02","end_date":"2026-03-03","half_start":false,"half_end":true,"half_start_am_pm":"",
"half_end_am_pm":"am","cancelled":false,"notes":"","type":"OtherLeave","created_at":"2026-02-20T09:15:00+01:00",
"updated_at":"2026-02-21T10:00:00+01:00","source_system":"hr"}`

func TestDecodeRecordedAbsence(t *testing.T) {
	r, err := Absences.Decode([]byte(recordedAbsence))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != 901 {
		t.Errorf("id %d", r.ID)
	}
	for _, tc := range []struct {
		field string
		want  Value
	}{
		{"deducted", TextValue("1.5")},
		{"work_units", TextValue("3.5")}, // a number, kept as decimal text
		{"start_date", TextValue("2026-03-02")},
		{"half_end", BoolValue(true)},
		{"half_start_am_pm", Value{}}, // "" is none
		{"half_end_am_pm", TextValue("am")},
		{"notes", Value{}},
		{"type", TextValue("OtherLeave")},
		{"created_at", TextValue("2026-02-20T08:15:00Z")}, // +01:00 normalized to UTC
		{"approved_by", Value{}},
	} {
		if got := Absences.Get(&r, tc.field); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %+v, want %+v", tc.field, got, tc.want)
		}
	}
	emp := Absences.Get(&r, "employee")
	if !emp.Valid || emp.Int != 12 || !reflect.DeepEqual(emp.Carried, []Value{TextValue("Ana"), TextValue("Lopez"), TextValue("ana@example.com")}) {
		t.Errorf("employee = %+v", emp)
	}
	reason := Absences.Get(&r, "leave_reason")
	if reason.Int != 3 || string(reason.Raw) != `{"id":3,"name":"Compassionate","colour":"#fff"}` {
		t.Errorf("leave_reason = %+v (its form must be kept as sent)", reason)
	}
	if string(r.Extra) != `{"source_system":"hr"}` {
		t.Errorf("extra = %s", r.Extra)
	}
	// Written back exactly as sent: "" stays "", a number a number, an offset its offset.
	sent := strings.ReplaceAll(recordedAbsence, "\n", "")
	if got := string(Absences.AppendJSON(nil, &r)); got != sent {
		t.Errorf("AppendJSON\n got %s\nwant %s", got, sent)
	}
	// Without its sent form (a record built locally), in the normal forms of the values read.
	r.Sent = nil
	want := `{"id":901,"employee":{"id":12,"first_name":"Ana","last_name":"Lopez","email":"ana@example.com"},` +
		`"approved_by":null,"leave_reason":{"id":3,"name":"Compassionate","colour":"#fff"},"deducted":"1.5","work_units":"3.5",` +
		`"start_date":"2026-03-02","end_date":"2026-03-03","half_start":false,"half_end":true,"half_start_am_pm":null,` +
		`"half_end_am_pm":"am","cancelled":false,"notes":null,"type":"OtherLeave","created_at":"2026-02-20T08:15:00Z",` +
		`"updated_at":"2026-02-21T09:00:00Z","source_system":"hr"}`
	if got := string(Absences.AppendJSON(nil, &r)); got != want {
		t.Errorf("AppendJSON\n got %s\nwant %s", got, want)
	}
}

// Every declared collection decodes what it writes back to the same record.
func TestDeclaredCollectionsRoundTrip(t *testing.T) {
	for _, c := range Collections {
		t.Run(c.Name, func(t *testing.T) {
			r := Record{ID: 7, Values: make([]Value, len(c.Fields)), Extra: Extra(`{"zz":1}`)}
			for i, f := range c.Fields {
				r.Values[i] = sample(f, i)
			}
			out := c.AppendJSON(nil, &r)
			back, err := c.Decode(out)
			if err != nil {
				t.Fatalf("decode %s: %v", out, err)
			}
			if again := c.AppendJSON(nil, &back); string(again) != string(out) {
				t.Errorf("not stable:\n%s\n%s", out, again)
			}
			for i, f := range c.Fields {
				if f.Kind == Nested {
					if back.Values[i].Int != r.Values[i].Int || !reflect.DeepEqual(back.Values[i].Carried, r.Values[i].Carried) {
						t.Errorf("%s: %+v, want %+v", f.Name, back.Values[i], r.Values[i])
					}
					continue
				}
				if !reflect.DeepEqual(back.Values[i], r.Values[i]) {
					t.Errorf("%s: %+v, want %+v", f.Name, back.Values[i], r.Values[i])
				}
			}
		})
	}
}

// sample is a value of f's kind, built locally (a nested one without its form).
func sample(f Field, i int) Value {
	switch f.Kind {
	case String:
		return TextValue("text " + f.Name)
	case Date:
		return TextValue("2026-01-0" + string(rune('1'+i%9)))
	case Timestamp:
		return TextValue("2026-01-02T03:04:05Z")
	case Decimal:
		return TextValue("750.0")
	case Int:
		return IntValue(int64(i))
	case Bool:
		return BoolValue(i%2 == 0)
	case Opaque:
		return Value{Valid: true, Raw: []byte(`{"a":[1,2]}`)}
	case Nested:
		v := Value{Valid: true, Int: int64(100 + i)}
		for _, cf := range f.Nested.Fields {
			v.Carried = append(v.Carried, sample(cf, i))
		}
		return v
	}
	return Value{}
}

func TestDecodeNamesTheBadField(t *testing.T) {
	for _, tc := range []struct{ body, field string }{
		{`{"id":1,"start_date":"next tuesday"}`, "start_date"},
		{`{"id":1,"employee":{"id":"x"}}`, "employee.id"},
		{`{"id":1,"employee":[1]}`, "employee"},
		{`{"id":1,"half_start":"maybe"}`, "half_start"},
		{`{"id":"one"}`, "id"},
	} {
		_, err := Absences.Decode([]byte(tc.body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a FieldError on %s", tc.body, err, tc.field)
		}
	}
	if _, err := Absences.Decode([]byte(`[1]`)); err == nil {
		t.Error("an array decoded as a record")
	}
}

func FuzzDeclaredCollectionDecode(f *testing.F) {
	f.Add("absences", recordedAbsence)
	f.Add("sicknesses", `{"id":1,"employee":{"id":2},"company_sicknesstype":{"id":3,"name":"Flu"},"start_date":"2026-01-05","end_date":null,"deducted":"2.0","status":"returned","review_notes":null,"fit_note_required":null}`)
	f.Add("employee_training_courses", `{"id":1,"name":"First aid","cost":"750.0","hours":null,"remuneration_currency_id":"3","company_training_provider":null}`)
	f.Add("departments", `{"id":1,"name":"R&D","code":"RD"}`)
	f.Fuzz(func(t *testing.T, name, body string) {
		c := CollectionNamed(name)
		if c == nil {
			c = Absences
		}
		r, err := c.Decode([]byte(body))
		if err != nil {
			return
		}
		out := c.AppendJSON(nil, &r)
		back, err := c.Decode(out)
		if err != nil {
			t.Fatalf("what it wrote does not decode: %s: %v", out, err)
		}
		if again := c.AppendJSON(nil, &back); string(again) != string(out) {
			t.Fatalf("not stable:\n%s\n%s", out, again)
		}
	})
}

// A record is kept as sent: only the whitespace between tokens goes; member order, duplicate
// names, "" and null, number and string forms stay; bytes that are not UTF-8 become U+FFFD.
func TestRecordKeepsItsSentForm(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{ \"id\" : 3 ,\n \"notes\" : \"\" , \"type\":null,\"x\":[1, 2.50]}", `{"id":3,"notes":"","type":null,"x":[1,2.50]}`},
		{`{"notes":"a  b","id":"3","deducted":3.5}`, `{"notes":"a  b","id":"3","deducted":3.5}`},
		{`{"id":3,"notes":"x","notes":""}`, `{"id":3,"notes":"x","notes":""}`},
		{"{\"id\":3,\"notes\":\"caf\xe9\xe9\"}", "{\"id\":3,\"notes\":\"caf\uFFFD\uFFFD\"}"},
		{`{"id":3,"employee":{"email":"","id":"12"}}`, `{"id":3,"employee":{"email":"","id":"12"}}`},
	} {
		r, err := Absences.Decode([]byte(tc.in))
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if string(r.Sent) != tc.want || string(Absences.AppendJSON(nil, &r)) != tc.want {
			t.Errorf("%q: sent %s, written %s, want %s", tc.in, r.Sent, Absences.AppendJSON(nil, &r), tc.want)
		}
		if !ValidSent(r.Sent) {
			t.Errorf("%q: %s is not a valid sent form", tc.in, r.Sent)
		}
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{"id":1`, "{\"id\":\"\xff\"}"} {
		if ValidSent([]byte(bad)) {
			t.Errorf("ValidSent(%q) = true", bad)
		}
	}
}
