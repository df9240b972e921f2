package sink

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"sync"
)

// A SQLite warehouse holds personal data: its file, and the -wal, -shm and -journal files
// beside it, are readable by their owner only (0600), whatever the process's umask. The file is
// created 0600 before the driver opens it; SQLite gives the files it makes beside a database
// the database file's mode. A file found with group or other permissions is tightened, once,
// with a warning.

// privateMode is the mode of a warehouse's files.
const privateMode fs.FileMode = 0o600

// sqliteCompanions are the suffixes of the files SQLite keeps beside a database.
var sqliteCompanions = []string{"-wal", "-shm", "-journal"}

// CreateSQLiteFile creates the empty SQLite file path with mode 0600 when it does not exist,
// before a driver opens it: a driver creates it under the process's umask (0644 under the usual
// 022). It is not an error that the file exists.
func CreateSQLiteFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, privateMode)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err != nil:
		return fmt.Errorf("create %s: %w", path, err)
	}
	// O_CREATE's mode passed through the umask; a umask that took the owner's bits is undone.
	err = f.Chmod(privateMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}

// loosened holds the files warned about that could not be tightened, so that each is said once.
var loosened sync.Map

// privateSQLiteFile readies path for the driver: created 0600 when missing; when it, or a
// -wal, -shm or -journal beside it, has group or other permissions, tightened to 0600 and
// logged as a warning.
func privateSQLiteFile(path string, log *slog.Logger) error {
	if err := CreateSQLiteFile(path); err != nil {
		return err
	}
	if runtime.GOOS == "windows" { // no group or other bits to take away
		return nil
	}
	for _, p := range append([]string{path}, companions(path)...) {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open warehouse %s: %w", path, err)
		}
		mode := fi.Mode().Perm()
		if mode&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, mode&^0o077); err != nil {
			if _, said := loosened.LoadOrStore(p, true); !said {
				log.Warn("the warehouse file is readable by others and could not be made private; chmod 600 it",
					"file", p, "mode", fmt.Sprintf("%#o", mode), "err", err)
			}
			continue
		}
		log.Warn("the warehouse file was readable by others: made private", "file", p,
			"mode", fmt.Sprintf("%#o", mode), "now", fmt.Sprintf("%#o", mode&^0o077))
	}
	return nil
}

func companions(path string) []string {
	out := make([]string, len(sqliteCompanions))
	for i, s := range sqliteCompanions {
		out[i] = path + s
	}
	return out
}
