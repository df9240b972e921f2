package personal

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/retention"
)

// TestWriteInventoryFormats: markdown is a table with the table and column in backquotes, CSV
// reads back one row per column of the inventory, and an unknown format writes nothing and
// wraps ErrFormat.
func TestWriteInventoryFormats(t *testing.T) {
	items := sink.Inventory()
	var b bytes.Buffer
	if err := WriteInventory(&b, "markdown", retention.Rules{}, v1.Declarations{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2+len(items) || lines[0] != "| table | column | class | retention | holds |" || lines[1] != "|---|---|---|---|---|" {
		t.Fatalf("markdown: %d lines, header %q %q", len(lines), lines[0], lines[1])
	}
	if it := items[0]; !strings.HasPrefix(lines[2], "| `"+it.Table+"` | `"+it.Column+"` | "+it.Class.String()+" | ") {
		t.Errorf("markdown's first row %q, want %s.%s", lines[2], it.Table, it.Column)
	}
	b.Reset()
	if err := WriteInventory(&b, "csv", retention.Rules{}, v1.Declarations{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 1+len(items) {
		t.Fatalf("csv: %d rows, %v; want %d", len(rows), err, 1+len(items))
	}
	b.Reset()
	err = WriteInventory(&b, "xml", retention.Rules{}, v1.Declarations{})
	if !errors.Is(err, ErrFormat) || err.Error() != `--format "xml": want text, csv or markdown` || b.Len() != 0 {
		t.Errorf("xml: %v, wrote %d bytes", err, b.Len())
	}
}

// TestRetentionRule: without rules an erasable column is kept for want of them, a column that
// is not erasable is kept, and with rules, each that reaches the column is said.
func TestRetentionRule(t *testing.T) {
	six, err := retention.ParsePeriod("6y")
	if err != nil {
		t.Fatal(err)
	}
	one, _ := retention.ParsePeriod("1y")
	rules := retention.Rules{Leavers: map[v1.Class]retention.Period{v1.Health: six}, SicknessDetails: one}
	for _, tc := range []struct {
		item  sink.InventoryItem
		rules retention.Rules
		want  string
	}{
		{sink.InventoryItem{Table: "employees", Column: "first_name", Class: v1.Identifying}, retention.Rules{}, "kept: no retention configured"},
		{sink.InventoryItem{Table: "employees", Column: "department_id", Class: v1.Employment}, rules, "kept"},
		{sink.InventoryItem{Table: "employees", Column: "first_name", Class: v1.Identifying}, rules, "kept: no retention rule reaches it"},
		{sink.InventoryItem{Table: "sicknesses_history", Column: "reason", Class: v1.Health}, rules, "leavers: 6y after leaving; sickness details: 1y after it ended"},
	} {
		if got := retentionRule(tc.item, tc.rules); got != tc.want {
			t.Errorf("%s.%s: %q, want %q", tc.item.Table, tc.item.Column, got, tc.want)
		}
	}
}

// TestParseErasable: empty is every class (nil); names are trimmed; a class that is not
// erasable, or no class, is an error naming the erasable ones.
func TestParseErasable(t *testing.T) {
	if cs, err := ParseErasable(" "); cs != nil || err != nil {
		t.Errorf("empty: %v, %v", cs, err)
	}
	if cs, err := ParseErasable("health, identifying"); err != nil || len(cs) != 2 || cs[0] != v1.Health || cs[1] != v1.Identifying {
		t.Errorf("health, identifying: %v, %v", cs, err)
	}
	for _, bad := range []string{"employment", "health,nope"} {
		if _, err := ParseErasable(bad); err == nil || !strings.Contains(err.Error(), "is not an erasable class (want identifying, free_text, financial, health)") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestPrintErasures: what erase prints, its tables sorted and aligned, every line prefixed, a
// lifted erasure's reasons on one line.
func TestPrintErasures(t *testing.T) {
	var b bytes.Buffer
	if err := PrintErased(&b, "[acme] ", 42, nil, sink.ErasureResult{IDs: []int64{3, 4}, Rows: map[string]int64{"employees_history": 12, "employees": 1}}); err != nil {
		t.Fatal(err)
	}
	want := "[acme] erased employee 42 (erasure 3,4; identifying,free_text,financial,health); rows changed:\n" +
		"[acme]   employees          1\n" +
		"[acme]   employees_history  12\n"
	if b.String() != want {
		t.Errorf("erased:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	e := sink.Erasure{ID: 3, Kind: sink.ErasureEmployee, SubjectID: 42, Classes: []v1.Class{v1.Health}, Cause: "request",
		Reason: "ticket\n7", ErasedAt: "2026-01-02T03:04:05Z", LiftedAt: "2026-02-02T03:04:05Z", LiftReason: "withdrawn"}
	PrintLifted(&b, "", e)
	if want := "lifted erasure 3 (employee 42; health): the next sync brings the source's current values back; what the history held stays erased\n"; b.String() != want {
		t.Errorf("lifted: %q", b.String())
	}
	b.Reset()
	if err := PrintErasures(&b, "", []sink.Erasure{e}); err != nil {
		t.Fatal(err)
	}
	want = "ID  SUBJECT      CLASSES  CAUSE    ERASED                LIFTED                REASON\n" +
		"3   employee 42  health   request  2026-01-02T03:04:05Z  2026-02-02T03:04:05Z  ticket; 7 (lifted: withdrawn)\n"
	if b.String() != want {
		t.Errorf("list:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := PrintErasures(&b, "[x] ", nil); err != nil || b.String() != "[x] no erasures\n" {
		t.Errorf("none: %q, %v", b.String(), err)
	}
}

// TestPrintRetention: a dry run says so and what it would do, one of a kind in the singular;
// a run says where it is logged.
func TestPrintRetention(t *testing.T) {
	six, _ := retention.ParsePeriod("6y")
	days, _ := retention.ParsePeriod("90d")
	rules := retention.Rules{Leavers: map[v1.Class]retention.Period{v1.Identifying: six}, OnboardingFiles: days}
	res := retention.Result{DryRun: true, Rules: []retention.RuleResult{
		{Rule: "leavers.identifying", Subjects: 1, What: "people", Rows: map[string]int64{"employees_history": 3, "employees": 1}},
		{Rule: retention.RuleOnboardingFiles, Subjects: 2, What: "onboarding rows", Files: 1},
	}}
	var b bytes.Buffer
	PrintRetention(&b, "", rules, res)
	want := "dry run: nothing is changed\n" +
		"leavers.identifying (6y after leaving): would erase 1 person\n" +
		"  employees          1\n" +
		"  employees_history  3\n" +
		"onboarding_files (90d after the file's last change): would erase 2 onboarding rows; would delete 1 file\n"
	if b.String() != want {
		t.Errorf("dry run:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	res.DryRun = false
	res.Rules = res.Rules[:1]
	res.Rules[0].Subjects = 2
	PrintRetention(&b, "[a] ", rules, res)
	if got := b.String(); !strings.HasPrefix(got, "[a] leavers.identifying (6y after leaving): erased 2 people\n") ||
		!strings.HasSuffix(got, "[a] the run is in erasure_log (action retention)\n") {
		t.Errorf("run:\n%s", got)
	}
}

// subject is an export of two tables, one with rows (a value a spreadsheet would run, a null),
// one without.
var subject = sink.SubjectExport{EmployeeID: 7, Tables: []sink.SubjectTable{
	{Name: "employees", Table: "employees", Columns: []string{"id", "notes", "email"},
		Rows: []sink.SubjectRow{{{Column: "id", Text: "7", Kind: sink.KindID}, {Column: "notes", Text: "=1+1"}, {Column: "email", Null: true}}}},
	{Name: "absences", Table: "absences", Columns: []string{"id"}},
}}

// TestExportWrite: the document and a CSV file per table with rows are written, cells safe for
// a spreadsheet; an export there is refused without replace and replaced with it, no temporary
// files left; Print says where and how many, never a value.
func TestExportWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ex := NewExport(dir, 7)
	if err := ex.Absent(); err != nil {
		t.Fatal(err)
	}
	a := &config.Account{Name: "acme"}
	a.Warehouse.URL = "postgres://u:secret@db/hr"
	a.Warehouse.Schema = "hr"
	doc, err := Document(a, subject, time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), "v1.2")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Subject     map[string]int64  `json:"subject"`
		GeneratedAt string            `json:"generated_at"`
		Hrsync      string            `json:"hrsync"`
		Warehouse   map[string]string `json:"warehouse"`
		About       []string          `json:"about"`
	}
	if err := json.Unmarshal(doc, &got); err != nil {
		t.Fatal(err)
	}
	if got.Subject["employee_id"] != 7 || got.GeneratedAt != "2026-01-02T02:04:05Z" || got.Hrsync != "v1.2" ||
		got.Warehouse["schema"] != "hr" || got.Warehouse["backend"] != "postgres" || got.Warehouse["account"] != "acme" || len(got.About) == 0 {
		t.Errorf("document: %+v", got)
	}
	if strings.Contains(string(doc), "secret") {
		t.Error("the document holds the warehouse's password")
	}
	if err := ex.Write(doc, subject.Tables, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "subject-access-7", "employees.csv"))
	if err != nil || string(b) != "id,notes,email\n7,'=1+1,\n" {
		t.Errorf("employees.csv: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "subject-access-7")); len(ents) != 1 {
		t.Errorf("%d CSV files, want 1 (none for a table without rows)", len(ents))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "subject-access-7.json")); !bytes.Equal(b, doc) {
		t.Error("the document written is not the document")
	}
	if err := ex.Absent(); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("Absent on an export there: %v", err)
	}
	if err := ex.Write(doc, subject.Tables, false); err == nil {
		t.Error("an export there was overwritten without replace")
	}
	if err := os.WriteFile(filepath.Join(dir, "subject-access-7", "stray.csv"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ex.Write(doc, subject.Tables, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "subject-access-7", "stray.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("replace left the old export's files: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%s holds %d entries, want 2 (no temporary folder)", dir, len(ents))
	}
	var out bytes.Buffer
	ex.Print(&out, "[acme] ", subject)
	want := "[acme] subject access for employee 7: 1 rows\n  " + filepath.Join(dir, "subject-access-7.json") + "\n  " +
		filepath.Join(dir, "subject-access-7") + string(filepath.Separator) + " (1 CSV files)\n" +
		"  TABLE      ROWS\n  employees  1\n  absences   0\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}
