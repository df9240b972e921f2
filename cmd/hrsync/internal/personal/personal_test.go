package personal

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// subject is a synthetic export: employee 7 with a note to make safe for a spreadsheet, an
// email erased, a member no declaration names (extra), two versions of the record, and an
// absence without rows.
var subject = sink.SubjectExport{EmployeeID: 7, Tables: []sink.SubjectTable{
	{Name: "employees", Table: "employees", Rows: []sink.SubjectRow{{
		{Column: "id", Text: "7", Kind: sink.KindID}, {Column: "first_name", Text: "=1+1"}, {Column: "email", Null: true},
		{Column: "extra", Text: `{"cost_centre":"CC-9","badge":"B1"}`, Kind: sink.KindJSON}, {Column: "listed", Text: "true", Kind: sink.KindBool},
		{Column: "sent", Text: `{"first_name":"=1+1"}`, Kind: sink.KindJSON}}}},
	{Name: "employees_history", Table: "employees_history", Rows: []sink.SubjectRow{
		{{Column: "id", Text: "7"}, {Column: "first_name", Text: "Old"}, {Column: "email", Null: true},
			{Column: "extra", Text: `{"cost_centre":"CC-1"}`, Kind: sink.KindJSON},
			{Column: "valid_from", Text: "2026-01-01T00:00:00Z"}, {Column: "valid_to", Text: "2026-02-01T00:00:00Z"}},
		{{Column: "id", Text: "7"}, {Column: "first_name", Text: "=1+1"}, {Column: "email", Null: true},
			{Column: "extra", Text: `{"cost_centre":"CC-9","badge":"B1"}`, Kind: sink.KindJSON},
			{Column: "valid_from", Text: "2026-02-01T00:00:00Z"}, {Column: "valid_to", Null: true}}}},
	{Name: "absences", Table: "absences"},
}}

// subjectAccount is an account whose configuration classes cost_centre and states a purpose.
func subjectAccount(t *testing.T) *config.Account {
	t.Helper()
	decls, err := v1.NewDeclarations(v1.Members{"employees": {"cost_centre": v1.Employment}})
	if err != nil {
		t.Fatal(err)
	}
	a := &config.Account{Name: "acme", Declarations: decls}
	a.Warehouse.URL = "postgres://u:secret@db.internal/hr"
	a.PersonalData.Purposes = []string{"Payroll"}
	a.PersonalData.Recipients = []string{"Acme Payroll Ltd"}
	return a
}

// TestNewSubject: each member once, the bookkeeping and copies left out, the members no
// declaration names each its own, classed by the configuration or as the collection's unknown
// members; each with its history; an erased member says when; the configuration's purposes and
// recipients; the erasure stated; nothing of the warehouse's address.
func TestNewSubject(t *testing.T) {
	erasures := []sink.Erasure{{ID: 3, Kind: sink.ErasureEmployee, Collection: "employees", SubjectID: 7, Classes: []v1.Class{v1.Identifying},
		Cause: sink.ErasureCauseRequest, ErasedAt: "2026-03-01T10:00:00Z"},
		{ID: 4, Kind: sink.ErasureEmployee, Collection: "employees", SubjectID: 8, Classes: []v1.Class{v1.Health}, ErasedAt: "2026-03-01T10:00:00Z"}}
	keys := []KeyReading{{Name: "k1", Reads: map[string][]v1.Class{"employees": {v1.NotPersonal, v1.Employment, v1.Identifying}, "sicknesses": {v1.Health}}},
		{Name: "k2", Reads: map[string][]v1.Class{"sicknesses": {v1.Health}, "employees": {v1.NotPersonal}}}}
	s := NewSubject(SubjectInput{Account: subjectAccount(t), Export: subject, Erasures: erasures, Keys: keys,
		Now: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), Version: "v1.2"})
	if s.Name != "=1+1" || s.GeneratedAt != "2026-04-01T00:00:00Z" || len(s.Categories) != 1 || s.Categories[0].Key != "employees" {
		t.Fatalf("subject %q at %s, categories %+v", s.Name, s.GeneratedAt, s.Categories)
	}
	got := map[string]Member{}
	for _, m := range s.Categories[0].Records[0].Members {
		got[m.Name] = m
	}
	if len(got) != 4 {
		t.Errorf("members %v, want first_name, email, badge, cost_centre", got)
	}
	if m := got["cost_centre"]; m.Class != "employment" || m.Value != "CC-9" || len(m.History) != 2 || m.History[0].Value != "CC-1" || m.History[0].To != "2026-02-01T00:00:00Z" {
		t.Errorf("cost_centre: %+v", m)
	}
	if m := got["badge"]; m.Class != "identifying" || m.Value != "B1" {
		t.Errorf("badge: %+v", m)
	}
	if m := got["email"]; m.Erased != "2026-03-01T10:00:00Z" {
		t.Errorf("email: %+v, want erased", m)
	}
	if m := got["first_name"]; len(m.History) != 2 || m.History[0].Value != "Old" || m.History[1].To != "" {
		t.Errorf("first_name: %+v", m)
	}
	if len(s.Erasures) != 1 || s.Erasures[0].ID != 3 || len(s.Erased) != 1 || !strings.Contains(s.Erased[0], "erased their identifying data") {
		t.Errorf("erasures %+v, statement %q", s.Erasures, s.Erased)
	}
	// k1 reads employment and identifying data of what is held; k2 reads only what is not held
	// (sicknesses) and what is not personal: no recipient.
	if len(s.Purposes) != 1 || fmt.Sprint(s.Recipients) != "[{Acme Payroll Ltd []} {k1 [employment identifying]}]" || len(s.LawfulBasis) != 0 {
		t.Errorf("purposes %v, recipients %v, basis %v", s.Purposes, s.Recipients, s.LawfulBasis)
	}
	var all bytes.Buffer
	for _, w := range []func(io.Writer) error{s.HTML, s.JSON, s.CSV} {
		if err := w(&all); err != nil {
			t.Fatal(err)
		}
	}
	// A member with two values reads each with its period, as a reader reads times.
	if want := "<li>CC-1 — from 1 Jan 2026, 00:00 UTC to 1 Feb 2026, 00:00 UTC</li><li>CC-9 — from 1 Feb 2026, 00:00 UTC (current)</li>"; !strings.Contains(all.String(), want) {
		t.Errorf("the HTML has no history %s", want)
	}
	for _, hidden := range []string{"db.internal", "secret", "listed", `"sent"`} {
		if strings.Contains(all.String(), hidden) {
			t.Errorf("the documents hold %q", hidden)
		}
	}
}

// TestExportWrite: the HTML, JSON and CSV files are written, cells safe for a spreadsheet; an
// export there is refused without replace and replaced with it, no temporary files left; Print
// says where and how many, never a value.
func TestExportWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ex := NewExport(dir, 7)
	if err := ex.Absent(); err != nil {
		t.Fatal(err)
	}
	doc := NewSubject(SubjectInput{Account: subjectAccount(t), Export: subject, Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), Version: "v1.2"})
	if err := ex.Write(doc, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "subject-access-7.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) < 2 || strings.Join(rows[0], ",") != strings.Join(csvHeader, ",") {
		t.Fatalf("the CSV file: %v, %v", rows, err)
	}
	if !strings.Contains(string(b), "'=1+1") {
		t.Errorf("a value starting with = is not made safe for a spreadsheet:\n%s", b)
	}
	var back Subject
	if b, err := os.ReadFile(filepath.Join(dir, "subject-access-7.json")); err != nil || json.Unmarshal(b, &back) != nil || back.EmployeeID != 7 || back.GeneratedAt != "2026-01-02T02:04:05Z" || back.Hrsync != "v1.2" {
		t.Errorf("the JSON document: %+v, %v", back, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "subject-access-7.html")); err != nil || !bytes.Contains(b, []byte("<h1>Personal data held about =1&#43;1</h1>")) {
		t.Errorf("the HTML document: %v", err)
	}
	if err := ex.Absent(); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("Absent on an export there: %v", err)
	}
	if err := ex.Write(doc, false); err == nil {
		t.Error("an export there was overwritten without replace")
	}
	if err := os.WriteFile(filepath.Join(dir, "subject-access-7.json"), []byte("edited"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ex.Write(doc, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "subject-access-7.json")); string(b) == "edited" {
		t.Error("replace kept the old document")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("%s holds %d entries, want 3 (no temporary folder)", dir, len(ents))
	}
	var out bytes.Buffer
	ex.Print(&out, "[acme] ", doc)
	want := "[acme] subject access for employee 7: 1 categories, 0 erasures\n  " + filepath.Join(dir, "subject-access-7.html") + "\n  " +
		filepath.Join(dir, "subject-access-7.json") + "\n  " + filepath.Join(dir, "subject-access-7.csv") + "\n" +
		"  CATEGORY   RECORDS  CLASSES\n  employees  1        employment, identifying\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}
