package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// TestOpenAPIDocumentIsValid: the document is valid OpenAPI 3.1 by the specification's own
// schema (testdata/oas), and every schema in it compiles as JSON Schema 2020-12 (OpenAPI 3.1's
// dialect), its references resolved.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	openAPIDoc(t)
	f, err := os.Open(filepath.Join("testdata", "oas", "3.1-schema-2022-10-07.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	meta, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const id = "https://spec.openapis.org/oas/3.1/schema/2022-10-07"
	if err := c.AddResource(id, meta); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(server.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Errorf("openapi.json is not valid OpenAPI 3.1: %v", err)
	}
	// The check can fail: a document that breaks the specification's rules is refused.
	broken := doc.(map[string]any)
	broken["paths"] = map[string]any{"v1/employees": map[string]any{}} // a path must start with a slash
	if err := schema.Validate(broken); err == nil {
		t.Error("a path without its leading slash passed the specification's schema")
	}
}

// TestOpenAPIGolden: every golden answer (the exact bytes served, testdata/golden) is what the
// document says of its path and status.
func TestOpenAPIGolden(t *testing.T) {
	t.Parallel()
	paths := map[string]string{"employees": "/v1/employees", "employees_page2": "/v1/employees?per_page=2&page=2",
		"employee_42": "/v1/employees/42", "working_patterns": "/v1/working_patterns", "departments": "/v1/departments",
		"holiday_allowances": "/v1/holiday_allowances", "not_found": "/v1/employees/900"}
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		path, ok := paths[name]
		if !ok {
			t.Errorf("golden file %s: no path known for it; add it here", name)
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// The golden form: the status, the headers, a blank line, the body.
		head, body, _ := bytes.Cut(data, []byte("\n\n"))
		sc := bufio.NewScanner(bytes.NewReader(head))
		sc.Scan()
		var status int
		fmt.Sscan(sc.Text(), &status)
		resp := &http.Response{StatusCode: status, Header: http.Header{}, ProtoMajor: 1, ProtoMinor: 1}
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ": ")
			resp.Header.Set(k, v)
		}
		resp.Header.Set("X-Request-Id", "golden")
		if status == 200 {
			resp.Header.Set("ETag", `"golden"`)
			resp.Header.Set("Cache-Control", server.CacheControl)
		}
		checkAnswer(t, "GET", path, resp, body)
	}
}

// TestOpenAPIAnswers: the answers a real handler gives, every status it can answer with, are
// what the document says, errors included.
func TestOpenAPIAnswers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{CORSOrigins: []string{"https://dash.example.com"},
		Keys: []server.Key{{Name: "directory", Key: "directory-key-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Collections: []string{"employees"},
			Fields: []string{"id", "first_name", "line_manager.id"}, ReadOnly: true}}}})
	scoped := []string{"X-API-KEY", "directory-key-9f2c4e7a1b3d5f60a8e2"}
	f.put(t, goldenEmployees...)
	f.walk(t, v1.Departments, `{"id":5,"name":"R&D","code":"RD"}`)
	form := "employee[first_name]=Ida&employee[last_name]=Em&employee[email]=ida@example.com&employee[join_date]=2026-01-05"
	formCT := []string{"Content-Type", "application/x-www-form-urlencoded"}
	type call struct {
		method, path string
		body         string
		header       []string
		status       int
	}
	calls := []call{
		{"GET", "/v1", "", nil, 200},
		{"GET", "/v1/employees?per_page=1", "", nil, 200},
		{"GET", "/v1/employees/42", "", nil, 200},
		{"GET", "/v1/working_patterns", "", nil, 200},
		{"GET", "/v1/openapi.json", "", []string{"X-API-KEY", ""}, 200},
		{"GET", "/v1/employees", "", []string{"X-API-KEY", ""}, 401},
		{"GET", "/v1/employees?page=0", "", nil, 400},
		{"GET", "/v1/employees/77777", "", nil, 404},
		{"GET", "/v1/nothing", "", nil, 404},      // no path to document: checked as a 404 of a path
		{"DELETE", "/v1/employees", "", nil, 405}, // no method to document: checked as a 405 of GET
		{"GET", "/v1/employees?x=" + strings.Repeat("a", 3000), "", nil, 414},
		{"POST", "/v1/employees", form, formCT, 201},
		{"POST", "/v1/employees", form, formCT, 400}, // email taken
		{"POST", "/v1/employees", "employee[first_name]=", formCT, 400},
		{"POST", "/v1/employees", `{"employee":{"first_name":"Jo","last_name":"Ng","email":"jo@example.com","join_date":"2026-01-05"}}`, []string{"Content-Type", "application/json", "Idempotency-Key", "k-1"}, 201},
		{"POST", "/v1/employees", `{"employee":{"first_name":"Jo","last_name":"Ng","email":"jo@example.com","join_date":"2026-01-05"}}`, []string{"Content-Type", "application/json", "Idempotency-Key", "k-1"}, 201},
		{"POST", "/v1/employees", form, append([]string{"Idempotency-Key", "k-1"}, formCT...), 422},
		{"POST", "/v1/employees", "x", []string{"Content-Type", "text/plain"}, 415},
		{"POST", "/v1/employees", "employee[first_name]=" + strings.Repeat("a", 70<<10), formCT, 413},
		{"OPTIONS", "/v1/employees", "", []string{"X-API-KEY", "", "Origin", "https://dash.example.com", "Access-Control-Request-Method", "GET"}, 204},
		{"GET", "/v1/employees", "", scoped, 200},
		{"GET", "/v1/employees/42", "", scoped, 200},
		{"GET", "/v1", "", scoped, 200},
		{"GET", "/v1/departments", "", scoped, 403},
		{"POST", "/v1/employees", form, append(formCT, scoped...), 403},
		{"OPTIONS", "/v1/employees", "", []string{"X-API-KEY", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "GET"}, 403},
	}
	for _, c := range v1.Collections {
		calls = append(calls, call{"GET", "/v1/" + c.Name, "", nil, 0})
	}
	calls = append(calls, call{"GET", "/v1/departments/5", "", nil, 200})
	for _, c := range calls {
		resp, body := f.do(t, c.method, c.path, strings.NewReader(c.body), c.header...)
		if c.status != 0 && resp.StatusCode != c.status {
			t.Errorf("%s %.60s: %d, want %d: %s", c.method, c.path, resp.StatusCode, c.status, body)
			continue
		}
		method, path := c.method, c.path
		switch {
		case path == "/v1/nothing":
			path = "/v1/employees/1"
		case method == "DELETE":
			method = "GET"
		}
		checkAnswer(t, method, path, resp, body)
		if resp.StatusCode == 200 && c.method == "GET" {
			// Its 304.
			resp, body = f.do(t, "GET", c.path, nil, append(c.header, "If-None-Match", resp.Header.Get("ETag"))...)
			if resp.StatusCode != 304 {
				t.Errorf("GET %s with its ETag: %d", c.path, resp.StatusCode)
			}
			checkAnswer(t, "GET", c.path, resp, body)
		}
	}
}

// TestOpenAPIScopedAnswers: the answers of keys whose lists take members out at every depth are
// what the document says of them: a deny list of every declared member (a bare name: at every
// depth, so nested objects are emptied too) and of every nested object's id, and an allow list
// of ids and emails at every depth, over records with nested objects and members beyond the
// declared ones.
func TestOpenAPIScopedAnswers(t *testing.T) {
	t.Parallel()
	deny := []string{"account_id", "first_name", "last_name", "email", "job_title", "status", "working_pattern",
		"holiday_allowance", "line_manager.id", "holiday_approver.id", "department.id", "custom_fields", "dob"}
	for _, c := range v1.Collections {
		for _, f := range c.Fields {
			deny = append(deny, f.Name)
			if f.Kind == v1.Nested {
				deny = append(deny, f.Name+".id")
				for _, nf := range f.Nested.Fields {
					deny = append(deny, "**."+nf.Name)
				}
			}
		}
	}
	f := newFixture(t, "sqlite", server.Options{Keys: []server.Key{
		{Name: "deny", Key: "deny-key-7f3a9c2e5b1d8f4a6c0e9b2d", Scope: server.Scope{Deny: deny, ReadOnly: true}},
		{Name: "deny-nested", Key: "deny-nested-key-7f3a9c2e5b1d8f4a6c0e9b2d", Scope: server.Scope{Deny: []string{"employee.id", "approved_by.id", "leave_reason.id", "line_manager.id", "**.name", "**.first_name"}, ReadOnly: true}},
		{Name: "allow", Key: "allow-key-7f3a9c2e5b1d8f4a6c0e9b2d", Scope: server.Scope{Fields: []string{"id", "**.email", "**.id", "employee.first_name", "line_manager.email"}, ReadOnly: true}},
	}})
	deepStore(t, f)
	for _, key := range []string{"deny-key-7f3a9c2e5b1d8f4a6c0e9b2d", "deny-nested-key-7f3a9c2e5b1d8f4a6c0e9b2d", "allow-key-7f3a9c2e5b1d8f4a6c0e9b2d"} {
		for _, path := range append(deepPaths(), "/v1") {
			resp, body := send(t, "GET", f.srv.URL+path, key, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("%s with %s: %d %s", path, key, resp.StatusCode, body)
			}
			checkAnswer(t, "GET", path, resp, body)
		}
	}
	// The deny list leaves records their id and what the source sent beyond the declared
	// members, emptied of the denied names at every depth.
	resp, body := send(t, "GET", f.srv.URL+"/v1/absences/2", "deny-key-7f3a9c2e5b1d8f4a6c0e9b2d", nil)
	if want := `{"absences":[{"id":2,"people":[{"more":[{}]}]}]}` + "\n"; string(body) != want {
		t.Errorf("%d %s, want %s", resp.StatusCode, body, want)
	}
}

// TestOpenAPIRequiresOnlyRecordIDs: a record's schema requires its id and nothing else, at any
// depth, so the document holds for every key's answers, whatever a list takes out (a record's
// id cannot be denied, and an allow list must keep it).
func TestOpenAPIRequiresOnlyRecordIDs(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct{ Schemas map[string]map[string]any }
	}
	if err := json.Unmarshal(server.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var requiredBelow func(v any, path string) []string
	requiredBelow = func(v any, path string) []string {
		var found []string
		switch v := v.(type) {
		case map[string]any:
			for k, m := range v {
				if k == "required" {
					found = append(found, path)
				}
				found = append(found, requiredBelow(m, path+"/"+k)...)
			}
		case []any:
			for i, e := range v {
				found = append(found, requiredBelow(e, fmt.Sprintf("%s/%d", path, i))...)
			}
		}
		return found
	}
	records := 0
	for name, schema := range doc.Components.Schemas {
		if name == "Error" || strings.HasPrefix(name, "NewEmployee") {
			continue // not records: errors and what a create sends
		}
		records++
		if req, _ := json.Marshal(schema["required"]); string(req) != `["id"]` {
			t.Errorf("%s requires %s, want [\"id\"]", name, req)
		}
		below := map[string]any{}
		for k, v := range schema {
			if k != "required" {
				below[k] = v
			}
		}
		if found := requiredBelow(below, name); len(found) > 0 {
			t.Errorf("%s: members required below the record: %v", name, found)
		}
	}
	if records != 2+len(v1.Collections) {
		t.Errorf("%d record schemas, want %d", records, 2+len(v1.Collections))
	}
}

// TestOpenAPIServedWithoutKey: the document is served as committed, without a key, with an
// ETag that answers 304.
func TestOpenAPIServedWithoutKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{})
	resp, body := f.do(t, "GET", "/v1/openapi.json", nil, "X-API-KEY", "")
	if resp.StatusCode != 200 || !bytes.Equal(body, server.OpenAPI) || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("%d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
	resp, _ = f.do(t, "GET", "/v1/openapi.json", nil, "X-API-KEY", "", "If-None-Match", resp.Header.Get("ETag"))
	if resp.StatusCode != 304 {
		t.Errorf("with its ETag: %d", resp.StatusCode)
	}
	resp, body = f.do(t, "POST", "/v1/openapi.json", nil)
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %s", resp.StatusCode, body)
	}
}

// TestOpenAPIErrorsFromTheStore: the answers of a failing store (busy, internal) and a failing
// upstream (rate limit, refused) are in the document too.
func TestOpenAPIErrorsFromTheStore(t *testing.T) {
	t.Parallel()
	store := sinktest.Store(t, "sqlite", sink.Options{})
	resp, body := fixtureOver(t, store, panicky{store}, server.Options{}).do(t, "GET", "/v1/departments", nil)
	if resp.StatusCode != 500 {
		t.Fatalf("panicky store: %d", resp.StatusCode)
	}
	checkAnswer(t, "GET", "/v1/departments", resp, body)

	up := &flaky{fails: []error{&v1.RateLimitError{RetryAfter: time.Second}, fmt.Errorf("reset")}}
	fwd := newFixture(t, "sqlite", server.Options{Writes: server.WritesForward, Upstream: up})
	for _, want := range []int{429, 502} {
		resp, body := fwd.do(t, "POST", "/v1/employees", strings.NewReader("employee[first_name]=A&employee[last_name]=B&employee[email]=ab@example.com&employee[join_date]=2026-01-01"),
			"Content-Type", "application/x-www-form-urlencoded")
		if resp.StatusCode != want {
			t.Fatalf("forward: %d, want %d: %s", resp.StatusCode, want, body)
		}
		checkAnswer(t, "POST", "/v1/employees", resp, body)
	}
}
