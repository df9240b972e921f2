package sink

import (
	"errors"
	"fmt"

	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hrsync/hrsync/source/v1"
)

// ErrBusy is wrapped by the errors of a write that could not get the warehouse's write lock in
// time: on SQLite, another process held it past the busy timeout (SQLITE_BUSY); on Postgres, a
// lock wait ran past lock_timeout. Nothing was written; the write may be retried. It is
// v1.ErrBusy, so the serve handler can answer it without importing sink.
var ErrBusy = v1.ErrBusy

// busyErr wraps err with ErrBusy when the database said it could not get a lock in time, and
// returns any other error as it is.
func busyErr(err error) error {
	if err == nil || errors.Is(err, ErrBusy) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		// The primary code is the low byte; the extended ones (SQLITE_BUSY_SNAPSHOT, …) share it.
		if c := se.Code() & 0xff; c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED {
			return fmt.Errorf("%w: %w", ErrBusy, err)
		}
	}
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "55P03" { // lock_not_available: lock_timeout ran out
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	return err
}

// readOnlyFileErr says what to do about a SQLite file hrsync may not write: every command
// writes it, serve included (the WAL journal's -shm file is made beside it, and a new or older
// file is migrated), so a read-only copy is no warehouse; a replica that takes no writes is a
// Postgres hot standby.
func readOnlyFileErr(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_READONLY {
		return fmt.Errorf("%w (the file or its folder is read-only to hrsync, which writes a SQLite warehouse whatever the command, serve included: make both writable by its user; to serve a copy that takes no writes, serve a Postgres hot standby)", err)
	}
	return err
}
