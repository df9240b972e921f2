package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
)

// TestPersonalDataPageIsTheInventory: docs/personal-data.md shows the inventory hrsync prints,
// its summary and its columns, as they are: regenerate its blocks with
// `go run ./cmd/hrsync inventory --format markdown` and
// `go run ./cmd/hrsync inventory --columns --format markdown`.
func TestPersonalDataPageIsTheInventory(t *testing.T) {
	t.Parallel()
	page := readRepoFile(t, "docs/personal-data.md")
	for _, tc := range []struct{ begin, end string }{
		{"<!-- inventory-summary: hrsync inventory --format markdown -->\n", "<!-- /inventory-summary -->"},
		{"<!-- inventory: hrsync inventory --columns --format markdown -->\n", "<!-- /inventory -->"},
	} {
		args := strings.Fields(strings.TrimSuffix(strings.SplitN(tc.begin, ": hrsync ", 2)[1], " -->\n"))
		var out bytes.Buffer
		if err := run(context.Background(), args, nil, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		i, j := strings.Index(page, tc.begin), strings.Index(page, tc.end)
		if i < 0 || j < i {
			t.Fatalf("docs/personal-data.md has no inventory block (%q … %q)", tc.begin, tc.end)
		}
		if got := page[i+len(tc.begin) : j]; got != out.String() {
			t.Errorf("docs/personal-data.md's block is not what hrsync %s prints: regenerate it with "+
				"go run ./cmd/hrsync %s\nprinted:\n%s", strings.Join(args, " "), strings.Join(args, " "), firstDifference(got, out.String()))
		}
	}
}

// firstDifference is the first line where got and want differ, each side shown.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "page:    " + a + "\nprinted: " + b
		}
	}
	return ""
}

// TestInventoryFormats: every format lists every column once, with its class; CSV reads back
// as a table; an unknown format is a usage error naming the choices.
func TestInventoryFormats(t *testing.T) {
	t.Parallel()
	items := sink.Inventory()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"inventory", "--columns", "--format", "csv"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(items) || strings.Join(rows[0], ",") != "table,column,class,retention,holds" {
		t.Fatalf("csv: %d rows, header %q; want %d and table,column,class,retention,holds", len(rows), rows[0], 1+len(items))
	}
	for i, it := range items {
		if r := rows[1+i]; r[0] != it.Table || r[1] != it.Column || r[2] != it.Class.String() {
			t.Errorf("csv row %d = %q, want %s.%s %s", i+1, r, it.Table, it.Column, it.Class)
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"inventory", "--columns"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1+len(items) || !strings.HasPrefix(lines[0], "TABLE") {
		t.Fatalf("text: %d lines, first %q; want %d and a header", len(lines), lines[0], 1+len(items))
	}
	for i, it := range items {
		if f := strings.Fields(lines[1+i]); len(f) < 4 || f[0] != it.Table || f[1] != it.Column || f[2] != it.Class.String() {
			t.Errorf("text line %d %q, want %s %s %s …", i+1, lines[1+i], it.Table, it.Column, it.Class)
		}
	}
	var ue *usageError
	err = run(context.Background(), []string{"inventory", "--format", "xml"}, nil, io.Discard, io.Discard)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "want text, csv or markdown") {
		t.Errorf("--format xml: %v, want a usage error naming the formats", err)
	}
}

// TestInventoryShowsRetention: the retention column says the configured rule of each erasable
// column that a rule reaches, both rules where two do, what no rule reaches, and "kept" for what
// is never erased; with accounts whose rules differ, --account is needed.
func TestInventoryShowsRetention(t *testing.T) {
	t.Parallel()
	env := []string{"HRSYNC_RETENTION_LEAVERS_IDENTIFYING=6y", "HRSYNC_RETENTION_LEAVERS_HEALTH=2y",
		"HRSYNC_RETENTION_SICKNESS_DETAILS=1y", "HRSYNC_RETENTION_ONBOARDING_FILES=90d"}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"inventory", "--columns", "--format", "csv"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows[1:] {
		got[r[0]+"."+r[1]] = r[3]
	}
	for col, want := range map[string]string{
		"employees.first_name":                       "leavers: 6y after leaving",
		"employees_history.sent":                     "leavers: 6y after leaving",
		"employees.department_id":                    "kept",
		"sicknesses.reason":                          "leavers: 2y after leaving; sickness details: 1y after it ended",
		"sicknesses_history.review_notes":            "leavers: 2y after leaving; sickness details: 1y after it ended",
		"absences.notes":                             "kept: no retention rule reaches it", // no free_text rule
		"salaries.extra":                             "kept: no retention rule reaches it", // no financial rule
		"onboarding_rows.email":                      "leavers: 6y after leaving; onboarding: 90d after the file's last change",
		"onboarding_rows.file_name":                  "kept: no retention rule reaches it",
		"idempotency_keys.body":                      "leavers: 6y after leaving",
		"departments.extra":                          "kept: no retention rule reaches it",
		"erasure_log.reason":                         "kept: no retention rule reaches it",
		"employee_training_courses.nested":           "leavers: 6y after leaving",
		"employee_training_courses.rejection_reason": "kept: no retention rule reaches it",
	} {
		if got[col] != want {
			t.Errorf("%s: %q, want %q", col, got[col], want)
		}
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("warehouse: {url: "+filepath.Join(dir, "w.db")+"}\naccounts:\n  - name: acme\n    retention: {leavers: {identifying: 6y}}\n  - name: globex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"--config", cfg, "inventory"}, nil, io.Discard, io.Discard)
	if exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), "--account") {
		t.Errorf("accounts with different rules: %v, want a usage error asking for --account", err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"--config", cfg, "inventory", "--columns", "--account", "acme"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "leavers: 6y after leaving") {
		t.Error("--account acme: no rule shown")
	}
}

// TestInventoryConfiguredMembers: hrsync inventory lists the members personal_data.members
// classes as rows of their collection's extra column (and history's), with their class and the
// retention that reaches it; the sent column that holds a member classed health is health; the
// accounts' members differing, it asks for --account.
func TestInventoryConfiguredMembers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("warehouse: {url: "+filepath.Join(dir, "w.db")+"}\n"+
		"retention: {leavers: {health: 1y}}\n"+
		"personal_data: {members: {employees: {cost_centre: employment, diagnosis_code: health}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--config", cfg, "inventory", "--columns", "--format", "csv"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		if (r[0] == "employees" || r[0] == "employees_history") && (r[1] == "extra" || r[1] == "sent") {
			got = append(got, strings.Join(r, " | "))
		}
	}
	want := []string{
		"employees | extra | identifying | kept: no retention rule reaches it | the members of the record no declaration names but those the configuration classes (the rows below) (JSON)",
		"employees | extra | employment | kept | its member cost_centre, classed by the configuration (personal_data.members)",
		"employees | extra | health | leavers: 1y after leaving | its member diagnosis_code, classed by the configuration (personal_data.members)",
		"employees | sent | health | leavers: 1y after leaving | the whole record exactly as the source sent it, every member above included (JSON)",
		"employees_history | extra | identifying | kept: no retention rule reaches it | every version of employees.extra: the members of the record no declaration names but those the configuration classes (the rows below) (JSON)",
		"employees_history | extra | employment | kept | every version of employees.extra: its member cost_centre, classed by the configuration (personal_data.members)",
		"employees_history | extra | health | leavers: 1y after leaving | every version of employees.extra: its member diagnosis_code, classed by the configuration (personal_data.members)",
		"employees_history | sent | health | leavers: 1y after leaving | every version of employees.sent: the whole record exactly as the source sent it, every member above included (JSON)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("inventory rows\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}

	if err := os.WriteFile(cfg, []byte("warehouse: {url: "+filepath.Join(dir, "w.db")+"}\naccounts:\n  - name: acme\n"+
		"    personal_data: {members: {employees: {cost_centre: employment}}}\n  - name: globex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"--config", cfg, "inventory"}, nil, io.Discard, io.Discard)
	if exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), "personal_data.members differ") {
		t.Errorf("accounts with different members: %v, want a usage error asking for --account", err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"--config", cfg, "inventory", "--columns", "--account", "acme"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "its member cost_centre") {
		t.Error("--account acme: the member is not listed")
	}
}

// TestInventorySummary: hrsync inventory prints by default its summary by table and class, with
// the serve keys of the configuration that read each class by name (the key file's only when
// no key is listed; with several accounts, each key with its account), and --columns the
// column view; both in every format, and the usage error of an unknown format alike.
func TestInventorySummary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte("warehouse: {url: "+filepath.Join(dir, "w.db")+"}\n"+text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	inventory := func(args ...string) [][]string {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), append([]string{"--config", cfg, "inventory", "--format", "csv"}, args...), nil, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	keysOf := func(rows [][]string, table, class string) string {
		for _, r := range rows[1:] {
			if r[0] == table && r[1] == class {
				return r[5]
			}
		}
		t.Fatalf("no row %s %s", table, class)
		return ""
	}
	write("serve: {api_key_file: " + filepath.Join(dir, "hrsync.key") + "}\n")
	rows := inventory()
	if strings.Join(rows[0], ",") != "table,class,columns,members,retention,serve keys,history" {
		t.Fatalf("the default is not the summary: header %q", rows[0])
	}
	if got := keysOf(rows, "employees", "identifying"); got != filepath.Join(dir, "hrsync.key") {
		t.Errorf("employees identifying, no serve.keys: keys %q, want the key file", got)
	}
	// employees_history holds the same: employees's rows stand for it, and it is not served.
	for _, r := range rows[1:] {
		if r[0] == "employees" && r[6] != "employees_history" || r[0] == "employees_history" {
			t.Errorf("employees_history not folded into employees's rows: %q", r)
		}
		if r[1] == "not_personal" {
			t.Errorf("a not_personal row: %q", r)
		}
	}
	if got := keysOf(rows, "locks", "none"); got != "not served" {
		t.Errorf("locks, no personal data: %q", got)
	}
	if cols := inventory("--columns"); strings.Join(cols[0], ",") != "table,column,class,retention,holds" || len(cols) != 1+len(sink.Inventory()) {
		t.Errorf("--columns: header %q, %d rows", cols[0], len(cols))
	}

	write(`serve:
  api_key_file: ` + filepath.Join(dir, "hrsync.key") + `
  keys:
    - {name: analytics, key: analytics-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d, deny_classes: [identifying, free_text, financial, health]}
    - {name: no-email, key: no-email-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d, deny: [email]}
    - {name: directory, key: directory-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d, collections: [employees, departments], fields: [id, first_name, name]}
`)
	rows = inventory()
	for _, tc := range []struct{ table, class, want string }{
		{"employees", "identifying", "no-email, directory"},
		{"employees", "employment", "analytics, no-email"},
		{"sicknesses", "health", "no-email"},
		{"salaries", "financial", "no-email"},
		{"absences", "free_text", "no-email"},
		{"onboarding_rows", "identifying", "not served"},
	} {
		if got := keysOf(rows, tc.table, tc.class); got != tc.want {
			t.Errorf("%s %s: keys %q, want %q", tc.table, tc.class, got, tc.want)
		}
	}

	write(`accounts:
  - {name: acme}
  - {name: globex}
serve:
  keys:
    - {name: acme-dash, account: acme, key: dash-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d0, deny_classes: [health]}
    - {name: globex-dash, account: globex, key: dash-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d1}
`)
	rows = inventory()
	if got := keysOf(rows, "sicknesses", "health"); got != "globex-dash (globex)" {
		t.Errorf("several accounts, sicknesses health: %q, want globex-dash (globex)", got)
	}
	if got := keysOf(inventory("--account", "acme"), "sicknesses", "health"); got != "none" {
		t.Errorf("--account acme, sicknesses health: %q, want none", got)
	}
}
