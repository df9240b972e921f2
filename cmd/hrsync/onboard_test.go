package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/sourcetest"
)

// A file as a spreadsheet exports it: BOM, CRLF, human headers, accents, quoted commas, a
// formula, a bad date and a bad email.
const spreadsheet = "\ufeffFirst Name;Last Name;E-mail;Job Title;Start Date\r\n" +
	"Zoë;Ødegård;zoe@example.com;\"Chef, Pastry\";2026/12/01\r\n" +
	"José;\"O'Brien, Jr.\";jose@example.com;Engineer;2026-12-02\r\n" +
	"=cmd|' /C calc'!A0;Evil;evil@example.com;;2026/12/03\r\n" +
	"Ann;Lee;ann@example;Nurse;2026/12/04\r\n" +
	"Bo;Ek;bo@example.com;Nurse;03/12/2026\r\n" +
	";;;;\r\n"

func TestOnboardAFolderAsANewUserWould(t *testing.T) {
	up := sourcetest.NewServer(sourcetest.Options{})
	defer up.Close()
	dir := t.TempDir()
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + filepath.Join(dir, "w.db"), "HRSYNC_ONBOARDING_DIR=" + filepath.Join(dir, "in"),
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
	out.Reset()
	if err := run(context.Background(), []string{"onboard"}, env, &out, io.Discard); err != nil {
		t.Fatalf("onboard: %v", err)
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
