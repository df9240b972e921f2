package sink

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/lib/pq"
)

// Nothing waits on a Postgres warehouse forever. Three bounds hold on every connection:
//
//   - the server stops any statement after Options.StatementTimeout (statement_timeout, sent as a
//     startup parameter), and connecting stops after Options.ConnectTimeout;
//   - the client gives up on a connection whose server has sent nothing for the statement timeout
//     plus a grace period while an answer is awaited (a read or a write deadline per I/O): the
//     server would have answered by then with a result or its own timeout, so the host, or the
//     network in between, is silent;
//   - a statement whose context ends closes its connection at once. lib/pq on its own only sends
//     the server a cancel request, which a silent host never answers, and keeps reading.
//
// A connection closed by either client bound is never reused.

// Defaults for Options.
const (
	// DefaultStatementTimeout bounds one statement. The longest statement of a 100,000-employee
	// merge, the first load's INSERT of every employee, took between 3 and 6 s on a shared
	// 2-core machine (it failed under a 3 s statement_timeout and passed under 6 s; the whole
	// merge took 5.6 s, an unchanged one 1.6 s). Five minutes leaves 50× that for slower hosts
	// and loads ten times bigger, and still notices a silent host within minutes, not hours.
	DefaultStatementTimeout = 5 * time.Minute
	// DefaultConnectTimeout bounds connecting and the start-up handshake.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultSchema is the Postgres schema of a warehouse that names none.
	DefaultSchema = "hr"
	// DefaultMaxOpenConns bounds a Postgres warehouse's pool of connections.
	DefaultMaxOpenConns = 16
	// DefaultConnMaxIdleTime is how long a Postgres connection stays open unused: an account
	// with no work holds no session 5 to 10 s after its work ends (the pool looks every idle
	// time), where it held each for 5 minutes before. Connections cost the server a backend
	// each, and max_connections is shared by every account and replica. Statements a few
	// seconds apart (a sync's, a busy serve's) still find theirs open; a lock's renewal every
	// DefaultLockTTL/3, or a readiness probe every 10 s, may open one for the moment.
	DefaultConnMaxIdleTime = 5 * time.Second
	// DefaultLockTTL is how long a Postgres lock's lease lasts unrenewed (see Store.TryLock): its
	// holder renews it every third of that, so a holder that stalls (a paused process, a
	// network partition) for longer loses it, and the lock of a process that died is free that
	// long after. Thirty seconds is ten statement round trips' worth of slack at each renewal
	// even on a slow link, and a crashed worker's accounts wait half a minute, not the next
	// day, for another worker.
	DefaultLockTTL = 30 * time.Second
	// cleanupTimeout bounds what the server answers at once, and what is done after a run on a
	// context of its own (its own may have ended): a rollback, a goodbye, a cancel request,
	// releasing a lock, dropping staging tables. A run that is stopping must not wait a whole
	// statement timeout to give its transaction back, and a silent warehouse cannot hold it
	// longer.
	cleanupTimeout = 10 * time.Second
	// afterSilenceTimeout bounds what is still tried once the warehouse was found silent (a
	// statement unanswered: ErrNoAnswer): giving a lock back. A host that answers at all
	// answers that at once.
	afterSilenceTimeout = time.Second
)

// ErrNoAnswer is wrapped by the error of a statement whose warehouse host stopped answering:
// nothing came back within the statement timeout plus a grace period.
var ErrNoAnswer = errors.New("the warehouse did not answer")

// silenceAllowed is how long a connection may wait for the server: the statement timeout, by
// which the server answers one way or another, plus a grace for a loaded server and network.
func silenceAllowed(statementTimeout time.Duration) time.Duration {
	return statementTimeout + 5*time.Second + statementTimeout/10
}

// pgConnector opens Postgres connections through deadline-keeping sockets, and wraps each in a
// conn that closes its socket when a statement's context ends.
type pgConnector struct {
	pq       *pq.Connector
	silence  time.Duration
	stmtWait time.Duration // the statement timeout, for messages
	// silenced, when set, is told each time a connection finds the server silent (the error
	// wraps ErrNoAnswer): the Store's, which stops the work under its locks.
	silenced func(error)

	mu   sync.Mutex
	live map[*netConn]struct{} // open sockets, for interrupt
}

// interrupt aborts every open socket with cause.
func (c *pgConnector) interrupt(cause error) {
	c.mu.Lock()
	conns := make([]*netConn, 0, len(c.live))
	for nc := range c.live {
		conns = append(conns, nc)
	}
	c.mu.Unlock()
	for _, nc := range conns {
		nc.abort(cause)
	}
}

func (c *pgConnector) forget(nc *netConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.live, nc)
}

func newPGConnector(dsn string, statementTimeout time.Duration) (*pgConnector, error) {
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	pc := &pgConnector{pq: c, silence: silenceAllowed(statementTimeout), stmtWait: statementTimeout, live: map[*netConn]struct{}{}}
	c.Dialer(pc)
	return pc, nil
}

// dialSlot carries the socket a Connect dials back to Connect, through the dial's context.
type dialSlot struct {
	ctx  context.Context // Connect's: lib/pq's dial context ends with the dial
	mu   sync.Mutex
	conn *netConn
	stop func() bool // the watch of Connect's context
}

type dialSlotKey struct{}

// Connect implements driver.Connector.
func (c *pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	slot := &dialSlot{ctx: ctx}
	dc, err := c.pq.Connect(context.WithValue(ctx, dialSlotKey{}, slot))
	slot.mu.Lock()
	nc, stop := slot.conn, slot.stop
	slot.mu.Unlock()
	if stop != nil {
		stop()
	}
	if err != nil {
		if nc != nil && nc.cause() != nil {
			return nil, nc.cause()
		}
		return nil, err
	}
	if nc == nil {
		_ = dc.Close()
		return nil, errors.New("connect: the driver did not use hrsync's dialer")
	}
	if nc.cause() != nil { // the context ended as the handshake finished
		_ = dc.Close()
		return nil, nc.cause()
	}
	return &pgConn{pq: dc, nc: nc}, nil
}

// Driver implements driver.Connector.
func (c *pgConnector) Driver() driver.Driver { return c.pq.Driver() }

// Dial, DialTimeout and DialContext make the connector lib/pq's Dialer.
func (c *pgConnector) Dial(network, address string) (net.Conn, error) {
	return c.DialContext(context.Background(), network, address)
}

func (c *pgConnector) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.DialContext(ctx, network, address)
}

func (c *pgConnector) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	d := net.Dialer{KeepAlive: 15 * time.Second}
	raw, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	nc := &netConn{Conn: raw, silence: c.silence, stmtWait: c.stmtWait, owner: c}
	c.mu.Lock()
	c.live[nc] = struct{}{}
	c.mu.Unlock()
	slot, _ := ctx.Value(dialSlotKey{}).(*dialSlot)
	if slot == nil {
		// lib/pq dials on its own to send a cancel request; it reads until the server hangs up,
		// which a silent host never does.
		nc.silence = min(nc.silence, cleanupTimeout)
		return nc, nil
	}
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.conn != nil { // a retry (sslmode=prefer, several hosts): the last socket is the one
		slot.stop()
	}
	slot.conn = nc
	// The handshake after the dial does not watch Connect's context; this does.
	slot.stop = context.AfterFunc(slot.ctx, func() { nc.abort(fmt.Errorf("connect: %w", context.Cause(slot.ctx))) })
	return nc, nil
}

// netConn is a socket that bounds every wait for the server (see silenceAllowed) and can be
// aborted: closed with a cause that every later error of the connection carries.
type netConn struct {
	net.Conn
	silence  time.Duration
	stmtWait time.Duration
	owner    *pgConnector

	mu              sync.Mutex
	userRead        time.Time // deadlines lib/pq set (the connect timeout)
	userWrite       time.Time
	limit           time.Duration // when not 0, a shorter silence for the current wait
	err             error         // why the connection was closed under lib/pq
	readAt, writeAt time.Time     // the deadlines in force, ours or lib/pq's
}

func (c *netConn) cause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// abort closes the socket; lib/pq's blocked read or write returns at once, with cause.
func (c *netConn) abort(cause error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = cause
	}
	c.mu.Unlock()
	_ = c.Conn.Close()
}

// Close closes the socket for good.
func (c *netConn) Close() error {
	c.owner.forget(c)
	return c.Conn.Close()
}

func (c *netConn) allowed() time.Duration {
	if c.limit > 0 {
		return min(c.limit, c.silence)
	}
	return c.silence
}

// deadline is the earlier of lib/pq's deadline and now plus the silence allowed.
func (c *netConn) deadline(user time.Time) time.Time {
	d := time.Now().Add(c.allowed())
	if !user.IsZero() && user.Before(d) {
		return user
	}
	return d
}

func (c *netConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	c.readAt = c.deadline(c.userRead)
	_ = c.Conn.SetReadDeadline(c.readAt)
	c.mu.Unlock()
	n, err := c.Conn.Read(b)
	if err != nil {
		err = c.explain("read", err, func() time.Time { return c.userRead })
	}
	return n, err
}

func (c *netConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.writeAt = c.deadline(c.userWrite)
	_ = c.Conn.SetWriteDeadline(c.writeAt)
	// A read waiting beside this write (a COPY's answer) waits for a server that is being sent
	// data, not a silent one: its deadline moves with the write.
	if !c.readAt.IsZero() {
		c.readAt = c.deadline(c.userRead)
		_ = c.Conn.SetReadDeadline(c.readAt)
	}
	c.mu.Unlock()
	n, err := c.Conn.Write(b)
	if err != nil {
		err = c.explain("write", err, func() time.Time { return c.userWrite })
	}
	return n, err
}

// explain names why an I/O failed: the abort's cause, or the server's silence. It keeps the
// *net.OpError form, so that lib/pq marks the connection bad and reports the error as it is.
func (c *netConn) explain(op string, err error, user func() time.Time) error {
	c.mu.Lock()
	var cause error
	silent := false
	switch {
	case c.err != nil:
		cause = c.err
	case errors.Is(err, os.ErrDeadlineExceeded) && (user().IsZero() || user().After(time.Now())):
		allowed := c.allowed()
		if c.limit > 0 {
			cause = fmt.Errorf("%w in %s", ErrNoAnswer, allowed.Round(time.Millisecond))
		} else {
			cause = fmt.Errorf("%w in %s (warehouse.statement_timeout %s and a grace period): the host or the network is silent",
				ErrNoAnswer, allowed.Round(time.Millisecond), c.stmtWait)
		}
		c.err = cause
		silent = true
		_ = c.Conn.Close() // half a protocol exchange: never reused
	default:
		c.mu.Unlock()
		return err
	}
	c.mu.Unlock()
	if silent && c.owner.silenced != nil {
		c.owner.silenced(cause) // the host is silent: what else waits on it stops now
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: cause}
}

func (c *netConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.userRead, c.userWrite = t, t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *netConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.userRead = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *netConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.userWrite = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

// withLimit runs f with a shorter silence allowed.
func (c *netConn) withLimit(d time.Duration, f func() error) error {
	c.mu.Lock()
	c.limit = d
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.limit = 0
		c.mu.Unlock()
	}()
	return f()
}

// pgConn is a lib/pq connection whose statements end when their context does.
type pgConn struct {
	pq driver.Conn
	nc *netConn
}

// watch starts a statement: it fails at once on a connection already closed under lib/pq (see
// dead), and otherwise closes the socket when ctx ends before stop is called.
func (c *pgConn) watch(ctx context.Context) (stop func() bool, err error) {
	if err := c.dead(); err != nil {
		return nil, err
	}
	return context.AfterFunc(ctx, func() {
		c.nc.abort(fmt.Errorf("statement abandoned: %w", context.Cause(ctx)))
	}), nil
}

// watchedRows keeps the statement's context watched until rows are closed (Next reads too), or
// stops the watch when the statement failed.
func watchedRows(rows driver.Rows, err error, stop func() bool) (driver.Rows, error) {
	if err != nil {
		stop()
		return nil, err
	}
	pr, ok := rows.(pqRows)
	if !ok {
		_ = rows.Close()
		stop()
		return nil, fmt.Errorf("query: lib/pq's rows (%T) no longer implement what hrsync passes through", rows)
	}
	return &pgRows{pqRows: pr, stop: stop}, nil
}

// dead is the error of a connection already closed under lib/pq.
func (c *pgConn) dead() error {
	if err := c.nc.cause(); err != nil {
		return driver.ErrBadConn
	}
	return nil
}

var (
	_ driver.Conn               = (*pgConn)(nil)
	_ driver.ConnBeginTx        = (*pgConn)(nil)
	_ driver.ConnPrepareContext = (*pgConn)(nil)
	_ driver.ExecerContext      = (*pgConn)(nil)
	_ driver.QueryerContext     = (*pgConn)(nil)
	_ driver.Pinger             = (*pgConn)(nil)
	_ driver.SessionResetter    = (*pgConn)(nil)
	_ driver.Validator          = (*pgConn)(nil)
	_ driver.NamedValueChecker  = (*pgConn)(nil)
)

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	stop, err := c.watch(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	st, err := c.pq.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &pgStmt{pq: st, c: c}, nil
}

func (c *pgConn) Close() error {
	if c.nc.cause() != nil {
		return c.nc.Close()
	}
	// lib/pq says goodbye with a write: bounded like any other.
	return c.nc.withLimit(cleanupTimeout, c.pq.Close)
}

func (c *pgConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	stop, err := c.watch(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	tx, err := c.pq.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &pgTx{pq: tx, c: c, ctx: ctx}, nil
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	stop, err := c.watch(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	return c.pq.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	stop, err := c.watch(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.pq.(driver.QueryerContext).QueryContext(ctx, query, args)
	return watchedRows(rows, err, stop)
}

func (c *pgConn) Ping(ctx context.Context) error {
	stop, err := c.watch(ctx)
	if err != nil {
		return err
	}
	defer stop()
	err = c.pq.(driver.Pinger).Ping(ctx)
	if err != nil && c.nc.cause() != nil {
		// lib/pq reports every failed ping as a bad connection, which database/sql retries on
		// new connections; the cause is the answer.
		return c.nc.cause()
	}
	return err
}

func (c *pgConn) ResetSession(ctx context.Context) error {
	if err := c.dead(); err != nil {
		return err
	}
	return c.pq.(driver.SessionResetter).ResetSession(ctx)
}

func (c *pgConn) IsValid() bool {
	return c.nc.cause() == nil && c.pq.(driver.Validator).IsValid()
}

func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.pq.(driver.NamedValueChecker).CheckNamedValue(nv)
}

// pgTx bounds a rollback: the server answers one at once, so a silent one is not waited on
// for a whole statement timeout.
type pgTx struct {
	pq  driver.Tx
	c   *pgConn
	ctx context.Context
}

func (t *pgTx) Commit() error { return t.pq.Commit() }

func (t *pgTx) Rollback() error {
	if t.c.nc.cause() != nil {
		// The socket is closed: the server rolls back when it sees it.
		return t.c.nc.cause()
	}
	return t.c.nc.withLimit(cleanupTimeout, t.pq.Rollback)
}

// pgStmt is a prepared statement (or a COPY) whose executions end when their context does.
type pgStmt struct {
	pq driver.Stmt
	c  *pgConn
}

var (
	_ driver.StmtExecContext   = (*pgStmt)(nil)
	_ driver.StmtQueryContext  = (*pgStmt)(nil)
	_ driver.NamedValueChecker = (*pgStmt)(nil)
)

func (s *pgStmt) Close() error  { return s.pq.Close() }
func (s *pgStmt) NumInput() int { return s.pq.NumInput() }

func (s *pgStmt) Exec(args []driver.Value) (driver.Result, error) {
	//lint:ignore SA1019 driver.Stmt requires it; lib/pq's COPY implements only this
	return s.pq.Exec(args)
}

func (s *pgStmt) Query(args []driver.Value) (driver.Rows, error) {
	//lint:ignore SA1019 driver.Stmt requires it
	return s.pq.Query(args)
}

func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	stop, err := s.c.watch(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	if ec, ok := s.pq.(driver.StmtExecContext); ok {
		return ec.ExecContext(ctx, args)
	}
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	//lint:ignore SA1019 lib/pq's COPY has no ExecContext
	return s.pq.Exec(vals)
}

func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	stop, err := s.c.watch(ctx)
	if err != nil {
		return nil, err
	}
	if qc, ok := s.pq.(driver.StmtQueryContext); ok {
		rows, err := qc.QueryContext(ctx, args)
		return watchedRows(rows, err, stop)
	}
	vals, err := values(args)
	if err != nil {
		stop()
		return nil, err
	}
	//lint:ignore SA1019 as in ExecContext
	rows, err := s.pq.Query(vals)
	return watchedRows(rows, err, stop)
}

// CheckNamedValue lets every value through to lib/pq, as its connection does.
func (s *pgStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.pq.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return s.c.CheckNamedValue(nv)
}

func values(args []driver.NamedValue) ([]driver.Value, error) {
	vals := make([]driver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, errors.New("named parameters are not supported")
		}
		vals[i] = a.Value
	}
	return vals, nil
}

// pqRows is what lib/pq's rows implement: pgRows passes all of it through to database/sql.
type pqRows interface {
	driver.Rows
	driver.RowsNextResultSet
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeScanType
	driver.RowsColumnTypeLength
	driver.RowsColumnTypePrecisionScale
}

// pgRows keeps its statement's context watched until it is closed.
type pgRows struct {
	pqRows
	stop func() bool
}

func (r *pgRows) Close() error {
	defer r.stop()
	return r.pqRows.Close()
}
