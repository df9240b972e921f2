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
)

// readmeDemoOnboarding is the README's step 4 of the demo: what onboarding the example file
// does.
var readmeDemoOnboarding = regexp.MustCompile("(?s)4\\. onboards .*?upstream: (\\w+) hires created, (\\w+) skipped \\(already an employee\\), (\\w+) rejected \\(no last name; a\\s+date written month first, `([^`]+)`, which the day-first default refuses, naming the setting\\s+that reads it, `([^`]+)`\\)")

// TestReadmeDemoOnboardingStep holds the README's step 4 to what the demo prints: the counts,
// the date rejected and the setting its reason names.
func TestReadmeDemoOnboardingStep(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := readmeDemoOnboarding.FindStringSubmatch(string(readme))
	if m == nil {
		t.Fatal("the README's demo has no step 4 of the form this test reads: update both")
	}
	words := map[string]int{"no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
	var out bytes.Buffer
	args := []string{"demo", "--employees", "20", "--no-serve", "--warehouse", filepath.Join(t.TempDir(), "d.db")}
	if err := run(context.Background(), args, nil, &out, io.Discard); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		fmt.Sprintf("new-hires.csv: %d created, 0 already done, %d skipped, %d rejected, 0 unresolved", words[m[1]], words[m[2]], words[m[3]]),
		"last_name: missing",
		fmt.Sprintf("join_date: %q is not a date read day first", m[4]),
		m[5],
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the README says the demo prints %q; it does not:\n%s", want, out.String())
		}
	}
}
