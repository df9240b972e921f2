package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// TestReadable: what Readable says a key reads of each collection, for deny lists (a bare name
// at every depth, a dotted path, in any case, a member no declaration names), allow lists
// (fields, nested paths, names at every depth, members no declaration names), denied classes,
// collections, and members the configuration classes.
func TestReadable(t *testing.T) {
	t.Parallel()
	costCentre, err := v1.NewDeclarations(v1.Members{"employees": {"cost_centre": v1.Employment}})
	if err != nil {
		t.Fatal(err)
	}
	dotted, err := v1.NewDeclarations(v1.Members{"employees": {"contact.mobile": v1.Identifying}})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		collection string
		reads      []string // member paths it reads
		not        []string // member paths it does not
		classes    []v1.Class
		extra      server.ExtraReading
	}
	tests := []struct {
		name        string
		scope       server.Scope
		decls       v1.Declarations
		collections int // how many collections it reads: 0 for all
		want        []want
	}{
		{name: "full access", want: []want{
			{collection: "employees", reads: []string{"first_name", "email", "age", "line_manager", "line_manager.email", "department.name"},
				classes: []v1.Class{v1.NotPersonal, v1.Employment, v1.Identifying},
				extra:   server.ExtraReading{Class: v1.Identifying, All: true}},
			{collection: "sicknesses", reads: []string{"reason", "company_sicknesstype", "company_sicknesstype.name", "employee.email"},
				extra: server.ExtraReading{Class: v1.Health, All: true}},
		}},
		{name: "deny a bare name", scope: server.Scope{Deny: []string{"email"}}, want: []want{
			{collection: "employees", reads: []string{"first_name", "last_name", "age", "line_manager", "line_manager.first_name"},
				not:     []string{"email", "line_manager.email", "holiday_approver.email"},
				classes: []v1.Class{v1.NotPersonal, v1.Employment, v1.Identifying},
				extra:   server.ExtraReading{Class: v1.Identifying, All: true}},
			// absences declare no email of their own: one the source sent would be left out
			{collection: "absences", reads: []string{"employee.first_name"}, not: []string{"employee.email", "approved_by.email"},
				extra: server.ExtraReading{Class: v1.Identifying, All: true, Except: []string{"email"}}},
		}},
		{name: "deny at every depth, in another case", scope: server.Scope{Deny: []string{"**.EMAIL"}}, want: []want{
			{collection: "employees", reads: []string{"first_name"}, not: []string{"email", "line_manager.email"},
				extra: server.ExtraReading{Class: v1.Identifying, All: true}},
		}},
		{name: "deny a nested path and an undeclared member", scope: server.Scope{Deny: []string{"line_manager.email", "DOB", "bank_details.iban"}}, want: []want{
			{collection: "employees", reads: []string{"email", "line_manager", "line_manager.first_name", "holiday_approver.email"},
				not:   []string{"line_manager.email"},
				extra: server.ExtraReading{Class: v1.Identifying, All: true, Except: []string{"dob", "bank_details.iban"}}},
		}},
		{name: "deny a whole reference", scope: server.Scope{Deny: []string{"line_manager"}}, want: []want{
			{collection: "employees", reads: []string{"holiday_approver"}, not: []string{"line_manager", "line_manager.email", "line_manager.first_name"},
				extra: server.ExtraReading{Class: v1.Identifying, All: true}},
		}},
		{name: "allow list", scope: server.Scope{Fields: []string{"id", "first_name", "line_manager.id", "holiday_approver.email", "dob"}}, want: []want{
			{collection: "employees", reads: []string{"first_name", "line_manager", "holiday_approver.email"},
				not:     []string{"email", "last_name", "line_manager.email", "line_manager.first_name", "holiday_approver", "department"},
				classes: []v1.Class{v1.Employment, v1.Identifying},
				extra:   server.ExtraReading{Class: v1.Identifying, Only: []string{"dob"}}},
			// departments declare none of those paths but id: should the source send them,
			// the key reads them
			{collection: "departments", not: []string{"name"}, classes: []v1.Class{v1.Identifying},
				extra: server.ExtraReading{Class: v1.Identifying, Only: []string{"first_name", "line_manager.id", "holiday_approver.email", "dob"}}},
		}},
		{name: "allow list of ids", scope: server.Scope{Fields: []string{"id"}}, want: []want{
			{collection: "employees", not: []string{"first_name", "line_manager"}, classes: []v1.Class{},
				extra: server.ExtraReading{Class: v1.Identifying}},
		}},
		{name: "allow list keeping a reference whole", scope: server.Scope{Fields: []string{"id", "line_manager"}}, want: []want{
			{collection: "employees", reads: []string{"line_manager", "line_manager.email"}, not: []string{"email"},
				classes: []v1.Class{v1.Employment, v1.Identifying},
				extra:   server.ExtraReading{Class: v1.Identifying, Only: []string{"line_manager.*"}}},
		}},
		// **.name keeps name in the objects the list reaches: department's, not working_pattern's
		{name: "allow list at every depth", scope: server.Scope{Fields: []string{"id", "**.name", "department.id"}}, want: []want{
			{collection: "employees", reads: []string{"department", "department.name"}, not: []string{"working_pattern.name", "working_pattern", "first_name"},
				extra: server.ExtraReading{Class: v1.Identifying, Only: []string{"name"}}},
			{collection: "departments", reads: []string{"name"}, classes: []v1.Class{v1.NotPersonal, v1.Identifying},
				extra: server.ExtraReading{Class: v1.Identifying, Only: []string{"department.id"}}},
		}},
		{name: "deny identifying", scope: server.Scope{DenyClasses: []v1.Class{v1.Identifying}}, want: []want{
			{collection: "employees", reads: []string{"job_title", "line_manager", "department.name"},
				not:     []string{"first_name", "last_name", "email", "age", "line_manager.email", "line_manager.first_name"},
				classes: []v1.Class{v1.NotPersonal, v1.Employment},
				extra:   server.ExtraReading{Class: v1.Identifying}},
			{collection: "sicknesses", reads: []string{"reason", "employee"}, not: []string{"employee.email"},
				classes: []v1.Class{v1.Employment, v1.Health},
				extra:   server.ExtraReading{Class: v1.Health, All: true}},
		}},
		{name: "deny health", scope: server.Scope{DenyClasses: []v1.Class{v1.Health}}, want: []want{
			{collection: "sicknesses", reads: []string{"start_date", "employee.email"},
				not:     []string{"reason", "review_notes", "company_sicknesstype", "company_sicknesstype.name"},
				classes: []v1.Class{v1.Employment, v1.Identifying},
				extra:   server.ExtraReading{Class: v1.Health}},
			{collection: "employees", reads: []string{"email"}, extra: server.ExtraReading{Class: v1.Identifying, All: true}},
		}},
		{name: "deny identifying and a path", scope: server.Scope{DenyClasses: []v1.Class{v1.Identifying}, Deny: []string{"job_title"}}, want: []want{
			{collection: "employees", reads: []string{"department"}, not: []string{"job_title", "email"},
				extra: server.ExtraReading{Class: v1.Identifying, Except: []string{}}},
		}},
		{name: "a configured member", scope: server.Scope{DenyClasses: []v1.Class{v1.Identifying}}, decls: costCentre, want: []want{
			{collection: "employees", reads: []string{"cost_centre"}, not: []string{"email"},
				extra: server.ExtraReading{Class: v1.Identifying}},
		}},
		{name: "a configured member denied by its class", scope: server.Scope{DenyClasses: []v1.Class{v1.Employment}}, decls: costCentre, want: []want{
			{collection: "employees", reads: []string{"email"}, not: []string{"cost_centre", "job_title", "line_manager", "line_manager.email"},
				extra: server.ExtraReading{Class: v1.Identifying, All: true}},
		}},
		{name: "a configured member whose name holds a dot", decls: dotted, want: []want{
			{collection: "employees", reads: []string{"contact.mobile", "email"}, extra: server.ExtraReading{Class: v1.Identifying, All: true}},
		}},
		{name: "collections", scope: server.Scope{Collections: []string{"employees", "departments"}, ReadOnly: true}, collections: 2, want: []want{
			{collection: "departments", reads: []string{"name"}, extra: server.ExtraReading{Class: v1.Identifying, All: true}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := server.Readable(tt.scope, tt.decls)
			if err != nil {
				t.Fatal(err)
			}
			if n := tt.collections; n == 0 && len(got) != len(server.Collections()) || n != 0 && len(got) != n {
				t.Errorf("reads %d collections, want %d (0: all)", len(got), n)
			}
			for _, w := range tt.want {
				r, ok := got[w.collection]
				if !ok {
					t.Fatalf("%s: not read", w.collection)
				}
				fields, _, _ := tt.decls.Declared(w.collection)
				for _, p := range w.reads {
					m, ok := member(r, p)
					if !ok {
						t.Errorf("%s.%s: not read (reads %v)", w.collection, p, paths(r))
					} else if want := classOf(fields, p); m.Class != want {
						t.Errorf("%s.%s: class %s, want %s", w.collection, p, m.Class, want)
					}
				}
				for _, p := range w.not {
					if _, ok := member(r, p); ok {
						t.Errorf("%s.%s: read", w.collection, p)
					}
				}
				if w.classes != nil && !slices.Equal(r.Classes(), w.classes) && !(len(w.classes) == 0 && len(r.Classes()) == 0) {
					t.Errorf("%s: classes %v, want %v", w.collection, r.Classes(), w.classes)
				}
				x := r.Extra
				if x.Class != w.extra.Class || x.All != w.extra.All || !slices.Equal(x.Except, w.extra.Except) && len(x.Except)+len(w.extra.Except) > 0 ||
					!slices.Equal(x.Only, w.extra.Only) {
					t.Errorf("%s: extra %+v, want %+v", w.collection, x, w.extra)
				}
				if x.Reads() != (w.extra.All || len(w.extra.Only) > 0) {
					t.Errorf("%s: extra reads %v", w.collection, x.Reads())
				}
			}
		})
	}
}

// TestReadableEveryMember: full access reads every declared member of every collection, each
// with its declared class; a scope denying every class but not_personal reads no personal one.
func TestReadableEveryMember(t *testing.T) {
	t.Parallel()
	full, err := server.Readable(server.Scope{}, v1.Declarations{})
	if err != nil {
		t.Fatal(err)
	}
	all := []v1.Class{v1.Employment, v1.Identifying, v1.FreeText, v1.Financial, v1.Health}
	none, err := server.Readable(server.Scope{DenyClasses: all}, v1.Declarations{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range server.Collections() {
		fields, _, _ := v1.Declared(name)
		var want []server.Member
		for _, f := range fields {
			want = append(want, server.Member{Path: f.Name, Class: f.Class})
			if f.Kind == v1.Nested {
				for _, cf := range f.Nested.Fields {
					want = append(want, server.Member{Path: f.Name + "." + cf.Name, Class: cf.Class})
				}
			}
		}
		if !slices.Equal(full[name].Members, want) {
			t.Errorf("%s: full access reads %v\nwant %v", name, full[name].Members, want)
		}
		for _, m := range none[name].Members {
			if m.Class.Personal() {
				t.Errorf("%s.%s: read, of class %s, with every personal class denied", name, m.Path, m.Class)
			}
		}
		if none[name].Extra.Reads() {
			t.Errorf("%s: members no declaration names read with every personal class denied", name)
		}
	}
}

// TestReadableInvalidScope: an invalid scope is New's error.
func TestReadableInvalidScope(t *testing.T) {
	t.Parallel()
	for _, s := range []server.Scope{
		{Fields: []string{"first_name"}},
		{Deny: []string{"id"}},
		{Collections: []string{"nothing"}},
		{Fields: []string{"id"}, Deny: []string{"dob"}},
		{DenyClasses: []v1.Class{0}},
	} {
		if _, err := server.Readable(s, v1.Declarations{}); err == nil || err.Error() != server.CheckScope(s).Error() {
			t.Errorf("%+v: err %v, want %v", s, err, server.CheckScope(s))
		}
	}
}

func member(r server.Reading, path string) (server.Member, bool) {
	for _, m := range r.Members {
		if m.Path == path {
			return m, true
		}
	}
	return server.Member{}, false
}

func paths(r server.Reading) []string {
	var out []string
	for _, m := range r.Members {
		out = append(out, m.Path)
	}
	return out
}

// classOf is the declared class of the member at path among fields.
func classOf(fields []v1.Field, path string) v1.Class {
	name, sub, nested := strings.Cut(path, ".")
	for _, f := range fields {
		if f.Name == path {
			return f.Class // a member whose name holds a dot
		}
		if f.Name != name {
			continue
		}
		if !nested {
			return f.Class
		}
		for _, cf := range f.Nested.Fields {
			if cf.Name == sub {
				return cf.Class
			}
		}
	}
	return 0
}

// TestReadableIsWhatServeServes: for keys of every kind of scope, over records of every
// collection with members at every depth (declared, nested, and many no declaration names),
// a declared member full access is served is served to the key exactly when Readable says the
// key reads it, and a member no declaration names is served to the key only when Readable says
// it reads such members (and, when it reads all of them, unless its deny list names it).
func TestReadableIsWhatServeServes(t *testing.T) {
	t.Parallel()
	scopes := map[string]server.Scope{
		"deny-email":      {Deny: []string{"email"}},
		"deny-paths":      {Deny: []string{"line_manager.email", "DOB", "employee"}},
		"allow":           {Fields: []string{"id", "first_name", "line_manager.id", "employee.email", "people", "dob"}},
		"allow-any-depth": {Fields: []string{"id", "**.name", "department.id", "employee"}},
		"no-identifying":  {DenyClasses: []v1.Class{v1.Identifying}},
		"no-health":       {DenyClasses: []v1.Class{v1.Health}, Deny: []string{"start_date"}},
		"some":            {Collections: []string{"employees", "sicknesses"}, DenyClasses: []v1.Class{v1.Employment}, ReadOnly: true},
	}
	var keys []server.Key
	for name, s := range scopes {
		keys = append(keys, server.Key{Name: name, Key: name + "-readable-key-7f3a9c2e5b1d8f4a6c0e", Scope: s})
	}
	f := newFixture(t, "sqlite", server.Options{Keys: keys})
	deepStore(t, f)
	checked := map[string]int{} // declared members full access was served, by key: the test can fail
	for name, s := range scopes {
		readable, err := server.Readable(s, v1.Declarations{})
		if err != nil {
			t.Fatal(err)
		}
		key := name + "-readable-key-7f3a9c2e5b1d8f4a6c0e"
		for _, path := range deepPaths() {
			collection, _, _ := strings.Cut(strings.SplitN(strings.TrimPrefix(path, "/v1/"), "/", 2)[0], "?")
			r, ok := readable[collection]
			if !ok {
				resp, body := send(t, "GET", f.srv.URL+path, key, nil)
				assertStatus(t, resp, body, 403)
				continue
			}
			fields, _, _ := v1.Declared(collection)
			full, got := records(t, f, testKey, path), records(t, f, key, path)
			for i, whole := range full {
				rec := got[i]
				check := func(p string, inWhole, inGot bool) {
					if !inWhole {
						return
					}
					checked[name]++
					if _, reads := member(r, p); reads != inGot {
						t.Errorf("%s %s: %s served %v, Readable says %v", name, path, p, inGot, reads)
					}
				}
				for _, fl := range fields {
					w, inWhole := whole[fl.Name]
					g, inGot := rec[fl.Name]
					if fl.Kind != v1.Nested {
						check(fl.Name, inWhole, inGot)
						continue
					}
					wo, _ := w.(map[string]any)
					gotObj, _ := g.(map[string]any)
					_, gotID := gotObj["id"]
					check(fl.Name, wo != nil, gotID)
					for _, cf := range fl.Nested.Fields {
						_, inW := wo[cf.Name]
						_, inG := gotObj[cf.Name]
						check(fl.Name+"."+cf.Name, inW, inG)
					}
				}
				for m := range whole {
					if m == "id" || declares(fields, m) {
						continue
					}
					_, inGot := rec[m]
					x := r.Extra
					denied := slices.ContainsFunc(x.Except, func(p string) bool { return p == strings.ToLower(m) })
					allowed := slices.ContainsFunc(x.Only, func(p string) bool { return strings.SplitN(p, ".", 2)[0] == m })
					switch {
					case inGot && !x.All && !allowed:
						t.Errorf("%s %s: %s, no declaration names it, served; Readable says %+v", name, path, m, x)
					case !inGot && x.All && !denied:
						t.Errorf("%s %s: %s, no declaration names it, not served; Readable says %+v", name, path, m, x)
					}
				}
			}
		}
	}
	for name := range scopes {
		if checked[name] == 0 {
			t.Errorf("%s: no declared member checked", name)
		}
	}
}
