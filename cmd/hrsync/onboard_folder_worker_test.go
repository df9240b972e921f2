package main

import (
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// TestWorkerTakesEveryDroppedFile is issue 27's item 1 as a newcomer met it: a workbook
// (cohort-march.xlsx) and Excel's "Unicode Text" (cohort-unicode.txt, UTF-16) dropped into the
// folder of a running worker are not left there in silence: each goes to failed/ with a report
// saying what it is and how to save it, a WARN line names it, hrsync_onboarding_files_total
// counts it, and the onboarding job's run is failed, not ok. The owner file Excel keeps while
// the workbook is open is left alone, and the worker goes on.
func TestWorkerTakesEveryDroppedFile(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_ONBOARDING_DIR=" + in,
		"HRSYNC_ONBOARDING_POLL_SECONDS=1", "HRSYNC_ONBOARDING_SETTLE_SECONDS=0",
		// Month first, as US files write dates: the UK export's are rejected.
		"HRSYNC_ONBOARDING_DATE_LAYOUT=01/02/2006"}
	if err := run(context.Background(), []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	p := startRun(t, bin, env)
	p.waitFor(t, "the folder watched", func() bool { return strings.Contains(p.stderr.String(), "onboarding folder watched") })

	utf16Text := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune("First Name\tLast Name\tEmail\tStart Date\r\nAna\tLima\tana@example.com\t2026/12/01\r\n")) {
		utf16Text = binary.LittleEndian.AppendUint16(utf16Text, u)
	}
	xlsx := []byte("PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00[Content_Types].xml")
	uk := []byte("First Name,Last Name,Email,Start Date\r\nAna,Lima,ana@example.com,25/12/2026\r\nBo,Ek,bo@example.com,24/12/2026\r\n")
	for name, data := range map[string][]byte{"~$cohort-march.xlsx": xlsx, "cohort-march.xlsx": xlsx, "cohort-unicode.txt": utf16Text, "cohort-uk.csv": uk} {
		if err := os.WriteFile(filepath.Join(in, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reports := map[string]string{
		"cohort-march.xlsx.result.csv":  "the file is a spreadsheet workbook (.xlsx or .ods), not CSV: save it as CSV UTF-8",
		"cohort-unicode.txt.result.csv": `the file is UTF-16 text (Excel's ""Unicode Text""), not UTF-8: save it as CSV UTF-8`,
		"cohort-uk.result.csv":          "ana@example.com,rejected,",
	}
	p.waitFor(t, "both files in failed/ with their reports", func() bool {
		for report := range reports {
			if _, err := os.Stat(filepath.Join(in, "failed", report)); err != nil {
				return false
			}
		}
		return true
	})
	for report, says := range reports {
		data, err := os.ReadFile(filepath.Join(in, "failed", report))
		if err != nil || !strings.Contains(string(data), says) {
			t.Errorf("%s does not say %q (%v):\n%s", report, says, err, data)
		}
	}
	for _, name := range []string{"cohort-march.xlsx", "cohort-unicode.txt"} {
		if _, err := os.Stat(filepath.Join(in, "failed", name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(in, "~$cohort-march.xlsx")); err != nil {
		t.Errorf("Excel's owner file was taken: %v", err)
	}
	p.waitFor(t, "the failed run counted", func() bool {
		n, _ := seriesValue(t, p.scrape(t), "hrsync_job_runs_total", "task=onboarding", "outcome=failed")
		return n >= 1
	})
	metrics := p.scrape(t)
	if n, _ := seriesValue(t, metrics, "hrsync_onboarding_files_total", "outcome=unreadable"); n != 2 {
		t.Errorf("hrsync_onboarding_files_total{outcome=\"unreadable\"} = %v, want 2", n)
	}
	// docs/onboarding.md shows these lines of /metrics.
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "onboarding.md"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(metrics) {
		if strings.HasPrefix(line, `hrsync_onboarding_files_total{account="default",outcome="rejected"}`) ||
			strings.HasPrefix(line, `hrsync_onboarding_files_total{account="default",outcome="unreadable"}`) ||
			strings.HasPrefix(line, `hrsync_onboarding_rows_total{account="default",outcome="rejected"}`) {
			if !strings.Contains(string(docs), line) {
				t.Errorf("docs/onboarding.md does not show %q", line)
			}
		}
	}
	logs := p.stderr.String()
	for _, name := range []string{"cohort-march.xlsx", "cohort-unicode.txt"} {
		found := false
		for line := range strings.Lines(logs) {
			found = found || strings.Contains(line, "level=WARN") && strings.Contains(line, "file="+name) && strings.Contains(line, "outcome=unreadable")
		}
		if !found {
			t.Errorf("no WARN line names %s:\n%s", name, logs)
		}
	}
	if strings.Contains(logs, "ana@example.com") {
		t.Errorf("an email reached the log:\n%s", logs)
	}
	p.stopWithin30s(t)
}
