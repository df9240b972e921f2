package main

import (
	"bytes"
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/browsertest"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// leaverConfig is a configuration stating purposes, lawful basis, recipients, keys of the
// replica (one denied classes) and retention.
var leaverConfig = `personal_data:
  purposes:
    - Paying salaries and managing employment
  lawful_basis:
    - "Contract of employment (UK GDPR Art. 6(1)(b))"
    - "Health data: employment law obligations (Art. 9(2)(b))"
  recipients:
    - Acme Payroll Ltd, our payroll processor
serve:
  keys:
    - {name: analytics, sha256: "` + strings.Repeat("ab", 32) + `", deny_classes: [identifying, free_text, health]}
    - {name: hr-portal, sha256: "` + strings.Repeat("cd", 32) + `"}
retention:
  leavers:
    identifying: 6y
  sickness_details: 3y
`

// leaverWarehouse is sinktest's Subject made a leaver (a leaving date and the status of one, a
// fourth version of their record), their sickness's health details erased by retention and
// their free text on request; and a configuration file for it.
func leaverWarehouse(t *testing.T) (env []string, configPath string) {
	t.Helper()
	ctx := context.Background()
	url := filepath.Join(t.TempDir(), "w.db")
	s, err := sink.Open(ctx, url, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sinktest.LoadSubject(t, s)
	a := `{"id":200,"first_name":"Afirstmarker","last_name":"Alastmarker","email":"a.marker@example.com"}`
	p := `{"id":100,"first_name":"Pversionthree","last_name":"Plast","email":"p.three@example.com"}`
	sinktest.WalkEmployees(t, s, sinktest.Employees(t,
		`{"id":100,"first_name":"Pversionthree","last_name":"Plast","email":"p.three@example.com","job_title":"R&D <Analyst>","status":"Ex-employee","leaving_date":"2026-06-30","line_manager":`+a+`,"holiday_approver":`+a+`,`+
			`"hr":true,"created_at":"2023-01-08T15:17:40Z","statutory_holiday_country":{"id":1,"name":"England and Wales"},"custom_fields":{},"nickname":"","tags":[],"shift":{"pattern":"early","weeks":[1,3]}}`,
		`{"id":200,"first_name":"Afirstmarker","last_name":"Alastmarker","email":"a.marker@example.com","job_title":"Head"}`,
		`{"id":300,"first_name":"Qfirstmarker","last_name":"Qlastmarker","email":"q.marker@example.com","job_title":"Clerk","line_manager":`+p+`}`),
		10, sink.MergeOptions{Complete: true})
	sinktest.WalkRecords(t, s, v1.Salaries, sinktest.Records(t, v1.Salaries,
		`{"id":8000001,"employee":{"id":100},"amount":"68500.0","currency":"GBP","effective_date":"2024-10-12"}`), sink.MergeOptions{Complete: true})
	if _, err := s.EraseRecords(ctx, "sicknesses", []int64{601}, []v1.Class{v1.Health}, sink.ErasureCauseRetention+"sickness_details", "retention"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EraseEmployee(ctx, 100, []v1.Class{v1.FreeText, v1.Financial}, "asked"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	configPath = filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(configPath, []byte(leaverConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"HRSYNC_WAREHOUSE_URL=" + url}, configPath
}

// TestSubjectAccessBrowser: the subject-access document of a leaver with sicknesses, history
// and erasures, read in headless Chromium: the reader sees their name, the categories, every
// value their name and email had, that their sickness's health details and their free text
// were erased and when, and that erased data is no longer held, the purposes, lawful basis,
// recipients and retention; not the warehouse's file, nor a bookkeeping column's name. The page
// loads nothing from elsewhere, and prints (to PDF).
func TestSubjectAccessBrowser(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	browser := browsertest.Chromium(t)
	env, configPath := leaverWarehouse(t)
	out := t.ArtifactDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"--config", configPath, "subject-access", "--name", "PVERSIONTHREE plast", "--out", out, "--force"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("subject-access: %v\n%s", err, stderr.String())
	}
	page := filepath.Join(out, "subject-access-100.html")
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Self-contained: every link within the page, nothing to load.
	for _, re := range []string{`(?i)\bsrc\s*=`, `(?i)href\s*=\s*"[^#]`, `(?i)url\(`, `(?i)@import`, `(?i)<link\b`, `(?i)<script\b`} {
		if loc := regexp.MustCompile(re).FindIndex(raw); loc != nil {
			t.Errorf("the page loads something (%s): %q", re, raw[loc[0]:min(len(raw), loc[1]+40)])
		}
	}

	chrome := func(extra ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-dev-shm-usage",
			"--user-data-dir=" + t.TempDir(), "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>"}, extra...)
		cmd := exec.CommandContext(ctx, browser, append(args, "file://"+page)...)
		var errb strings.Builder
		cmd.Stderr = &errb
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", browser, err, errb.String())
		}
		return b
	}
	dom := string(chrome("--dump-dom"))
	// What a reader sees: the body's text, without the style sheet, tags and entities.
	body := dom[strings.Index(dom, "<body"):]
	text := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(body, " "))
	text = strings.Join(strings.Fields(text), " ")
	for _, want := range []string{
		"Personal data held about Pversionthree Plast", "Employee record", "Absences", "Sicknesses", "Leave requests",
		"New-hire files (onboarding)", "identifying", "health",
		"Pversionone — from", "Pversiontwo — from", "p.one@example.com", "R&D <Analyst>", "Ex-employee", "Leaving date employment 30 Jun 2026",
		"by the retention rule sickness_details, hrsync erased the health data of their sickness 601.",
		"at the person's request, hrsync erased their free text, financial data, in every record.",
		// A record whose personal members were all erased says so; the summary, which classes.
		"Salaries 8000001 Its financial data was erased on ", "Salaries 1 financial (erased)",
		// Structured values readable, empty ones left out, times as a reader reads them, labels.
		"Statutory holiday country identifying England and Wales (1)", "Shift identifying Pattern: early; Weeks: 1, 3",
		"HR employment true", "Created at employment 8 Jan 2023, 15:17 UTC",
		"It no longer holds that data", "erased on",
		"Paying salaries and managing employment",
		`the application using hrsync's API key "analytics": can read employment, financial data`,
		`the application using hrsync's API key "hr-portal": can read employment, identifying, free text, financial, health data`, "Contract of employment (UK GDPR Art. 6(1)(b))", "Acme Payroll Ltd, our payroll processor",
		"Their identifying data is kept for 6 years after they left (30 Jun 2026): until 30 Jun 2032.",
		"The health details of a sickness (its type, reason, review notes and fit note) are kept for 3 years after it ended.",
		"Line manager employment employee 200", "Employee record 300 Line manager Pversionthree Plast, p.three@example.com (employee 100) current",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the reader does not see %q", want)
		}
	}
	if strings.Contains(text, "Migraine") {
		t.Error("the reader sees the erased reason of the sickness")
	}
	// Every value of a member that changed, with its period, in the document's one way of
	// writing times: "Pversionone — from 29 Nov 2026, 01:02 UTC to 29 Nov 2026, 01:02 UTC".
	at := `\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC`
	for _, re := range []string{`Pversionone — from ` + at + ` to ` + at, `Pversiontwo — from ` + at + ` to ` + at, `Pversionthree — from ` + at + ` \(current\)`,
		`p\.one@example\.com — from ` + at + ` to ` + at} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("the reader does not see the history %s", re)
		}
	}
	for _, raw := range []string{`{"`, `[]`, "Custom fields", "Nickname", "Tags", " Hr ", "T15:17:40Z", "2026-06-30"} {
		if strings.Contains(text, raw) {
			t.Errorf("the reader sees %q", raw)
		}
	}
	for _, hidden := range []string{"w.db", filepath.Dir(strings.TrimPrefix(env[0], "HRSYNC_WAREHOUSE_URL=")),
		"synced_at", "Synced at", "listed", "Listed", "origin", "Origin", "nested", "Nested", "sent", "run_id",
		"Afirstmarker", "Qfirstmarker", "a.marker@example.com", "Qsickmarker", "Qnotemarker"} {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(hidden) + `\b`).MatchString(text) {
			t.Errorf("the reader sees %q", hidden)
		}
	}
	if t.Failed() {
		t.Logf("the text a reader sees:\n%s", text)
	}

	pdf := filepath.Join(out, "subject-access-100.pdf")
	chrome("--no-pdf-header-footer", "--print-to-pdf="+pdf)
	if b, err := os.ReadFile(pdf); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) || len(b) < 5000 {
		t.Errorf("printing to PDF: %d bytes, %v", len(b), err)
	}
}
