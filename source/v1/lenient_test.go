package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func i64(n int64) *int64 { return &n }
func boolp(b bool) *bool { return &b }

// objectKeys lists the member names of a JSON object in the order they are written.
func objectKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", b)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("reading %s: %v", b, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("reading %s: %v", b, err)
		}
	}
	return keys
}

// seedEmployeeFields is the field order of seed section 2.1.
var seedEmployeeFields = []string{
	"id", "account_id", "first_name", "last_name", "email", "job_title", "status",
	"company_join_date", "job_start_date", "length_of_service_in_months", "age",
	"full_or_part_time", "notice_period", "working_pattern", "holiday_allowance", "line_manager",
	"holiday_approver", "department", "receives_statutory_holidays", "hr", "created_at", "updated_at",
}

// upstreamEmployee is a record written the way the real service writes them (UPSTREAM.md): fields
// in no particular order, numbers as strings, "" for none, join_date instead of
// company_join_date, an offset timestamp, and fields the seed does not list.
const upstreamEmployee = `{
  "hr": "false",
  "id": "5001",
  "account_id": 77,
  "first_name": "Ana",
  "last_name": "L\u00f3pez",
  "email": "ana@example.com",
  "job_title": "",
  "status": "Current employee",
  "join_date": "2024/02/29",
  "job_start_date": "2024-03-01",
  "length_of_service_in_months": "12",
  "age": null,
  "full_or_part_time": "",
  "notice_period": { "value": 1, "unit": "month" },
  "working_pattern": { "id": 31, "name": "Office hours", "total_hours": "37.5", "default": true },
  "holiday_allowance": { "id": "12", "name": "Standard 25 days" },
  "line_manager": { "id": 9, "name": "Jo Bloggs", "email": "jo@example.com" },
  "holiday_approver": "",
  "department": null,
  "receives_statutory_holidays": 1,
  "created_at": "2024-02-29T09:15:00+01:00",
  "updated_at": "2024-03-01T00:00:00Z",
  "middle_name": null,
  "dob": "1990-01-01",
  "custom_fields": [ { "name": "Shoe size", "value": "42" } ]
}`

func TestEmployeeDecodesUpstreamRecord(t *testing.T) {
	var got Employee
	if err := json.Unmarshal([]byte(upstreamEmployee), &got); err != nil {
		t.Fatal(err)
	}
	want := Employee{
		ID:                        5001,
		AccountID:                 i64(77),
		FirstName:                 "Ana",
		LastName:                  "López",
		Email:                     "ana@example.com",
		Status:                    "Current employee",
		CompanyJoinDate:           "2024-02-29",
		JobStartDate:              "2024-03-01",
		LengthOfServiceInMonths:   i64(12),
		NoticePeriod:              json.RawMessage(`{"value":1,"unit":"month"}`),
		WorkingPattern:            &PatternRef{ID: 31, Name: "Office hours", TotalHours: "37.5", Default: boolp(true), Raw: json.RawMessage(`{"id":31,"name":"Office hours","total_hours":"37.5","default":true}`)},
		HolidayAllowance:          &Ref{ID: 12, Name: "Standard 25 days", Raw: json.RawMessage(`{"id":12,"name":"Standard 25 days"}`)},
		LineManager:               &PersonRef{ID: 9, Email: "jo@example.com", Raw: json.RawMessage(`{"id":9,"name":"Jo Bloggs","email":"jo@example.com"}`)},
		ReceivesStatutoryHolidays: boolp(true),
		HR:                        boolp(false),
		CreatedAt:                 "2024-02-29T08:15:00Z",
		UpdatedAt:                 "2024-03-01T00:00:00Z",
		Extra:                     Extra(`{"custom_fields":[{"name":"Shoe size","value":"42"}],"dob":"1990-01-01","middle_name":null}`),
	}
	// Kept as sent, and written back so: join_date under its name, "" apart from null, the
	// timestamps' offsets, "12" and "" for a nested object as they came.
	var sent bytes.Buffer
	if err := json.Compact(&sent, []byte(upstreamEmployee)); err != nil {
		t.Fatal(err)
	}
	if string(got.Sent) != sent.String() {
		t.Errorf("sent form\n %s\nwant\n %s", got.Sent, sent.Bytes())
	}
	if out := got.AppendJSON(nil); string(out) != sent.String() {
		t.Errorf("AppendJSON of the decoded record\n %s\nwant\n %s", out, sent.Bytes())
	}
	got.Sent = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n %#v\nwant\n %#v", got, want)
	}

	// Built from its fields (a record without its sent form), in the interface document's forms.

	const wantJSON = `{"id":5001,"account_id":77,"first_name":"Ana","last_name":"López","email":"ana@example.com",` +
		`"job_title":null,"status":"Current employee","company_join_date":"2024-02-29","job_start_date":"2024-03-01",` +
		`"length_of_service_in_months":12,"age":null,"full_or_part_time":null,"notice_period":{"value":1,"unit":"month"},` +
		`"working_pattern":{"id":31,"name":"Office hours","total_hours":"37.5","default":true},` +
		`"holiday_allowance":{"id":12,"name":"Standard 25 days"},` +
		`"line_manager":{"id":9,"name":"Jo Bloggs","email":"jo@example.com"},"holiday_approver":null,"department":null,` +
		`"receives_statutory_holidays":true,"hr":false,"created_at":"2024-02-29T08:15:00Z","updated_at":"2024-03-01T00:00:00Z",` +
		`"custom_fields":[{"name":"Shoe size","value":"42"}],"dob":"1990-01-01","middle_name":null}`
	out := got.AppendJSON(nil)
	if string(out) != wantJSON {
		t.Errorf("AppendJSON\n %s\nwant\n %s", out, wantJSON)
	}
	wantKeys := append(slices.Clone(seedEmployeeFields), "custom_fields", "dob", "middle_name")
	if keys := objectKeys(t, out); !slices.Equal(keys, wantKeys) {
		t.Errorf("keys %v\nwant %v", keys, wantKeys)
	}
	// Decoding our own output gives the same record back.
	var again Employee
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatal(err)
	}
	if want.Sent = out; !reflect.DeepEqual(again, want) {
		t.Errorf("decoding the output gave\n %#v\nwant\n %#v", again, want)
	}
}

func TestEmployeeAppendJSONAllNull(t *testing.T) {
	e := Employee{ID: 7}
	const want = `{"id":7,"account_id":null,"first_name":null,"last_name":null,"email":null,"job_title":null,` +
		`"status":null,"company_join_date":null,"job_start_date":null,"length_of_service_in_months":null,"age":null,` +
		`"full_or_part_time":null,"notice_period":null,"working_pattern":null,"holiday_allowance":null,` +
		`"line_manager":null,"holiday_approver":null,"department":null,"receives_statutory_holidays":null,"hr":null,` +
		`"created_at":null,"updated_at":null}`
	if got := string(e.AppendJSON(nil)); got != want {
		t.Errorf("got\n %s\nwant\n %s", got, want)
	}
	if keys := objectKeys(t, e.AppendJSON(nil)); !slices.Equal(keys, seedEmployeeFields) {
		t.Errorf("keys %v, want the seed's order %v", keys, seedEmployeeFields)
	}
	// AppendJSON appends: what is before is kept.
	if got := string(e.AppendJSON([]byte("x"))); got != "x"+want {
		t.Errorf("AppendJSON dropped the prefix: %s", got)
	}
}

func TestEmployeeMarshalJSONIsAppendJSON(t *testing.T) {
	e := Employee{ID: 3, FirstName: "Jo <&>", HR: boolp(true), Extra: Extra(`{"a":1}`)}
	want := string(e.AppendJSON(nil))
	for name, v := range map[string]any{"value": e, "pointer": &e} {
		got, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		// encoding/json re-compacts a Marshaler's output and escapes HTML; compare the values.
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: json.Marshal = %s, want %s", name, got, want)
		}
	}
}

func TestEmployeeLenientFields(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Employee
	}{
		{"id as number", `{"id":42}`, Employee{ID: 42}},
		{"id as string", `{"id":"42"}`, Employee{ID: 42}},
		{"id as float with zero fraction", `{"id":42.0}`, Employee{ID: 42}},
		{"id with exponent", `{"id":1e3}`, Employee{ID: 1000}},
		{"id string with spaces", `{"id":" 42 "}`, Employee{ID: 42}},
		{"account_id as string", `{"id":1,"account_id":"77"}`, Employee{ID: 1, AccountID: i64(77)}},
		{"account_id empty string", `{"id":1,"account_id":""}`, Employee{ID: 1}},
		{"account_id null", `{"id":1,"account_id":null}`, Employee{ID: 1}},
		{"account_id zero is a value", `{"id":1,"account_id":0}`, Employee{ID: 1, AccountID: i64(0)}},
		{"length of service as string", `{"id":1,"length_of_service_in_months":"0"}`, Employee{ID: 1, LengthOfServiceInMonths: i64(0)}},
		{"string null", `{"id":1,"first_name":null}`, Employee{ID: 1}},
		{"string empty", `{"id":1,"first_name":""}`, Employee{ID: 1}},
		{"string from number", `{"id":1,"job_title":123}`, Employee{ID: 1, JobTitle: "123"}},
		{"string from boolean", `{"id":1,"job_title":true}`, Employee{ID: 1, JobTitle: "true"}},
		{"string kept with its spaces", `{"id":1,"status":" Pending leaver "}`, Employee{ID: 1, Status: " Pending leaver "}},
		{"string escapes", `{"id":1,"last_name":"O\u2019Brien \"Jr\""}`, Employee{ID: 1, LastName: "O’Brien \"Jr\""}},
		{"string literal null text", `{"id":1,"first_name":"null"}`, Employee{ID: 1, FirstName: "null"}},

		{"company_join_date dashes", `{"id":1,"company_join_date":"2023-01-05"}`, Employee{ID: 1, CompanyJoinDate: "2023-01-05"}},
		{"company_join_date slashes", `{"id":1,"company_join_date":"2023/01/05"}`, Employee{ID: 1, CompanyJoinDate: "2023-01-05"}},
		{"join_date alone", `{"id":1,"join_date":"2023/01/05"}`, Employee{ID: 1, CompanyJoinDate: "2023-01-05"}},
		{"company_join_date wins, written first", `{"id":1,"company_join_date":"2023-01-05","join_date":"2020-06-30"}`, Employee{ID: 1, CompanyJoinDate: "2023-01-05"}},
		{"company_join_date wins, written last", `{"id":1,"join_date":"2020-06-30","company_join_date":"2023-01-05"}`, Employee{ID: 1, CompanyJoinDate: "2023-01-05"}},
		{"empty company_join_date falls back to join_date", `{"id":1,"company_join_date":"","join_date":"2020/06/30"}`, Employee{ID: 1, CompanyJoinDate: "2020-06-30"}},
		{"null join_date leaves company_join_date", `{"id":1,"company_join_date":"2023-01-05","join_date":null}`, Employee{ID: 1, CompanyJoinDate: "2023-01-05"}},
		{"leap day", `{"id":1,"job_start_date":"2024-02-29"}`, Employee{ID: 1, JobStartDate: "2024-02-29"}},
		{"date null", `{"id":1,"job_start_date":null}`, Employee{ID: 1}},

		{"timestamp Z", `{"id":1,"created_at":"2024-03-01T10:00:00Z"}`, Employee{ID: 1, CreatedAt: "2024-03-01T10:00:00Z"}},
		{"timestamp positive offset", `{"id":1,"created_at":"2024-03-01T10:00:00+01:00"}`, Employee{ID: 1, CreatedAt: "2024-03-01T09:00:00Z"}},
		{"timestamp negative offset crossing midnight", `{"id":1,"updated_at":"2024-02-29T22:30:00-05:30"}`, Employee{ID: 1, UpdatedAt: "2024-03-01T04:00:00Z"}},
		{"timestamp offset crossing into a leap day", `{"id":1,"updated_at":"2024-03-01T00:30:00+01:00"}`, Employee{ID: 1, UpdatedAt: "2024-02-29T23:30:00Z"}},
		{"timestamp fraction dropped", `{"id":1,"created_at":"2024-03-01T10:00:00.987654Z"}`, Employee{ID: 1, CreatedAt: "2024-03-01T10:00:00Z"}},
		{"timestamp empty", `{"id":1,"created_at":""}`, Employee{ID: 1}},

		{"bool true", `{"id":1,"hr":true}`, Employee{ID: 1, HR: boolp(true)}},
		{"bool false", `{"id":1,"hr":false}`, Employee{ID: 1, HR: boolp(false)}},
		{"bool as string", `{"id":1,"hr":"true"}`, Employee{ID: 1, HR: boolp(true)}},
		{"bool as string FALSE", `{"id":1,"hr":"FALSE"}`, Employee{ID: 1, HR: boolp(false)}},
		{"bool as number", `{"id":1,"receives_statutory_holidays":0}`, Employee{ID: 1, ReceivesStatutoryHolidays: boolp(false)}},
		{"bool null", `{"id":1,"hr":null}`, Employee{ID: 1}},
		{"bool empty", `{"id":1,"hr":""}`, Employee{ID: 1}},

		{"opaque number", `{"id":1,"age":34}`, Employee{ID: 1, Age: json.RawMessage(`34`)}},
		{"opaque string", `{"id":1,"full_or_part_time":"Full time"}`, Employee{ID: 1, FullOrPartTime: json.RawMessage(`"Full time"`)}},
		{"opaque object compacted", `{"id":1,"notice_period":{ "weeks" : 4 }}`, Employee{ID: 1, NoticePeriod: json.RawMessage(`{"weeks":4}`)}},
		{"opaque empty", `{"id":1,"age":""}`, Employee{ID: 1}},
		{"opaque null", `{"id":1,"age":null}`, Employee{ID: 1}},

		{"working pattern numbers as strings", `{"id":1,"working_pattern":{"id":"31","name":"Office","total_hours":40.0,"default":"true"}}`,
			Employee{ID: 1, WorkingPattern: &PatternRef{ID: 31, Name: "Office", TotalHours: "40.0", Default: boolp(true), Raw: json.RawMessage(`{"id":31,"name":"Office","total_hours":"40.0","default":true}`)}}},
		{"working pattern empty", `{"id":1,"working_pattern":""}`, Employee{ID: 1}},
		{"holiday allowance id as string", `{"id":1,"holiday_allowance":{"id":"12","name":"Standard"}}`, Employee{ID: 1, HolidayAllowance: &Ref{ID: 12, Name: "Standard", Raw: json.RawMessage(`{"id":12,"name":"Standard"}`)}}},
		{"department with more fields", `{"id":1,"department":{"name":"Ops","id":3,"code":"OPS","head":{"id":9}}}`,
			Employee{ID: 1, Department: &Ref{ID: 3, Name: "Ops", Extra: Extra(`{"code":"OPS","head":{"id":9}}`), Raw: json.RawMessage(`{"name":"Ops","id":3,"code":"OPS","head":{"id":9}}`)}}},
		{"department empty", `{"id":1,"department":""}`, Employee{ID: 1}},
		{"holiday approver kept as sent", `{"id":1,"holiday_approver":{"email":"b@example.com","id":"8","first_name":"Bo","last_name":"Li","title":"Dr"}}`,
			Employee{ID: 1, HolidayApprover: &PersonRef{ID: 8, FirstName: "Bo", LastName: "Li", Email: "b@example.com", Raw: json.RawMessage(`{"email":"b@example.com","id":8,"first_name":"Bo","last_name":"Li","title":"Dr"}`)}}},
		{"line manager null", `{"id":1,"line_manager":null}`, Employee{ID: 1}},

		{"leading and trailing space around the object", " \n{\"id\":1}\t", Employee{ID: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Employee
			if err := got.UnmarshalJSON([]byte(tt.in)); err != nil {
				t.Fatalf("UnmarshalJSON(%s): %v", tt.in, err)
			}
			// The typed fields are read leniently; the record is kept and written as sent.
			var sent bytes.Buffer
			_ = json.Compact(&sent, []byte(tt.in))
			if string(got.Sent) != sent.String() || string(got.AppendJSON(nil)) != sent.String() {
				t.Errorf("UnmarshalJSON(%s): sent %s, written %s", tt.in, got.Sent, got.AppendJSON(nil))
			}
			got.Sent = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("UnmarshalJSON(%s)\n got %#v\nwant %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestEmployeeDecodeErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		field string // "" for an error that is not about one field
		value string // text of the value, which the error must not repeat
	}{
		{"missing id", `{"first_name":"Ana"}`, "id", ""},
		{"zero id", `{"id":0}`, "id", ""},
		{"negative id", `{"id":-3}`, "id", ""},
		{"id with fraction", `{"id":"1.5"}`, "id", "1.5"},
		{"id not a number", `{"id":"secret-id"}`, "id", "secret-id"},
		{"id object", `{"id":{"n":1}}`, "id", ""},
		{"id out of range", `{"id":1e300}`, "id", "1e300"},
		{"account_id text", `{"id":1,"account_id":"acct-secret"}`, "account_id", "acct-secret"},
		{"length of service fraction", `{"id":1,"length_of_service_in_months":"2.5"}`, "length_of_service_in_months", "2.5"},
		{"first_name object", `{"id":1,"first_name":{"x":"Ana-secret"}}`, "first_name", "Ana-secret"},
		{"email array", `{"id":1,"email":["ana@example.com"]}`, "email", "ana@example.com"},
		{"invalid calendar date", `{"id":1,"company_join_date":"2023-02-29"}`, "company_join_date", "2023-02-29"},
		{"day first date", `{"id":1,"join_date":"31/12/2023"}`, "join_date", "31/12/2023"},
		{"month 13", `{"id":1,"job_start_date":"2023-13-01"}`, "job_start_date", "2023-13-01"},
		{"date as number", `{"id":1,"job_start_date":20230101}`, "job_start_date", "20230101"},
		{"invalid join_date even when company_join_date is set", `{"id":1,"company_join_date":"2023-01-05","join_date":"1999-99-99"}`, "join_date", "1999-99-99"},
		{"timestamp text", `{"id":1,"created_at":"yesterday-secret"}`, "created_at", "yesterday-secret"},
		{"timestamp without time", `{"id":1,"updated_at":"2024-03-01"}`, "updated_at", "2024-03-01"},
		{"bool text", `{"id":1,"hr":"maybe-secret"}`, "hr", "maybe-secret"},
		{"bool number 2", `{"id":1,"receives_statutory_holidays":2}`, "receives_statutory_holidays", ""},
		{"working pattern not an object", `{"id":1,"working_pattern":"Office hours"}`, "working_pattern", "Office hours"},
		{"working pattern id", `{"id":1,"working_pattern":{"id":"wp-secret"}}`, "working_pattern.id", "wp-secret"},
		{"working pattern total hours", `{"id":1,"working_pattern":{"id":1,"total_hours":"forty-secret"}}`, "working_pattern.total_hours", "forty-secret"},
		{"working pattern default", `{"id":1,"working_pattern":{"id":1,"default":"sometimes"}}`, "working_pattern.default", "sometimes"},
		{"holiday allowance number", `{"id":1,"holiday_allowance":25}`, "holiday_allowance", ""},
		{"holiday allowance without id", `{"id":1,"holiday_allowance":{"name":"Standard"}}`, "holiday_allowance.id", ""},
		{"department name object", `{"id":1,"department":{"id":3,"name":{"x":"dept-secret"}}}`, "department.name", "dept-secret"},
		{"line manager id zero", `{"id":1,"line_manager":{"id":0,"email":"boss@example.com"}}`, "line_manager.id", "boss@example.com"},
		{"holiday approver array", `{"id":1,"holiday_approver":["appr-secret"]}`, "holiday_approver", "appr-secret"},
		{"not an object: array", `[{"id":1}]`, "", ""},
		{"not an object: string", `"emp-secret"`, "", "emp-secret"},
		{"not an object: null", `null`, "", ""},
		{"empty input", ``, "", ""},
		{"truncated", `{"id":1,"first_name":"An`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Employee
			err := e.UnmarshalJSON([]byte(tt.in))
			if err == nil {
				t.Fatalf("UnmarshalJSON(%s) succeeded: %#v", tt.in, e)
			}
			var fe *FieldError
			if tt.field != "" {
				if !errors.As(err, &fe) {
					t.Fatalf("error %q (%T) is not a *FieldError", err, err)
				}
				if fe.Field != tt.field {
					t.Errorf("FieldError.Field = %q, want %q (error %q)", fe.Field, tt.field, err)
				}
				if !strings.Contains(err.Error(), tt.field) {
					t.Errorf("error %q does not name the field %q", err, tt.field)
				}
			}
			if tt.value != "" && strings.Contains(err.Error(), tt.value) {
				t.Errorf("error %q repeats the value %q", err, tt.value)
			}
		})
	}
}

func TestExtraIsCanonical(t *testing.T) {
	in := `{"zeta": {"b" : 2, "a":1}, "id":1, "middle_name":"Q", "custom_fields":[ 1, 2 ], "alpha":null, "Beta":"x", "html":"<&>"}`
	var e Employee
	if err := e.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	// Compact, keys sorted (byte order: upper case first); nested values kept as sent.
	const want = `{"Beta":"x","alpha":null,"custom_fields":[1,2],"html":"<&>","middle_name":"Q","zeta":{"b":2,"a":1}}`
	if string(e.Extra) != want {
		t.Errorf("Extra = %s\nwant    %s", e.Extra, want)
	}
	m, err := e.Extra.Members()
	if err != nil {
		t.Fatal(err)
	}
	wantMembers := map[string]json.RawMessage{
		"Beta": json.RawMessage(`"x"`), "alpha": json.RawMessage(`null`), "custom_fields": json.RawMessage(`[1,2]`),
		"html": json.RawMessage(`"<&>"`), "middle_name": json.RawMessage(`"Q"`), "zeta": json.RawMessage(`{"b":2,"a":1}`),
	}
	if !reflect.DeepEqual(m, wantMembers) {
		t.Errorf("Members() = %v, want %v", m, wantMembers)
	}
	e.Sent = nil // built from its fields, not written as sent
	out := string(e.AppendJSON(nil))
	if !strings.HasSuffix(out, `"updated_at":null,`+want[1:]) {
		t.Errorf("AppendJSON does not end with the extra fields after updated_at: %s", out)
	}

	// A record with nothing unmodelled has no Extra at all.
	var plain Employee
	if err := plain.UnmarshalJSON([]byte(`{"id":1,"first_name":"Ana","join_date":"2024/01/01"}`)); err != nil {
		t.Fatal(err)
	}
	if plain.Extra != nil {
		t.Errorf("Extra = %q, want nil (join_date is modelled)", plain.Extra)
	}
	if m, err := plain.Extra.Members(); m != nil || err != nil {
		t.Errorf("Members() of no extra = %v, %v; want nil, nil", m, err)
	}
	if _, err := Extra(`{"a":`).Members(); err == nil {
		t.Error("Members() of a broken Extra succeeded")
	}
}

// Served JSON is UTF-8 (the handler says charset=utf-8): modelled strings replace invalid bytes
// with U+FFFD, and so must everything else we write back.
func TestAppendJSONIsUTF8(t *testing.T) {
	in := "{\"id\":1,\"x\":\"\xff\",\"age\":\"\xfe\",\"first_name\":\"\xff\"," +
		"\"working_pattern\":{\"id\":1,\"name\":\"\xfe\"},\"line_manager\":{\"id\":2,\"name\":\"\xfd\"}}"
	var e Employee
	if err := e.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if out := e.AppendJSON(nil); !utf8.Valid(out) {
		t.Errorf("AppendJSON is not UTF-8: %q", out)
	}
}

func TestWorkingPatternDecode(t *testing.T) {
	const in = `{"updated_at":"2024-03-01T10:00:00+01:00","id":"31","name":"Office hours","default":"true",
		"total_hours":"40.0","mon":true,"tue":"true","wed":1,"thu":"1","fri":true,"sat":false,"sun":"false",
		"mon_hr":"8.0","tue_hr":8,"wed_hr":"8.00","thu_hr":"8","fri_hr":8.0,"sat_hr":"0.0","sun_hr":"",
		"created_at":"2020-01-01T00:00:00Z","account_id":77,"colour":"blue"}`
	var got WorkingPattern
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	want := WorkingPattern{
		ID: 31, Name: "Office hours", Default: boolp(true), TotalHours: "40.0",
		Days:      [7]*bool{boolp(true), boolp(true), boolp(true), boolp(true), boolp(true), boolp(false), boolp(false)},
		Hours:     [7]string{"8.0", "8", "8.00", "8", "8.0", "0.0", ""},
		CreatedAt: "2020-01-01T00:00:00Z", UpdatedAt: "2024-03-01T09:00:00Z",
		Extra: Extra(`{"account_id":77,"colour":"blue"}`),
	}
	// Kept and written back as sent: "31", "true", 8, "" and the offset as they came.
	var sent bytes.Buffer
	if err := json.Compact(&sent, []byte(in)); err != nil {
		t.Fatal(err)
	}
	if out := string(got.AppendJSON(nil)); string(got.Sent) != sent.String() || out != sent.String() {
		t.Errorf("sent %s, written %s, want %s", got.Sent, out, sent.Bytes())
	}
	got.Sent = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n %#v\nwant\n %#v", got, want)
	}
	// Built from its fields (a record without its sent form), in the interface document's forms.
	const wantJSON = `{"id":31,"name":"Office hours","default":true,"total_hours":"40.0",` +
		`"mon":true,"tue":true,"wed":true,"thu":true,"fri":true,"sat":false,"sun":false,` +
		`"mon_hr":"8.0","tue_hr":"8","wed_hr":"8.00","thu_hr":"8","fri_hr":"8.0","sat_hr":"0.0","sun_hr":null,` +
		`"created_at":"2020-01-01T00:00:00Z","updated_at":"2024-03-01T09:00:00Z","account_id":77,"colour":"blue"}`
	if out := string(got.AppendJSON(nil)); out != wantJSON {
		t.Errorf("AppendJSON\n %s\nwant\n %s", out, wantJSON)
	}
	if out, err := json.Marshal(got); err != nil || string(out) != wantJSON {
		t.Errorf("json.Marshal = %s, %v", out, err)
	}
}

func TestWorkingPatternDecodeErrors(t *testing.T) {
	tests := []struct {
		in    string
		field string
	}{
		{`{"name":"x"}`, "id"},
		{`{"id":1,"total_hours":"forty"}`, "total_hours"},
		{`{"id":1,"total_hours":"4e1"}`, "total_hours"},
		{`{"id":1,"wed_hr":"8h"}`, "wed_hr"},
		{`{"id":1,"sun":"weekend"}`, "sun"},
		{`{"id":1,"default":[true]}`, "default"},
		{`{"id":1,"created_at":"2024-13-01T00:00:00Z"}`, "created_at"},
	}
	for _, tt := range tests {
		var p WorkingPattern
		err := p.UnmarshalJSON([]byte(tt.in))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("UnmarshalJSON(%s) = %v, want a FieldError for %q", tt.in, err, tt.field)
		}
	}
	var p WorkingPattern
	if err := p.UnmarshalJSON([]byte(`[]`)); err == nil {
		t.Error("UnmarshalJSON([]) succeeded")
	}
}

func TestRef(t *testing.T) {
	var r Ref
	if err := json.Unmarshal([]byte(`{"days":25,"id":"12","name":"Standard 25 days","accrual":{"b":1,"a":2}}`), &r); err != nil {
		t.Fatal(err)
	}
	want := Ref{ID: 12, Name: "Standard 25 days", Extra: Extra(`{"accrual":{"b":1,"a":2},"days":25}`)}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("decoded %#v, want %#v", r, want)
	}
	const wantJSON = `{"id":12,"name":"Standard 25 days","accrual":{"b":1,"a":2},"days":25}`
	if got := string(r.AppendJSON(nil)); got != wantJSON {
		t.Errorf("AppendJSON = %s, want %s", got, wantJSON)
	}
	if got, err := json.Marshal(r); err != nil || string(got) != wantJSON {
		t.Errorf("json.Marshal = %s, %v; want %s", got, err, wantJSON)
	}
	if got := string((&Ref{ID: 3}).AppendJSON(nil)); got != `{"id":3,"name":null}` {
		t.Errorf("AppendJSON without name = %s", got)
	}
	if got := string((*Ref)(nil).AppendJSON([]byte("x:"))); got != "x:null" {
		t.Errorf("nil Ref AppendJSON = %s, want x:null", got)
	}

	for in, field := range map[string]string{
		`{"name":"x"}`:          "record.id",
		`{"id":-1}`:             "record.id",
		`{"id":1,"name":["x"]}`: "record.name",
		`[]`:                    "record",
		`"x"`:                   "record",
	} {
		var r Ref
		err := r.UnmarshalJSON([]byte(in))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("Ref.UnmarshalJSON(%s) = %v, want a FieldError for %q", in, err, field)
		}
	}
}

func TestPatternRefAppendJSON(t *testing.T) {
	// Embedded by the source: given back exactly as sent (compacted), even fields we do not model.
	var e Employee
	in := `{"id":1,"working_pattern":{ "id": 31, "name": "Office", "total_hours": "37.50", "default": false, "colour": "blue" }}`
	if err := e.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	const raw = `{"id":31,"name":"Office","total_hours":"37.50","default":false,"colour":"blue"}`
	if string(e.WorkingPattern.Raw) != raw {
		t.Errorf("Raw = %s, want %s", e.WorkingPattern.Raw, raw)
	}
	if got := string(e.WorkingPattern.AppendJSON(nil)); got != raw {
		t.Errorf("AppendJSON = %s, want %s", got, raw)
	}
	if e.WorkingPattern.TotalHours != "37.50" || e.WorkingPattern.Default == nil || *e.WorkingPattern.Default {
		t.Errorf("fields read out of it: %#v", e.WorkingPattern)
	}

	// Built locally: the seed's nested form.
	tests := []struct {
		p    PatternRef
		want string
	}{
		{PatternRef{ID: 3, Name: "Office", TotalHours: "37.5", Default: boolp(true)}, `{"id":3,"name":"Office","total_hours":"37.5","default":true}`},
		{PatternRef{ID: 4}, `{"id":4,"name":null,"total_hours":null,"default":null}`},
	}
	for _, tt := range tests {
		if got := string(tt.p.AppendJSON(nil)); got != tt.want {
			t.Errorf("AppendJSON(%#v) = %s, want %s", tt.p, got, tt.want)
		}
	}
}

func TestPersonRefAppendJSON(t *testing.T) {
	var e Employee
	in := `{"id":1,"line_manager":{ "id": "9", "name": "Jo Bloggs", "first_name": "Jo", "last_name": "Bloggs", "email": "jo@example.com" }}`
	if err := e.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	// The shape as sent, the id written as the seed prescribes.
	const raw = `{"id":9,"name":"Jo Bloggs","first_name":"Jo","last_name":"Bloggs","email":"jo@example.com"}`
	want := &PersonRef{ID: 9, FirstName: "Jo", LastName: "Bloggs", Email: "jo@example.com", Raw: json.RawMessage(raw)}
	if !reflect.DeepEqual(e.LineManager, want) {
		t.Errorf("LineManager = %#v, want %#v", e.LineManager, want)
	}
	if got := string(e.LineManager.AppendJSON(nil)); got != raw {
		t.Errorf("AppendJSON = %s, want the object as sent %s", got, raw)
	}
	local := &PersonRef{ID: 9, FirstName: "Jo", Email: "jo@example.com"}
	if got := string(local.AppendJSON(nil)); got != `{"id":9,"first_name":"Jo","last_name":null,"email":"jo@example.com"}` {
		t.Errorf("local AppendJSON = %s", got)
	}
	if got := string((*PersonRef)(nil).AppendJSON(nil)); got != "null" {
		t.Errorf("nil AppendJSON = %s", got)
	}
}

func TestDecodeInt(t *testing.T) {
	tests := []struct {
		raw  string
		want *int64
		ok   bool
	}{
		{`12`, i64(12), true},
		{`"12"`, i64(12), true},
		{`-4`, i64(-4), true},
		{`"-4"`, i64(-4), true},
		{`12.0`, i64(12), true},
		{`"12.00"`, i64(12), true},
		{`1.2e1`, i64(12), true},
		{`9223372036854775807`, i64(9223372036854775807), true},
		{`null`, nil, true},
		{`""`, nil, true},
		{``, nil, true},
		{`12.5`, nil, false},
		{`"twelve"`, nil, false},
		{`"NaN"`, nil, false},
		{`"Inf"`, nil, false},
		{`9223372036854775808`, nil, false},
		{`1e19`, nil, false},
		{`true`, nil, false},
		{`[12]`, nil, false},
		{`{"n":12}`, nil, false},
	}
	for _, tt := range tests {
		got, err := decodeInt("f", json.RawMessage(tt.raw))
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("decodeInt(%s) = %v, %v; want %v, ok %v", tt.raw, deref(got), err, deref(tt.want), tt.ok)
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestDecodeBool(t *testing.T) {
	tests := []struct {
		raw  string
		want *bool
		ok   bool
	}{
		{`true`, boolp(true), true},
		{`false`, boolp(false), true},
		{`"true"`, boolp(true), true},
		{`"False"`, boolp(false), true},
		{`" true "`, boolp(true), true},
		{`1`, boolp(true), true},
		{`"0"`, boolp(false), true},
		{`"t"`, boolp(true), true},
		{`"f"`, boolp(false), true},
		{`"yes"`, boolp(true), true},
		{`"no"`, boolp(false), true},
		{`null`, nil, true},
		{`""`, nil, true},
		{`2`, nil, false},
		{`"maybe"`, nil, false},
		{`[true]`, nil, false},
		{`{}`, nil, false},
	}
	for _, tt := range tests {
		got, err := decodeBool("f", json.RawMessage(tt.raw))
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("decodeBool(%s) = %v, %v; want %v, ok %v", tt.raw, deref(got), err, deref(tt.want), tt.ok)
		}
	}
}

func TestDecodeDecimalKeepsText(t *testing.T) {
	tests := []struct {
		raw  string
		want string
		ok   bool
	}{
		{`"40.0"`, "40.0", true},
		{`40.0`, "40.0", true},
		{`"7.50"`, "7.50", true},
		{`7.5`, "7.5", true},
		{`"0"`, "0", true},
		{`" 8 "`, "8", true},
		{`".5"`, ".5", true},
		{`"5."`, "5.", true},
		{`"-1.25"`, "-1.25", true},
		{`"+2"`, "+2", true},
		{`null`, "", true},
		{`""`, "", true},
		{`"1e3"`, "", false},
		{`1e3`, "", false},
		{`"forty"`, "", false},
		{`"1.2.3"`, "", false},
		{`"."`, "", false},
		{`"NaN"`, "", false},
		{`"٣"`, "", false}, // a non-ASCII digit
		{`true`, "", false},
		{`[40]`, "", false},
		{`{}`, "", false},
	}
	for _, tt := range tests {
		got, err := decodeDecimal("total_hours", json.RawMessage(tt.raw))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("decodeDecimal(%s) = %q, %v; want %q, ok %v", tt.raw, got, err, tt.want, tt.ok)
		}
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "total_hours" {
				t.Errorf("decodeDecimal(%s) error %v does not name the field", tt.raw, err)
			}
		}
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" for an error
	}{
		{"2023-01-05", "2023-01-05"},
		{"2023/01/05", "2023-01-05"},
		{" 2023-01-05\t", "2023-01-05"},
		{"2024-02-29", "2024-02-29"},
		{"2024/02/29", "2024-02-29"},
		{"2000-02-29", "2000-02-29"},
		{"0001-01-01", "0001-01-01"},
		{"9999-12-31", "9999-12-31"},
		{"2023-01-05T10:00:00Z", "2023-01-05"},
		{"2023-01-05 10:00:00", "2023-01-05"},
		{"2023-01-05T10:00:00.5+01:00", "2023-01-05"},

		{"2023-02-29", ""},
		{"2023/02/29", ""},
		{"1900-02-29", ""},
		{"2023-04-31", ""},
		{"2023-13-01", ""},
		{"2023-00-10", ""},
		{"2023-01-00", ""},
		{"0000-01-01", ""},
		{"2023-1-5", ""},
		{"2023/01-05", ""},
		{"2023-01/05", ""},
		{"2023.01.05", ""},
		{"05/01/2023", ""},
		{"01-05-2023", ""},
		{"20230105", ""},
		{"2023-01-05X", ""},
		{"2023-01-05Tnot-a-time", ""},
		{"+023-01-05", ""},
		{"abcd-ef-gh", ""},
		{"", ""},
		{"today", ""},
	}
	for _, tt := range tests {
		got, err := ParseDate(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("ParseDate(%q) = %q, want an error", tt.in, got)
			} else if tt.in != "" && strings.Contains(err.Error(), strings.TrimSpace(tt.in)) {
				t.Errorf("ParseDate(%q) error %q repeats the value", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDate(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// A date written as a timestamp with an offset names a calendar day in that offset; moving it to
// UTC first can move it to another day.
func TestParseDateOfTimestampKeepsItsDay(t *testing.T) {
	for in, want := range map[string]string{
		"2023-01-05T23:30:00-02:00": "2023-01-05",
		"2023-01-05T00:30:00+01:00": "2023-01-05",
		"2024-03-01T00:00:00+01:00": "2024-03-01",
	} {
		if got, err := ParseDate(in); err != nil || got != want {
			t.Errorf("ParseDate(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" for an error
	}{
		{"2024-03-01T10:00:00Z", "2024-03-01T10:00:00Z"},
		{" 2024-03-01T10:00:00Z ", "2024-03-01T10:00:00Z"},
		{"2024-03-01T10:00:00+01:00", "2024-03-01T09:00:00Z"},
		{"2024-03-01T10:00:00-05:30", "2024-03-01T15:30:00Z"},
		{"2024-03-01T10:00:00+0100", "2024-03-01T09:00:00Z"},
		{"2024-03-01T10:00:00+00:00", "2024-03-01T10:00:00Z"},
		{"2024-03-01T10:00:00.123Z", "2024-03-01T10:00:00Z"},
		{"2024-03-01T10:00:00.999999999+01:00", "2024-03-01T09:00:00Z"},
		{"2024-03-01T10:00:00", "2024-03-01T10:00:00Z"},
		{"2024-03-01 10:00:00", "2024-03-01T10:00:00Z"},
		{"2024-03-01 10:00:00+01:00", "2024-03-01T09:00:00Z"},
		{"2024-01-01T00:30:00+01:00", "2023-12-31T23:30:00Z"},
		{"2024-02-29T23:00:00-02:00", "2024-03-01T01:00:00Z"},
		{"0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"},
		{"9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"},

		{"0001-01-01T00:30:00+01:00", ""}, // year 0 in UTC
		{"9999-12-31T23:30:00-01:00", ""}, // year 10000 in UTC
		{"2024-02-30T00:00:00Z", ""},
		{"2024-03-01T25:00:00Z", ""},
		{"2024-03-01T10:60:00Z", ""},
		{"2024-03-01", ""},
		{"2024/03/01T10:00:00Z", ""},
		{"2024-03-01T10:00Z", ""},
		{"2024-03-01T10:00:00+01", ""},
		{"1709287200", ""},
		{"yesterday", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := parseTimestamp(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("parseTimestamp(%q) = %q, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseTimestamp(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestFieldErrorMessage(t *testing.T) {
	err := error(&FieldError{Field: "working_pattern.id", Reason: "want a positive integer id"})
	if got, want := err.Error(), "field working_pattern.id: want a positive integer id"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", `""`},
		{"plain", `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash`, `"back\\slash"`},
		{"a\nb\rc\td", `"a\nb\rc\td"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"\b\f", `"\u0008\u000c"`},
		{"\x7f", "\"\x7f\""},
		{"<&>", `"<&>"`}, // no HTML escaping
		{"López ☃ 😀", `"López ☃ 😀"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"a\xffb", `"a\ufffdb"`},
		{"\xc3", `"\ufffd"`},                     // truncated sequence
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`}, // a surrogate encoded in UTF-8
		{"\xef\xbf\xbd", "\"\xef\xbf\xbd\""},     // a real U+FFFD passes through
	}
	for _, tt := range tests {
		got := string(appendString([]byte("x"), tt.in))
		if got != "x"+tt.want {
			t.Errorf("appendString(%q) = %s, want %s", tt.in, got[1:], tt.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got[1:]), &back); err != nil {
			t.Errorf("appendString(%q) = %s is not JSON: %v", tt.in, got[1:], err)
		}
	}
}

// TestEmployeeDivisionAndLocation: a division or location object is a reference, written after
// the department; any other value stays in Extra, written back as sent.
func TestEmployeeDivisionAndLocation(t *testing.T) {
	tests := []struct {
		in, division, location, extra, out string
	}{
		{`{"id":1,"division":{"id":"8","name":"North"},"location":{"id":7,"name":"Leeds","code":"L"}}`, "8 North ", `7 Leeds {"code":"L"}`, ``,
			`,"division":{"id":8,"name":"North"},"location":{"id":7,"name":"Leeds","code":"L"}`},
		{`{"id":1,"division":null,"location":"Leeds"}`, "", "", `{"division":null,"location":"Leeds"}`, ``},
		{`{"id":1,"division":"","location":  {"id":7}}`, "", "7  ", `{"division":""}`, `,"location":{"id":7}`},
		{`{"id":1}`, "", "", ``, ``},
	}
	ref := func(r *Ref) string {
		if r == nil {
			return ""
		}
		return fmt.Sprintf("%d %s %s", r.ID, r.Name, r.Extra)
	}
	for _, tt := range tests {
		var e Employee
		if err := json.Unmarshal([]byte(tt.in), &e); err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if got := ref(e.Division); got != tt.division {
			t.Errorf("%s: division %q, want %q", tt.in, got, tt.division)
		}
		if got := ref(e.Location); got != tt.location {
			t.Errorf("%s: location %q, want %q", tt.in, got, tt.location)
		}
		if string(e.Extra) != tt.extra {
			t.Errorf("%s: extra %s, want %s", tt.in, e.Extra, tt.extra)
		}
		if out := string(e.AppendJSON(nil)); out != string(e.Sent) {
			t.Errorf("%s: written %s, not as sent", tt.in, out)
		}
		e.Sent = nil // built from its fields
		out := string(e.AppendJSON(nil))
		if want := `"department":null` + tt.out + `,"receives_statutory_holidays"`; !strings.Contains(out, want) {
			t.Errorf("%s: written %s, want it to contain %s", tt.in, out, want)
		}
	}
}
