package sink

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"syscall"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hrsync/hrsync/schema"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// ErrUnreachable is wrapped by the errors Unreachable finds were the warehouse being out of
// reach rather than a fault of the statement: it is v1.ErrUnreachable, so the serve handler can
// answer it (503 with Retry-After) without importing sink.
var ErrUnreachable = v1.ErrUnreachable

// unreachablePQ are the Postgres codes of a server that will not take the session now, however
// right the statement: 53300 too_many_connections, 57P01 admin_shutdown, 57P02 crash_shutdown,
// 57P03 cannot_connect_now (starting, recovering, shutting down). Class 08 (connection
// exception) is matched by its class.
var unreachablePQ = map[pqerror.Code]bool{pqerror.TooManyConnections: true, pqerror.AdminShutdown: true,
	pqerror.CrashShutdown: true, pqerror.CannotConnectNow: true}

// Unreachable wraps err with ErrUnreachable when it says the warehouse could not be reached (a
// connection refused, reset or timed out, a host that stopped answering, a Postgres that
// refuses sessions or is shutting down, a SQLite file that cannot be opened, a warehouse a newer
// build migrated), and returns any
// other error, nil included, as it is: a statement's own fault (a SQL error, a constraint)
// stays what it was. A lock not had in time is ErrBusy, not this.
func Unreachable(err error) error {
	if err == nil || errors.Is(err, ErrUnreachable) || errors.Is(err, ErrBusy) {
		return err
	}
	if unreachable(err) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

func unreachable(err error) bool {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return unreachablePQ[pe.Code] || pe.Code.Class() == pqerror.ClassConnectionException
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_CANTOPEN
	}
	// A SQLite file (or its folder) that cannot be opened: gone (an unmounted volume), denied,
	// or a path through a file.
	var fe *fs.PathError
	if errors.As(err, &fe) && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR)) {
		return true
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, ErrNoAnswer) {
		return true
	}
	// A warehouse a newer build migrated (a rolling upgrade under way): this build cannot serve
	// it, and a replica of the newer build can; a client retries, a load balancer turns to one.
	if errors.Is(err, schema.ErrAhead) {
		return true
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	// Any failure of the network itself: a dial refused or timed out, a name that does not
	// resolve, a read or write on a connection the server or the network closed. Not a
	// context's deadline (it is a net.Error too): a request's own deadline says nothing of the
	// warehouse.
	var oe *net.OpError
	var de *net.DNSError
	return errors.As(err, &oe) || errors.As(err, &de)
}
