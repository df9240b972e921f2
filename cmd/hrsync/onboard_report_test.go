package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// ukExport is the UK export: dates as Excel in the UK writes them, and a Department
// column hrsync does not send.
const ukExport = "First name,Last name,Email,Department,Start date\r\n" +
	"Olivia,Smith,olivia.smith@example.co.uk,Finance,25/12/2026\r\n" +
	"Harry,Jones,harry.jones@example.co.uk,Sales,03/01/2027\r\n" +
	"Amelia,Taylor,amelia.taylor@example.co.uk,IT,5.1.27\r\n" +
	"Jack,Brown,jack.brown@example.co.uk,HR,14-Jan-2027\r\n" +
	"Isla,Wilson,isla.wilson@example.co.uk,Legal,01/02/2027\r\n"

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOnboardAUKExport: all five rows of a UK export are created under the default, each on
// the day Excel wrote; the Department column is named once on the terminal, once in the log and
// once in the report, and the output says where the report is.
func TestOnboardAUKExport(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	dir := t.TempDir()
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db"))}
	path := filepath.Join(dir, "uk.csv")
	writeFile(t, path, ukExport)
	var out, logs bytes.Buffer
	if err := run(context.Background(), []string{"onboard", path}, env, &out, &logs); err != nil {
		t.Fatalf("onboard: %v\n%s", err, out.String())
	}
	for _, want := range []string{"uk.csv: 5 created, 0 already done, 0 skipped, 0 rejected, 0 unresolved",
		`  columns not sent (hrsync sends only first name, last name, email, job title and join date): "Department"`,
		"  report: " + path + ".result.csv"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("onboard said %q, want %q", out.String(), want)
		}
	}
	dates := map[string]string{}
	for _, raw := range up.Employees() {
		var e v1.Employee
		if err := e.UnmarshalJSON(raw); err != nil {
			t.Fatal(err)
		}
		dates[e.Email] = e.CompanyJoinDate
	}
	for email, want := range map[string]string{"olivia.smith@example.co.uk": "2026-12-25", "harry.jones@example.co.uk": "2027-01-03",
		"amelia.taylor@example.co.uk": "2027-01-05", "jack.brown@example.co.uk": "2027-01-14", "isla.wilson@example.co.uk": "2027-02-01"} {
		if !strings.HasPrefix(dates[email], want) {
			t.Errorf("%s joins on %q, want %s", email, dates[email], want)
		}
	}
	if n := strings.Count(logs.String(), "Department"); n != 1 {
		t.Errorf("the log names the column %d times:\n%s", n, logs.String())
	}
	for _, cell := range []string{"Finance", "Olivia", "olivia.smith", "25/12/2026"} {
		if strings.Contains(logs.String(), cell) {
			t.Errorf("the log holds %q:\n%s", cell, logs.String())
		}
	}
	report, err := os.ReadFile(path + ".result.csv")
	if err != nil || strings.Count(string(report), "Department") != 1 {
		t.Errorf("the report does not name the column once: %v\n%s", err, report)
	}
}

// TestOnboardPrintsTheRowsToActOn: a run prints each rejected row with its line, person and
// reason (the value, and the setting that would accept it), and where the report is; the
// report carries the names. A month-first file is settled by onboarding.date_layout.
func TestOnboardPrintsTheRowsToActOn(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	dir := t.TempDir()
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db"))}
	path := filepath.Join(dir, "us.csv")
	writeFile(t, path, "First name,Last name,Email,Start date\n"+
		"Ann,Lee,ann@example.com,2026-12-01\n"+
		"Bo,Ek,bo@example.com,12/25/2026\n"+
		"Cy,Ng,cy@example.com,03/04/2026\n"+
		"Di,,di@example.com,2026-12-01\n")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"onboard", path}, env, &out, io.Discard); err != nil {
		t.Fatalf("onboard: %v\n%s", err, out.String())
	}
	want := "us.csv: 1 created, 0 already done, 0 skipped, 3 rejected, 0 unresolved\n" +
		`  line 3: rejected: Bo Ek <bo@example.com>: join_date: "12/25/2026" is not a date read day first, as UK and European Excel write dates (25/12/2026); if the file's dates are month first (12/25/2026), set onboarding.date_layout: 01/02/2006` + "\n" +
		`  line 4: rejected: Cy Ng <cy@example.com>: join_date: "03/04/2026" is ambiguous in this file: read day first it is 3 Apr 2026, month first 4 Mar 2026, and line 3's "12/25/2026" can only be month first; if the file's dates are month first, set onboarding.date_layout: 01/02/2006, or correct line 3 (YYYY-MM-DD is never ambiguous)` + "\n" +
		"  line 5: rejected: Di <di@example.com>: last_name: missing\n" +
		"  report: " + path + ".result.csv\n"
	if out.String() != want {
		t.Errorf("onboard said\n%s\nwant\n%s", out.String(), want)
	}
	f, err := os.Open(path + ".result.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 5 || strings.Join(rows[2], "|") != strings.Join([]string{"3", "bo@example.com", "rejected", "", rows[2][4], "Bo", "Ek"}, "|") {
		t.Errorf("report %q %v", rows, err)
	}

	// The setting the reasons name settles it: the month-first rows of the file exported again
	// are created. (The same file again is issue 27 item 3's: rows rejected for their content
	// tried again once the settings change.)
	again := filepath.Join(dir, "us-again.csv")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, again, strings.ReplaceAll(string(data), "\n", "\r\n"))
	out.Reset()
	if err := run(context.Background(), []string{"onboard", again}, append(env, "HRSYNC_ONBOARDING_DATE_LAYOUT=01/02/2006"), &out, io.Discard); err != nil {
		t.Fatalf("onboard: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "us-again.csv: 2 created, 1 already done, 0 skipped, 1 rejected, 0 unresolved") {
		t.Errorf("with the layout set, onboard said %q", out.String())
	}
	if n := up.Count("/v1/employees", http.StatusCreated); n != 3 {
		t.Errorf("%d created, want 3", n)
	}
}

// TestOnboardDryRunWithoutASource: --dry-run needs no source and opens no warehouse: it checks
// the file alone, prints each row to fix, and says what it could not check. Without --dry-run
// the missing source is an error that says so.
func TestOnboardDryRunWithoutASource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.db")
	env := []string{"HRSYNC_WAREHOUSE_URL=" + db}
	path := filepath.Join(dir, "uk.csv")
	writeFile(t, path, ukExport+"Zoe,Hall,zoe.hall@example.co.uk,IT,12/31/2026\r\n")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"onboard", "--dry-run", path}, env, &out, io.Discard); err != nil {
		t.Fatalf("onboard --dry-run without a source: %v\n%s", err, out.String())
	}
	for _, want := range []string{"uk.csv (dry run): 2 valid, 0 already done, 0 skipped, 4 rejected",
		`  line 7: rejected: Zoe Hall <zoe.hall@example.co.uk>: join_date: "12/31/2026" is not a date read day first`,
		`  line 3: rejected: Harry Jones <harry.jones@example.co.uk>: join_date: "03/01/2027" is ambiguous in this file, which has dates in both orders`,
		"  report: " + path + ".dry-run.csv",
		"checked the file alone: no source is configured (source.url, source.api_key), so whether these people are employees already, or were onboarded before, was not checked"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run said %q, want %q", out.String(), want)
		}
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run without a source made the warehouse: %v", err)
	}
	err := run(context.Background(), []string{"onboard", path}, env, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "source URL: not set") || !strings.Contains(err.Error(), "; hrsync onboard --dry-run checks files without a source") {
		t.Errorf("onboard without a source: %v", err)
	}
}

// TestOnboardingDateLayoutChecked: a layout that is not a whole date is refused at start,
// naming the setting and what would do.
func TestOnboardingDateLayoutChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "uk.csv")
	writeFile(t, path, ukExport)
	err := run(context.Background(), []string{"onboard", "--dry-run", path}, []string{"HRSYNC_ONBOARDING_DATE_LAYOUT=DD/MM/YYYY"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `onboarding.date_layout "DD/MM/YYYY" is not the layout of a whole date`) || !strings.Contains(err.Error(), "01/02/2006") {
		t.Errorf("err = %v", err)
	}
}
