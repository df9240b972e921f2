package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// classKey is the key of a scope denying class.
func classKey(c v1.Class) string { return "deny-class-" + c.String() + "-key-4c8e2a6f0b9d3e7a1c5f" }

// TestDenyClassesAtEveryDepth: a key denied a class of personal data never sees a member of
// that class, in any collection, at any depth the declarations reach: the record's members,
// those its nested objects carry, and (where the class of the members no declaration names is
// denied) nothing undeclared at any depth. Every other member is served as full access sees it,
// and the record's id always. Full access asks each page first, so an answer it left in the
// cache would be caught too.
func TestDenyClassesAtEveryDepth(t *testing.T) {
	t.Parallel()
	denied := []v1.Class{v1.Health, v1.Identifying, v1.Financial, v1.FreeText, v1.Employment}
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var keys []server.Key
			for _, c := range denied {
				keys = append(keys, server.Key{Name: "deny-" + c.String(), Key: classKey(c), Scope: server.Scope{DenyClasses: []v1.Class{c}}})
			}
			f := newFixture(t, backend, server.Options{Keys: keys})
			deepStore(t, f)
			seen := map[v1.Class]int{} // denied members full access saw: the test can fail
			for _, path := range deepPaths() {
				collection := strings.SplitN(strings.TrimPrefix(path, "/v1/"), "/", 2)[0]
				collection, _, _ = strings.Cut(collection, "?")
				fields, extra, ok := v1.Declared(collection)
				if !ok {
					t.Fatalf("%s: no declaration", path)
				}
				full := records(t, f, testKey, path)
				for _, c := range denied {
					got := records(t, f, classKey(c), path)
					if len(got) != len(full) {
						t.Fatalf("%s denying %s: %d records, full access %d", path, c, len(got), len(full))
					}
					for i, rec := range got {
						whole := full[i]
						if rec["id"] == nil || fmt.Sprint(rec["id"]) != fmt.Sprint(whole["id"]) {
							t.Errorf("%s denying %s: record %d has id %v, want %v", path, c, i, rec["id"], whole["id"])
						}
						for _, fl := range fields {
							checkMember(t, path, c, fl.Name, fl.Class, rec, whole, seen)
							if fl.Kind != v1.Nested || fl.Class == c {
								continue
							}
							sub, _ := rec[fl.Name].(map[string]any)
							wholeSub, _ := whole[fl.Name].(map[string]any)
							if wholeSub == nil {
								continue
							}
							if sub == nil {
								t.Errorf("%s denying %s: %s went, its class is %s", path, c, fl.Name, fl.Class)
								continue
							}
							checkMember(t, path, c, fl.Name+".id", fl.Class, map[string]any{fl.Name + ".id": sub["id"]}, map[string]any{fl.Name + ".id": wholeSub["id"]}, seen)
							for _, cf := range fl.Nested.Fields {
								checkMember(t, path, c, cf.Name, cf.Class, sub, wholeSub, seen)
							}
							if extra == c {
								for name := range sub {
									if name != "id" && !carries(fl, name) {
										t.Errorf("%s denying %s: %s.%s, an undeclared member, is served", path, c, fl.Name, name)
									}
								}
							}
						}
						for name := range rec {
							if name == "id" || declares(fields, name) {
								continue
							}
							if extra == c {
								t.Errorf("%s denying %s: %s, an undeclared member (class %s), is served", path, c, name, extra)
							} else if fmt.Sprint(rec[name]) != fmt.Sprint(whole[name]) {
								t.Errorf("%s denying %s: undeclared %s changed: %v, full access %v", path, c, name, rec[name], whole[name])
							}
						}
						if extra == c {
							seen[c]++
						}
					}
				}
			}
			for _, c := range denied {
				if seen[c] == 0 {
					t.Errorf("full access saw no member of class %s: the test cannot fail for it", c)
				}
			}
		})
	}
}

// checkMember checks the member name (of class) of a record served to a key denying c against
// the record full access got: absent when the class is denied, else there; a value that is not
// an object the same.
func checkMember(t *testing.T, path string, c v1.Class, name string, class v1.Class, got, whole map[string]any, seen map[v1.Class]int) {
	t.Helper()
	w, inWhole := whole[name]
	g, inGot := got[name]
	_, object := w.(map[string]any)
	switch {
	case !inWhole:
	case class == c && inGot:
		t.Errorf("%s denying %s: %s (class %s) served: %v", path, c, name, class, g)
	case class == c:
		seen[c]++
	case !inGot:
		t.Errorf("%s denying %s: %s (class %s) went", path, c, name, class)
	case !object && fmt.Sprint(g) != fmt.Sprint(w):
		t.Errorf("%s denying %s: %s = %v, full access %v", path, c, name, g, w)
	}
}

// declares reports whether fields declare a member of that name (the join date under either
// of its names).
func declares(fields []v1.Field, name string) bool {
	if name == "join_date" {
		name = "company_join_date"
	}
	for _, f := range fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// carries reports whether the nested field declares the member name.
func carries(f v1.Field, name string) bool {
	for _, cf := range f.Nested.Fields {
		if cf.Name == name {
			return true
		}
	}
	return false
}

// records are the records of the answer to GET path with key: the envelope's one array.
func records(t *testing.T, f *fixture, key, path string) []map[string]any {
	t.Helper()
	resp, body := send(t, "GET", f.srv.URL+path, key, nil)
	assertStatus(t, resp, body, 200)
	var env map[string][]map[string]any
	if err := json.Unmarshal(body, &env); err != nil || len(env) != 1 {
		t.Fatalf("%s: %v: %s", path, err, body)
	}
	for _, recs := range env {
		return recs
	}
	return nil
}

// TestDenyClassesTags: a key denied classes has tags of its own, the same classes however they
// are listed share them, and another scope's tag never answers 304.
func TestDenyClassesTags(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{Keys: []server.Key{
		{Name: "health", Key: "health-key-5b7d9f1a3c5e7a9b1d3f", Scope: server.Scope{DenyClasses: []v1.Class{v1.Health}}},
		{Name: "health-2", Key: "health-2-key-5b7d9f1a3c5e7a9b1d3f", Scope: server.Scope{DenyClasses: []v1.Class{v1.Health, v1.Health}}},
		{Name: "both", Key: "both-key-5b7d9f1a3c5e7a9b1d3f", Scope: server.Scope{DenyClasses: []v1.Class{v1.Financial, v1.Health}}},
		{Name: "both-2", Key: "both-2-key-5b7d9f1a3c5e7a9b1d3f", Scope: server.Scope{DenyClasses: []v1.Class{v1.Health, v1.Financial}}},
		{Name: "identifying", Key: "identifying-key-5b7d9f1a3c5e7a9b1d3f", Scope: server.Scope{DenyClasses: []v1.Class{v1.Identifying}}},
	}})
	deepStore(t, f)
	tag := func(key, path string) string {
		resp, body := send(t, "GET", f.srv.URL+path, key, nil)
		assertStatus(t, resp, body, 200)
		return resp.Header.Get("ETag")
	}
	for _, path := range []string{"/v1/sicknesses", "/v1/employees"} {
		full, health, identifying := tag(testKey, path), tag("health-key-5b7d9f1a3c5e7a9b1d3f", path), tag("identifying-key-5b7d9f1a3c5e7a9b1d3f", path)
		if health == full || identifying == full || health == identifying {
			t.Errorf("%s: tags full %s, health %s, identifying %s: want three", path, full, health, identifying)
		}
		if h2 := tag("health-2-key-5b7d9f1a3c5e7a9b1d3f", path); h2 != health {
			t.Errorf("%s: one scope, tags %s and %s", path, health, h2)
		}
		if a, b := tag("both-key-5b7d9f1a3c5e7a9b1d3f", path), tag("both-2-key-5b7d9f1a3c5e7a9b1d3f", path); a != b || a == health {
			t.Errorf("%s: [financial, health] %s, [health, financial] %s, [health] %s", path, a, b, health)
		}
		resp, body := send(t, "GET", f.srv.URL+path, "health-key-5b7d9f1a3c5e7a9b1d3f", nil, "If-None-Match", full)
		assertStatus(t, resp, body, 200)
	}
	if err := server.CheckScope(server.Scope{DenyClasses: []v1.Class{0}}); err == nil {
		t.Error("CheckScope took a class that is none")
	}
}
