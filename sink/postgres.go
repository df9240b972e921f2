package sink

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/hrsync/hrsync/schema"
)

// pgDialect is the Postgres dialect: the warehouse in a schema of a Postgres database.
type pgDialect struct{}

func (pgDialect) name() schema.Dialect { return schema.Postgres }

func (pgDialect) columnType(k Kind) string {
	switch k {
	case KindID:
		return "bigint"
	case KindInt:
		return "integer"
	case KindBool:
		return "boolean"
	case KindDate:
		return "date"
	case KindTimestamp:
		return "timestamp with time zone"
	case KindDecimal:
		return "numeric"
	case KindJSON:
		return "json"
	}
	return "text"
}

// tsFormat is to_char's form of v1.TimestampLayout.
const tsFormat = `'YYYY-MM-DD"T"HH24:MI:SS"Z"'`

func (pgDialect) read(k Kind, expr string) string {
	switch k {
	case KindDate:
		return "to_char(" + expr + ", 'YYYY-MM-DD')"
	case KindTimestamp:
		return "to_char(" + expr + " AT TIME ZONE 'UTC', " + tsFormat + ")"
	case KindDecimal, KindJSON:
		return expr + "::text"
	}
	return expr
}

// comparable compares the kinds other than decimals and JSON as themselves, which costs far less
// than formatting every timestamp and date as text (the comparison runs over every staged row).
func (pgDialect) comparable(k Kind, expr string) string {
	if k == KindDecimal || k == KindJSON {
		return "CAST(" + expr + " AS text)"
	}
	return expr
}

func (pgDialect) pick(k Kind, expr string) string {
	switch k {
	case KindBool:
		return "bool_or(" + expr + ")"
	case KindJSON:
		return "CAST(max(CAST(" + expr + " AS text)) AS json)"
	}
	return "max(" + expr + ")"
}

func (pgDialect) now() string { return "now()" }

// reserveSlot reads the clock with clock_timestamp(), not now(): now() is when the statement
// began, before it waited for the row another process was reserving on.
func (pgDialect) reserveSlot() string {
	return `INSERT INTO request_budget AS b (account, tat)
VALUES (?, clock_timestamp() + make_interval(secs => ?::float8 / 1e6))
ON CONFLICT (account) DO UPDATE
SET tat = greatest(b.tat, clock_timestamp()) + make_interval(secs => ?::float8 / 1e6)
RETURNING (extract(epoch FROM b.tat - clock_timestamp()) * 1e6)::bigint - ?`
}

// stage runs a prepared COPY … FROM STDIN, which lib/pq sends as a COPY stream: one round trip a
// page.
func (pgDialect) stage(ctx context.Context, tx *sqlx.Tx, table string, cols []string, rows [][]any) error {
	stmt, err := tx.PrepareContext(ctx, `COPY `+table+` (`+strings.Join(cols, ", ")+`) FROM STDIN`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, row := range rows {
		if _, err := stmt.ExecContext(ctx, row...); err != nil {
			return err
		}
	}
	if _, err := stmt.ExecContext(ctx); err != nil {
		return err
	}
	return stmt.Close()
}

// serializeWrites locks the meta row: merges and creates take it first, so they queue.
func (pgDialect) serializeWrites(ctx context.Context, tx *sqlx.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT 1 FROM meta FOR UPDATE`)
	return err
}

// indexStaged indexes the table's ids and gathers their statistics (the joins need only
// those): without them the planner guesses a temporary table's size and joins it badly.
func (pgDialect) indexStaged(ctx context.Context, ex execer, table string) error {
	if _, err := ex.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS `+table+`_id ON `+table+` (id)`); err != nil {
		return fmt.Errorf("index %s: %w", table, err)
	}
	if _, err := ex.ExecContext(ctx, `ANALYZE `+table+` (id)`); err != nil {
		return fmt.Errorf("analyze %s: %w", table, err)
	}
	return nil
}

// smallTable is the size under which a table's statistics are gathered after every merge that
// writes it. Autovacuum analyzes a table once 50 rows plus a tenth of it have changed
// (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor): the reference data (eight
// departments, four divisions) and meta's one row never get there, so a warehouse left to it has
// no statistics of them at all, and the planner guesses hundreds of rows for each. Analyzing a
// table this small reads all of it and takes about a millisecond.
const smallTable = 1000

// analyzeWritten analyzes, of tables, those that are small or have never been analyzed (a new
// warehouse's first sync: autovacuum gets there, but the first pages are served before it does).
// A large table is sampled (300 × default_statistics_target rows), so even the first ANALYZE of
// 100,000 employees is bounded; after that autovacuum keeps the large tables' statistics.
func (pgDialect) analyzeWritten(ctx context.Context, conn *sqlx.Conn, tables []string) error {
	var stale []string
	err := conn.SelectContext(ctx, &stale, `SELECT c.relname FROM pg_class c
LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname = ANY($1)
    AND (c.reltuples < $2 OR coalesce(s.last_analyze, s.last_autoanalyze) IS NULL)
ORDER BY c.relname`, pq.Array(tables), smallTable)
	if err != nil || len(stale) == 0 {
		return err
	}
	if _, err := conn.ExecContext(ctx, `ANALYZE `+strings.Join(stale, ", ")); err != nil {
		return fmt.Errorf("analyze %s: %w", strings.Join(stale, ", "), err)
	}
	return nil
}

func (pgDialect) snapshot() *sql.TxOptions {
	return &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}
}

func (pgDialect) tableExists(ctx context.Context, db *sql.DB, name string) (bool, error) {
	var ok bool
	err := db.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&ok)
	return ok, err
}

func (pgDialect) columnsQuery() string {
	return `SELECT column_name, data_type FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = $1`
}

func (pgDialect) createSchema(ctx context.Context, db *sql.DB, name string) error {
	_, err := db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+name)
	return err
}

// lockMigrations takes a transaction advisory lock per schema: one migrator at a time.
func (pgDialect) lockMigrations(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('hrsync.migrate.' || current_schema()))`)
	return err
}

// openPostgres opens the warehouse in schema opts.Schema of the database at rawURL.
func (s *Store) openPostgres(rawURL string) error {
	if !schemaName.MatchString(s.opts.Schema) {
		return fmt.Errorf("%w: schema %q: want lower-case letters, digits and _", ErrBadURL, s.opts.Schema)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%w: not a URL", ErrBadURL)
	}
	s.location = "postgres://" + u.Host + u.Path
	q := u.Query()
	// Every statement names tables unqualified; the connection's search_path puts them in the
	// warehouse schema (and nothing else, so a same-named table elsewhere is never touched).
	q.Set("search_path", s.opts.Schema)
	if q.Get("sslmode") == "" && (u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1" || u.Hostname() == "") {
		q.Set("sslmode", "disable")
	}
	// The server bounds every statement, and a transaction left idle by a client that vanished
	// (it would hold its locks until the server's TCP keepalive noticed, hours later). Startup
	// parameters win over a role's or a database's settings.
	ms := strconv.FormatInt(max(s.opts.StatementTimeout.Milliseconds(), 1), 10)
	q.Set("statement_timeout", ms)
	q.Set("idle_in_transaction_session_timeout", ms)
	// Every statement with parameters runs on the generic plan cached with it, planned once per
	// connection. serve's reads are prepared (tableReads) and, left to the planner's choice, a
	// page statement joining eight relations was planned afresh on every request whenever a
	// connection's first pages made the custom plans look cheaper (page 1 does): 12-18 ms of
	// planning for 0.5-1.4 ms of execution. The statement shapes keep the generic plans good
	// (see selectList; TestReadPlans checks each collection's). The other statements with
	// parameters look rows up by key, where the generic plan is the custom one; the merge's
	// statements have none (lib/pq sends them as simple queries, planned on every run), so its
	// plans still see the staged rows' statistics.
	q.Set("plan_cache_mode", "force_generic_plan")
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", strconv.FormatInt(int64(max(s.opts.ConnectTimeout.Round(time.Second), time.Second)/time.Second), 10))
	}
	u.RawQuery = q.Encode()
	connector, err := newPGConnector(u.String(), s.opts.StatementTimeout)
	if err != nil {
		return fmt.Errorf("open warehouse %s: %w: %s", s.location, ErrBadURL, scrub(err.Error(), u.String()))
	}
	db := sqlx.NewDb(sql.OpenDB(connector), "postgres")
	s.pg = connector
	n := s.opts.MaxOpenConns
	if n <= 0 {
		n = DefaultMaxOpenConns
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s.db, s.d = db, pgDialect{}
	return nil
}

// The advisory lock keys of a named lock: one per schema and name, so replicas of one warehouse
// share them and other warehouses on the same server do not. The commit key guards merges
// under the lock (see prove). The ? is the lock's name.
const (
	lockKey   = `hashtextextended('hrsync:' || current_schema() || ':' || ?, 0)`
	commitKey = `hashtextextended('hrsync:' || current_schema() || ':' || ? || ':commit', 0)`
)

// advisoryLock is a session advisory lock on a connection kept for it, so a process that dies
// releases it with its session. It is identified as pg_locks and pg_stat_activity show it (a
// pid alone could be reused by a later session).
type advisoryLock struct {
	s            *Store
	conn         *sqlx.Conn
	pid          int64
	backendStart string
}

func (pgDialect) tryLock(ctx context.Context, s *Store, name string) (processLock, bool, error) {
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, false, err
	}
	l := &advisoryLock{s: s, conn: conn}
	if ok, err := l.take(ctx, name); err != nil || !ok {
		_ = conn.Close()
		return nil, false, err
	}
	return l, true, nil
}

// take takes the lock's advisory lock on the lock's connection, the session that will hold it;
// then makes sure no merge begun by its previous holder is still running: a holder whose
// session was terminated may be in the middle of one (it proved it held the lock when it began,
// see prove). Such a merge holds the commit key until its transaction ends; until then the lock
// is not taken over, and take gives it back and says false.
func (l *advisoryLock) take(ctx context.Context, name string) (bool, error) {
	var ok, free bool
	if err := l.conn.QueryRowxContext(ctx, l.s.db.Rebind(`SELECT pg_try_advisory_lock(`+lockKey+`), pg_backend_pid(),
    (SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid())`), name).Scan(&ok, &l.pid, &l.backendStart); err != nil || !ok {
		return false, err
	}
	if err := l.conn.QueryRowxContext(ctx, l.s.db.Rebind(`SELECT CASE WHEN pg_try_advisory_lock(`+commitKey+`)
    THEN pg_advisory_unlock(`+commitKey+`) ELSE false END`), name, name).Scan(&free); err != nil || free {
		return err == nil, err
	}
	_, err := l.conn.ExecContext(ctx, l.s.db.Rebind(`SELECT pg_advisory_unlock(`+lockKey+`)`), name)
	return false, err
}

// check asks the server whether the lock's session (by pid and start time) still holds the
// advisory lock.
func (l *advisoryLock) check(ctx context.Context, q queryer, name string) error {
	var held bool
	err := q.QueryRowxContext(ctx, l.s.db.Rebind(`SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.pid = ? AND a.backend_start::text = ?
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND ((l.classid::bigint << 32) | l.objid::bigint) = `+lockKey+`)`), l.pid, l.backendStart, name).Scan(&held)
	if err != nil {
		return fmt.Errorf("check the %s lock: %w", name, err)
	}
	if !held {
		return &LockLostError{Name: name, Why: "its database session ended (terminated, or its connection dropped)"}
	}
	return nil
}

// prove takes the lock's commit key (a transaction advisory lock, held until tx ends), then
// checks that the holder's session still holds the lock. A process taking the lock over gets
// it only after the old holder's session lost it, so after that check; and it then gives the
// lock up at once while the commit key is taken (see take). So either the check fails, or tx
// ends before anyone else holds the lock. (A check alone, or a lock on tx's own session, would
// leave a window between the check and COMMIT, or could not see the holder's session die.)
func (l *advisoryLock) prove(ctx context.Context, tx *sqlx.Tx, name string) error {
	if _, err := tx.ExecContext(ctx, tx.Rebind(`SELECT pg_advisory_xact_lock(`+commitKey+`)`), name); err != nil {
		return fmt.Errorf("take the %s lock's commit key: %w", name, err)
	}
	return l.check(ctx, tx, name)
}

// release unlocks on a context of its own: the run's may be canceled, the lock must still go.
// It is bounded: on a silent host, closing the connection ends the session, and the lock with
// it, as soon as the server notices.
func (l *advisoryLock) release(ctx context.Context, name string) {
	uctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if _, err := l.conn.ExecContext(uctx, l.s.db.Rebind(`SELECT pg_advisory_unlock(`+lockKey+`)`), name); err != nil && ctx.Err() == nil {
		l.s.log.Warn("release lock: its session had ended, so the lock had gone with it", "lock", name, "err", err)
	}
	_ = l.conn.Close()
}

// historyTriggers are statement triggers of history_write (migration 0009), which copies the
// table's columns by name from the catalog, so cols need not be named. Each carries its
// definition as its comment, which is what historyTriggerDefs reads back.
func (pgDialect) historyTriggers(table string, _ []string) []trigger {
	h := table + "_history"
	mk := func(op, event string) trigger {
		name := h + "_" + op
		def := "CREATE TRIGGER " + name + " AFTER " + event + " ON " + table + " " + map[string]string{
			"ins": "REFERENCING NEW TABLE AS new_rows",
			"upd": "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
			"del": "REFERENCING OLD TABLE AS old_rows",
		}[op] + " FOR EACH STATEMENT EXECUTE FUNCTION history_write()"
		return trigger{name: name, table: table, def: def, create: []string{def,
			"COMMENT ON TRIGGER " + name + " ON " + table + " IS '" + strings.ReplaceAll(def, "'", "''") + "'"}}
	}
	return []trigger{mk("ins", "INSERT"), mk("upd", "UPDATE"), mk("del", "DELETE")}
}

func (pgDialect) historyTriggerDefs(ctx context.Context, q querier) (map[string]trigger, error) {
	return readTriggers(ctx, q, `SELECT t.tgname, c.relname, coalesce(obj_description(t.oid, 'pg_trigger'), '')
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND NOT t.tgisinternal`)
}

func (pgDialect) dropTrigger(name, table string) string {
	return "DROP TRIGGER " + name + " ON " + table
}

// beginErase has nothing to ready: Postgres never writes over a row in place (scrub rewrites
// the tables).
func (pgDialect) beginErase(context.Context, *sqlx.Conn) (func(), error) { return func() {}, nil }

// scrub rewrites the tables (VACUUM (FULL), outside any transaction): an UPDATE leaves the old
// version of a row in the table's file until VACUUM reclaims the space, and even then its bytes
// until the space is reused; FULL writes the live rows to new files and removes the old ones.
// It locks each table against reads while it runs. What it cannot reach is outside the
// warehouse's tables: WAL segments until the server recycles them, replicas' and backups' copies.
func (pgDialect) scrub(ctx context.Context, conn *sqlx.Conn, tables []string) error {
	if len(tables) == 0 {
		return nil
	}
	if _, err := conn.ExecContext(ctx, `VACUUM (FULL) `+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("vacuum (full): %w", err)
	}
	return nil
}
