package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/sync/onboard"
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

// exportDoc is the JSON document of an export, as read back.
type exportDoc struct {
	Subject struct {
		EmployeeID int64 `json:"employee_id"`
	} `json:"subject"`
	GeneratedAt string            `json:"generated_at"`
	Warehouse   map[string]string `json:"warehouse"`
	Tables      []struct {
		Name    string                       `json:"name"`
		Table   string                       `json:"table"`
		Columns []string                     `json:"columns"`
		Rows    []map[string]json.RawMessage `json:"rows"`
	} `json:"tables"`
}

func readExport(t *testing.T, path string) (exportDoc, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc exportDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc, b
}

// cellOf is the CSV cell a JSON value of the export is written as: text as it is, null empty,
// JSON compacted, every cell made safe for a spreadsheet.
func cellOf(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	switch {
	case string(raw) == "null":
		return ""
	case json.Unmarshal(raw, &s) == nil:
		return onboard.SafeCell(s)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return onboard.SafeCell(b.String())
}

// TestSubjectAccessExport: hrsync subject-access writes the JSON document and a CSV file per
// table with rows, the CSV files holding the JSON's rows, nothing of the other people's own
// data anywhere; it prints the paths and the counts, never a value.
func TestSubjectAccessExport(t *testing.T) {
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
			jsonPath, folder := filepath.Join(out, "subject-access-100.json"), filepath.Join(out, "subject-access-100")
			doc, raw := readExport(t, jsonPath)
			if doc.Subject.EmployeeID != 100 || doc.Warehouse["backend"] != backend {
				t.Errorf("document: subject %d, warehouse %v", doc.Subject.EmployeeID, doc.Warehouse)
			}
			if _, err := time.Parse(time.RFC3339, doc.GeneratedAt); err != nil {
				t.Errorf("generated_at %q: %v", doc.GeneratedAt, err)
			}
			for _, kv := range env {
				if u, err := neturl.Parse(strings.TrimPrefix(kv, "HRSYNC_WAREHOUSE_URL=")); err == nil && u.User != nil {
					if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(string(raw), pw) {
						t.Errorf("the document holds the warehouse's password")
					}
				}
			}
			if strings.Contains(string(raw), "\\u0026") || !strings.Contains(string(raw), "R&D <Analyst>") {
				t.Errorf("the document does not hold values as stored (R&D <Analyst>)")
			}

			printed := stdout.String()
			for _, want := range []string{jsonPath, folder + string(filepath.Separator), "employees_history", "named_in_leave_requests"} {
				if !strings.Contains(printed, want) {
					t.Errorf("printed %q, want %q in it", printed, want)
				}
			}
			for _, v := range append(append(append([]string{}, m.Versions...), m.PEmails...), m.Others...) {
				if strings.Contains(printed+stderr.String(), v) {
					t.Errorf("printed a value, %q:\n%s", v, printed)
				}
			}

			all := string(raw)
			csvs := map[string]bool{}
			for _, sec := range doc.Tables {
				path := filepath.Join(folder, sec.Name+".csv")
				if !strings.Contains(printed, sec.Name+"  ") || !strings.Contains(printed, " "+strconv.Itoa(len(sec.Rows))+"\n") {
					t.Errorf("printed no count of %s", sec.Name)
				}
				if len(sec.Rows) == 0 {
					if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s: a CSV file for a table without rows", path)
					}
					continue
				}
				csvs[sec.Name+".csv"] = true
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				all += string(b)
				rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				if len(rows) != 1+len(sec.Rows) || strings.Join(rows[0], ",") != strings.Join(sec.Columns, ",") {
					t.Fatalf("%s: %d lines, header %v; want %d and %v", path, len(rows), rows[0], 1+len(sec.Rows), sec.Columns)
				}
				for i, r := range sec.Rows {
					for j, c := range sec.Columns {
						if want := cellOf(t, r[c]); rows[1+i][j] != want {
							t.Errorf("%s row %d %s: %q, the document's %q", path, i+1, c, rows[1+i][j], want)
						}
					}
				}
			}
			for _, name := range []string{"employees.csv", "employees_history.csv", "absences.csv", "sicknesses.csv",
				"leave_requests_history.csv", "named_in_employees.csv", "named_in_leave_requests.csv", "onboarding_rows.csv", "idempotency_keys.csv"} {
				if !csvs[name] {
					t.Errorf("no %s among %v", name, csvs)
				}
			}
			ents, err := os.ReadDir(folder)
			if err != nil || len(ents) != len(csvs) {
				t.Errorf("%s holds %d files, want %d: %v", folder, len(ents), len(csvs), err)
			}
			for _, v := range m.Versions {
				if !strings.Contains(all, v) {
					t.Errorf("the export lacks %q, a version of P's history", v)
				}
			}
			for _, other := range m.Others {
				if strings.Contains(strings.ToLower(all), strings.ToLower(other)) {
					t.Errorf("the export holds %q, another person's", other)
				}
			}
			if !strings.Contains(all, `'=HYPERLINK(""x"")`) {
				t.Errorf("a note starting with = is not made safe for a spreadsheet")
			}
			if ents, _ := os.ReadDir(out); len(ents) != 2 {
				t.Errorf("%s holds %d entries, want the document and the folder (no temporary files)", out, len(ents))
			}
		})
	}
}

// TestSubjectAccessRefusals: an id the warehouse does not hold is an error saying so and writes
// nothing; an export already there is not overwritten without --force, and is replaced with it;
// an id that is not a number, or none, is a usage error.
func TestSubjectAccessRefusals(t *testing.T) {
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
		{"--employee", "1e3"}} {
		err := run(ctx, append([]string{"subject-access", "--out", out}, args...), env, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--employee") {
			t.Errorf("%v: %v (exit %d), want a usage error about --employee", args, err, exitCode(err))
		}
	}

	args := []string{"subject-access", "--employee", "100", "--out", out}
	if err := run(ctx, args, env, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	jsonPath, folder := filepath.Join(out, "subject-access-100.json"), filepath.Join(out, "subject-access-100")
	stray := filepath.Join(folder, "stray.csv")
	if err := os.WriteFile(stray, []byte("left"), 0o600); err != nil {
		t.Fatal(err)
	}
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
	if err := os.Remove(jsonPath); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, args, env, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Errorf("an export's folder alone was overwritten without --force")
	}
	if err := run(ctx, append(args, "--force"), env, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--force left the old export's files: %v", err)
	}
	if doc, _ := readExport(t, jsonPath); doc.Subject.EmployeeID != 100 {
		t.Errorf("--force: %+v", doc.Subject)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 2 {
		t.Errorf("%s holds %d entries after --force, want 2", out, len(ents))
	}
}
