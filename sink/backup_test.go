package sink_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// checkPrivate fails the test unless path is a file readable and writable by its owner alone.
func checkPrivate(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %#o, want 0600", filepath.Base(path), fi.Mode().Perm())
	}
}

// checkErased: nothing of P is left in the warehouse (every column of every table; on SQLite
// the files' bytes too), the erasure is listed, and a sync of a source still holding P writes
// nothing and keeps them erased.
func checkErased(t *testing.T, s *sink.Store, reason string) {
	t.Helper()
	if found := markersIn(t, s, erasedMarkers); len(found) > 0 {
		t.Errorf("P is back: found %q", found)
	}
	if s.Dialect() == schema.SQLite {
		if found := markersInFiles(t, s, erasedMarkers); len(found) > 0 {
			t.Errorf("the database's files hold %q", found)
		}
	}
	list, err := s.Erasures(context.Background())
	if err != nil || len(list) != 1 || list[0].Subject() != "employee 42" || list[0].Reason != reason || list[0].LiftedAt != "" {
		t.Fatalf("erasures = %+v, %v", list, err)
	}
	if id, err := s.ErasedEmail(context.Background(), "ZQ-mail@marker.example"); err != nil || id != list[0].ID {
		t.Errorf("P's email is held back by erasure %d (%v), want %d", id, err, list[0].ID)
	}
	nextMillisecond()
	for c, r := range syncErased(t, s, 1) {
		if r.Inserted+r.Updated != 0 {
			t.Errorf("a sync after the re-applied erasure wrote %s: %+v", c, r)
		}
	}
	if found := markersIn(t, s, erasedMarkers); len(found) > 0 {
		t.Errorf("after a sync, found %q", found)
	}
	checkFactsOfP(t, s)
}

// checkFactsOfP: P's facts of employment stay.
func checkFactsOfP(t *testing.T, s *sink.Store) {
	t.Helper()
	for q, want := range map[string]string{
		`SELECT job_title FROM employees WHERE id = 42`:              "Chef",
		`SELECT CAST(deducted AS text) FROM sicknesses WHERE id = 5`: "5.0",
		`SELECT first_name FROM employees WHERE id = 43`:             "Quinella",
	} {
		if got := sinktest.QueryString(t, s, q); got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}
}

// TestReapplyJournal: a warehouse that holds P as it was before their erasure (a backup
// restored: on Postgres by pg_restore) is brought up to date from the erasure journal the
// erasing warehouse wrote: P is erased everywhere, the erasure is listed as it was, and syncs
// keep them erased; a lift is re-applied the same way. The journal is private and holds
// nothing of P in clear.
func TestReapplyJournal(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			journal := filepath.Join(t.TempDir(), "erasures.jsonl")
			opts := sink.Options{ErasureJournal: journal, Now: func() time.Time { return fixedNow }}
			live, restored := sinktest.Store(t, backend, opts), sinktest.Store(t, backend, opts)
			for _, s := range []*sink.Store{live, restored} {
				syncErased(t, s, 0)
				nextMillisecond()
				syncErased(t, s, 1)
			}
			if _, err := live.EraseEmployee(ctx, 42, nil, "DSAR 2026-117"); err != nil {
				t.Fatal(err)
			}
			checkPrivate(t, journal)
			data, err := os.ReadFile(journal)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range append(erasedMarkers, "zq-mail", "Quendrith") {
				if strings.Contains(strings.ToLower(string(data)), strings.ToLower(m)) {
					t.Errorf("the journal holds %q in clear: %s", m, data)
				}
			}
			if !strings.Contains(string(data), `"fingerprints":["`) || strings.Count(string(data), "\n") != 1 {
				t.Errorf("journal = %s, want one erasure with its fingerprints", data)
			}

			if len(markersIn(t, restored, erasedMarkers)) == 0 {
				t.Fatal("the restored warehouse holds nothing of P: the test cannot fail")
			}
			if n, l, err := restored.JournalBehind(ctx); err != nil || n != 1 || l != 0 {
				t.Fatalf("behind by %d erasures, %d lifts (%v), want 1, 0", n, l, err)
			}
			res, err := restored.ReapplyJournal(ctx)
			if err != nil || res.Erased != 1 || res.Lifted != 0 || res.Rows["employees_history"] == 0 || res.Rows["sicknesses"] != 1 {
				t.Fatalf("reapply = %+v, %v", res, err)
			}
			checkErased(t, restored, "DSAR 2026-117")
			if got := sinktest.QueryString(t, restored, `SELECT count(*) FROM erasure_log WHERE action = 'erase' AND reason = 're-applied from the erasure journal: DSAR 2026-117'`); got != "1" {
				t.Errorf("re-applied erasures logged: %s", got)
			}
			// Done once: a second re-apply, or a journal write from the restored warehouse, adds
			// nothing.
			if res, err := restored.ReapplyJournal(ctx); err != nil || res.Erased+res.Lifted != 0 {
				t.Errorf("second reapply = %+v, %v", res, err)
			}

			// A lift in the live warehouse is re-applied too.
			list, err := live.Erasures(ctx)
			if err != nil || len(list) != 1 {
				t.Fatalf("erasures = %+v, %v", list, err)
			}
			if _, err := live.LiftErasure(ctx, list[0].ID, "request withdrawn"); err != nil {
				t.Fatal(err)
			}
			if n, l, err := restored.JournalBehind(ctx); err != nil || n != 0 || l != 1 {
				t.Fatalf("behind by %d erasures, %d lifts (%v), want 0, 1", n, l, err)
			}
			if res, err := restored.ReapplyJournal(ctx); err != nil || res.Lifted != 1 || res.Erased != 0 {
				t.Fatalf("reapply the lift = %+v, %v", res, err)
			}
			if list, err := restored.Erasures(ctx); err != nil || len(list) != 1 || list[0].LiftReason != "request withdrawn" {
				t.Errorf("restored erasures = %+v, %v", list, err)
			}
			if id, err := restored.ErasedEmail(ctx, "zq-mail@marker.example"); err != nil || id != 0 {
				t.Errorf("after the lift, P's email is held back by %d (%v)", id, err)
			}
		})
	}
}

// TestJournalOfAccounts: accounts sharing one journal each read their own lines only: employee
// 42 of one account is not another's.
func TestJournalOfAccounts(t *testing.T) {
	ctx := context.Background()
	journal := filepath.Join(t.TempDir(), "erasures.jsonl")
	acme := sinktest.Store(t, "sqlite", sink.Options{Account: "acme", ErasureJournal: journal})
	globex := sinktest.Store(t, "sqlite", sink.Options{Account: "globex", ErasureJournal: journal})
	syncErased(t, globex, 1)
	if _, err := acme.EraseEmployee(ctx, 42, nil, "DSAR 1"); err != nil {
		t.Fatal(err)
	}
	if n, l, err := globex.JournalBehind(ctx); err != nil || n+l != 0 {
		t.Errorf("globex is behind acme's journal by %d, %d (%v)", n, l, err)
	}
}

// TestBackupRestoreSQLite: hrsync backup's copy is private, is not overwritten without force,
// and restoring it after an erasure brings nothing of the person back (the warehouse open by
// another process all along, as serve would hold it); a sync lock held refuses the restore.
func TestBackupRestoreSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	url := filepath.Join(dir, "hrsync.db")
	sinktest.SQLiteFile(t, url)
	opts := sink.Options{Now: func() time.Time { return fixedNow }}
	s, err := sink.Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	syncErased(t, s, 1)
	backup := filepath.Join(t.TempDir(), "before.db")
	if n, err := s.Backup(ctx, backup, false); err != nil || n == 0 {
		t.Fatalf("backup: %d bytes, %v", n, err)
	}
	checkPrivate(t, backup)
	if _, err := s.Backup(ctx, backup, false); !errors.Is(err, sink.ErrBackupExists) {
		t.Errorf("a second backup to the same file: %v, want ErrBackupExists", err)
	}
	if _, err := s.Backup(ctx, backup, true); err != nil {
		t.Errorf("backup --force: %v", err)
	}
	checkPrivate(t, backup)
	if _, err := s.EraseEmployee(ctx, 42, nil, "DSAR 2026-117"); err != nil {
		t.Fatal(err)
	}
	checkPrivate(t, url+".erasures.jsonl")

	// A sync, or an onboarding, holds its lock: refused, nothing changed.
	for _, lock := range []string{sink.SyncLock, "onboarding"} {
		_, release, ok, err := s.TryLock(ctx, lock)
		if err != nil || !ok {
			t.Fatalf("lock: %v %v", ok, err)
		}
		if _, err := sink.RestoreSQLite(ctx, url, backup, opts, "onboarding"); !errors.Is(err, sink.ErrRestoreBusy) || !strings.Contains(err.Error(), lock) {
			t.Errorf("restore under the %s lock: %v, want ErrRestoreBusy naming it", lock, err)
		}
		release()
	}
	if len(markersIn(t, s, erasedMarkers)) > 0 {
		t.Fatal("a refused restore restored")
	}

	res, err := sink.RestoreSQLite(ctx, url, backup, opts)
	if err != nil {
		t.Fatal(err)
	}
	if latest := schema.Latest(schema.SQLite); res.From != latest || res.To != latest || res.Reapply.Erased != 1 {
		t.Errorf("restore = %+v, want from and to %d, one erasure re-applied", res, latest)
	}
	checkPrivate(t, url)
	// s, open before, reads the restored warehouse.
	checkErased(t, s, "DSAR 2026-117")
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		for _, e := range ents {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("the restore left %s", e.Name())
			}
		}
	}
}

// TestBackupDuringSync: backups taken while syncs write are each whole and consistent: the
// copy passes integrity_check, has this build's schema version, and holds every employee.
func TestBackupDuringSync(t *testing.T) {
	ctx := context.Background()
	s := sinktest.Store(t, "sqlite", sink.Options{})
	syncErased(t, s, 0)
	dir := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var copies []string
	var backupErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			out := filepath.Join(dir, "copy-"+string(rune('a'+i%26))+".db")
			if _, err := s.Backup(ctx, out, true); err != nil {
				backupErr = err
				return
			}
			if i < 26 {
				copies = append(copies, out)
			}
		}
	}()
	for i := range 8 {
		nextMillisecond()
		syncErased(t, s, i%2)
	}
	close(stop)
	wg.Wait()
	if backupErr != nil {
		t.Fatal(backupErr)
	}
	if len(copies) == 0 {
		t.Fatal("no backup was taken while the syncs ran")
	}
	t.Logf("%d backups during 8 syncs", len(copies))
	for _, c := range copies {
		checkPrivate(t, c)
		db, err := sql.Open("sqlite", "file:"+c+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var ok string
		var version, people int
		err = db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok)
		if err == nil {
			err = db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version)
		}
		if err == nil {
			err = db.QueryRowContext(ctx, `SELECT count(*) FROM employees`).Scan(&people)
		}
		db.Close()
		if err != nil || ok != "ok" || version != schema.Latest(schema.SQLite) || people != 3 {
			t.Errorf("%s: integrity %q, version %d, %d employees (%v)", filepath.Base(c), ok, version, people, err)
		}
	}
}

// TestJournalCatchesUp: an erasure whose journal write fails holds, and says so
// (ErrNotJournaled); the next write appends it. A line a crash cut short is read as none, and the
// next write starts on a line of its own.
func TestJournalCatchesUp(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "later")
	journal := filepath.Join(dir, "erasures.jsonl")
	s := sinktest.Store(t, "sqlite", sink.Options{ErasureJournal: journal})
	syncErased(t, s, 1)
	if _, err := s.EraseEmployee(ctx, 42, nil, "DSAR 1"); !errors.Is(err, sink.ErrNotJournaled) {
		t.Fatalf("erase with no folder for the journal: %v, want ErrNotJournaled", err)
	}
	if list, err := s.Erasures(ctx); err != nil || len(list) != 1 {
		t.Fatalf("the erasure does not hold: %+v, %v", list, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A crash cut a line short.
	if err := os.WriteFile(journal, []byte(`{"op":"erase","acc`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EraseEmployee(ctx, 43, []v1.Class{v1.Health}, "DSAR 2"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], `"subject_id":42`) || !strings.Contains(lines[2], `"subject_id":43`) {
		t.Errorf("journal = %s, want the torn line, then both erasures", data)
	}
	if n, l, err := s.JournalBehind(ctx); err != nil || n+l != 0 {
		t.Errorf("behind by %d, %d (%v)", n, l, err)
	}
}
