package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

func form(fields map[string]string) (io.Reader, string) {
	v := url.Values{}
	for k, val := range fields {
		v.Set("employee["+k+"]", val)
	}
	return strings.NewReader(v.Encode()), "application/x-www-form-urlencoded"
}

func TestCreate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{})
	valid := map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024/02/29", "job_title": "Engineer"}

	body, ct := form(valid)
	resp, b := f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
	assertStatus(t, resp, b, 201)
	var env struct{ Employees []v1.Employee }
	if err := json.Unmarshal(b, &env); err != nil || len(env.Employees) != 1 {
		t.Fatalf("body %s: %v", b, err)
	}
	e := env.Employees[0]
	if e.CompanyJoinDate != "2024-02-29" || e.JobStartDate != "2024-02-29" || e.Status != "Current employee" ||
		e.WorkingPattern == nil || e.WorkingPattern.ID != 1 || e.HolidayAllowance == nil || e.LineManager != nil ||
		e.Department != nil || *e.HR || *e.ReceivesStatutoryHolidays || *e.LengthOfServiceInMonths != 32 {
		t.Errorf("created %s", b)
	}
	if loc := resp.Header.Get("Location"); loc != f.srv.URL+fmt.Sprintf("/v1/employees/%d", e.ID) {
		t.Errorf("Location %q", loc)
	}
	resp, b2 := f.do(t, "GET", fmt.Sprintf("/v1/employees/%d", e.ID), nil)
	assertStatus(t, resp, b2, 200)
	if !bytes.Equal(b, b2) {
		t.Errorf("GET differs from the create's answer:\n%s\n%s", b, b2)
	}

	// JSON, with the ISO date form.
	resp, b = f.do(t, "POST", "/v1/employees", strings.NewReader(`{"employee":{"first_name":"Bo","last_name":"Ek","email":"bo@example.com","join_date":"2025-01-31"}}`), "Content-Type", "application/json")
	assertStatus(t, resp, b, 201)

	// Multipart.
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	for k, v := range map[string]string{"first_name": "Cy", "last_name": "Do", "email": "cy@example.com", "join_date": "2025/01/31"} {
		_ = w.WriteField("employee["+k+"]", v)
	}
	_ = w.Close()
	resp, b = f.do(t, "POST", "/v1/employees", &mp, "Content-Type", w.FormDataContentType())
	assertStatus(t, resp, b, 201)

	resp, b = f.do(t, "GET", "/v1/employees", nil)
	if resp.Header.Get("Total") != "3" {
		t.Errorf("Total after 3 creates: %s", resp.Header.Get("Total"))
	}
	_ = b
}

func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{MaxBodyBytes: 4096})
	f.put(t, `{"id":7,"first_name":"Taken","last_name":"T","email":"taken@example.com"}`)
	tests := []struct {
		name, ct, body string
		status         int
		want           string
	}{
		{"missing all", "application/x-www-form-urlencoded", "", 400,
			`{"error":{"type":"Record Invalid","employee[first_name]":["missing"],"employee[last_name]":["missing"],"employee[email]":["missing"],"employee[join_date]":["missing"]}}`},
		{"bad email and date", "application/json", `{"employee":{"first_name":"A","last_name":"B","email":"nope","join_date":"2023/02/29"}}`, 400,
			`{"error":{"type":"Record Invalid","employee[email]":["is not a valid email address"],"employee[join_date]":["is not a valid date (use YYYY/MM/DD or YYYY-MM-DD)"]}}`},
		{"email taken, other case", "application/json", `{"employee":{"first_name":"A","last_name":"B","email":"TAKEN@example.com","join_date":"2023/02/28"}}`, 400,
			`{"error":{"type":"Record Invalid","employee[email]":["has already been taken"]}}`},
		{"unknown field", "application/json", `{"employee":{"first_name":"A","last_name":"B","email":"a@example.com","join_date":"2023/02/28","salary":"1"}}`, 400,
			`{"error":{"type":"Record Invalid","employee[salary]":["is not a supported field"]}}`},
		{"no employee", "application/json", `{"person":{}}`, 400,
			`{"error":{"type":"Record Invalid","employee":["missing"]}}`},
		{"not json", "application/json", `{"employee":`, 400, ""},
		{"xml", "application/xml", `<employee/>`, 415, ""},
		{"too large", "application/json", `{"employee":{"first_name":"` + strings.Repeat("a", 5000) + `"}}`, 413, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := f.do(t, "POST", "/v1/employees", strings.NewReader(tt.body), "Content-Type", tt.ct)
			assertStatus(t, resp, b, tt.status)
			if tt.want != "" && strings.TrimSpace(string(b)) != tt.want {
				t.Errorf("body\n got %s\nwant %s", b, tt.want)
			}
			if _, err := v1.ParseErrorBody(b); err != nil {
				t.Errorf("not a JSON error: %s", b)
			}
		})
	}
	resp, _ := f.do(t, "GET", "/v1/employees", nil)
	if resp.Header.Get("Total") != "1" {
		t.Errorf("refused creates wrote something: Total %s", resp.Header.Get("Total"))
	}
}

// A form body over the limit is 413 and a malformed one 400 naming it, never "every field
// missing"; each answer is a JSON error. Nothing is created.
func TestCreateBodyErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{})
	big := strings.Repeat("x", 65<<10)
	urlencoded := "employee[first_name]=Ana&employee[last_name]=Lopez&employee[email]=ana%40example.com&employee[join_date]=2024%2F02%2F29&employee[job_title]=" + big
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	_ = mw.WriteField("employee[first_name]", "Ana")
	_ = mw.WriteField("employee[job_title]", big)
	_ = mw.Close()
	var mpBad bytes.Buffer
	mwBad := multipart.NewWriter(&mpBad)
	_ = mwBad.WriteField("employee[first_name]", "Ana")
	mpBad.WriteString("--" + mwBad.Boundary() + "\r\nno headers end here")
	tests := []struct {
		name, ct, body string
		status         int
		message        string
	}{
		{"urlencoded over 64 KiB", "application/x-www-form-urlencoded", urlencoded, 413, "body larger than 65536 bytes"},
		{"multipart over 64 KiB", mw.FormDataContentType(), mp.String(), 413, "body larger than 65536 bytes"},
		{"JSON over 64 KiB", "application/json", `{"employee":{"job_title":"` + big + `"}}`, 413, "body larger than 65536 bytes"},
		{"urlencoded bad escape", "application/x-www-form-urlencoded", "employee[first_name]=%zz", 400, "malformed body"},
		{"multipart cut short", mwBad.FormDataContentType(), mpBad.String(), 400, "malformed body"},
		{"multipart without boundary", "multipart/form-data", "--x\r\n", 400, "malformed body"},
		{"JSON cut short", "application/json", `{"employee":`, 400, "malformed body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := f.do(t, "POST", "/v1/employees", strings.NewReader(tt.body), "Content-Type", tt.ct)
			assertStatus(t, resp, b, tt.status)
			assertJSONError(t, resp, b, tt.status)
			if pe, _ := v1.ParseErrorBody(b); !strings.Contains(pe.Message, tt.message) {
				t.Errorf("message %q, want it to say %q", pe.Message, tt.message)
			}
		})
	}
	// The query string is not the body: a malformed one does not spoil a good form.
	body, ct := form(map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024/02/29"})
	resp, b := f.do(t, "POST", "/v1/employees?x=%zz", body, "Content-Type", ct)
	assertStatus(t, resp, b, 201)
}

func TestWritesOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{Writes: server.WritesOff})
	body, ct := form(map[string]string{"first_name": "A", "last_name": "B", "email": "a@example.com", "join_date": "2024/01/01"})
	resp, b := f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
	assertStatus(t, resp, b, 405)
	if resp.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(string(b), "does not accept writes") {
		t.Errorf("Allow %q body %s", resp.Header.Get("Allow"), b)
	}
}

// upstreamCreated is what a real service answers a create with: nested objects and extra fields.
const upstreamCreated = `{"employees":[{"id":5001,"account_id":77,"first_name":"Ana","last_name":"Lopez","email":"ana@example.com","job_title":null,"status":"Current employee","company_join_date":"2024-02-29","job_start_date":"2024-02-29","length_of_service_in_months":0,"age":null,"full_or_part_time":null,"notice_period":null,"working_pattern":{"id":31,"name":"Office hours","total_hours":"37.5","default":true},"holiday_allowance":{"id":12,"name":"Standard 25 days"},"line_manager":null,"holiday_approver":null,"department":null,"receives_statutory_holidays":false,"hr":false,"created_at":"2026-11-22T12:00:01Z","updated_at":"2026-11-22T12:00:01Z","middle_name":null}]}`

func TestForwardWrites(t *testing.T) {
	t.Parallel()
	var gotKey, gotBody, gotCT string
	status, answer := http.StatusCreated, upstreamCreated
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/v1/employees" {
			http.Error(w, "unexpected", 500)
			return
		}
		gotKey, gotCT = r.Header.Get("X-Api-Key"), r.Header.Get("Content-Type")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	defer upstream.Close()
	fwd, err := client.New(upstream.URL, "prod-upstream-key", client.Options{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, "sqlite", server.Options{Writes: server.WritesForward, Upstream: fwd})
	body, ct := form(map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024-02-29"})
	resp, b := f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
	assertStatus(t, resp, b, 201)
	if gotKey != "prod-upstream-key" || gotCT != "application/x-www-form-urlencoded" ||
		gotBody != "employee%5Bfirst_name%5D=Ana&employee%5Blast_name%5D=Lopez&employee%5Bemail%5D=ana%40example.com&employee%5Bjob_title%5D=&employee%5Bjoin_date%5D=2024%2F02%2F29" {
		t.Errorf("upstream saw key %q, type %q, body %s", gotKey, gotCT, gotBody)
	}
	var env struct{ Employees []v1.Employee }
	if err := json.Unmarshal(b, &env); err != nil || env.Employees[0].ID != 5001 {
		t.Fatalf("answer %s", b)
	}
	// The replica serves the upstream's record at once, as upstream sent it.
	resp, b2 := f.do(t, "GET", "/v1/employees/5001", nil)
	assertStatus(t, resp, b2, 200)
	if !bytes.Equal(b, b2) {
		t.Errorf("stored copy differs:\n%s\n%s", b, b2)
	}
	if !strings.Contains(string(b2), `"working_pattern":{"id":31,"name":"Office hours"`) {
		t.Errorf("nested pattern not kept: %s", b2)
	}

	tests := []struct {
		name         string
		status       int
		answer       string
		header       string
		want         int
		bodyContains string
	}{
		{"upstream refuses the record", 400, `{"error":{"type":"Record Invalid","employee[email]":["is invalid"]}}`, "", 400, `"employee[email]":["is invalid"]`},
		{"upstream refuses our key", 401, `{"error":"401 Unauthorized"}`, "", 502, "credentials"},
		{"upstream rate limit", 429, `{"error":{"type":"Rate Limit Reached"}}`, "", 429, "Rate Limit Reached"},
		{"upstream down", 503, `oops`, "", 502, "did not accept"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, answer = tt.status, tt.answer
			body, ct := form(map[string]string{"first_name": "X", "last_name": "Y", "email": fmt.Sprintf("x%d@example.com", i), "join_date": "2024-01-01"})
			resp, b := f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
			assertStatus(t, resp, b, tt.want)
			if !strings.Contains(string(b), tt.bodyContains) || strings.Contains(string(b), "prod-upstream-key") {
				t.Errorf("body %s", b)
			}
		})
	}
	// An email the replica already holds is refused before anything is sent.
	gotBody = ""
	body, ct = form(map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024-02-29"})
	resp, b = f.do(t, "POST", "/v1/employees", body, "Content-Type", ct)
	assertStatus(t, resp, b, 400)
	if gotBody != "" {
		t.Error("a taken email was forwarded")
	}
}
