package main

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/httpserve"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// demoAccounts are the accounts of `hrsync demo` its figures are held to: README's short one, from
// "`hrsync demo` needs" to the link to the full one, and docs/demo.md's, from "`hrsync demo`
// needs" to its flags.
var demoAccounts = []struct{ file, end string }{
	{"README.md", "[docs/demo.md](docs/demo.md)"},
	{"docs/demo.md", "| flag | default |"},
}

// readmeDemo is file's account of `hrsync demo`, from "`hrsync demo` needs" to end, on one line
// (its words as they are, whatever the line breaks).
func readmeDemo(t *testing.T, file, end string) string {
	t.Helper()
	text := readRepoFile(t, file)
	start := strings.Index(text, "`hrsync demo` needs")
	stop := strings.Index(text, end)
	if start < 0 || stop < start {
		t.Fatalf("%s: no account of the demo between \"`hrsync demo` needs\" and %q", file, end)
	}
	return strings.Join(strings.Fields(text[start:stop]), " ")
}

// number reads the first submatch of re in s as a number (with thousands separators); when s
// has none, the test fails naming what, and goes on with -1.
func number(t *testing.T, re, s, what string) int64 {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Errorf("%s: no match of %s", what, re)
		return -1
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil {
		t.Fatalf("%s: %q: %v", what, m[1], err)
	}
	return n
}

// about says whether a figure README rounds ("about 790") stands for n: within 2%.
func about(readme, n int64) bool {
	return math.Abs(float64(readme-n)) <= 0.02*float64(n)
}

// TestREADMEDemoFigures runs the demo as README and docs/demo.md describe it (the default 2,500
// employees; not serving) and holds both accounts' figures to its report: the employees
// generated and after the onboarding, the collections synced (the financial module among them,
// by name), the pages of the first sync, the requests of the run and the minutes they would
// take at the real rate.
// The demo runs as the built binary: under the race detector, in process, it takes minutes.
func TestREADMEDemoFigures(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds hrsync and runs the demo at its full size")
	}
	var out, logs bytes.Buffer
	cmd := exec.Command(buildBinary(t), "demo", "--no-serve", "--warehouse", filepath.Join(t.TempDir(), "demo.db"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.Stdout, cmd.Stderr = &out, &logs
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v\n%s", err, logs.String())
	}
	report := out.String()

	// The first sync: its summary lines, between "3. Sync" and "4. Onboarding".
	first := report[strings.Index(report, "3. Sync"):strings.Index(report, "4. Onboarding")]
	line := regexp.MustCompile(`(?m)^\s+([a-z_]+): [a-z]+ — .*; (\d+) pages,`)
	var collections []string
	pages := int64(0)
	for _, m := range line.FindAllStringSubmatch(first, -1) {
		collections = append(collections, m[1])
		n, _ := strconv.ParseInt(m[2], 10, 64)
		pages += n
	}
	requests := number(t, `: (\d+) requests to the upstream`, report, "the report")

	for _, doc := range demoAccounts {
		readme := readmeDemo(t, doc.file, doc.end)
		if r, p := number(t, `over ([\d,]+) generated employees`, readme, doc.file), number(t, `serves ([\d,]+) generated employees`, report, "the report"); r != p {
			t.Errorf("%s says the upstream serves %d employees; the demo printed %d", doc.file, r, p)
		}
		if r, p := number(t, `now lists ([\d,]+) employees`, readme, doc.file), number(t, `now lists ([\d,]+) employees`, report, "the report"); r != p {
			t.Errorf("%s says the upstream lists %d employees after the onboarding; the demo printed %d", doc.file, r, p)
		}
		if r := number(t, `all (\d+) collections`, readme, doc.file); r != int64(len(collections)) {
			t.Errorf("%s says the demo syncs %d collections; it synced %d: %v", doc.file, r, len(collections), collections)
		}
		for _, name := range collections {
			if c := v1.CollectionNamed(name); c != nil && c.Sensitive && !strings.Contains(readme, "`"+name+"`") {
				t.Errorf("%s does not say the demo syncs %s (the financial module), which it does", doc.file, name)
			}
		}
		if r := number(t, `about ([\d,]+) pages`, readme, doc.file); !about(r, pages) {
			t.Errorf("%s says the first sync walks about %d pages; the demo printed %d", doc.file, r, pages)
		}
		if r := number(t, `about ([\d,]+) requests`, readme, doc.file); !about(r, requests) {
			t.Errorf("%s says about %d requests; the demo printed %d", doc.file, r, requests)
		}
		if r, p := number(t, `\(about (\d+) minutes\)`, readme, doc.file), number(t, `would take about (\d+) minutes`, report, "the report"); r != p {
			t.Errorf("%s says the run would take about %d minutes at 60 requests a minute; the demo printed %d", doc.file, r, p)
		}
	}
	if t.Failed() {
		t.Logf("the demo's report:\n%s", report)
	}
}

// TestDemoCtrlCExitsZero is docs/demo.md's "Ctrl-C stops it: the replica shuts down and hrsync exits
// 0", with the built binary and a real SIGINT (what a terminal's Ctrl-C sends): the process's
// own signal handling, not a test's canceled context. (`go run` is not tested: the go command
// exits 1 whenever it is interrupted, whatever hrsync returned.)
func TestDemoCtrlCExitsZero(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds hrsync")
	}
	bin := buildBinary(t)
	var out, errs syncBuffer
	cmd := exec.Command(bin, "demo", "--employees", "20", "--addr", freeAddr(t), "--warehouse", filepath.Join(t.TempDir(), "d.db"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitServing(t, &out, &errs, done, 3*time.Minute) // a bound on a hang, as in TestDemoServesUntilCanceled
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after Ctrl-C: %v (want exit status 0)\n%s", err, errs.String())
		}
	case <-time.After(httpserve.ShutdownTimeout + 30*time.Second):
		t.Fatalf("the demo did not stop after Ctrl-C\n%s", errs.String())
	}
	if !strings.Contains(errs.String(), "replica shutting down") {
		t.Errorf("the log does not say the replica shut down:\n%s", errs.String())
	}
}
