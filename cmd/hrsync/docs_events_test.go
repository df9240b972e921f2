package main

import (
	"strings"
	"testing"
)

// TestEventsDocSnippets holds docs/events.md's verification snippets to the code: the Go one is
// the body of sync/events' Example_receiver, which compiles against the reference library; the
// Python one is verify() of sync/events/webhook/testdata/verify.py, which the webhook tests run
// against hrsync's signatures.
func TestEventsDocSnippets(t *testing.T) {
	t.Parallel()
	page := readRepoFile(t, "docs/events.md")
	block := func(lang string) string {
		t.Helper()
		_, rest, ok := strings.Cut(page, "```"+lang+"\n")
		if !ok {
			t.Fatalf("docs/events.md has no %s block", lang)
		}
		b, _, _ := strings.Cut(rest, "```")
		return b
	}
	example := readRepoFile(t, "sync/events/example_verify_test.go")
	_, body, _ := strings.Cut(example, "func Example_receiver() {\n")
	body, _, _ = strings.Cut(body, "\n}\n")
	var lines []string
	for line := range strings.Lines(body + "\n") {
		lines = append(lines, strings.TrimPrefix(line, "\t"))
	}
	if got, want := block("go"), strings.Join(lines, ""); got != want {
		t.Errorf("docs/events.md's Go snippet is not Example_receiver's body:\n%s\nwant:\n%s", got, want)
	}
	if py := block("python"); !strings.Contains(readRepoFile(t, "sync/events/webhook/testdata/verify.py"), strings.TrimSpace(py)) {
		t.Errorf("docs/events.md's Python snippet is not verify.py's verify():\n%s", py)
	}
}
