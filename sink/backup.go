package sink

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"modernc.org/sqlite"

	"github.com/hrsync/hrsync/schema"
)

// Backup and restore (docs/operations.md, "Backup and restore"). A SQLite warehouse is backed
// up online: VACUUM INTO writes a copy of one read snapshot of it (WAL: a sync writing
// meanwhile neither waits nor shows half-written in the copy), compacted, so no free page of
// the copy holds a value erased before it was taken. A Postgres warehouse is backed up with
// pg_dump, the server's own tool (its version must match the server's, and operators have their
// own schedules and stores for it): hrsync does not run it.

// ErrPostgresBackup is Backup's and RestoreSQLite's error for a Postgres warehouse.
var ErrPostgresBackup = errors.New("a Postgres warehouse is backed up with pg_dump and restored with pg_restore, then hrsync erase --reapply (docs/operations.md#backup-and-restore)")

// ErrBackupExists is Backup's error for a file already at the backup's path (without force).
var ErrBackupExists = errors.New("already exists (pass --force to replace it)")

// ErrRestoreBusy is RestoreSQLite's error when another process holds one of the warehouse's
// locks it takes.
var ErrRestoreBusy = errors.New("another process holds the warehouse's lock: stop hrsync run (and any sync or onboard) first, then restore")

// Backup writes a consistent copy of the SQLite warehouse to out, private (0600): under a
// temporary name beside it, made durable, then renamed into place, so that out is never a
// partial copy. A file at out is refused (ErrBackupExists) unless force. The erasure journal
// is brought up to date first, so that the journal kept beside the backup holds every erasure
// the backup does. It returns the size of the copy in bytes.
func (s *Store) Backup(ctx context.Context, out string, force bool) (int64, error) {
	if s.pg != nil {
		return 0, fmt.Errorf("backup: %w", ErrPostgresBackup)
	}
	if err := s.journalErasures(ctx); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	if !force {
		if _, err := os.Lstat(out); err == nil {
			return 0, fmt.Errorf("backup: %s %w", out, ErrBackupExists)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("backup: %w", err)
		}
	}
	tmp, err := privateTemp(out)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	defer func() { _ = os.Remove(tmp) }() // gone once renamed; a failed copy's is removed
	// VACUUM INTO writes into an empty file: the one made private above.
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return 0, fmt.Errorf("backup: copy the warehouse: %w", busyErr(err))
	}
	size, err := syncFile(tmp)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	if err := syncDir(filepath.Dir(out)); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	return size, nil
}

// privateTemp creates an empty file, 0600, beside path under a name of its own, and returns it.
func privateTemp(path string) (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+hex.EncodeToString(b))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privateMode)
	if err != nil {
		return "", err
	}
	err = f.Chmod(privateMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// syncFile makes path's content durable and returns its size.
func syncFile(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// RestoreResult is what RestoreSQLite did: the backup's schema version, the version it was
// brought to, and what re-applying the erasure journal did.
type RestoreResult struct {
	From, To int
	Reapply  ReapplyResult
}

// RestoreSQLite replaces the content of the SQLite warehouse at rawURL with the backup from,
// erasures kept: it takes the warehouse's locks (SyncLock, and those of locks: the onboarding's;
// ErrRestoreBusy if another process holds one), so that no sync, retention run or onboarding
// writes into the warehouse meanwhile, only to be lost with what the backup lacks; it copies
// the backup to a private file beside the warehouse, checks it (PRAGMA integrity_check),
// migrates it to this build's schema and re-applies there every erasure and lift of the erasure
// journal (opts.ErasureJournal, else the warehouse's own) that it lacks; only then is it copied
// into the warehouse, through SQLite's backup API, in one transaction readers see whole: no
// reader (serve) ever sees the restored data before its erasures. What was erased or lifted
// meanwhile is re-applied to the warehouse after. The warehouse is made when there is none.
func RestoreSQLite(ctx context.Context, rawURL, from string, opts Options, locks ...string) (RestoreResult, error) {
	var res RestoreResult
	if backendOf(rawURL).kind() != schema.SQLite {
		return res, fmt.Errorf("restore: %w", ErrPostgresBackup)
	}
	path, err := SQLitePath(rawURL)
	if err != nil {
		return res, err
	}
	if opts.ErasureJournal == "" {
		opts.ErasureJournal = path + ".erasures.jsonl" // the warehouse's, not the copy's (JournalPath)
	}
	if fi, err := os.Stat(from); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	} else if !fi.Mode().IsRegular() || fi.Size() == 0 {
		return res, fmt.Errorf("restore: %s is not a backup (not a file, or empty)", from)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	for _, name := range append([]string{SyncLock}, locks...) {
		lock, ok, err := flock(path + "." + name + ".lock") // as TryLock takes them (fileLock)
		if err != nil {
			return res, fmt.Errorf("restore: %w", err)
		}
		if !ok {
			return res, fmt.Errorf("restore: %w (%s)", ErrRestoreBusy, name)
		}
		defer lock.Close()
	}

	tmp, err := privateTemp(path)
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	defer removeSQLite(tmp)
	if err := copyInto(tmp, from); err != nil {
		return res, fmt.Errorf("restore: copy %s: %w", from, err)
	}
	if res.From, err = checkBackup(ctx, tmp); err != nil {
		return res, fmt.Errorf("restore: %s: %w", from, err)
	}
	staged, err := Open(ctx, tmp, opts) // migrates the copy to this build's schema
	if err != nil {
		return res, fmt.Errorf("restore: %s: %w", from, err)
	}
	res.To, err = schemaVersion(ctx, staged.db.DB, staged.d)
	if err == nil {
		res.Reapply, err = staged.ReapplyJournal(ctx)
	}
	if err == nil {
		// One file to copy: the write-ahead log emptied into it.
		_, err = staged.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	if cerr := staged.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	if err := copyIntoWarehouse(ctx, path, tmp); err != nil {
		return res, fmt.Errorf("restore: into %s: %w", path, err)
	}
	// An erase or lift made since the copy's was re-applied is in the journal: the warehouse
	// takes it again now.
	live, err := Open(ctx, rawURL, opts)
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	defer live.Close()
	again, err := live.ReapplyJournal(ctx)
	res.Reapply.Erased += again.Erased
	res.Reapply.Lifted += again.Lifted
	for t, n := range again.Rows {
		res.Reapply.Rows[t] += n
	}
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	return res, nil
}

// copyInto copies the file from into the empty file dst and makes it durable.
func copyInto(dst, from string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// checkBackup checks that path is a whole SQLite database of hrsync's (integrity_check ok, a
// schema version this build knows) and returns its version.
func checkBackup(ctx context.Context, path string) (int, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var ok string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check(1)`).Scan(&ok); err != nil {
		return 0, fmt.Errorf("not a SQLite database: %w", err)
	}
	if ok != "ok" {
		return 0, fmt.Errorf("damaged: integrity_check says %s", ok)
	}
	v, err := schemaVersion(ctx, db, sqliteDialect{})
	if err != nil {
		return 0, err
	}
	if v == 0 {
		return 0, errors.New("not a warehouse (no schema version)")
	}
	if latest := schema.Latest(schema.SQLite); v > latest {
		return 0, fmt.Errorf("%w (version %d, this build knows %d)", schema.ErrAhead, v, latest)
	}
	return v, nil
}

// copyIntoWarehouse replaces the content of the SQLite file path with that of src, through
// SQLite's backup API on a connection of path's own: it takes the file's locks, so a reader
// sees the old content or the new one, never a mix.
func copyIntoWarehouse(ctx context.Context, path, src string) error {
	if err := CreateSQLiteFile(path); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		r, ok := dc.(interface {
			NewRestore(string) (*sqlite.Backup, error)
		})
		if !ok {
			return fmt.Errorf("the SQLite driver has no backup API (%T)", dc)
		}
		b, err := r.NewRestore("file:" + src)
		if err != nil {
			return err
		}
		for more := true; more; {
			if more, err = b.Step(-1); err != nil {
				_ = b.Finish()
				return err
			}
		}
		// Finish closes the source's connection; the destination's is this one.
		return b.Finish()
	})
}

// removeSQLite removes a SQLite file and the files beside it.
func removeSQLite(path string) {
	for _, p := range append([]string{path}, companions(path)...) {
		_ = os.Remove(p)
	}
}
