package onboard_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/onboard"
)

// TestReadHiresNames: a rejected or skipped row carries its person's names as given, on one
// line and cut short, so a person can find it; a row the CSV reader could not split has none.
func TestReadHiresNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 80) // 160 bytes
	in := "First name,Last name,Email,Join date,Department\n" +
		"Ann,Lee,ann@example,2026-12-01,Finance\n" + // 2: rejected
		"Bo,Ek,bo@example.com,2026-12-01,Sales\n" + // 3: a hire
		"Bob,Ek,BO@example.com,2026-12-01,Sales\n" + // 4: a repeat
		"\"Cy\nCy\"," + long + ",cy@example.com,2026-12-01,\n" + // 5-6: a line break, a long name
		"Di,Oz,di@example.com,2026-12-01,x,y\n" + // 7: shifted
		"Ed \"The\" Ox,Ox,ed@example.com,2026-12-01,\n" + // 8: a bare quote
		"Fi,Fo,fi@example.com,12/31/2026,\n" // 9: a date
	f, err := onboard.ReadHireFile(strings.NewReader(in), onboard.HireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type names struct{ first, last string }
	got := map[int]names{}
	for _, p := range f.Problems {
		got[p.Line] = names{p.FirstName, p.LastName}
	}
	want := map[int]names{
		2: {"Ann", "Lee"},
		4: {"Bob", "Ek"},
		5: {"Cy Cy", strings.Repeat("é", 50) + "…"},
		7: {"Di", "Oz"},
		8: {"", ""},
		9: {"Fi", "Fo"},
	}
	if len(got) != len(want) {
		t.Errorf("problems on lines %v, want %v", got, want)
	}
	for line, w := range want {
		if got[line] != w {
			t.Errorf("line %d: names %q, want %q", line, got[line], w)
		}
	}
	if !slices.Equal(f.Ignored, []string{"Department"}) {
		t.Errorf("ignored columns %q, want Department", f.Ignored)
	}
}

// TestReportNamesThePeopleAndTheColumnsNotSent: a report carries each row's person (names
// after the columns scripts read, which keep their places) and names the columns not sent,
// once; the log names the columns, never a cell; the result says where the report is.
func TestReportNamesThePeopleAndTheColumnsNotSent(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, 0, fakeupstream.Options{})
	var logs bytes.Buffer
	o := onboard.New(fastClient(t, up, client.Options{}), sinktest.Store(t, "sqlite", sink.Options{}),
		onboard.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	dir := t.TempDir()
	path := filepath.Join(dir, "cohort.csv")
	data := "First name,Last name,Email,Department,Cost centre,Start date\n" +
		"Olivia,Smith,olivia@example.co.uk,Finance,CC-1,25/12/2026\n" +
		"Jack,Brown,jack@example.co.uk,\"=HYPERLINK(\"\"x\"\")\",CC-2,12/31/2026\n" +
		"=Evil,Brown,evil@example.co.uk,HR,CC-3,2026-12-01\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := o.ProcessPath(context.Background(), path, "")
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if r.Report != path+".result.csv" {
		t.Errorf("report at %q, want %q", r.Report, path+".result.csv")
	}
	if !slices.Equal(r.Ignored, []string{"Department", "Cost centre"}) {
		t.Errorf("ignored %q", r.Ignored)
	}
	rows := readReport(t, r.Report)
	want := [][]string{
		{"row", "email", "outcome", "employee_id", "reason", "first_name", "last_name"},
		{"", "", "columns-not-sent", "", `columns not sent (hrsync sends only first name, last name, email, job title and join date): "Department", "Cost centre"`, "", ""},
		{"2", "olivia@example.co.uk", "created", rows[2][3], "", "Olivia", "Smith"},
		{"3", "jack@example.co.uk", "rejected", "", `join_date: "12/31/2026" is not a date read day first, as UK and European Excel write dates (25/12/2026); if the file's dates are month first (12/25/2026), set onboarding.date_layout: 01/02/2006`, "Jack", "Brown"},
		{"4", "evil@example.co.uk", "created", rows[4][3], "", "'=Evil", "Brown"},
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("report:\n got %q\nwant %q", rows, want)
	}
	if n := up.Count("/v1/employees", http.StatusCreated); n != 2 {
		t.Errorf("%d created, want 2", n)
	}
	if strings.Count(logs.String(), "Cost centre") != 1 || !strings.Contains(logs.String(), `columns="Department, Cost centre"`) {
		t.Errorf("the log does not name the columns not sent once:\n%s", logs.String())
	}
	for _, cell := range []string{"Finance", "CC-1", "Olivia", "olivia@", "Smith", "12/31/2026"} {
		if strings.Contains(logs.String(), cell) {
			t.Errorf("the log holds %q:\n%s", cell, logs.String())
		}
	}
}

// TestDryRunWithoutALedger: a dry run with no source and no warehouse checks the file alone:
// valid rows would be created, bad ones are rejected with their reasons, nothing is written
// but the report.
func TestDryRunWithoutALedger(t *testing.T) {
	t.Parallel()
	o := onboard.New(nil, nil, onboard.Options{DryRun: true})
	dir := t.TempDir()
	path := filepath.Join(dir, "uk.csv")
	data := "First name,Last name,Email,Start date\nOlivia,Smith,olivia@example.co.uk,25/12/2026\nJack,Brown,jack@example,03/01/2027\nOlivia,Smith,OLIVIA@example.co.uk,25/12/2026\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := o.ProcessPath(context.Background(), path, "")
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if got := outcomes(r); got[onboard.OutcomeWouldCreate] != 1 || got[onboard.OutcomeRejected] != 1 || got[onboard.OutcomeSkipped] != 1 || len(r.Rows) != 3 {
		t.Errorf("outcomes %v", got)
	}
	if r.Rows[0].FirstName != "Olivia" || r.Rows[1].LastName != "Brown" {
		t.Errorf("rows without their people: %+v", r.Rows)
	}
	if r.Report != path+".dry-run.csv" {
		t.Errorf("report %q", r.Report)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d entries in the folder, want the file and its report", len(entries))
	}
}

// readReport reads a report as a spreadsheet or a CSV library does: its UTF-8 byte-order mark,
// which must be there, stripped, then its rows by encoding/csv.
func readReport(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body, ok := bytes.CutPrefix(data, []byte(onboard.BOM))
	if !ok {
		t.Errorf("%s does not begin with UTF-8's byte-order mark: Excel would read it in the machine's code page (% x)", path, data[:min(len(data), 8)])
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestReportKeepsNamesForExcel: a report begins with UTF-8's byte-order mark, so Excel shows
// "Zoë Brontë" and not "ZoÃ« BrontÃ«"; read back by encoding/csv, the mark stripped as a reader
// does, its header and names are intact. With NoBOM (onboarding.report_bom: false) it has none.
func TestReportKeepsNamesForExcel(t *testing.T) {
	t.Parallel()
	r := onboard.FileResult{Name: "cohort.csv", Rows: []onboard.RowResult{
		{Line: 2, Email: "zoe@example.com", Outcome: onboard.OutcomeCreated, EmployeeID: 7, FirstName: "Zoë", LastName: "Brontë"},
		{Line: 3, Email: "sean@example.ie", Outcome: onboard.OutcomeRejected, Reason: "join_date: missing", FirstName: "Seán", LastName: "Ó Briain"},
	}}
	dir := t.TempDir()
	path := filepath.Join(dir, "cohort.result.csv")
	if err := onboard.WriteReport(path, r, onboard.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte{0xef, 0xbb, 0xbf}) || bytes.HasPrefix(data[3:], []byte{0xef, 0xbb, 0xbf}) {
		t.Errorf("the report begins % x, want one UTF-8 byte-order mark (ef bb bf)", data[:min(len(data), 8)])
	}
	want := [][]string{
		{"row", "email", "outcome", "employee_id", "reason", "first_name", "last_name"},
		{"2", "zoe@example.com", "created", "7", "", "Zoë", "Brontë"},
		{"3", "sean@example.ie", "rejected", "", "join_date: missing", "Seán", "Ó Briain"},
	}
	if rows := readReport(t, path); !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("read back:\n got %q\nwant %q", rows, want)
	}
	if err := onboard.WriteReport(path, r, onboard.ReportOptions{NoBOM: true}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !bytes.HasPrefix(data, []byte("row,email,")) {
		t.Errorf("with NoBOM the report begins %q", data[:min(len(data), 12)])
	}
}
