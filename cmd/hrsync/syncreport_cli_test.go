package main

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// fakeTerminal is a terminal for the tests: a buffer that says it is one (see
// syncreport.IsTerminal).
type fakeTerminal struct{ bytes.Buffer }

func (*fakeTerminal) IsTerminal() bool { return true }

// TestSyncSaysWhatItWillDoAndDid is `hrsync sync` on a terminal, then piped. On the terminal
// (stdout and stderr one fake terminal) a first sync into a new warehouse opens with its plan,
// sized by each collection's first page (departments not offered; working patterns one page;
// employees three), redraws one progress line, writes the source's one failure (a warning)
// above it and no info line, each collection's summary (the seeded pattern counted neither
// deleted nor walked twice), and the totals. Piped, the second sync writes the summaries and
// the totals on stdout, the logs as configured on stderr, and no control character.
func TestSyncSaysWhatItWillDoAndDid(t *testing.T) {
	t.Parallel()
	var once sync.Once
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(250, 4),
		Fault: func(_ int, r *http.Request) fakeupstream.Fault {
			fault := fakeupstream.Fault{}
			switch {
			case r.URL.Path == "/v1/departments":
				fault.Status = http.StatusNotFound
			case r.URL.Path == "/v1/employees" && r.URL.Query().Get("page") == "2":
				once.Do(func() { fault.Status = http.StatusServiceUnavailable })
			}
			return fault
		}})
	defer up.Close()
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=6000",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(t.TempDir(), "w.db")), "HRSYNC_SYNC_RESOURCES=departments,working_patterns,employees"}
	ctx := context.Background()

	var term fakeTerminal
	if err := run(ctx, []string{"sync"}, env, &term, &term); err != nil {
		t.Fatalf("sync: %v\n%s", err, term.String())
	}
	shown := term.String()
	const clear = "\r\033[K"
	for _, want := range []string{
		"plan: 3 collections, 4 pages, 3 requests, ~30ms at 6000 requests a minute (sized by each collection's first page; 3 requests made to size them)\n" +
			"  pages: departments (not offered), working_patterns 1, employees 3\n",
		"departments: unavailable — skipped: ",
		clear + "2/3 working_patterns: page 1/1 · 1/4 pages in all",
		clear + "working_patterns: ok — 5 records: 5 new, 0 changed, 0 unchanged, 0 deleted; 1 pages, 1 requests, 0 retries, 0 rate-limited, 1 walks",
		clear + "3/3 employees: page 1/3 · 2/4 pages in all",
		"level=WARN msg=\"source request failed; retrying\"",
		clear + "3/3 employees: page 3/3 · 4/4 pages in all · ~0s left",
		clear + "employees: ok — 250 records: 250 new, 0 changed, 0 unchanged, 0 deleted; 3 pages, 5 requests, 1 retries",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal does not show %q:\n%q", want, shown)
		}
	}
	// The warning is written above the progress line, which is drawn again under it. Which
	// page the line shows then depends on the walk: page 3's answer may come before page 2's
	// retried one.
	if !regexp.MustCompile(`page [12]/3 · [^\r]*` + regexp.QuoteMeta(clear) + `time=\S+ level=WARN [^\n]*\n` +
		regexp.QuoteMeta(clear) + `3/3 employees: page [12]/3 `).MatchString(shown) {
		t.Errorf("the warning is not above the progress line:\n%q", shown)
	}
	if strings.Contains(shown, "level=INFO") {
		t.Errorf("info lines on the terminal:\n%q", shown)
	}
	totals := regexp.MustCompile(`\ntotal: 3 collections in [0-9.hms]+, 4 pages, 7 requests; 255 records: 255 new, 0 changed, 0 unchanged, 0 deleted; 1 unavailable\n$`)
	if !totals.MatchString(shown) {
		t.Errorf("no closing line of totals:\n%q", shown)
	}

	// Piped: as the worker logs, plus the summaries and the totals.
	var out, logs bytes.Buffer
	if err := run(ctx, []string{"sync"}, env, &out, &logs); err != nil {
		t.Fatalf("sync: %v\n%s", err, logs.String())
	}
	if s := out.String() + logs.String(); strings.ContainsAny(s, "\r\033") {
		t.Errorf("control characters piped:\n%q", s)
	}
	if strings.Contains(out.String(), "plan:") || !strings.Contains(logs.String(), `level=INFO msg="sync finished" resource=employees`) {
		t.Errorf("piped: a plan, or no info log\nstdout %s\nstderr %s", out.String(), logs.String())
	}
	for _, want := range []string{"working_patterns: ok — 5 records: 0 new, 0 changed, 5 unchanged, 0 deleted",
		"employees: ok — 250 records: 0 new, 0 changed, 250 unchanged, 0 deleted; 3 pages, 3 requests",
		"total: 3 collections in "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
}

// TestSyncWithARefusedKeyPlansNothing: a key the source refuses while the plan is sized stops
// the run at once; the terminal shows no plan of unknown collections ("~0 pages … 13 unknown
// until walked") above the error, only what failed and why.
func TestSyncWithARefusedKeyPlansNothing(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(20, 4)})
	defer up.Close()
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=not-the-key-the-source-knows", "HRSYNC_SOURCE_RATE_LIMIT=6000",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(t.TempDir(), "w.db")), "HRSYNC_SYNC_RESOURCES=departments,working_patterns,employees"}
	var term fakeTerminal
	err := run(context.Background(), []string{"sync"}, env, &term, &term)
	if err == nil || !strings.Contains(err.Error(), "refused the API key") {
		t.Fatalf("sync with a refused key: err = %v, want the key refused\n%s", err, term.String())
	}
	shown := term.String()
	if strings.Contains(shown, "plan:") || strings.Contains(shown, "unknown until walked") {
		t.Errorf("a plan is shown for a run the source refused:\n%q", shown)
	}
	if !strings.Contains(shown, "total: ") {
		t.Errorf("no closing line of totals:\n%q", shown)
	}
}
