package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"maps"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/personal"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// subjectWarehouse is a warehouse of the backend holding sinktest's Subject, and the environment
// that points hrsync at it.
func subjectWarehouse(t *testing.T, backend string) []string {
	t.Helper()
	ctx := context.Background()
	var url, schemaName string
	if backend == "postgres" {
		url, schemaName = sinktest.Postgres(t)
		if _, err := sink.Migrate(ctx, url, sink.Options{Schema: schemaName}); err != nil {
			t.Fatal(err)
		}
	} else {
		url = filepath.Join(t.TempDir(), "w.db")
	}
	s, err := sink.Open(ctx, url, sink.Options{Schema: schemaName})
	if err != nil {
		t.Fatal(err)
	}
	sinktest.LoadSubject(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	env := []string{"HRSYNC_WAREHOUSE_URL=" + url}
	if schemaName != "" {
		env = append(env, "HRSYNC_WAREHOUSE_SCHEMA="+schemaName)
	}
	return env
}

// readSubject reads an export's JSON document back.
func readSubject(t *testing.T, path string) (personal.Subject, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc personal.Subject
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc, b
}

// internalNames are what an export must not hold: the warehouse's bookkeeping columns and JSON
// copies, as members.
var internalNames = []string{"listed", "origin", "synced_at", "valid_from", "valid_to", "nested", "sent", "extra", "run_id", "file_hash", "request_hash", "location"}

// TestSubjectAccessExport: hrsync subject-access writes the HTML, JSON and CSV documents: each
// member of each record once, by category and class, with its history of values; the records
// of others naming the person with only what is about them; nothing of the other people's own
// data, no bookkeeping column, no model row, no address of the warehouse; the CSV file holds the
// JSON's values, cells safe for a spreadsheet; it prints the paths and the counts, never a
// value.
func TestSubjectAccessExport(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			env := subjectWarehouse(t, backend)
			out := filepath.Join(t.TempDir(), "exports")
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), []string{"subject-access", "--employee", "100", "--out", out}, env, &stdout, &stderr); err != nil {
				t.Fatalf("subject-access: %v\n%s", err, stderr.String())
			}
			m := sinktest.SubjectMarkers
			base := filepath.Join(out, "subject-access-100")
			doc, raw := readSubject(t, base+".json")
			if doc.EmployeeID != 100 || doc.Name != m.Versions[2]+" Plast" {
				t.Errorf("document of %d, %q", doc.EmployeeID, doc.Name)
			}
			if _, err := time.Parse(time.RFC3339, doc.GeneratedAt); err != nil {
				t.Errorf("generated_at %q: %v", doc.GeneratedAt, err)
			}
			page, err := os.ReadFile(base + ".html")
			if err != nil {
				t.Fatal(err)
			}
			csvRaw, err := os.ReadFile(base + ".csv")
			if err != nil {
				t.Fatal(err)
			}
			all := string(raw) + string(page) + string(csvRaw)
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "HRSYNC_WAREHOUSE_URL="); ok {
					u, _ := neturl.Parse(v)
					for _, s := range []string{v, filepath.Base(v), u.Host} {
						if s != "" && strings.Contains(all, s) {
							t.Errorf("the export names the warehouse (%q)", s)
						}
					}
				}
			}
			if strings.Contains(string(raw), "\\u0026") || !strings.Contains(string(raw), "R&D <Analyst>") || !strings.Contains(string(page), "R&amp;D &lt;Analyst&gt;") {
				t.Errorf("the documents do not hold values as stored (R&D <Analyst>), escaped in HTML")
			}

			cats := map[string]personal.Category{}
			for _, c := range doc.Categories {
				cats[c.Key] = c
				if c.Source == "" || c.Title == "" || len(c.Classes) == 0 {
					t.Errorf("category %s: source %q, title %q, classes %v", c.Key, c.Source, c.Title, c.Classes)
				}
				for _, r := range c.Records {
					seen := map[string]bool{}
					for _, mb := range r.Members {
						if seen[mb.Name] {
							t.Errorf("%s %s: member %s twice", c.Key, r.ID, mb.Name)
						}
						seen[mb.Name] = true
						if slices.Contains(internalNames, mb.Name) {
							t.Errorf("%s %s: member %s, a column of the warehouse's own", c.Key, r.ID, mb.Name)
						}
						if mb.Class == "" {
							t.Errorf("%s %s: member %s has no class", c.Key, r.ID, mb.Name)
						}
					}
				}
			}
			for _, want := range []string{"employees", "absences", "sicknesses", "leave_requests", "onboarding_rows", "idempotency_keys"} {
				if _, ok := cats[want]; !ok {
					t.Errorf("no category %s among %v", want, slices.Collect(maps.Keys(cats)))
				}
			}
			for k := range cats {
				if strings.HasPrefix(k, "model_") {
					t.Errorf("category %s without --include-models", k)
				}
			}
			// The first name, once, with every value it had.
			first := member(t, cats["employees"], "100", "first_name")
			if first.Value != m.Versions[2] || first.Class != "identifying" || len(first.History) != 3 {
				t.Errorf("first_name: %+v", first)
			}
			for i, v := range first.History {
				if v.Value != m.Versions[i] || v.From == "" || (i < 2) != (v.To != "") {
					t.Errorf("first_name's version %d: %+v", i, v)
				}
			}
			if n := strings.Count(string(raw), `"value": "`+m.Versions[2]+`"`); n != 2 { // the value and its current version
				t.Errorf("the JSON holds the first name's value %d times, want 2", n)
			}
			if reason := member(t, cats["sicknesses"], "601", "reason"); reason.Value != "Migraine" || reason.Class != "health" {
				t.Errorf("sickness 601's reason: %+v", reason)
			}
			if len(doc.Erasures) != 0 || len(doc.Erased) != 1 || !strings.Contains(doc.Erased[0], "No erasure") {
				t.Errorf("erasures %+v, statement %q", doc.Erasures, doc.Erased)
			}
			named := map[string]bool{}
			for _, mn := range doc.Mentions {
				named[mn.Category+" "+mn.Record+" "+mn.As] = true
			}
			for _, want := range []string{"employees 300 line_manager", "leave_requests 702 approved_by"} {
				if !named[want] {
					t.Errorf("no mention %q among %v", want, named)
				}
			}

			printed := stdout.String()
			for _, want := range []string{base + ".html", base + ".json", base + ".csv", "employees", "sicknesses", "health"} {
				if !strings.Contains(printed, want) {
					t.Errorf("printed %q, want %q in it", printed, want)
				}
			}
			for _, v := range append(append(append([]string{}, m.Versions...), m.PEmails...), m.Others...) {
				if strings.Contains(printed+stderr.String(), v) {
					t.Errorf("printed a value, %q:\n%s", v, printed)
				}
			}
			for _, other := range m.Others {
				if strings.Contains(strings.ToLower(all), strings.ToLower(other)) {
					t.Errorf("the export holds %q, another person's", other)
				}
			}

			rows, err := csv.NewReader(bytes.NewReader(csvRaw)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			want := 1 + len(doc.Mentions)
			for _, c := range doc.Categories {
				for _, r := range c.Records {
					for _, mb := range r.Members {
						want += max(1, len(mb.History))
					}
				}
			}
			if len(rows) != want {
				t.Errorf("the CSV file has %d lines, want %d (a header, a line per value each member had, one per mention)", len(rows), want)
			}
			var firsts []string
			for _, r := range rows[1:] {
				if r[0] == "employees" && r[3] == "first_name" {
					firsts = append(firsts, r[5]+"/"+r[8])
				}
			}
			if got := strings.Join(firsts, ","); got != m.Versions[0]+"/false,"+m.Versions[1]+"/false,"+m.Versions[2]+"/true" {
				t.Errorf("the CSV's first names: %s", got)
			}
			if !strings.Contains(string(csvRaw), `'=HYPERLINK(""x"")`) {
				t.Errorf("a note starting with = is not made safe for a spreadsheet")
			}
			if ents, _ := os.ReadDir(out); len(ents) != 3 {
				t.Errorf("%s holds %d entries, want the three files (no temporary ones)", out, len(ents))
			}

			// --include-models adds the rows of the models.
			var more bytes.Buffer
			if err := run(context.Background(), []string{"subject-access", "--employee", "100", "--out", out, "--force", "--include-models"}, env, &more, &stderr); err != nil {
				t.Fatal(err)
			}
			doc, _ = readSubject(t, base+".json")
			if !slices.ContainsFunc(doc.Categories, func(c personal.Category) bool { return strings.HasPrefix(c.Key, "model_") }) {
				t.Errorf("--include-models: no model's rows")
			}
		})
	}
}

// member is the member name of record id of c.
func member(t *testing.T, c personal.Category, id, name string) personal.Member {
	t.Helper()
	for _, r := range c.Records {
		if r.ID != id {
			continue
		}
		for _, m := range r.Members {
			if m.Name == name {
				return m
			}
		}
	}
	t.Errorf("%s %s has no member %s", c.Key, id, name)
	return personal.Member{}
}

// TestSubjectAccessRefusals: an id the warehouse does not hold is an error saying so and writes
// nothing; an export already there is not overwritten without --force, and is replaced with it;
// an id that is not a number, or none, is a usage error.
func TestSubjectAccessRefusals(t *testing.T) {
	t.Parallel()
	env := subjectWarehouse(t, "sqlite")
	ctx := context.Background()
	out := t.TempDir()
	err := run(ctx, []string{"subject-access", "--employee", "42", "--out", out}, env, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "no employee 42 in the warehouse") || exitCode(err) != 1 {
		t.Fatalf("unknown id: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("an unknown id wrote %d files", len(ents))
	}

	for _, args := range [][]string{{"--employee", "abc"}, {"--employee", "12x"}, {"--employee", "0"}, {"--employee", "-3"}, {},
		{"--employee", "1e3"}, {"--employee", "100", "--name", "Plast"}, {"--email", "a@b", "--name", "x"}} {
		err := run(ctx, append([]string{"subject-access", "--out", out}, args...), env, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--employee") {
			t.Errorf("%v: %v (exit %d), want a usage error about --employee", args, err, exitCode(err))
		}
	}

	args := []string{"subject-access", "--employee", "100", "--out", out}
	if err := run(ctx, args, env, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	jsonPath, csvPath := filepath.Join(out, "subject-access-100.json"), filepath.Join(out, "subject-access-100.csv")
	if err := os.WriteFile(jsonPath, []byte("edited"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(ctx, args, env, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "exists") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("a second export: %v, want a refusal naming --force", err)
	}
	if b, _ := os.ReadFile(jsonPath); string(b) != "edited" {
		t.Errorf("the export was overwritten without --force")
	}
	for _, p := range []string{jsonPath, filepath.Join(out, "subject-access-100.html")} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(ctx, args, env, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Errorf("an export's CSV file alone was overwritten without --force")
	}
	if err := run(ctx, append(args, "--force"), env, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if doc, _ := readSubject(t, jsonPath); doc.EmployeeID != 100 {
		t.Errorf("--force: %+v", doc.EmployeeID)
	}
	if _, err := os.Stat(csvPath); err != nil {
		t.Error(err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 3 {
		t.Errorf("%s holds %d entries after --force, want 3", out, len(ents))
	}
}

// TestSubjectAccessFind: --email and --name find the person (an email they once had, in any
// case; a name without its accents or case); several matches are listed with what tells them
// apart, and none is exported; no match is an error naming the flag, not the value.
func TestSubjectAccessFind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := filepath.Join(t.TempDir(), "w.db")
	s, err := sink.Open(ctx, url, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sinktest.WalkEmployees(t, s, sinktest.Employees(t,
		`{"id":1,"first_name":"Zoë","last_name":"Brontë","email":"zoe.b@example.com","status":"Current employee","company_join_date":"2020-01-06","department":{"id":5,"name":"Research"}}`,
		`{"id":2,"first_name":"Zoe","last_name":"Bronte","email":"zoe@example.com","status":"Ex-employee","company_join_date":"2019-03-01","leaving_date":"2024-05-31"}`,
		`{"id":3,"first_name":"Anne","last_name":"Brontë","email":"anne@example.com"}`), 10, sink.MergeOptions{Complete: true})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	env := []string{"HRSYNC_WAREHOUSE_URL=" + url}
	out := t.TempDir()

	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"subject-access", "--name", "zoe  BRONTE", "--out", out}, env, &stdout, &stderr)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "2 several employees match: choose one with --employee ID") {
		t.Fatalf("two matches: %v", err)
	}
	if strings.Contains(err.Error()+stderr.String(), "Zo") {
		t.Errorf("the error or the log names the person: %v %s", err, stderr.String())
	}
	for _, want := range []string{"2 employees match; none is exported", "1   Zoë Brontë  Research", "Current employee  2020-01-06  -",
		"2   Zoe Bronte", "Ex-employee       2019-03-01  2024-05-31"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the list lacks %q:\n%s", want, stdout.String())
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("several matches exported %d files", len(ents))
	}

	for _, tc := range []struct {
		args []string
		id   string
	}{
		{[]string{"--name", "anne brontë"}, "3"},
		{[]string{"--name", "ANNE bronte"}, "3"},
		{[]string{"--email", " ZOE.B@Example.com "}, "1"},
		{[]string{"--email", "zoe@example.com"}, "2"},
	} {
		var stdout bytes.Buffer
		if err := run(ctx, append([]string{"subject-access", "--out", out, "--force"}, tc.args...), env, &stdout, &bytes.Buffer{}); err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if _, err := os.Stat(filepath.Join(out, "subject-access-"+tc.id+".html")); err != nil {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
	for _, args := range [][]string{{"--name", "Charlotte"}, {"--email", "nobody@example.com"}} {
		err := run(ctx, append([]string{"subject-access", "--out", out}, args...), env, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "no employee in the warehouse matches "+args[0]) || strings.Contains(err.Error(), args[1]) {
			t.Errorf("%v: %v", args, err)
		}
	}
}
