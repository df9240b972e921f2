package account

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/internal/slowness"
)

// TestEmptyFolderOpensNoWarehouse: a worker's polls of an empty drop folder (every 30 s by
// default, for every account of the worker) open no warehouse: no session, no schema check, no
// lock. They count as ok runs, so hrsync_job_last_success_timestamp_seconds{task="onboarding"}
// still says the folder is watched. A file dropped in opens the warehouse for the pass that
// takes it; once it is in failed/ for its content (a workbook: nothing to retry), the polls are
// idle again. Before, every poll opened the account's warehouse and took its lock.
func TestEmptyFolderOpensNoWarehouse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	drop := filepath.Join(dir, "drop")
	if err := os.Mkdir(drop, 0o700); err != nil {
		t.Fatal(err)
	}
	c := startCountingWorker(t, fmt.Sprintf(`warehouse: {url: %q}
source: {url: "http://127.0.0.1:1", api_key: k}
onboarding: {dir: %q}
`, filepath.Join(dir, "hrsync.db"), drop), func(a *config.Account) { a.PollInterval, a.Settle = 20*time.Millisecond, 0 }, WorkerOptions{})
	opens := &c.opens
	okRuns := func() float64 { return c.okRuns(t, "onboarding") }
	waitFor := func(what string, done func() bool) {
		t.Helper()
		slowness.Wait{For: 30 * time.Second, Every: 10 * time.Millisecond}.Until(t, what, done)
	}

	waitFor("five ok polls of the empty folder", func() bool { return okRuns() >= 5 })
	if n := opens.Load(); n != 0 {
		t.Errorf("polls of an empty folder opened the warehouse %d times, want none", n)
	}
	// What a person's tools leave there while they work is not work either.
	for _, name := range []string{".~lock.cohort.csv#", "~$cohort.xlsx", "cohort.csv.part"} {
		if err := os.WriteFile(filepath.Join(drop, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	seen := okRuns()
	waitFor("more ok polls", func() bool { return okRuns() >= seen+3 })
	if n := opens.Load(); n != 0 {
		t.Errorf("polls of a folder holding only files hrsync leaves alone opened the warehouse %d times, want none", n)
	}

	// A workbook: taken (the warehouse opened), put in failed/ for its content, not retried.
	if err := os.WriteFile(filepath.Join(drop, "cohort.xlsx"), []byte("PK\x03\x04 a workbook"), 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(drop, "failed", "cohort.xlsx.result.csv")
	waitFor("report of the workbook in failed/", func() bool { _, err := os.Stat(report); return err == nil })
	// Its pass has ended once the runner counts it (failed: a file failed).
	waitFor("the workbook's pass to end", func() bool { return c.closed() && opens.Load() > 0 })
	taken := opens.Load()
	seen = okRuns()
	waitFor("ok polls after the workbook", func() bool { return okRuns() >= seen+5 })
	if n := opens.Load(); n != taken {
		t.Errorf("polls after the workbook went to failed/ opened the warehouse %d more times, want none", n-taken)
	}
}
