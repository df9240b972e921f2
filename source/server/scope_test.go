package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// directoryFields is the directory scope of config.yaml: names, work email, job title,
// department and manager; name is a department's.
var directoryFields = []string{"id", "first_name", "last_name", "email", "job_title", "name", "department",
	"line_manager.id", "line_manager.name", "line_manager.first_name", "line_manager.last_name", "line_manager.email"}

func hexSHA256(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// scopedKeys are the keys the scope tests serve beside the fixture's full-access testKey.
func scopedKeys() []server.Key {
	return []server.Key{
		{Name: "directory", SHA256: hexSHA256("directory-key-9f2c4e7a1b3d5f60a8e2"), Scope: server.Scope{
			Collections: []string{"employees", "departments"}, Fields: directoryFields, ReadOnly: true}},
		// The same scope written otherwise: the same tags.
		{Name: "directory-2", Key: "directory-key-2-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{
			Collections: []string{"departments", "employees", "employees"}, Fields: append(slices.Clone(directoryFields), "line_manager.email", "email"), ReadOnly: true}},
		{Name: "no-personal", Key: "deny-key-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{
			Deny: []string{"dob", "ni_number", "bank_details", "personal_email", "custom_fields.salary", "line_manager.dob", "line_manager.ni_number"}}},
		{Name: "departments", Key: "departments-key-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Collections: []string{"departments"}, ReadOnly: true}},
		{Name: "writer", Key: "writer-key-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Fields: []string{"id", "first_name", "email"}}},
		{Name: "read-only", Key: "read-only-key-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{ReadOnly: true}},
	}
}

// personalEmployee is an employee with personal and financial members, typed and not, and full
// nested objects whose own personal members a scope must reach too.
func personalEmployee(i int) string {
	return fmt.Sprintf(`{"id":%d,"account_id":7,"first_name":"F%d","last_name":"L%d","email":"e%d@example.com","job_title":"Engineer %d",`+
		`"status":"Current employee","company_join_date":"2019-03-01","age":%d,`+
		`"working_pattern":{"id":1,"name":"Standard","total_hours":"37.5","default":true},"holiday_allowance":{"id":1,"name":"Standard"},`+
		`"line_manager":{"id":%d,"name":"Boss %d","email":"boss%d@example.com","dob":"1970-01-%02d","ni_number":"QQMGR%04dC"},`+
		`"holiday_approver":{"id":%d,"first_name":"Ap","last_name":"Prover","personal_email":"approver%d@home.example.net"},`+
		`"department":{"id":%d,"name":"Dept %d","code":"D%d"},"receives_statutory_holidays":true,"hr":false,`+
		`"dob":"19%02d-02-03","ni_number":"QQ%06dC","personal_email":"e%d@home.example.net",`+
		`"bank_details":[{"sort_code":"10-20-%02d","account_number":"ACCT%08d"},{"sort_code":"40-50-60","account_number":"ACCTX%d"}],`+
		`"custom_fields":{"salary":"SALARY-%d","shoe":"42","note":"quote \" brace } bracket ] \\u0041"}}`,
		i, i, i, i, i, 20+i%40, 1000+i%7, i%7, i%7, 1+i%28, i%7, 2000+i%5, i, 1+i%4, 1+i%4, 1+i%4,
		50+i%40, i, i, i%100, i, i, i)
}

// personalMarks are pieces of text only the personal and financial members above hold.
var personalMarks = []string{"QQ", "ACCT", "SALARY-", "home.example.net", "1970-01-", `"dob"`, `"ni_number"`, "bank_details", "sort_code", `"age"`, "working_pattern", "holiday_approver", `"hr"`}

// TestScopedKeyWalksEveryEmployee is the acceptance test of scopes: a directory-scoped key walks
// every page of employees who carry personal and financial members, following Link's next,
// and gets each employee with exactly the scope's members, nested ones included, and no
// personal text anywhere; a deny-list key walks them all and never sees a denied path.
func TestScopedKeyWalksEveryEmployee(t *testing.T) {
	t.Parallel()
	const n = 257
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, backend, server.Options{Keys: scopedKeys()})
			want := map[int64]map[string]json.RawMessage{}
			for i := 1; i <= n; i++ {
				raw := personalEmployee(i)
				f.put(t, raw)
				var m map[string]json.RawMessage
				if err := json.Unmarshal([]byte(raw), &m); err != nil {
					t.Fatal(err)
				}
				want[int64(i)] = m
			}
			walkAll := func(key string, check func(t *testing.T, id int64, rec map[string]json.RawMessage, raw []byte)) {
				next := f.srv.URL + "/v1/employees?per_page=100"
				seen := map[int64]bool{}
				pages := 0
				for next != "" {
					pages++
					resp, body := send(t, "GET", next, key, nil)
					assertStatus(t, resp, body, 200)
					var env struct{ Employees []json.RawMessage }
					if err := json.Unmarshal(body, &env); err != nil {
						t.Fatalf("%s: %v", body, err)
					}
					for _, raw := range env.Employees {
						var rec map[string]json.RawMessage
						if err := json.Unmarshal(raw, &rec); err != nil {
							t.Fatal(err)
						}
						var id int64
						if err := json.Unmarshal(rec["id"], &id); err != nil || want[id] == nil || seen[id] {
							t.Fatalf("record %s: id unknown or seen twice", raw)
						}
						seen[id] = true
						check(t, id, rec, raw)
					}
					links, err := v1.ParseLink(resp.Header.Get("Link"))
					if err != nil {
						t.Fatal(err)
					}
					next = links["next"]
				}
				if len(seen) != n || pages != (n+99)/100 {
					t.Errorf("%d employees in %d pages, want %d in %d", len(seen), pages, n, (n+99)/100)
				}
			}

			walkAll("directory-key-9f2c4e7a1b3d5f60a8e2", func(t *testing.T, id int64, rec map[string]json.RawMessage, raw []byte) {
				if got, wantKeys := slices.Sorted(maps.Keys(rec)), []string{"department", "email", "first_name", "id", "job_title", "last_name", "line_manager"}; !slices.Equal(got, wantKeys) {
					t.Fatalf("employee %d: members %v, want %v", id, got, wantKeys)
				}
				var lm map[string]json.RawMessage
				if err := json.Unmarshal(rec["line_manager"], &lm); err != nil {
					t.Fatal(err)
				}
				if got := slices.Sorted(maps.Keys(lm)); !slices.Equal(got, []string{"email", "id", "name"}) {
					t.Fatalf("employee %d: line_manager members %v", id, got)
				}
				// Kept values are the source's, byte for byte; the department is kept whole.
				var wantLM map[string]json.RawMessage
				_ = json.Unmarshal(want[id]["line_manager"], &wantLM)
				for _, k := range []string{"id", "name", "email"} {
					if !bytes.Equal(lm[k], wantLM[k]) {
						t.Errorf("employee %d: line_manager.%s %s, want %s", id, k, lm[k], wantLM[k])
					}
				}
				for _, k := range []string{"first_name", "last_name", "email", "job_title", "department"} {
					if !bytes.Equal(rec[k], want[id][k]) {
						t.Errorf("employee %d: %s %s, want %s", id, k, rec[k], want[id][k])
					}
				}
				for _, mark := range personalMarks {
					if bytes.Contains(raw, []byte(mark)) {
						t.Fatalf("employee %d: the directory key sees %q: %s", id, mark, raw)
					}
				}
			})

			walkAll("deny-key-9f2c4e7a1b3d5f60a8e2", func(t *testing.T, id int64, rec map[string]json.RawMessage, raw []byte) {
				for _, denied := range []string{"dob", "ni_number", "bank_details", "personal_email"} {
					if _, ok := rec[denied]; ok {
						t.Fatalf("employee %d: denied %s served: %s", id, denied, raw)
					}
				}
				var cf, lm map[string]json.RawMessage
				if err := json.Unmarshal(rec["custom_fields"], &cf); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(rec["line_manager"], &lm); err != nil {
					t.Fatal(err)
				}
				if _, ok := cf["salary"]; ok || string(cf["shoe"]) != `"42"` {
					t.Fatalf("employee %d: custom_fields %s", id, rec["custom_fields"])
				}
				if _, ok := lm["dob"]; ok {
					t.Fatalf("employee %d: line_manager %s", id, rec["line_manager"])
				}
				if _, ok := lm["ni_number"]; ok {
					t.Fatalf("employee %d: line_manager %s", id, rec["line_manager"])
				}
				for _, mark := range []string{"QQ", "ACCT", "SALARY-", "1970-01-"} {
					if bytes.Contains(raw, []byte(mark)) {
						t.Fatalf("employee %d: the deny key sees %q: %s", id, mark, raw)
					}
				}
				// Everything not denied is there: the typed members and the nested objects.
				for _, k := range []string{"id", "first_name", "email", "age", "working_pattern", "holiday_approver", "department", "hr"} {
					if _, ok := rec[k]; !ok {
						t.Fatalf("employee %d: %s missing: %s", id, k, raw)
					}
				}
			})
		})
	}
}

func TestScopedAccess(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, backend, server.Options{Keys: scopedKeys()})
			f.put(t, personalEmployee(42))
			f.walk(t, v1.Departments, `{"id":5,"name":"R&D","code":"RD","budget":"SECRET-BUDGET"}`)
			forbidden := func(what string) string {
				return `{"error":{"type":"Forbidden","message":"this key may not ` + what + `"}}` + "\n"
			}
			tests := []struct {
				key, method, path string
				status            int
				body              string // the whole body, when given
				has, hasNot       []string
			}{
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/working_patterns", 403, forbidden("read working_patterns"), nil, nil},
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/working_patterns?page=2", 403, forbidden("read working_patterns"), nil, nil},
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/holiday_allowances/1", 403, forbidden("read holiday_allowances"), nil, nil},
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "HEAD", "/v1/absences", 403, "", nil, nil},
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/nowhere", 404, "", nil, nil},
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/departments/nowhere/x", 404, "", nil, nil},
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "POST", "/v1/employees", 403, forbidden("create employees"), nil, nil},
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/employees/42", 200, "", []string{`"first_name":"F42"`, `"line_manager":{"id":1000,"name":"Boss 0","email":"boss0@example.com"}`}, []string{"QQ", "dob", "ACCT"}},
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/departments", 200, `{"departments":[{"id":5,"name":"R&D"}]}` + "\n", nil, nil},
				{"directory-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/departments/5", 200, `{"departments":[{"id":5,"name":"R&D"}]}` + "\n", nil, nil},
				{"departments-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/employees", 403, forbidden("read employees"), nil, nil},
				{"departments-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/employees/42", 403, forbidden("read employees"), nil, nil},
				{"departments-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/employees/nobody", 403, forbidden("read employees"), nil, nil},
				{"departments-key-9f2c4e7a1b3d5f60a8e2", "POST", "/v1/employees", 403, forbidden("create employees"), nil, nil},
				{"departments-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/departments", 200, "", []string{"SECRET-BUDGET"}, nil},
				{"read-only-key-9f2c4e7a1b3d5f60a8e2", "POST", "/v1/employees", 403, forbidden("create employees"), nil, nil},
				{"read-only-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/employees/42", 200, "", []string{"QQ000042C", "SALARY-42"}, nil},
				{"deny-key-9f2c4e7a1b3d5f60a8e2", "GET", "/v1/employees/42", 200, "", []string{`"custom_fields":{"shoe":"42","note":"quote \" brace } bracket ] \\u0041"}`}, []string{"QQ", "SALARY", "dob"}},
				{testKey, "GET", "/v1/working_patterns", 200, "", nil, nil},
			}
			for _, tt := range tests {
				var body *strings.Reader
				var header []string
				if tt.method == "POST" {
					b, ct := form(map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024/02/29"})
					body, header = b.(*strings.Reader), []string{"Content-Type", ct}
				} else {
					body = strings.NewReader("")
				}
				resp, b := send(t, tt.method, f.srv.URL+tt.path, tt.key, body, header...)
				assertStatus(t, resp, b, tt.status)
				if tt.body != "" && string(b) != tt.body {
					t.Errorf("%s %s with %s: body %s, want %s", tt.method, tt.path, tt.key, b, tt.body)
				}
				for _, s := range tt.has {
					if !bytes.Contains(b, []byte(s)) {
						t.Errorf("%s %s with %s: %s lacks %s", tt.method, tt.path, tt.key, b, s)
					}
				}
				for _, s := range tt.hasNot {
					if bytes.Contains(b, []byte(s)) {
						t.Errorf("%s %s with %s: %s has %s", tt.method, tt.path, tt.key, b, s)
					}
				}
			}

			// A writable scoped key's create answers with its fields only; the record is whole.
			b, ct := form(map[string]string{"first_name": "Bo", "last_name": "Ek", "email": "bo@example.com", "join_date": "2024/02/29"})
			resp, body := send(t, "POST", f.srv.URL+"/v1/employees", "writer-key-9f2c4e7a1b3d5f60a8e2", b, "Content-Type", ct)
			assertStatus(t, resp, body, 201)
			var env struct{ Employees []map[string]any }
			if err := json.Unmarshal(body, &env); err != nil || len(env.Employees) != 1 {
				t.Fatalf("%s: %v", body, err)
			}
			if got := slices.Sorted(maps.Keys(env.Employees[0])); !slices.Equal(got, []string{"email", "first_name", "id"}) {
				t.Errorf("create's answer has %v: %s", got, body)
			}
			resp, body = f.do(t, "GET", resp.Header.Get("Location")[len(f.srv.URL):], nil)
			assertStatus(t, resp, body, 200)
			if !bytes.Contains(body, []byte(`"last_name":"Ek"`)) || !bytes.Contains(body, []byte(`"working_pattern"`)) {
				t.Errorf("created record read back in full: %s", body)
			}
		})
	}
}

// With writes off, a read-only key's create is refused as every key's is: 405.
func TestScopedCreateWritesOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{Writes: server.WritesOff, Keys: scopedKeys()})
	b, ct := form(map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024/02/29"})
	resp, body := send(t, "POST", f.srv.URL+"/v1/employees", "read-only-key-9f2c4e7a1b3d5f60a8e2", b, "Content-Type", ct)
	assertStatus(t, resp, body, 405)
}

func TestScopedIndex(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{Keys: scopedKeys()})
	f.putN(t, 3)
	names := func(key string) []string {
		resp, body := send(t, "GET", f.srv.URL+"/v1", key, nil)
		assertStatus(t, resp, body, 200)
		var idx struct{ Collections []struct{ Name string } }
		if err := json.Unmarshal(body, &idx); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range idx.Collections {
			out = append(out, c.Name)
		}
		return out
	}
	if got := names("directory-key-9f2c4e7a1b3d5f60a8e2"); !slices.Equal(got, []string{"employees", "departments"}) {
		t.Errorf("directory key's index: %v", got)
	}
	if got := names("departments-key-9f2c4e7a1b3d5f60a8e2"); !slices.Equal(got, []string{"departments"}) {
		t.Errorf("departments key's index: %v", got)
	}
	if got := names(testKey); len(got) != 2+len(v1.Collections) {
		t.Errorf("full key's index: %v", got)
	}
	if got, full := names("deny-key-9f2c4e7a1b3d5f60a8e2"), names(testKey); !slices.Equal(got, full) {
		t.Errorf("deny key's index: %v, want %v", got, full)
	}
}

// TestScopedETags: the ETag is per scope: keys of different scopes get different tags for one
// URL at one version, a key gets the same tag each time (and its 304), keys of equal scopes
// share tags, and a read-only key, whose answers are full access's, shares full access's.
func TestScopedETags(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, backend, server.Options{Keys: scopedKeys()})
			f.put(t, personalEmployee(42))
			for _, path := range []string{"/v1/employees", "/v1/employees/42", "/v1/departments", "/v1"} {
				tags := map[string]string{}
				for _, key := range []string{testKey, "directory-key-9f2c4e7a1b3d5f60a8e2", "directory-key-2-9f2c4e7a1b3d5f60a8e2", "deny-key-9f2c4e7a1b3d5f60a8e2", "read-only-key-9f2c4e7a1b3d5f60a8e2", "departments-key-9f2c4e7a1b3d5f60a8e2", "writer-key-9f2c4e7a1b3d5f60a8e2"} {
					if key == "departments-key-9f2c4e7a1b3d5f60a8e2" && strings.HasPrefix(path, "/v1/employees") {
						continue
					}
					resp, body := send(t, "GET", f.srv.URL+path, key, nil)
					assertStatus(t, resp, body, 200)
					tag := resp.Header.Get("ETag")
					resp2, body2 := send(t, "GET", f.srv.URL+path, key, nil)
					if resp2.Header.Get("ETag") != tag || !bytes.Equal(body, body2) {
						t.Errorf("%s with %s: tag %s then %s", path, key, tag, resp2.Header.Get("ETag"))
					}
					resp, body = send(t, "GET", f.srv.URL+path, key, nil, "If-None-Match", tag)
					assertStatus(t, resp, body, 304)
					tags[key] = tag
				}
				// Another scope's tag is not this key's: a full answer, not a 304.
				resp, body := send(t, "GET", f.srv.URL+path, "directory-key-9f2c4e7a1b3d5f60a8e2", nil, "If-None-Match", tags[testKey])
				assertStatus(t, resp, body, 200)
				if tags["directory-key-9f2c4e7a1b3d5f60a8e2"] != tags["directory-key-2-9f2c4e7a1b3d5f60a8e2"] {
					t.Errorf("%s: keys of one scope have tags %s and %s", path, tags["directory-key-9f2c4e7a1b3d5f60a8e2"], tags["directory-key-2-9f2c4e7a1b3d5f60a8e2"])
				}
				// Read-only changes no answer: it shares full access's tags.
				if tags["read-only-key-9f2c4e7a1b3d5f60a8e2"] != tags[testKey] {
					t.Errorf("%s: read-only key's tag %s, full access's %s", path, tags["read-only-key-9f2c4e7a1b3d5f60a8e2"], tags[testKey])
				}
				distinct := []string{testKey, "directory-key-9f2c4e7a1b3d5f60a8e2", "deny-key-9f2c4e7a1b3d5f60a8e2", "writer-key-9f2c4e7a1b3d5f60a8e2"}
				if path == "/v1/departments" || path == "/v1" {
					distinct = append(distinct, "departments-key-9f2c4e7a1b3d5f60a8e2")
				}
				for i, a := range distinct {
					for _, b := range distinct[:i] {
						if tags[a] == tags[b] {
							t.Errorf("%s: keys %s and %s share tag %s", path, a, b, tags[a])
						}
					}
				}
			}
		})
	}
}

func TestScopedKeyValidation(t *testing.T) {
	t.Parallel()
	store := sinktest.Store(t, "sqlite", sink.Options{Now: func() time.Time { return fixedNow }})
	sum := hexSHA256("secret-k-9f2c4e7a1b3d5f60a8e2")
	tests := []struct {
		name string
		keys []server.Key
		want string
	}{
		{"key and sha256", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", SHA256: sum}}, `key "k": set Key or SHA256, not both`},
		{"neither", []server.Key{{Name: "k"}}, `key "k": empty API key`},
		{"short sha256", []server.Key{{Name: "k", SHA256: sum[:62]}}, `key "k": SHA256 is not 64 hex digits`},
		{"long sha256", []server.Key{{Name: "k", SHA256: sum + "00"}}, `key "k": SHA256 is not 64 hex digits`},
		{"not hex", []server.Key{{Name: "k", SHA256: "zz" + sum[2:]}}, `key "k": SHA256 is not 64 hex digits`},
		{"same key as its sum", []server.Key{{Name: "a", Key: "secret-k-9f2c4e7a1b3d5f60a8e2"}, {Name: "b", SHA256: strings.ToUpper(sum)}}, `keys "a" and "b" are the same key`},
		{"same sum twice", []server.Key{{Name: "a", SHA256: sum}, {Name: "b", SHA256: sum}}, `keys "a" and "b" are the same key`},
		{"unknown collection", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Collections: []string{"employees", "departmets"}}}}, `key "k": collections: no collection "departmets"`},
		{"no collections", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Collections: []string{}}}}, `key "k": collections lists none`},
		{"fields and deny", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Fields: []string{"id"}, Deny: []string{"dob"}}}}, `key "k": fields (an allow list) and deny (a deny list) are exclusive`},
		{"allow list without id", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Fields: []string{"email", "id.x"}}}}, `key "k": fields: the allow list must include id`},
		{"empty allow list", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Fields: []string{}}}}, `key "k": fields: the allow list must include id`},
		{"deny id", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Deny: []string{"dob", "id"}}}}, `key "k": deny: id cannot be denied`},
		{"empty segment", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Fields: []string{"id", "line_manager..id"}}}}, `key "k": fields: field path "line_manager..id" has an empty segment`},
		{"empty deny path", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Deny: []string{""}}}}, `key "k": deny: field path "" has an empty segment`},
		{"creates without reading", []server.Key{{Name: "k", Key: "secret-k-9f2c4e7a1b3d5f60a8e2", Scope: server.Scope{Collections: []string{"departments"}}}}, `key "k": the key may create employees but not read them`},
		{"valid", scopedKeys(), ""},
		{"valid by sum", []server.Key{{Name: "k", SHA256: strings.ToUpper(sum), Scope: server.Scope{Collections: []string{"departments"}, ReadOnly: true}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := server.NewHandler(store, server.Options{Keys: tt.keys})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret-k-9f2c4e7a1b3d5f60a8e2") || strings.Contains(err.Error(), sum[:16]) {
				t.Errorf("err %v shows the key", err)
			}
		})
	}
	// A key given by its SHA-256 authenticates with the key itself, not with the sum.
	h, err := server.NewHandler(store, server.Options{Keys: []server.Key{{Name: "k", SHA256: sum}}})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{"secret-k-9f2c4e7a1b3d5f60a8e2": 200, sum: 401, "secret-K": 401} {
		if w := statusWithKey(h, key); w != want {
			t.Errorf("key %q: %d, want %d", key, w, want)
		}
	}
}

// statusWithKey is the status h answers GET /v1/employees with key.
func statusWithKey(h http.Handler, key string) int {
	r := httptest.NewRequest("GET", "/v1/employees", nil)
	r.Header.Set("X-API-KEY", key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// membersNamed walks the decoded JSON v recursively and returns the path of every member, at
// any depth (in objects, arrays of objects, nested and extra members alike), whose name in
// lower case is one of names.
func membersNamed(v any, path string, names ...string) []string {
	var found []string
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			if slices.Contains(names, strings.ToLower(k)) {
				found = append(found, path+"."+k)
			}
			found = append(found, membersNamed(m, path+"."+k, names...)...)
		}
	case []any:
		for i, e := range v {
			found = append(found, membersNamed(e, fmt.Sprintf("%s[%d]", path, i), names...)...)
		}
	}
	return found
}

// deepEmployee is personalEmployee with emails and a birth date deeper down, in members the
// source sent beyond the typed ones, in any case.
func deepEmployee(i int) string {
	return strings.TrimSuffix(personalEmployee(i), "}") + fmt.Sprintf(
		`,"emergency_contacts":[{"name":"Kin %d","EMAIL":"kin%d@home.example.net","phones":[{"kind":"home","Email":"phone%d@home.example.net"}]}],`+
			`"profile":{"links":{"work":{"email":"deep%d@example.com","DOB":"1980-01-01"}}}}`, i, i, i, i)
}

// deepRecord is a record of c as a source might send it: each nested object (an employee, an
// approver, a reference) with its carried members and an email, a name and a birth date in
// objects and arrays beyond them, and the same beyond the record's declared members.
func deepRecord(c *v1.Collection, id int) string {
	rec := map[string]any{"id": id}
	for _, f := range c.Fields {
		if f.Kind == v1.String {
			rec[f.Name] = fmt.Sprintf("%s %d", f.Name, id)
		}
		if f.Kind != v1.Nested {
			continue
		}
		nested := map[string]any{"id": 100 + id, "contact": map[string]any{"Email": fmt.Sprintf("%s-contact%d@example.com", f.Name, id)}}
		for _, cf := range f.Nested.Fields {
			nested[cf.Name] = fmt.Sprintf("%s %s %d", f.Name, cf.Name, id)
		}
		if f.Nested.Target == "employees" {
			nested["email"] = fmt.Sprintf("%s%d@example.com", f.Name, id)
			nested["dob"] = "1970-01-01"
		}
		rec[f.Name] = nested
	}
	if c.Index("email") < 0 {
		rec["email"] = fmt.Sprintf("top%d@example.com", id)
	}
	rec["people"] = []any{map[string]any{"name": "P", "EMAIL": "p@example.com", "more": []any{map[string]any{"email": "q@example.com", "Dob": "1999-09-09"}}}}
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// deepStore fills f with employees and a record or two of every declared collection, each
// with emails at several depths.
func deepStore(t *testing.T, f *fixture) {
	t.Helper()
	for i := 1; i <= 3; i++ {
		f.put(t, deepEmployee(i))
	}
	for _, c := range v1.Collections {
		f.walk(t, c, deepRecord(c, 1), deepRecord(c, 2))
	}
}

// deepPaths are every list and one record of every collection, with a body each.
func deepPaths() []string {
	paths := []string{"/v1/employees", "/v1/employees/1", "/v1/employees?per_page=1&page=2"}
	for _, c := range v1.Collections {
		paths = append(paths, "/v1/"+c.Name, "/v1/"+c.Name+"/2")
	}
	return paths
}

// TestDenyAtEveryDepth: deny: [email] (the bare name) and deny: ["**.EMAIL"] leave out every
// member named email, in any case, at every depth of every answer of every collection: nested
// employees and approvers, line managers, arrays of objects, members the source sent beyond
// the typed ones. A dotted path denies that path only, and an allow list's **.name keeps the
// member wherever its parent is kept.
func TestDenyAtEveryDepth(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, backend, server.Options{Keys: []server.Key{
				{Name: "deny-email", Key: "deny-email-key-7f3a9c2e5b1d8f4a6c0e9b2d", Scope: server.Scope{Deny: []string{"email"}}},
				{Name: "deny-any-depth", Key: "deny-any-depth-key-7f3a9c2e5b1d8f4a6c0e9b2d", Scope: server.Scope{Deny: []string{"**.EMAIL", "dob"}}},
				{Name: "deny-path", Key: "deny-path-key-7f3a9c2e5b1d8f4a6c0e9b2d", Scope: server.Scope{Deny: []string{"line_manager.email"}}},
				{Name: "allow-any-depth", Key: "allow-any-depth-key-7f3a9c2e5b1d8f4a6c0e9b2d", Scope: server.Scope{Fields: []string{"id", "**.name", "line_manager.id", "employee.id"}}},
			}})
			deepStore(t, f)
			get := func(t *testing.T, key, path string) any {
				t.Helper()
				resp, body := send(t, "GET", f.srv.URL+path, key, nil)
				assertStatus(t, resp, body, 200)
				var v any
				if err := json.Unmarshal(body, &v); err != nil {
					t.Fatalf("%s: %v: %s", path, err, body)
				}
				return v
			}
			for _, path := range deepPaths() {
				full := get(t, testKey, path)
				// The test can fail: full access sees emails and birth dates below the top.
				deep := 0
				for _, p := range membersNamed(full, "", "email", "dob") {
					if strings.Count(p, ".") > 2 {
						deep++
					}
				}
				if deep == 0 {
					t.Fatalf("%s: full access sees no nested email: %v", path, full)
				}
				if got := membersNamed(get(t, "deny-email-key-7f3a9c2e5b1d8f4a6c0e9b2d", path), "", "email"); len(got) > 0 {
					t.Errorf("%s: deny: [email] serves %v", path, got)
				}
				if got := membersNamed(get(t, "deny-any-depth-key-7f3a9c2e5b1d8f4a6c0e9b2d", path), "", "email", "dob"); len(got) > 0 {
					t.Errorf("%s: deny: [**.EMAIL, dob] serves %v", path, got)
				}
				// Everything else is still there: only the denied members went.
				if got, want := len(membersNamed(get(t, "deny-email-key-7f3a9c2e5b1d8f4a6c0e9b2d", path), "", "id", "name", "first_name")),
					len(membersNamed(full, "", "id", "name", "first_name")); got != want {
					t.Errorf("%s: deny: [email] serves %d ids and names, full access %d", path, got, want)
				}
				if got := membersNamed(get(t, "allow-any-depth-key-7f3a9c2e5b1d8f4a6c0e9b2d", path), "", "email", "dob", "first_name", "contact", "people"); len(got) > 0 {
					t.Errorf("%s: the allow list serves %v", path, got)
				}
			}

			// A dotted path is that path only.
			var emps struct{ Employees []map[string]any }
			b, _ := json.Marshal(get(t, "deny-path-key-7f3a9c2e5b1d8f4a6c0e9b2d", "/v1/employees"))
			if err := json.Unmarshal(b, &emps); err != nil || len(emps.Employees) != 3 {
				t.Fatalf("%s: %v", b, err)
			}
			for _, e := range emps.Employees {
				lm := e["line_manager"].(map[string]any)
				if _, ok := lm["email"]; ok || lm["name"] == nil || e["email"] == nil || len(membersNamed(e["profile"], "", "email")) != 1 {
					t.Errorf("deny: [line_manager.email]: %v", e)
				}
			}
			var abs struct{ Absences []map[string]any }
			b, _ = json.Marshal(get(t, "deny-path-key-7f3a9c2e5b1d8f4a6c0e9b2d", "/v1/absences"))
			if err := json.Unmarshal(b, &abs); err != nil || len(abs.Absences) != 2 {
				t.Fatalf("%s: %v", b, err)
			}
			if emp := abs.Absences[0]["employee"].(map[string]any); emp["email"] == nil {
				t.Errorf("deny: [line_manager.email] took an absence's employee.email: %v", abs.Absences[0])
			}

			// **.name in an allow list: wherever its parent is kept, and nowhere else.
			b, _ = json.Marshal(get(t, "allow-any-depth-key-7f3a9c2e5b1d8f4a6c0e9b2d", "/v1/employees/1"))
			emps.Employees = nil // a fresh decoding: Unmarshal would add to the maps there
			if err := json.Unmarshal(b, &emps); err != nil || len(emps.Employees) != 1 {
				t.Fatalf("%s: %v", b, err)
			}
			if e := emps.Employees[0]; len(e) != 2 || !reflect.DeepEqual(slices.Sorted(maps.Keys(e["line_manager"].(map[string]any))), []string{"id", "name"}) {
				t.Errorf("allow [id, **.name, line_manager.id]: %s", b)
			}
			b, _ = json.Marshal(get(t, "allow-any-depth-key-7f3a9c2e5b1d8f4a6c0e9b2d", "/v1/departments/1"))
			if string(b) != `{"departments":[{"id":1,"name":"name 1"}]}` {
				t.Errorf("allow **.name on departments: %s", b)
			}
			b, _ = json.Marshal(get(t, "allow-any-depth-key-7f3a9c2e5b1d8f4a6c0e9b2d", "/v1/absences/2"))
			abs.Absences = nil
			if err := json.Unmarshal(b, &abs); err != nil || len(abs.Absences) != 1 {
				t.Fatalf("%s: %v", b, err)
			}
			if a := abs.Absences[0]; !reflect.DeepEqual(slices.Sorted(maps.Keys(a)), []string{"employee", "id"}) ||
				!reflect.DeepEqual(slices.Sorted(maps.Keys(a["employee"].(map[string]any))), []string{"id"}) {
				t.Errorf("allow [id, **.name, employee.id] on an absence: %s", b)
			}
		})
	}
}
