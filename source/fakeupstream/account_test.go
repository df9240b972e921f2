package fakeupstream_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/source/v1"
)

// walk reads a collection page by page from page 1, following the Link header's next, and
// returns the records and the Total of every page.
func walk(t *testing.T, srv *sourcetest.Server, name, query string, perPage int) ([]json.RawMessage, []string) {
	t.Helper()
	var all []json.RawMessage
	var totals []string
	target := fmt.Sprintf("/v1/%s?page=1&per_page=%d%s", name, perPage, query)
	for pages := 0; target != ""; pages++ {
		if pages > 10000 {
			t.Fatalf("%s: no end to the pages", name)
		}
		resp, body := get(t, srv, target)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", target, resp.StatusCode, body)
		}
		if resp.Header.Get("X-Request-Id") == "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			resp.Header.Get("Per-Page") != strconv.Itoa(min(perPage, 100)) {
			t.Errorf("%s: headers %v", target, resp.Header)
		}
		all = append(all, items(t, name, body)...)
		totals = append(totals, resp.Header.Get("Total"))
		links, err := v1.ParseLink(resp.Header.Get("Link"))
		if err != nil {
			t.Fatalf("%s: Link %q: %v", target, resp.Header.Get("Link"), err)
		}
		target = ""
		if next := links["next"]; next != "" {
			target = strings.TrimPrefix(next, srv.URL)
		}
	}
	return all, totals
}

func TestAccountCollectionsPageCompletely(t *testing.T) {
	a := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 120, Seed: 3})
	srv := sourcetest.NewServer(a.Options())
	defer srv.Close()
	for _, name := range fakeupstream.CollectionNames() {
		want := a.Collections[name]
		switch name {
		case "employees":
			want = a.Employees
		case "working_patterns":
			want = a.WorkingPatterns
		}
		for _, perPage := range []int{100, 7, 500} {
			t.Run(fmt.Sprintf("%s/%d", name, perPage), func(t *testing.T) {
				if len(want) == 0 {
					t.Fatal("the account has no records of it")
				}
				got, totals := walk(t, srv, name, "", perPage)
				for _, total := range totals {
					if total != strconv.Itoa(len(want)) {
						t.Errorf("Total %v, want %d on every page", totals, len(want))
						break
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("walked %d records, not the %d given, in order", len(got), len(want))
				}
				if pages := (len(want) + min(perPage, 100) - 1) / min(perPage, 100); len(totals) != pages {
					t.Errorf("%d pages, want %d", len(totals), pages)
				}
				ids := map[int64]bool{}
				for _, raw := range got {
					var r struct{ ID int64 }
					if err := json.Unmarshal(raw, &r); err != nil && name != "employees" {
						t.Fatalf("record %s: %v", raw, err)
					}
					if ids[r.ID] {
						t.Errorf("id %d twice", r.ID)
					}
					ids[r.ID] = true
				}
			})
		}
	}
	// One record of a held collection by its id, in the envelope.
	abs := a.Collections["absences"][17]
	var r struct{ ID int64 }
	if err := json.Unmarshal(abs, &r); err != nil {
		t.Fatal(err)
	}
	if resp, body := get(t, srv, "/v1/absences/"+strconv.FormatInt(r.ID, 10)); resp.StatusCode != 200 || !bytes.Equal(items(t, "absences", body)[0], abs) {
		t.Errorf("one absence: %d %s", resp.StatusCode, body)
	}
	for _, target := range []string{"/v1/absences/1", "/v1/absences/x", "/v1/departments/0"} {
		if resp, body := get(t, srv, target); resp.StatusCode != 404 || string(body) != `{"error":{"type":"Not Found"}}` {
			t.Errorf("%s: %d %s", target, resp.StatusCode, body)
		}
	}
}

func TestGenerateAccountIsDeterministic(t *testing.T) {
	opts := fakeupstream.AccountOptions{Employees: 200, Seed: 42, AbsenceYears: 2}
	a, b := fakeupstream.GenerateAccount(opts), fakeupstream.GenerateAccount(opts)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("GenerateAccount is not deterministic")
	}
	opts.Seed = 43
	if c := fakeupstream.GenerateAccount(opts); reflect.DeepEqual(a.Collections["absences"], c.Collections["absences"]) ||
		reflect.DeepEqual(a.Employees, c.Employees) {
		t.Fatal("GenerateAccount ignores the seed")
	}
	// Served, the same bytes.
	var bodies [2][]byte
	for i := range bodies {
		srv := sourcetest.NewServer(fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 200, Seed: 42, AbsenceYears: 2}).Options())
		_, bodies[i] = get(t, srv, "/v1/absences?page=3&per_page=100&start_date=2025-01-01")
		srv.Close()
	}
	if !bytes.Equal(bodies[0], bodies[1]) || len(bodies[0]) < 1000 {
		t.Errorf("two servers of the same seed answer differently (%d and %d bytes)", len(bodies[0]), len(bodies[1]))
	}
	// The employees are Generate's but for a nested location, the members Generate does not
	// write (division, statutory_holiday_country, leaving_date), a leaver's length of service
	// (to their leaving day), the zero-hours staff's pattern, a future starter's and a recent
	// hire's dates, and the status of a Current employee who has left in the last three years.
	plain := fakeupstream.Generate(200, 42)
	var zero, future, recent, quit int
	for i := range plain {
		var p, q map[string]json.RawMessage
		if err := json.Unmarshal(plain[i], &p); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(a.Employees[i], &q); err != nil {
			t.Fatal(err)
		}
		for _, member := range []string{"division", "statutory_holiday_country", "leaving_date"} {
			if _, ok := q[member]; !ok {
				t.Fatalf("employee %d has no %s: %s", i, member, a.Employees[i])
			}
			delete(q, member)
		}
		if string(p["location"]) != "null" && !strings.Contains(string(q["location"]), `"name":`+string(p["location"])) {
			t.Errorf("employee %d: location %s, Generate's %s", i, q["location"], p["location"])
		}
		delete(p, "location")
		delete(q, "location")
		if string(q["status"]) == `"Ex-employee"` {
			delete(p, "length_of_service_in_months")
			delete(q, "length_of_service_in_months")
		}
		if string(q["status"]) == `"Ex-employee"` && string(p["status"]) == `"Current employee"` {
			quit++
			delete(p, "status")
			delete(q, "status")
		}
		if nestedIDOf(t, a.Employees[i], "working_pattern") == 36 {
			zero++
			if string(p["full_or_part_time"]) == "null" && string(q["full_or_part_time"]) != "null" ||
				string(p["full_or_part_time"]) != "null" && string(q["full_or_part_time"]) != `"Part time"` {
				t.Errorf("employee %d works zero hours, full_or_part_time %s (Generate's %s)", i, q["full_or_part_time"], p["full_or_part_time"])
			}
			for _, member := range []string{"working_pattern", "full_or_part_time"} {
				delete(p, member)
				delete(q, member)
			}
		}
		if join := joinOf(t, a.Employees[i]); join != joinOf(t, plain[i]) {
			if join > "2026-06-01" {
				future++
			} else if recent++; join < "2023-06-01" {
				t.Errorf("employee %d joins %s, not Generate's %s: want only future starters and recent hires (from 2023-06-01) re-dated", i, join, joinOf(t, plain[i]))
			}
			for _, member := range []string{"company_join_date", "join_date", "job_start_date", "length_of_service_in_months", "created_at", "updated_at"} {
				delete(p, member)
				delete(q, member)
			}
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("employee %d differs from Generate's beyond what GenerateAccount adds:\n%s\n%s", i, plain[i], a.Employees[i])
		}
	}
	if zero == 0 || future == 0 || recent == 0 || quit == 0 {
		t.Errorf("of 200 employees %d work zero hours, %d start after the data's today, %d joined lately and %d left lately; want some of each",
			zero, future, recent, quit)
	}
}

// joinOf is an employee's join date as YYYY-MM-DD, from company_join_date or join_date
// (YYYY-MM-DD or YYYY/MM/DD).
func joinOf(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var e struct {
		CompanyJoinDate string `json:"company_join_date"`
		JoinDate        string `json:"join_date"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(e.CompanyJoinDate+e.JoinDate, "/", "-")
}

// ids reads the ids of records.
func ids(t *testing.T, raws []json.RawMessage) map[int64]bool {
	t.Helper()
	out := map[int64]bool{}
	for _, raw := range raws {
		var r struct{ ID json.Number }
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("record %s: %v", raw, err)
		}
		id, err := r.ID.Int64()
		if err != nil {
			t.Fatalf("record %s: id: %v", raw, err)
		}
		out[id] = true
	}
	return out
}

// nestedIDOf is the id of the nested object at key, 0 when null or "".
func nestedIDOf(t *testing.T, raw json.RawMessage, key string) int64 {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	v, ok := m[key]
	if !ok {
		t.Fatalf("no %s in %s", key, raw)
	}
	if string(v) == "null" || string(v) == `""` {
		return 0
	}
	var r struct{ ID json.Number }
	if err := json.Unmarshal(v, &r); err != nil {
		t.Fatalf("%s of %s: %v", key, raw, err)
	}
	id, err := r.ID.Int64()
	if err != nil {
		t.Fatalf("%s of %s: %v", key, raw, err)
	}
	return id
}

func TestAccountReferencesAndQuirks(t *testing.T) {
	// Two years of events: the five people outside the list left within the last 400 days, so
	// in a single year some have three months of events or none, and the few sicknesses
	// expected of them (two or three) can come to none.
	a := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 300, Seed: 7, AbsenceYears: 2})
	emps := ids(t, a.Employees)
	refs := map[string]map[int64]bool{}
	for name, raws := range a.Collections {
		refs[name] = ids(t, raws)
	}
	for name, raws := range a.Collections {
		if len(raws) == 0 {
			t.Errorf("no %s", name)
		}
	}
	// The employees point at the reference data.
	for _, raw := range a.Employees {
		for key, coll := range map[string]string{"department": "departments", "division": "divisions", "location": "locations", "holiday_allowance": "holiday_allowances"} {
			if id := nestedIDOf(t, raw, key); id != 0 && !refs[coll][id] {
				t.Errorf("employee's %s %d is not one of %s: %s", key, id, coll, raw)
			}
		}
	}
	// The financial module has a few records per listed employee, none of anyone else; every
	// employee has a salary.
	for _, name := range []string{"salaries", "bonuses", "benefits"} {
		per := map[int64]int{}
		for _, raw := range a.Collections[name] {
			id := nestedIDOf(t, raw, "employee")
			if !emps[id] {
				t.Errorf("%s: employee %d is not listed: %s", name, id, raw)
			}
			per[id]++
		}
		most := 0
		for _, n := range per {
			most = max(most, n)
		}
		if most > 5 || (name == "salaries" && len(per) != len(emps)) {
			t.Errorf("%s: %d employees have some, at most %d each (of %d employees)", name, len(per), most, len(emps))
		}
	}
	// The events point at the employees, a few at people not in the list.
	for _, name := range []string{"absences", "leave_requests", "sicknesses", "employee_training_courses"} {
		unlisted := 0
		for _, raw := range a.Collections[name] {
			id := nestedIDOf(t, raw, "employee")
			switch {
			case emps[id]:
			case id >= 900001:
				unlisted++
			default:
				t.Errorf("%s: employee %d is neither listed nor one of the few unlisted: %s", name, id, raw)
			}
		}
		if n := len(a.Collections[name]); unlisted == 0 || unlisted*20 > n {
			t.Errorf("%s: %d of %d records about unlisted employees; want a few", name, unlisted, n)
		}
	}
	for _, raw := range a.Collections["absences"] {
		if id := nestedIDOf(t, raw, "leave_reason"); id != 0 && !refs["other_leave_reasons"][id] {
			t.Errorf("absence's leave_reason %d is not one of other_leave_reasons: %s", id, raw)
		}
	}
	for _, raw := range a.Collections["employee_training_courses"] {
		if id := nestedIDOf(t, raw, "company_training_type"); !refs["company_training_types"][id] {
			t.Errorf("course's type %d is not one of company_training_types: %s", id, raw)
		}
	}
	// Every quirk the issue and UPSTREAM.md name is there.
	for name, quirks := range map[string][]string{
		"absences": {`"approved_by":null`, `"approved_by":{"id":90000`, `"approved_by":{"id":`, `"leave_reason":null`, `"leave_reason":{"id":`,
			`"cancelled":true`, `"cancelled":false`, `"half_start":true,"half_start_am_pm":"am"`, `"half_start_am_pm":"pm"`, `"half_end":true`,
			`"half_start_am_pm":null`, `"half_start_am_pm":""`, `"half_end_am_pm":""`, `.5","work_units":"`, `+01:00"`, `+00:00"`, `Z"`, `.000Z"`, `"notes":""`,
			`"type":"Holiday"`, `"type":"OtherLeave"`, `"employee":{"id":`, `"first_name":"`, `"email":"`},
		"leave_requests": {`"status":"approved"`, `"status":"pending"`, `"status":"rejected"`, `"status":"cancelled"`, `"notes":""`},
		"sicknesses": {`"employee":{"id":`, `"company_sicknesstype":{"id":`, `"status":"returned"`, `"end_date":null`, `"review_notes":null`,
			`"review_notes":""`, `"fit_note_required":null`, `"fit_note_required":true`, `"fit_note_required":false`, `"reason":""`, `"deducted":"`},
		"employee_training_courses": {`"cost":"750.0"`, `"hours":null`, `"expires_on":null`, `"expires_on":"`, `"half_day":true`, `"half_day_am_pm":"pm"`,
			`"company_training_provider":null`, `"company_training_provider":{"id":`, `"status":"Booked"`, `"status":"Completed"`, `"followup_date":null`,
			`"remuneration_currency_id":1`, `"outcome":""`},
	} {
		text := joined(a.Collections[name])
		for _, q := range quirks {
			if !strings.Contains(text, q) {
				t.Errorf("no record of %s has %s", name, q)
			}
		}
	}
	// Members a leave request never carries are absent, not null.
	if text := joined(a.Collections["leave_requests"]); strings.Contains(text, `"approved_by"`) ||
		strings.Contains(text, `"leave_reason"`) || strings.Contains(text, `_am_pm"`) {
		t.Error("a leave request carries approved_by, leave_reason or an am/pm of its half days")
	}
	emps2 := joined(a.Employees)
	for _, q := range []string{`"division":null`, `"division":""`, `"division":{"id":`, `"location":{"id":`, `"location":null`} {
		if !strings.Contains(emps2, q) {
			t.Errorf("no employee has %s", q)
		}
	}
	// Absences and leave requests overlap under different ids.
	for id := range refs["absences"] {
		if refs["leave_requests"][id] {
			t.Fatalf("absence and leave request share id %d", id)
		}
	}
}

// The volume knob: more years, more events, going further back.
func TestGenerateAccountYears(t *testing.T) {
	earliest := func(raws []json.RawMessage) string {
		first := "9999"
		for _, raw := range raws {
			var r struct {
				StartDate string `json:"start_date"`
			}
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			first = min(first, r.StartDate)
		}
		return first
	}
	one := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 100, Seed: 1})
	four := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 100, Seed: 1, AbsenceYears: 4})
	if n1, n4 := len(one.Collections["absences"]), len(four.Collections["absences"]); n4 < 2*n1 {
		t.Errorf("%d absences in one year, %d in four", n1, n4)
	}
	// The data's today is 2026-06-01; bookings end no earlier than a year (four) before it.
	if e := earliest(one.Collections["absences"]); e < "2025-05-01" {
		t.Errorf("a year of absences starts %s", e)
	}
	if e := earliest(four.Collections["absences"]); e > "2022-09-01" || e < "2022-05-01" {
		t.Errorf("four years of absences start %s", e)
	}
	if !reflect.DeepEqual(one.Employees, four.Employees) {
		t.Error("the years change the employees")
	}
}

// Records for the filter tests: the filter asked for is 2026-03-05 … 2026-03-10.
func filterRecords() []json.RawMessage {
	rec := func(id int, emp int, start, end string, extra string) json.RawMessage {
		e := "null"
		if end != "" {
			e = `"` + end + `"`
		}
		return json.RawMessage(fmt.Sprintf(`{"id":%d,"employee":{"id":%d},"start_date":"%s","end_date":%s%s}`, id, emp, start, e, extra))
	}
	return []json.RawMessage{
		rec(1, 10, "2026-03-01", "2026-03-05", `,"cancelled":false,"type":"Holiday","status":"approved"`),    // ends on from: in
		rec(2, 10, "2026-03-01", "2026-03-04", `,"cancelled":false,"type":"Holiday","status":"approved"`),    // ends the day before: out
		rec(3, 11, "2026-03-10", "2026-03-12", `,"cancelled":true,"type":"Holiday","status":"cancelled"`),    // starts on to: in
		rec(4, 11, "2026-03-11", "2026-03-12", `,"cancelled":false,"type":"OtherLeave","status":"approved"`), // starts the day after: out
		rec(5, 12, "2026-02-01", "2026-04-01", `,"cancelled":false,"type":"OtherLeave","status":"pending"`),  // spans: in
		rec(6, 12, "2026-03-06", "2026-03-07", `,"cancelled":"true","type":"holiday","status":"Cancelled"`),  // inside: in
		rec(7, 13, "2026-02-20", "", `,"cancelled":false,"type":"Holiday","status":"approved"`),              // open end: in
		rec(8, 13, "2026-03-11", "", `,"cancelled":false,"type":"Holiday","status":"approved"`),              // open, after: out
		json.RawMessage(`{"id":9,"employee":null,"start_date":"","end_date":"","cancelled":null}`),           // no dates: only unfiltered
	}
}

func TestDateFilters(t *testing.T) {
	recs := filterRecords()
	srv := sourcetest.NewServer(fakeupstream.Options{Collections: map[string][]json.RawMessage{
		"absences": recs, "sicknesses": recs, "leave_requests": recs, "employee_training_courses": recs,
	}})
	defer srv.Close()
	tests := []struct {
		name, query string
		want        []int64
	}{
		{"absences", "", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"absences", "&start_date=2026-03-05&end_date=2026-03-10", []int64{1, 3, 5, 6, 7}},
		{"absences", "&start_date=2026-03-05", []int64{1, 3, 4, 5, 6, 7, 8}},
		{"absences", "&end_date=2026-03-10", []int64{1, 2, 3, 5, 6, 7}},
		{"absences", "&start_date=2026-03-05&end_date=2026-03-05", []int64{1, 5, 7}},
		{"absences", "&start_date=2026-03-05&end_date=2026-03-10&exclude_cancelled_absences=true", []int64{1, 5, 7}},
		{"absences", "&exclude_cancelled_absences=false", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"absences", "&type=Holiday", []int64{1, 2, 3, 6, 7, 8}},
		{"absences", "&type=OtherLeave&employee_id=11", []int64{4}},
		{"absences", "&employee_id=12&start_date=2026-03-08", []int64{5}},
		{"absences", "&employee_id=99", nil},
		{"sicknesses", "&start_date=2026-03-05&end_date=2026-03-10", []int64{1, 3, 5, 6, 7}},
		{"sicknesses", "&start_date=2026-03-11", []int64{3, 4, 5, 7, 8}},
		{"sicknesses", "&employee_id=13", []int64{7, 8}},
		{"leave_requests", "&start_date=2026-03-05&end_date=2026-03-10", []int64{3, 6}},
		{"leave_requests", "&start_date=2026-03-06", []int64{3, 4, 6, 8}},
		{"leave_requests", "&end_date=2026-03-01", []int64{1, 2, 5, 7}},
		{"leave_requests", "&start_date=2026-03-01&end_date=2026-03-10&exclude_cancelled_requests=true", []int64{1, 2}},
		{"leave_requests", "&employee_id=11", []int64{3, 4}},
		// Training courses take no date filters: all of them, whatever is asked.
		{"employee_training_courses", "&start_date=2026-03-05&end_date=2026-03-10", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name+tt.query, func(t *testing.T) {
			// Two to a page: paging, Total and Link apply to what the filters keep, and the
			// links keep the filters.
			got, totals := walk(t, srv, tt.name, tt.query, 2)
			var gotIDs []int64
			for _, raw := range got {
				var r struct{ ID int64 }
				if err := json.Unmarshal(raw, &r); err != nil {
					t.Fatal(err)
				}
				gotIDs = append(gotIDs, r.ID)
			}
			if !slices.Equal(gotIDs, tt.want) {
				t.Errorf("got %v, want %v", gotIDs, tt.want)
			}
			for _, total := range totals {
				if total != strconv.Itoa(len(tt.want)) {
					t.Errorf("Total %v, want %d", totals, len(tt.want))
					break
				}
			}
		})
	}
	resp, _ := get(t, srv, "/v1/absences?per_page=2&start_date=2026-03-05")
	link := resp.Header.Get("Link")
	if !strings.Contains(link, "start_date=2026-03-05") || !strings.Contains(link, "page=4") {
		t.Errorf("Link %s: want the filter kept, 4 pages", link)
	}
}

func TestMalformedFilters(t *testing.T) {
	recs := filterRecords()
	srv := sourcetest.NewServer(fakeupstream.Options{Collections: map[string][]json.RawMessage{"absences": recs, "sicknesses": recs, "leave_requests": recs}})
	defer srv.Close()
	for _, target := range []string{
		"/v1/absences?start_date=2026-13-01",
		"/v1/absences?end_date=yesterday",
		"/v1/absences?start_date=2026/03/01",
		"/v1/absences?start_date=2026-03-01T00:00:00Z",
		"/v1/absences?employee_id=x",
		"/v1/absences?other_leave_reason_id=-1",
		"/v1/sicknesses?end_date=01-03-2026",
		"/v1/leave_requests?start_date=2026-02-30",
		"/v1/absences?page=0",
	} {
		resp, body := get(t, srv, target)
		e, err := v1.ParseErrorBody(body)
		if resp.StatusCode != 400 || err != nil || e.Type != "Bad Request" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s (%+v, %v)", target, resp.StatusCode, body, e, err)
		}
		if target != "/v1/absences?page=0" && e.Message == "" {
			t.Errorf("%s: no message saying what is wrong: %s", target, body)
		}
	}
}

// The filters on a generated account keep what they should, the same on every page.
func TestDateFiltersOnAnAccount(t *testing.T) {
	a := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 150, Seed: 5, AbsenceYears: 2})
	srv := sourcetest.NewServer(a.Options())
	defer srv.Close()
	const from, to = "2025-12-01", "2026-02-28"
	for _, name := range []string{"absences", "sicknesses", "leave_requests"} {
		var want []json.RawMessage
		for _, raw := range a.Collections[name] {
			var r struct {
				Start string  `json:"start_date"`
				End   *string `json:"end_date"`
			}
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			var in bool
			if name == "leave_requests" {
				in = r.Start >= from && r.Start <= to
			} else {
				in = r.Start <= to && (r.End == nil || *r.End >= from)
			}
			if in {
				want = append(want, raw)
			}
		}
		got, _ := walk(t, srv, name, "&start_date="+from+"&end_date="+to, 100)
		if len(want) == 0 || len(want) == len(a.Collections[name]) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d records kept of %d, want %d", name, len(got), len(a.Collections[name]), len(want))
		}
	}
	// Absences by the department of their employee, and by their other leave reason.
	inDept := map[int64]bool{}
	for _, raw := range a.Employees {
		if nestedIDOf(t, raw, "department") == 504 {
			maps.Copy(inDept, ids(t, []json.RawMessage{raw}))
		}
	}
	for _, tt := range []struct {
		query string
		keep  func(raw json.RawMessage) bool
	}{
		{"&department_id=504", func(raw json.RawMessage) bool { return inDept[nestedIDOf(t, raw, "employee")] }},
		{"&other_leave_reason_id=47", func(raw json.RawMessage) bool { return nestedIDOf(t, raw, "leave_reason") == 47 }},
	} {
		var want []json.RawMessage
		for _, raw := range a.Collections["absences"] {
			if tt.keep(raw) {
				want = append(want, raw)
			}
		}
		got, _ := walk(t, srv, "absences", tt.query, 100)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("absences%s: %d records kept, want %d", tt.query, len(got), len(want))
		}
	}
}

func TestCollectionsNotOffered(t *testing.T) {
	a := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 20, Seed: 2})
	opts := a.Options()
	opts.Unavailable = map[string]int{"employee_training_courses": 404, "sicknesses": 403, "working_patterns": 403, "salaries": 404}
	opts.Collections["divisions"] = []json.RawMessage{} // offered, and empty
	delete(opts.Collections, "locations")               // not offered
	srv := sourcetest.NewServer(opts)
	defer srv.Close()
	tests := []struct {
		target string
		status int
		body   string
	}{
		{"/v1/employee_training_courses?page=1&per_page=100", 404, `{"error":{"type":"Not Found"}}`},
		{"/v1/employee_training_courses/7000001", 404, `{"error":{"type":"Not Found"}}`},
		{"/v1/sicknesses?start_date=2026-01-01", 403, `{"error":{"type":"Forbidden"}}`},
		{"/v1/sicknesses?start_date=nonsense", 403, `{"error":{"type":"Forbidden"}}`},
		{"/v1/working_patterns", 403, `{"error":{"type":"Forbidden"}}`},
		{"/v1/locations", 404, `{"error":{"type":"Not Found"}}`},
		{"/v1/divisions", 200, `{"divisions":[]}`},
		{"/v1/salaries", 404, `{"error":{"type":"Not Found"}}`},
	}
	for _, tt := range tests {
		resp, body := get(t, srv, tt.target)
		if resp.StatusCode != tt.status || string(body) != tt.body || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s, want %d %s", tt.target, resp.StatusCode, body, tt.status, tt.body)
		}
		if tt.status != 200 && resp.Header.Get("Total") != "" {
			t.Errorf("%s: Total on an error", tt.target)
		}
	}
	for _, name := range []string{"absences", "bonuses", "benefits"} {
		if resp, _ := get(t, srv, "/v1/"+name); resp.StatusCode != 200 {
			t.Errorf("%s: %d", name, resp.StatusCode)
		}
	}
	// Still the 401 without a key.
	if resp, body := get(t, srv, "/v1/sicknesses", "X-Api-Key", "wrong"); resp.StatusCode != 401 || string(body) != `{"error":"401 Unauthorized"}` {
		t.Errorf("401: %d %s", resp.StatusCode, body)
	}
	// Switched on and off between requests.
	srv.SetUnavailable("sicknesses", 0)
	srv.SetUnavailable("absences", 404)
	if resp, _ := get(t, srv, "/v1/sicknesses"); resp.StatusCode != 200 {
		t.Errorf("sicknesses switched back on: %d", resp.StatusCode)
	}
	if resp, _ := get(t, srv, "/v1/absences"); resp.StatusCode != 404 {
		t.Errorf("absences switched off: %d", resp.StatusCode)
	}
	srv.SetCollection("locations", a.Collections["locations"])
	if resp, body := get(t, srv, "/v1/locations"); resp.StatusCode != 200 || len(items(t, "locations", body)) != len(a.Collections["locations"]) {
		t.Errorf("locations set: %d %s", resp.StatusCode, body)
	}
	if got := srv.Collection("locations"); !reflect.DeepEqual(got, a.Collections["locations"]) {
		t.Errorf("Collection(locations) = %d records", len(got))
	}
	srv.SetCollection("locations", nil)
	if resp, _ := get(t, srv, "/v1/locations"); resp.StatusCode != 404 || srv.Collection("locations") != nil {
		t.Errorf("locations removed: %d", resp.StatusCode)
	}
	// The zero Options offer none of them.
	zero := sourcetest.NewServer(fakeupstream.Options{})
	defer zero.Close()
	for _, name := range fakeupstream.CollectionNames()[2:] {
		if resp, body := get(t, zero, "/v1/"+name); resp.StatusCode != 404 || string(body) != `{"error":{"type":"Not Found"}}` {
			t.Errorf("zero Options, %s: %d %s", name, resp.StatusCode, body)
		}
	}
}

// Filtered walks see records added between requests, as unfiltered ones do.
func TestSetCollectionBetweenFilteredPages(t *testing.T) {
	recs := filterRecords()
	srv := sourcetest.NewServer(fakeupstream.Options{Collections: map[string][]json.RawMessage{"absences": recs}})
	defer srv.Close()
	const q = "/v1/absences?per_page=100&start_date=2026-03-05"
	resp, _ := get(t, srv, q)
	if resp.Header.Get("Total") != "7" {
		t.Fatalf("Total %s", resp.Header.Get("Total"))
	}
	srv.SetCollection("absences", append(slices.Clone(recs), json.RawMessage(`{"id":10,"start_date":"2026-03-09","end_date":"2026-03-09"}`)))
	resp, body := get(t, srv, q)
	if resp.Header.Get("Total") != "8" || len(items(t, "absences", body)) != 8 {
		t.Errorf("after a record was added: Total %s, %s", resp.Header.Get("Total"), body)
	}
}

// Faults and the rate limit apply to the new collections as to employees.
func TestFaultsOnTheNewCollections(t *testing.T) {
	srv := sourcetest.NewServer(fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 10, Seed: 1}).Options())
	defer srv.Close()
	srv.InjectFaults(fakeupstream.Fault{Status: 503}, fakeupstream.Fault{LinkOrigin: "https://elsewhere.example"})
	if resp, body := get(t, srv, "/v1/leave_requests"); resp.StatusCode != 503 || string(body) != `{"error":{"type":"Service Unavailable"}}` {
		t.Errorf("503 fault: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, srv, "/v1/leave_requests?per_page=5&start_date=2025-06-01"); !strings.HasPrefix(resp.Header.Get("Link"), "<https://elsewhere.example/v1/leave_requests?") {
		t.Errorf("link fault: Link %s", resp.Header.Get("Link"))
	}
	if srv.Count("/v1/leave_requests", 503) != 1 || srv.Count("/v1/leave_requests", 200) != 1 {
		t.Errorf("counts %v", srv.Counts())
	}
	limited := sourcetest.NewServer(fakeupstream.Options{RateLimit: 2, Collections: map[string][]json.RawMessage{"departments": {}}})
	defer limited.Close()
	var statuses []int
	for range 3 {
		resp, _ := get(t, limited, "/v1/departments")
		statuses = append(statuses, resp.StatusCode)
	}
	if !slices.Equal(statuses, []int{200, 200, 429}) {
		t.Errorf("statuses %v under a limit of 2", statuses)
	}
}

// joined is the records as one text, a line each.
func joined(raws []json.RawMessage) string {
	var b strings.Builder
	for _, raw := range raws {
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.String()
}
