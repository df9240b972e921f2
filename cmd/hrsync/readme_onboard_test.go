package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/sync/onboard"
)

// readmeDemoOnboarding is docs/demo.md's step 4 of the demo: what onboarding the example file
// does; readmeShortOnboarding is the README's short account of it.
var readmeDemoOnboarding = regexp.MustCompile("(?s)4\\. onboards .*?upstream: (\\w+) hires created, (\\w+) skipped \\(already an employee\\), (\\w+) rejected \\(no last name; a\\s+date written month first, `([^`]+)`, which the day-first default refuses, naming the setting\\s+that reads it, `([^`]+)`\\)")
var readmeShortOnboarding = regexp.MustCompile("(?s)onboards \\[`deploy/examples/new-hires.csv`\\]\\([^)]*\\)\\s*\\((\\w+) hires\\s+created, (\\w+) skipped, (\\w+) rejected")

// TestReadmeDemoOnboardingStep holds docs/demo.md's step 4 to what the demo prints: the counts,
// the date rejected and the setting its reason names; and the README's counts too.
func TestReadmeDemoOnboardingStep(t *testing.T) {
	t.Parallel()
	demo, err := os.ReadFile(filepath.Join("..", "..", "docs", "demo.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := readmeDemoOnboarding.FindStringSubmatch(string(demo))
	if m == nil {
		t.Fatal("docs/demo.md has no step 4 of the form this test reads: update both")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	short := readmeShortOnboarding.FindStringSubmatch(string(readme))
	if short == nil {
		t.Fatal("the README's demo does not say what onboarding the example file does in the form this test reads: update both")
	}
	words := map[string]int{"no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
	var out bytes.Buffer
	args := []string{"demo", "--employees", "20", "--no-serve", "--warehouse", filepath.Join(t.TempDir(), "d.db")}
	if err := run(context.Background(), args, nil, &out, io.Discard); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		fmt.Sprintf("new-hires.csv: %d created, 0 already done, %d skipped, %d rejected, 0 unresolved", words[m[1]], words[m[2]], words[m[3]]),
		fmt.Sprintf("new-hires.csv: %d created, 0 already done, %d skipped, %d rejected, 0 unresolved", words[short[1]], words[short[2]], words[short[3]]),
		"last_name: missing",
		fmt.Sprintf("join_date: %q is not a date read day first", m[4]),
		m[5],
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the docs say the demo prints %q; it does not:\n%s", want, out.String())
		}
	}
}

// readmeOnboardOutput is docs/onboarding.md's example of what onboard prints.
var readmeOnboardOutput = regexp.MustCompile("(?s)`onboard` prints a line a file.*?\n```\n(.*?)```\n")

// TestReadmeOnboardOutput runs onboard as docs/onboarding.md's example shows, and compares what
// it prints with the page's text.
func TestReadmeOnboardOutput(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "onboarding.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := readmeOnboardOutput.FindStringSubmatch(string(readme))
	if m == nil {
		t.Fatal("docs/onboarding.md has no example of what onboard prints")
	}
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	dir := t.TempDir()
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db"))}
	writeFile(t, filepath.Join(dir, "cohort.csv"), "First name,Last name,Email,Department,Start date\n"+
		"Ann,Lee,ann@example.com,Sales,25/12/2026\nBo,Ek,bo@example.com,Sales,12/25/2026\n")
	t.Chdir(dir)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"onboard", "cohort.csv"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if out.String() != m[1] {
		t.Errorf("onboard printed\n%s\ndocs/onboarding.md says\n%s", out.String(), m[1])
	}
}

// readmeDateReasons are docs/onboarding.md's join date rejections: the cell (and the layout), the reason.
var readmeDateReasons = regexp.MustCompile("(?m)^  \\| `([^`]+)`(?: under `([^`]+)`)? \\| `([^`]+)` \\|$")

// TestReadmeJoinDateReasons holds docs/onboarding.md's table of join date rejections to what
// onboarding says of each cell.
func TestReadmeJoinDateReasons(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "onboarding.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := readmeDateReasons.FindAllStringSubmatch(string(readme), -1)
	if len(rows) < 5 {
		t.Fatalf("docs/onboarding.md's table of join date rejections has %d rows, want 5 or more", len(rows))
	}
	for _, r := range rows {
		_, err := onboard.ParseJoinDate(r[1], r[2])
		if err == nil || err.Error() != r[3] {
			t.Errorf("%q under %q: onboarding says %v; docs/onboarding.md says %q", r[1], r[2], err, r[3])
		}
	}
}
