package sink

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/schema"
)

// sqliteDialect is the SQLite dialect: the warehouse in one file, hrsync's own. Its tables are STRICT:
// dates and timestamps are TEXT in the forms the source's are normalized to (YYYY-MM-DD,
// YYYY-MM-DDTHH:MM:SSZ in UTC), decimals TEXT as the source wrote them, JSON TEXT, booleans 0/1.
type sqliteDialect struct{}

func (sqliteDialect) name() schema.Dialect { return schema.SQLite }

func (sqliteDialect) columnType(k Kind) string {
	switch k {
	case KindID, KindInt, KindBool:
		return "INTEGER"
	}
	return "TEXT"
}

// read reads every kind as stored: the text forms are the ones Go wants.
func (sqliteDialect) read(_ Kind, expr string) string { return expr }

// comparable compares every kind as text.
func (sqliteDialect) comparable(_ Kind, expr string) string { return "CAST(" + expr + " AS text)" }

func (sqliteDialect) pick(_ Kind, expr string) string { return "max(" + expr + ")" }

func (sqliteDialect) jsonMembers(expr string) (from, filled, value string) {
	return "json_each(" + expr + ") e",
		`CASE e.type WHEN 'null' THEN 0 WHEN 'text' THEN trim(e.value) <> ''
    WHEN 'array' THEN json_array_length(e.value) > 0 WHEN 'object' THEN e.value <> '{}' ELSE 1 END`,
		"e.value"
}

// idIn reads the list from a JSON array: SQLite has no array parameters, and an IN list of
// placeholders would be a statement per length.
func (sqliteDialect) idIn(expr string) string {
	return expr + " IN (SELECT value FROM json_each(?))"
}

func (sqliteDialect) idList(ids []int64) any {
	b := make([]byte, 0, 2+len(ids)*8)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

func (sqliteDialect) today() string { return `date('now')` }

// forUpdate: a transaction takes the write lock as it begins (_txlock=immediate).
func (sqliteDialect) forUpdate() string { return "" }

// analyzeSmall: SQLite's planner does without statistics for the models' tables.
func (sqliteDialect) analyzeSmall(context.Context, *sqlx.Tx, string) error { return nil }

func (sqliteDialect) now() string { return `strftime('%Y-%m-%dT%H:%M:%SZ', 'now')` }

// sqliteMicros is the current time in microseconds since the Unix epoch (julianday keeps
// milliseconds); 'now' is the same throughout one statement.
const sqliteMicros = `CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)`

// reserveSlot is one autocommit statement: it takes the file's write lock (waiting for it up to
// the busy timeout, or the context), so reservations of every process queue on the file.
func (sqliteDialect) reserveSlot() string {
	return `INSERT INTO request_budget (account, tat) VALUES (?, ` + sqliteMicros + ` + ?)
ON CONFLICT (account) DO UPDATE SET tat = max(tat, ` + sqliteMicros + `) + ?
RETURNING tat - ? - ` + sqliteMicros
}

// stage runs one multi-row INSERT per batch, well under SQLite's 32,766 variables.
func (sqliteDialect) stage(ctx context.Context, tx *sqlx.Tx, table string, cols []string, rows [][]any) error {
	per := max(1, 30000/len(cols))
	ph := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	for start := 0; start < len(rows); start += per {
		batch := rows[start:min(start+per, len(rows))]
		args := make([]any, 0, len(batch)*len(cols))
		for _, row := range batch {
			args = append(args, row...)
		}
		q := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(ph+",", len(batch)), ",")
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// serializeWrites has nothing to do: every write transaction begins IMMEDIATE (see openSQLite),
// holding the file's write lock from its start.
func (sqliteDialect) serializeWrites(context.Context, *sqlx.Tx) error { return nil }

// givenID is nothing: an INTEGER PRIMARY KEY takes the value given.
func (sqliteDialect) givenID() string { return "" }

// indexStaged indexes the table's ids: the merge's NOT EXISTS lookups into it (which records
// the walk no longer lists) would otherwise scan it once per served row, as SQLite makes
// automatic indexes for joins but not for those correlated subqueries.
func (sqliteDialect) indexStaged(ctx context.Context, ex execer, table string) error {
	if _, err := ex.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS `+table+`_id ON `+table+` (id)`); err != nil {
		return fmt.Errorf("index %s: %w", table, err)
	}
	return nil
}

// analyzeWritten runs PRAGMA optimize, as SQLite advises after changes to a database's content:
// it analyzes the tables whose statistics it judges missing or out of date (the query planner
// picks between indexes with them), each read only in part (analysis_limit), and otherwise does
// nothing.
func (sqliteDialect) analyzeWritten(ctx context.Context, conn *sqlx.Conn, _ []string) error {
	for _, q := range []string{`PRAGMA analysis_limit = 1000`, `PRAGMA optimize`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// snapshot: a SQLite read transaction sees one snapshot of the file (WAL).
func (sqliteDialect) snapshot() *sql.TxOptions { return &sql.TxOptions{ReadOnly: true} }

func (sqliteDialect) tableExists(ctx context.Context, db *sql.DB, name string) (bool, error) {
	var ok bool
	err := db.QueryRowContext(ctx, `SELECT count(*) > 0 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?`, name).Scan(&ok)
	return ok, err
}

func (sqliteDialect) columnsQuery() string {
	return `SELECT name, type FROM pragma_table_info(?)`
}

// createSchema has nothing to do: the file is the warehouse.
func (sqliteDialect) createSchema(context.Context, *sql.DB, string) error { return nil }

// lockMigrations has nothing to do: the migration's transaction holds the write lock.
func (sqliteDialect) lockMigrations(context.Context, *sql.Tx) error { return nil }

// open opens the SQLite file rawURL names, and migrates it: the file belongs to hrsync alone.
func (sqliteBackend) open(ctx context.Context, s *Store, rawURL string) error {
	path, err := SQLitePath(rawURL)
	if err != nil {
		return err
	}
	s.location = path
	if err := privateSQLiteFile(path, s.log); err != nil { // before the driver creates it 0644
		return err
	}
	busy := s.opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	// IMMEDIATE transactions take the write lock up front, so two writers queue on busy_timeout
	// instead of failing mid-transaction; one that still cannot have it fails with ErrBusy.
	// Read-only transactions begin DEFERRED and take no write lock.
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	db, err := sqlx.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("open warehouse %s: %w", s.location, err)
	}
	n := s.opts.MaxOpenConns
	if n <= 0 {
		n = 8
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	// WAL lets readers (serve) run beside the writer and never wait for it. The mode is stored in
	// the file, so it is set once, by the first open; later opens only read it (switching needs
	// the file to itself, which an open beside a running sync must not wait for).
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		_ = db.Close()
		return fmt.Errorf("open warehouse %s: journal mode: %w", s.location, readOnlyFileErr(busyErr(err)))
	}
	if !strings.EqualFold(mode, "wal") {
		if err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
			_ = db.Close()
			return fmt.Errorf("open warehouse %s: set WAL journal mode: %w", s.location, readOnlyFileErr(busyErr(err)))
		}
	}
	s.db, s.d = db, sqliteDialect{}
	// The file belongs to hrsync alone: it is migrated on open (and Migrate says what this did).
	if s.migratedOnOpen, err = migrate(ctx, db.DB, s.d); err != nil {
		_ = db.Close()
		return fmt.Errorf("open warehouse %s: %w", s.location, err)
	}
	return nil
}

// fileLock is an flock on a file beside the database, released by the kernel when the process
// dies.
type fileLock struct {
	file *os.File
	path string
}

func (sqliteDialect) tryLock(_ context.Context, s *Store, name string) (processLock, bool, error) {
	l := &fileLock{path: s.location + "." + name + ".lock"}
	f, ok, err := flock(l.path)
	if err != nil || !ok {
		return nil, ok, err
	}
	l.file = f
	return l, true, nil
}

// check says whether the locked file is still the one at the lock's path: an flock cannot be
// taken from a live process, but its file can be removed and another process lock a new one.
func (l *fileLock) check(_ context.Context, _ queryer, name string) error {
	a, err1 := l.file.Stat()
	b, err2 := os.Stat(l.path)
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		return &LockLostError{Name: name, Why: "its lock file " + l.path + " was removed or replaced"}
	}
	return nil
}

// prove checks the file within tx, which holds the write lock from its start (BEGIN
// IMMEDIATE), so no other merge writes until it ends.
func (l *fileLock) prove(ctx context.Context, tx *sqlx.Tx, name string) error {
	return l.check(ctx, tx, name)
}

// seal has nothing to renew: an flock lasts as long as its file is open.
func (l *fileLock) seal(context.Context, *sqlx.Tx, string) error { return nil }

// settle has nothing to do: the flock does not depend on the transaction.
func (l *fileLock) settle(*sqlx.Tx, bool) {}

// watch has nothing to watch: an flock lasts as long as its file is open, and check finds a
// file removed or replaced.
func (l *fileLock) watch(context.CancelCauseFunc) {}

// release closes the file, which releases the lock.
func (l *fileLock) release(context.Context, string) { _ = l.file.Close() }

// historyTriggers are row triggers naming every column (SQLite triggers run no dynamic SQL):
// valid_from and valid_to are TEXT timestamps with milliseconds, and a second write of a row in
// the same millisecond replaces that millisecond's version. A hard delete closes the current
// version. Their definitions are what sqlite_master keeps of them.
func (sqliteDialect) historyTriggers(table string, cols []string) []trigger {
	const now = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`
	h := table + "_history"
	closeOld := "    UPDATE " + h + " SET valid_to = " + now + "\n    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < " + now + ";\n"
	dropSame := func(row string) string {
		return "    DELETE FROM " + h + " WHERE id = " + row + ".id AND valid_from = " + now + ";\n"
	}
	insert := "    INSERT INTO " + h + " (valid_from, " + strings.Join(cols, ", ") + ")\n    VALUES (" + now + ", NEW." + strings.Join(cols, ", NEW.") + ");\n"
	mk := func(op, event, body string) trigger {
		name := h + "_" + op
		def := "CREATE TRIGGER " + name + " AFTER " + event + " ON " + table + " BEGIN\n" + body + "END"
		return trigger{name: name, table: table, create: []string{def}, def: def}
	}
	return []trigger{
		mk("ins", "INSERT", dropSame("NEW")+insert),
		mk("upd", "UPDATE", closeOld+dropSame("NEW")+insert),
		mk("del", "DELETE", closeOld+dropSame("OLD")),
	}
}

func (sqliteDialect) historyTriggerDefs(ctx context.Context, q querier) (map[string]trigger, error) {
	return readTriggers(ctx, q, `SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'`)
}

func (sqliteDialect) dropTrigger(name, _ string) string { return "DROP TRIGGER " + name }

// beginErase turns secure_delete on for the erase's connection: SQLite then overwrites with
// zeros the content it deletes or moves, instead of leaving it in free space.
func (sqliteDialect) beginErase(ctx context.Context, conn *sqlx.Conn) (func(), error) {
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return nil, fmt.Errorf("secure delete: %w", err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		_, _ = conn.ExecContext(ctx, `PRAGMA secure_delete = OFF`)
	}, nil
}

// scrub rebuilds the whole file (VACUUM: no page keeps an old value, in use or free), then
// copies the write-ahead log into it and truncates the log to nothing (wal_checkpoint(TRUNCATE)):
// the old values' frames are gone from the -wal file too. A reader still on an older snapshot
// (a serve request) holds the log: the checkpoint waits for it up to the busy timeout, and an
// error says so if it still cannot.
//
// First, the tables' statistics: this build of SQLite keeps sampled index keys in sqlite_stat4
// (SQLITE_ENABLE_STAT4), erased names and emails among them, until the table is analyzed again.
// Each table of tables with samples there is analyzed again, which deletes its samples (and,
// outside an analysis_limit, takes new ones of what the table holds now); the VACUUM after it
// leaves no page with the old ones.
func (sqliteDialect) scrub(ctx context.Context, conn *sqlx.Conn, tables []string) error {
	var sampled []string
	if len(tables) > 0 {
		q, args, err := sqlx.In(`SELECT DISTINCT tbl FROM sqlite_stat4 WHERE tbl IN (?) ORDER BY tbl`, tables)
		if err != nil {
			return fmt.Errorf("statistics: %w", err)
		}
		var has bool
		if err := conn.QueryRowxContext(ctx, `SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat4'`).Scan(&has); err != nil {
			return fmt.Errorf("statistics: %w", busyErr(err))
		}
		if has {
			if err := conn.SelectContext(ctx, &sampled, q, args...); err != nil {
				return fmt.Errorf("statistics: %w", busyErr(err))
			}
		}
	}
	for _, t := range sampled {
		if _, err := conn.ExecContext(ctx, `ANALYZE "`+strings.ReplaceAll(t, `"`, `""`)+`"`); err != nil {
			return fmt.Errorf("analyze %s: %w", t, busyErr(err))
		}
	}
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("vacuum: %w", busyErr(err))
	}
	var busy, frames, done int
	if err := conn.QueryRowxContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done); err != nil {
		return fmt.Errorf("checkpoint: %w", busyErr(err))
	}
	if busy != 0 {
		return fmt.Errorf("checkpoint: a reader still holds the write-ahead log (%d of %d frames copied); scrub again when it is done", done, frames)
	}
	return nil
}
