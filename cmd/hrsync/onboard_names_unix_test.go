//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// controls are the control characters of s but the line ends between its lines.
func controls(s string) []rune {
	var out []rune
	for _, r := range strings.TrimSuffix(s, "\n") {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r < 0xa0) {
			out = append(out, r)
		}
	}
	return out
}

// TestOnboardPrintsFileNamesSafely is issue 41's item 6e: a file of the drop folder named with a
// terminal's escape sequences (one setting the window's title, one clearing the screen) and a
// line break followed by what looks like another file's summary is printed by hrsync onboard
// as its cells are: every control character a '?', on the file's own line; so is its report's
// path, the logs, and an error naming such a file as main prints it.
func TestOnboardPrintsFileNamesSafely(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_ONBOARDING_DIR=" + in,
		"HRSYNC_ONBOARDING_SETTLE_SECONDS=0"}
	if err := os.MkdirAll(in, 0o700); err != nil {
		t.Fatal(err)
	}
	const forged = "payroll.csv: 40 created, 0 already done, 0 skipped, 0 rejected, 0 unresolved"
	name := "cohort\x1b]0;pwned\x07\x1b[2J\n" + forged + ".csv"
	if err := os.WriteFile(filepath.Join(in, name), []byte("First name,Last name,Join date,Email\nAnn,Lee,2026-12-01,ann@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, logs bytes.Buffer
	if err := run(context.Background(), []string{"onboard"}, env, &out, &logs); err != nil {
		t.Fatalf("onboard: %v (%s)", err, out.String())
	}
	safe := "cohort?]0;pwned??[2J?" + forged + ".csv"
	if want := safe + ": 1 created, 0 already done, 0 skipped, 0 rejected, 0 unresolved\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("printed\n%q\nwant it to start with\n%q", out.String(), want)
	}
	if !strings.Contains(out.String(), "  report: "+filepath.Join(in, "processed", strings.TrimSuffix(safe, ".csv")+".result.csv")+"\n") {
		t.Errorf("the report's path is not printed safely:\n%q", out.String())
	}
	for what, s := range map[string]string{"output": out.String(), "logs": logs.String()} {
		if c := controls(s); len(c) > 0 {
			t.Errorf("the %s hold control characters %q:\n%q", what, c, s)
		}
		for line := range strings.Lines(s) {
			if strings.HasPrefix(line, forged) {
				t.Errorf("the %s hold a forged line: %q", what, line)
			}
		}
	}

	// An error naming such a file, as main prints it.
	out.Reset()
	err := run(context.Background(), []string{"onboard", "--dry-run", filepath.Join(dir, "gone\x1b[2J\n"+forged+".csv")}, env, &out, &logs)
	if err == nil {
		t.Fatal("onboard of a file that is not there: no error")
	}
	line := "hrsync: " + config.OneLine(err.Error()) // what main prints
	if c := controls(line); len(c) > 0 || !strings.Contains(line, "gone?[2J") {
		t.Errorf("the error %q holds control characters %q", line, c)
	}
}
