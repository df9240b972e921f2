package personal

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestReadable: structured values read as a reader reads them, never as JSON text; values
// holding nothing are empty.
func TestReadable(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		empty     bool
	}{
		{`"Grace"`, "Grace", false},
		{`42`, "42", false},
		{`"68500.0"`, "68500.0", false},
		{`true`, "true", false},
		{`null`, "", true},
		{`""`, "", true},
		{`{}`, "", true},
		{`[]`, "", true},
		{`{"a":"","b":[],"c":{}}`, "", true},
		{`{"id":1,"name":"England and Wales"}`, "England and Wales (1)", false},
		{`{"name":"Ops","id":3,"code":"OPS"}`, "Ops (3); Code: OPS", false},
		{`[{"name":"Shoe size","value":"42"},{"name":"Locker","value":""}]`, "Shoe size: 42", false},
		{`{"pattern":"early","weeks":[1,3]}`, "Pattern: early; Weeks: 1, 3", false},
		{`{"hr_contact":{"phone":"1","email":"x@y"},"b":2}`, "HR contact: (Phone: 1; Email: x@y); B: 2", false},
		{`[{"a":1},{"a":2}]`, "A: 1; A: 2", false},
		{`{`, "{", false},
		{`1 2`, "1 2", false},
	} {
		got, empty := readable(json.RawMessage(tc.raw))
		if got != tc.want || empty != tc.empty {
			t.Errorf("readable(%s) = %q, %v; want %q, %v", tc.raw, got, empty, tc.want, tc.empty)
		}
	}
}

// FuzzReadable: any bytes from the source read without a panic, and JSON holding an object or
// an array never reads as JSON text.
func FuzzReadable(f *testing.F) {
	for _, s := range []string{`{"id":1,"name":"x"}`, `[{"name":"a","value":"b"}]`, `{}`, `""`, `{"a":{"b":[1,{"c":null}]}}`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, empty := readable(json.RawMessage(raw))
		if empty != (got == "") {
			t.Fatalf("readable(%q) = %q, empty %v", raw, got, empty)
		}
		var v any
		if json.Unmarshal([]byte(raw), &v) != nil {
			return
		}
		if _, isString := v.(string); !isString && (strings.Contains(got, `{"`) || strings.Contains(got, `":`)) && !strings.Contains(raw, `\`) && !strings.Contains(raw, `{\"`) {
			if !containsStringWith(v, `{"`) && !containsStringWith(v, `":`) {
				t.Fatalf("readable(%q) = %q: JSON text", raw, got)
			}
		}
	})
}

// containsStringWith reports whether a string or key within v holds s.
func containsStringWith(v any, s string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, s)
	case []any:
		for _, it := range x {
			if containsStringWith(it, s) {
				return true
			}
		}
	case map[string]any:
		for k, it := range x {
			if strings.Contains(k, s) || containsStringWith(it, s) {
				return true
			}
		}
	}
	return false
}

// TestLabel: a member's name for a reader, acronyms as they are written.
func TestLabel(t *testing.T) {
	for name, want := range map[string]string{
		"company_join_date": "Company join date", "hr": "HR", "half_start_am_pm": "Half start AM/PM",
		"dob": "DOB", "remuneration_currency_id": "Remuneration currency ID", "": "", "receives_statutory_holidays": "Receives statutory holidays",
	} {
		if got := label(name); got != want {
			t.Errorf("label(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestTimesForAReader: dates and points in time, whole values only, one way throughout.
func TestTimesForAReader(t *testing.T) {
	for in, want := range map[string]string{
		"2023-01-08T15:17:40Z":       "8 Jan 2023, 15:17 UTC",
		"2023-01-20T11:17:08+00:00":  "20 Jan 2023, 11:17 UTC",
		"2023-01-20T11:17:08+01:00":  "20 Jan 2023, 10:17 UTC",
		"2026-11-29T00:59:53.445Z":   "29 Nov 2026, 00:59 UTC",
		"2023-01-24":                 "24 Jan 2023",
		"R&D <Analyst>":              "R&D <Analyst>",
		"2023-01-24 was the day":     "2023-01-24 was the day",
		"68500.0":                    "68500.0",
		"2023-13-45":                 "2023-13-45",
		"2026-11-29 00:59:53.445+00": "2026-11-29 00:59:53.445+00", // a value: only RFC 3339
	} {
		if got := shown(in); got != want {
			t.Errorf("shown(%q) = %q, want %q", in, got, want)
		}
	}
	if got := when("2026-11-29 00:59:53.445+00"); got != "29 Nov 2026, 00:59 UTC" {
		t.Errorf("when of Postgres's text: %q", got)
	}
	if got := day("2026-11-29T00:59:53Z"); got != "29 Nov 2026" {
		t.Errorf("day: %q", got)
	}
}

// erasedExport is employee 7 with members no declaration names (a reference, empty ones) and a
// salary whose every member an erasure of their financial data took.
var erasedExport = sink.SubjectExport{EmployeeID: 7, Tables: []sink.SubjectTable{
	{Name: "employees", Table: "employees", Rows: []sink.SubjectRow{{
		{Column: "id", Text: "7", Kind: sink.KindID}, {Column: "first_name", Text: "Grace"}, {Column: "hr", Text: "false", Kind: sink.KindBool},
		{Column: "job_title", Text: ""}, {Column: "created_at", Text: "2023-01-08T15:17:40Z"},
		{Column: "extra", Kind: sink.KindJSON, Text: `{"custom_fields":{},"nickname":"","tags":[],"statutory_holiday_country":{"id":1,"name":"England and Wales"}}`}}}},
	{Name: "salaries", Table: "salaries", Rows: []sink.SubjectRow{{
		{Column: "id", Text: "8000001", Kind: sink.KindID}, {Column: "employee_id", Text: "7"}, {Column: "extra", Null: true, Kind: sink.KindJSON},
		{Column: "nested", Kind: sink.KindJSON, Text: `{"employee":{"id":7}}`}}}},
}}

// TestNewSubjectAfterErasure: a record whose members an erasure all took says so in one line,
// the summary marks the class erased; members no declaration names read as values, the empty
// ones left out; labels and times for a reader in the HTML, machine forms in the JSON and CSV.
func TestNewSubjectAfterErasure(t *testing.T) {
	erasures := []sink.Erasure{{ID: 1, Kind: sink.ErasureEmployee, Collection: "employees", SubjectID: 7, Classes: []v1.Class{v1.Financial},
		Cause: sink.ErasureCauseRequest, ErasedAt: "2026-03-01T10:00:00Z"}}
	s := NewSubject(SubjectInput{Account: subjectAccount(t), Export: erasedExport, Erasures: erasures, Now: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)})
	if len(s.Categories) != 2 || s.Categories[1].Key != "salaries" {
		t.Fatalf("categories %+v", s.Categories)
	}
	emp, sal := s.Categories[0], s.Categories[1]
	got := map[string]Member{}
	for _, m := range emp.Records[0].Members {
		got[m.Name] = m
	}
	for _, gone := range []string{"custom_fields", "nickname", "tags", "job_title", OtherMembers} {
		if m, ok := got[gone]; ok {
			t.Errorf("%s held: %+v", gone, m)
		}
	}
	if m := got["statutory_holiday_country"]; m.Value != "England and Wales (1)" || m.Class != "identifying" {
		t.Errorf("statutory_holiday_country: %+v", m)
	}
	if m := got["hr"]; m.Label != "HR" || m.Value != "false" {
		t.Errorf("hr: %+v", m)
	}
	if m := got["created_at"]; m.Value != "2023-01-08T15:17:40Z" {
		t.Errorf("created_at: %+v, want its machine form", m)
	}
	r := sal.Records[0]
	if len(r.Members) != 1 || r.Members[0].Name != OtherMembers || r.Members[0].Class != "financial" || r.Members[0].Erased != "2026-03-01T10:00:00Z" || !r.AllErased() {
		t.Errorf("the salary's members: %+v", r.Members)
	}
	if got := r.ErasedText(); got != "Its financial data was erased on 1 Mar 2026." {
		t.Errorf("the salary's line: %q", got)
	}
	if strings.Join(sal.Classes, ",") != "financial" || strings.Join(sal.Erased, ",") != "financial" || len(emp.Erased) != 0 {
		t.Errorf("classes: salaries %v erased %v; employees erased %v", sal.Classes, sal.Erased, emp.Erased)
	}

	var page bytes.Buffer
	if err := s.HTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<p class="erased all-erased">Its financial data was erased on 1 Mar 2026.</p>`,
		`<span class="tag financial">financial (erased)</span>`,
		`<td class="member">HR</td>`, `<td>8 Jan 2023, 15:17 UTC</td>`, `<td>England and Wales (1)</td>`,
		`prepared 1 Apr 2026, 00:00 UTC`, `<td>1 Mar 2026, 10:00 UTC</td>`, "On 1 Mar 2026, at the person&#39;s request",
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML has no %s", want)
		}
	}
	for _, raw := range []string{"Custom fields", "Nickname", `{&#34;`, "2023-01-08T15:17:40Z", "<th class=\"member\">Item</th><th class=\"class\">Class</th><th>Value</th></tr></thead>\n<tbody>\n</tbody>"} {
		if strings.Contains(page.String(), raw) {
			t.Errorf("the HTML has %q", raw)
		}
	}
	var b bytes.Buffer
	if err := s.CSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var salary, created []string
	for _, row := range rows {
		switch {
		case row[0] == "salaries":
			salary = row
		case row[3] == "created_at":
			created = row
		}
	}
	if strings.Join(salary, "|") != "salaries|the HR system, its salaries (/v1/salaries)|8000001|*|financial||||true|2026-03-01T10:00:00Z" {
		t.Errorf("the CSV's salary: %q", salary)
	}
	if len(created) < 6 || created[5] != "2023-01-08T15:17:40Z" {
		t.Errorf("the CSV's created_at: %q", created)
	}
	b.Reset()
	if err := s.JSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"classes_erased": [`) || !strings.Contains(b.String(), `"member": "*"`) {
		t.Errorf("the JSON:\n%s", b.String())
	}
}

// TestCSVSideBySide: exports written at once share nothing they write (the race detector
// failed make test when two wrote the package's header row in place).
func TestCSVSideBySide(t *testing.T) {
	t.Parallel()
	s := Subject{Categories: []Category{{Key: "employees", Records: []Record{{ID: "1", Members: []Member{{Name: "first_name", Value: "=cmd|' /C calc'!A0"}}}}}}}
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 4)
	for i := range outs {
		wg.Go(func() {
			if err := s.CSV(&outs[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range outs {
		if outs[i].String() != outs[0].String() {
			t.Errorf("export %d differs:\n%s\nfrom\n%s", i, outs[i].String(), outs[0].String())
		}
	}
	if !strings.HasPrefix(outs[0].String(), strings.Join(csvHeader, ",")+"\n") || !strings.Contains(outs[0].String(), "'=cmd") {
		t.Errorf("the export:\n%s", outs[0].String())
	}
}
