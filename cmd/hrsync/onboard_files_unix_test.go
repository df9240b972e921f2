//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// TestOnboardKeepsFilesPrivateAndBounded: hrsync onboard under umask 022 makes the drop
// folder's processed/ and failed/ 0700 and what it moves and writes there 0600; a file over
// onboarding.max_file_bytes goes to failed/ with a report naming the setting; a file named to
// it whose last row has no line ending has that row rejected at once; a processed/ that is a
// symbolic link stops the pass with one line before anything is sent.
func TestOnboardKeepsFilesPrivateAndBounded(t *testing.T) {
	sinktest.WithUmask(t, 0o022)
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_ONBOARDING_DIR=" + in,
		"HRSYNC_ONBOARDING_SETTLE_SECONDS=0", "HRSYNC_ONBOARDING_MAX_FILE_BYTES=1024"}
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	header := "First name,Last name,Join date,Email\n"
	files := map[string]string{
		"cohort.csv": header + "Ann,Lee,2026-12-01,ann@example.com\n",
		"big.csv":    header + strings.Repeat("Bo,Ek,2026-12-01,bo@example.com\n", 40),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(in, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cut := filepath.Join(dir, "cut.csv")
	if err := os.WriteFile(cut, []byte(header+"Cy,Ode,2026-12-02,cy@example.com\nTrunc,Two,2026-12-02,trunc2@example.co"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"onboard", cut}, env, &out, io.Discard); err != nil {
		t.Fatalf("onboard %s: %v (%s)", cut, err, out.String())
	}
	if !strings.Contains(out.String(), "cut.csv: 1 created, 0 already done, 0 skipped, 1 rejected, 0 unresolved") {
		t.Errorf("said %q", out.String())
	}
	report, err := os.ReadFile(cut + ".result.csv")
	if err != nil || !strings.Contains(string(report), "3,trunc2@example.co,rejected,,the file ends inside this row (no line ending)") {
		t.Errorf("report %s %v", report, err)
	}

	out.Reset()
	err = run(context.Background(), []string{"onboard"}, env, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 files not finished") {
		t.Errorf("err = %v (%s)", err, out.String())
	}
	report, err = os.ReadFile(filepath.Join(in, "failed", "big.result.csv"))
	if err != nil || !strings.Contains(string(report), "the file is 1.3 KiB (1317 bytes), over the limit of 1 KiB (1024 bytes) (onboarding.max_file_bytes, HRSYNC_ONBOARDING_MAX_FILE_BYTES)") {
		t.Errorf("report %s %v", report, err)
	}
	for path, want := range map[string]os.FileMode{
		"processed": 0o700, "failed": 0o700,
		"processed/cohort.csv": 0o600, "processed/cohort.result.csv": 0o600, "failed/big.csv": 0o600, "failed/big.result.csv": 0o600,
	} {
		fi, err := os.Lstat(filepath.Join(in, path))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %#o", path, fi.Mode(), err, want)
		}
	}
	if fi, err := os.Stat(cut + ".result.csv"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the named file's report: %v %v", fi.Mode(), err)
	}
	if per := up.Count("/v1/employees", 201); per != 2 {
		t.Errorf("%d created, want 2", per)
	}

	// processed/ replaced by a link: the next file stays, nothing is sent.
	if err := os.Rename(filepath.Join(in, "processed"), filepath.Join(dir, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(in, "processed")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "next.csv"), []byte(header+"Di,Ode,2026-12-03,di@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"onboard"}, env, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "processed is a symbolic link; hrsync does not follow links") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v", err)
	}
	if _, serr := os.Stat(filepath.Join(in, "next.csv")); serr != nil || up.Count("/v1/employees", 201) != 2 {
		t.Errorf("next.csv: %v; %d created", serr, up.Count("/v1/employees", 201))
	}
}

// TestOnboardingMaxFileBytesIsChecked: onboarding.max_file_bytes below 1 is refused.
func TestOnboardingMaxFileBytesIsChecked(t *testing.T) {
	t.Parallel()
	_, err := config.Load("", []string{"HRSYNC_ONBOARDING_MAX_FILE_BYTES=0"})
	if err == nil || !strings.Contains(err.Error(), "onboarding.max_file_bytes must be at least 1") {
		t.Errorf("err = %v", err)
	}
	cfg, err := config.Load("", []string{"HRSYNC_ONBOARDING_MAX_FILE_BYTES=2048"})
	if err != nil || cfg.Accounts[0].Onboarding.MaxFileBytes != 2048 {
		t.Errorf("%v %v", cfg.Accounts, err)
	}
}
