package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// A file as a spreadsheet exports it: BOM, CRLF, human headers, accents, quoted commas, a
// formula, a bad date and a bad email.
const spreadsheet = "\ufeffFirst Name;Last Name;E-mail;Job Title;Start Date\r\n" +
	"Zoë;Ødegård;zoe@example.com;\"Chef, Pastry\";2026/12/01\r\n" +
	"José;\"O'Brien, Jr.\";jose@example.com;Engineer;2026-12-02\r\n" +
	"=cmd|' /C calc'!A0;Evil;evil@example.com;;2026/12/03\r\n" +
	"Ann;Lee;ann@example;Nurse;2026/12/04\r\n" +
	"Bo;Ek;bo@example.com;Nurse;12/31/2026\r\n" + // month first, under the day-first default
	";;;;\r\n"

func TestOnboardAFolderAsANewUserWould(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	dir := t.TempDir()
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_ONBOARDING_DIR=" + filepath.Join(dir, "in"),
		"HRSYNC_ONBOARDING_SETTLE_SECONDS=0"}
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	drop := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, "in", name), []byte(spreadsheet), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	drop("cohort.csv")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"onboard", "--dry-run"}, env, &out, io.Discard); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if up.Count("/v1/employees", 201) != 0 || !strings.Contains(out.String(), "cohort.csv (dry run): 3 valid, 0 already done, 0 skipped, 2 rejected") {
		t.Fatalf("dry run sent something or said %q", out.String())
	}
	// A dry run of the file by name leaves its report out of the folder scan's way.
	if err := run(context.Background(), []string{"onboard", "--dry-run", filepath.Join(dir, "in", "cohort.csv")}, env, io.Discard, io.Discard); err != nil {
		t.Fatalf("dry run of the file: %v", err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"onboard"}, env, &out, io.Discard); err != nil {
		t.Fatalf("onboard: %v (%s)", err, out.String())
	}
	if !strings.Contains(out.String(), "cohort.csv: 3 created, 0 already done, 0 skipped, 2 rejected, 0 unresolved") || up.Count("/v1/employees", 201) != 3 {
		t.Errorf("said %q; %d created", out.String(), up.Count("/v1/employees", 201))
	}
	report, err := os.ReadFile(filepath.Join(dir, "in", "processed", "cohort.result.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"row,email,outcome,employee_id,reason", ",zoe@example.com,created,", "ann@example,rejected,", "bo@example.com,rejected,"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(string(report), "\n=") || strings.Contains(string(report), ",=") {
		t.Errorf("a formula reached the report raw:\n%s", report)
	}
	// The same file dropped again creates nobody.
	drop("cohort-again.csv")
	out.Reset()
	if err := run(context.Background(), []string{"onboard"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if up.Count("/v1/employees", 201) != 3 || !strings.Contains(out.String(), "cohort-again.csv: 0 created, 3 already done, 0 skipped, 2 rejected, 0 unresolved") {
		t.Errorf("second drop: %q, %d created in all", out.String(), up.Count("/v1/employees", 201))
	}
}

// fastOnboardRetries shortens the source client's retry backoff of onboard for one test.
func fastOnboardRetries(t *testing.T) {
	saved := account.OnboardClientOptions
	account.OnboardClientOptions = client.Options{RetryInitial: time.Millisecond, RetryMax: 5 * time.Millisecond}
	t.Cleanup(func() { account.OnboardClientOptions = saved })
}

// TestOnboardAfterAnOutageAsAnOperatorWould is issue 11's evidence, run as people-ops and an
// operator would: onboard with the source's port closed, then the cohort re-exported with CRLF
// line ends (sed 's/$/\r/' failed/cohort.csv > cohort.csv) and onboarded against a working
// source, then the file in failed/ finished with --retry-failed. onboard fails while a row is
// unresolved, and its summary counts what happened.
func TestOnboardAfterAnOutageAsAnOperatorWould(t *testing.T) {
	t.Parallel()
	fastOnboardRetries(t)
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	wh := warehouseFile(t, filepath.Join(dir, "w.db"))
	env := func(url string) []string {
		return []string{"HRSYNC_SOURCE_URL=" + url, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
			"HRSYNC_WAREHOUSE_URL=" + wh, "HRSYNC_ONBOARDING_DIR=" + in, "HRSYNC_ONBOARDING_SETTLE_SECONDS=0"}
	}
	const cohort = "First Name,Last Name,Email,Start Date\n" +
		"Ana,Lima,ana@example.com,2026/12/01\n" +
		"Bo,Ek,bo@example.com,2026/12/02\n" +
		"Cy,Ng,cy@example.com,2026/12/03\n" +
		"Di,Oz,di@example.com,2026/12/04\n"
	if err := os.WriteFile(filepath.Join(in, "cohort.csv"), []byte(cohort), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		url  string
		args []string
		prep func()
		ok   bool
		says string
	}{
		{name: "the source down", url: closed, args: []string{"onboard"},
			says: "cohort.csv: 0 created, 0 already done, 0 skipped, 0 rejected, 4 unresolved"},
		{name: "retry while the source is still down", url: closed, args: []string{"onboard", "--retry-failed"},
			says: "cohort.csv: 0 created, 0 already done, 0 skipped, 0 rejected, 4 unresolved"},
		{name: "a CRLF re-export against a working source", url: up.URL, args: []string{"onboard"},
			prep: func() {
				data, err := os.ReadFile(filepath.Join(in, "failed", "cohort.csv"))
				if err != nil {
					t.Fatal(err)
				}
				crlf := strings.ReplaceAll(string(data), "\n", "\r\n")
				if err := os.WriteFile(filepath.Join(in, "cohort.csv"), []byte(crlf), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			ok: true, says: "cohort.csv: 4 created, 0 already done, 0 skipped, 0 rejected, 0 unresolved"},
		{name: "the file in failed/ finished", url: up.URL, args: []string{"onboard", "--retry-failed"},
			ok: true, says: "cohort.csv: 0 created, 4 already done, 0 skipped, 0 rejected, 0 unresolved"},
	}
	for _, s := range steps {
		if s.prep != nil {
			s.prep()
		}
		var out bytes.Buffer
		err := run(context.Background(), s.args, env(s.url), &out, io.Discard)
		if (err == nil) != s.ok || !strings.Contains(out.String(), s.says) {
			t.Fatalf("%s: said %q, err %v", s.name, out.String(), err)
		}
		if err != nil && exitCode(err) == 0 {
			t.Fatalf("%s: exit 0 with %v", s.name, err)
		}
	}
	if n := up.Count("/v1/employees", http.StatusCreated); n != 4 {
		t.Errorf("%d created, want 4", n)
	}
	if entries, _ := os.ReadDir(filepath.Join(in, "failed")); len(entries) != 0 {
		t.Errorf("failed/ still holds %d entries", len(entries))
	}
}
