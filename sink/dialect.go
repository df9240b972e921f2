package sink

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/schema"
)

// dialect is everything that differs between the warehouse's two databases: Postgres
// (postgres.go) and an embedded SQLite file (sqlite.go). Other files write one statement for both,
// with ? placeholders (sqlx.Rebind turns them into $1… for Postgres), and ask the dialect for what
// cannot be written the same way; only sickness_days.go, whose statement and row types differ
// throughout, asks which one it has. Which one a URL names is backendOf's (backend.go).
type dialect interface {
	// name names the dialect's migrations.
	name() schema.Dialect
	// columnType is the type a column of kind k is declared with.
	columnType(k Kind) string
	// read selects a column of kind k so that both dialects hand Go the same value: dates as
	// YYYY-MM-DD, timestamps as YYYY-MM-DDTHH:MM:SSZ in UTC, decimals and JSON as their text,
	// without any parsing on the way out.
	read(k Kind, expr string) string
	// comparable is how the merge compares a column of kind k: decimals and JSON as text ("30.0"
	// and "30.00" differ, as the source's text does; json has no equality), the other kinds
	// however is cheapest where that gives the same answer.
	comparable(k Kind, expr string) string
	// pick is one value of a column of kind k over a group of rows (an aggregate): the same
	// whatever order the rows came in.
	pick(k Kind, expr string) string
	// now is the current time as a SQL expression, as timestamps are stored.
	now() string
	// today is the database's current date in UTC as a SQL expression of a date.
	today() string
	// forUpdate follows a SELECT of one row that a transaction will write, to make a second
	// writer wait for it ("" where transactions take the write lock first, as SQLite's do).
	forUpdate() string
	// analyzeSmall gathers, within tx, the planner's statistics of a small table just rewritten
	// that the next statements join, where the database would gather them late or never.
	analyzeSmall(ctx context.Context, tx *sqlx.Tx, table string) error
	// jsonMembers is the members of a JSON object column expr as a relation aliased e for a
	// FROM list (with e.key their names), the condition that a member holds a value (not null,
	// not empty), and the member's value as text.
	jsonMembers(expr string) (from, filled, value string)
	// idIn is the condition that expr is one of a list of ids, given as one parameter whose
	// value is idList's: one statement, prepared once, for a list of any length.
	idIn(expr string) string
	idList(ids []int64) any
	// stage inserts rows (each a value per column of cols) into table, within tx.
	stage(ctx context.Context, tx *sqlx.Tx, table string, cols []string, rows [][]any) error
	// serializeWrites makes tx wait for, then exclude, the other writers of the served tables
	// (merges and creates) until it ends.
	serializeWrites(ctx context.Context, tx *sqlx.Tx) error
	// givenID goes between an INSERT's columns and its VALUES when the statement gives an
	// identity column's value itself (the audit ledger's ids, auditID).
	givenID() string
	// indexStaged readies a temporary table of staged rows for joins and lookups on its id; a
	// second call for the same table does no harm.
	indexStaged(ctx context.Context, ex execer, table string) error
	// analyzeWritten, after a merge wrote rows of tables, gathers the planner's statistics of
	// those the database would otherwise leave without, cheaply: it runs outside the merge's
	// transaction, on conn, within the statement timeout.
	analyzeWritten(ctx context.Context, conn *sqlx.Conn, tables []string) error
	// snapshot are the options of a read-only transaction whose reads all see one snapshot.
	snapshot() *sql.TxOptions
	// tableExists reports whether the warehouse has the table (or view).
	tableExists(ctx context.Context, db *sql.DB, name string) (bool, error)
	// columnsQuery lists a table's columns (the one parameter) and their declared types, as
	// columnType names them, as rows of (name, type).
	columnsQuery() string
	// createSchema makes the warehouse's schema when it does not exist.
	createSchema(ctx context.Context, db *sql.DB, name string) error
	// historyTriggers are the triggers that keep the history of table (see history.go), whose
	// versions copy cols.
	historyTriggers(table string, cols []string) []trigger
	// historyTriggerDefs reads the warehouse's history triggers, by name, each with its table
	// and its definition as historyTriggers declares it (def).
	historyTriggerDefs(ctx context.Context, q querier) (map[string]trigger, error)
	// dropTrigger is the statement that drops the trigger on table.
	dropTrigger(name, table string) string
	// lockMigrations serializes migrators: it runs first in each migration's transaction.
	lockMigrations(ctx context.Context, tx *sql.Tx) error
	// reserveSlot is one statement reserving the next request slot of an account's budget
	// (request_budget, GCRA): parameters account and the spacing in microseconds, each as often
	// as reserveArgs repeats them; it returns the microseconds from the database's now to the
	// start of the slot reserved (0 or less: the slot is now).
	reserveSlot() string
	// beginErase readies conn for an erase (erase.go) to leave nothing of what it erases in
	// the database's pages; done undoes it once the erase and its scrub are over.
	beginErase(ctx context.Context, conn *sqlx.Conn) (done func(), err error)
	// scrub, after an erase committed on conn, makes the old values of tables unreadable in
	// the database's files.
	scrub(ctx context.Context, conn *sqlx.Conn, tables []string) error
	// tryLock takes the named lock shared by every process using the warehouse, without
	// waiting; ok is false when another process holds it.
	tryLock(ctx context.Context, s *Store, name string) (l processLock, ok bool, err error)
}

// execer runs a statement on a connection or in a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// processLock is a named lock this process holds (see Store.TryLock).
type processLock interface {
	// check says whether this process still holds it: nil, or a *LockLostError.
	check(ctx context.Context, q queryer, name string) error
	// prove fails tx with a *LockLostError unless this process holds the lock, such that no
	// other holder can commit a transaction proved under it before tx ends.
	prove(ctx context.Context, tx *sqlx.Tx, name string) error
	// seal runs last in a transaction prove began, before COMMIT: it renews what a long
	// transaction may have let run out (a lease).
	seal(ctx context.Context, tx *sqlx.Tx, name string) error
	// settle is told that a transaction prove began has ended, committed or not.
	settle(tx *sqlx.Tx, committed bool)
	// watch is given what stops the work under the lock, with its cause: called when this
	// process can no longer be sure it holds the lock.
	watch(stop context.CancelCauseFunc)
	// release gives it back.
	release(ctx context.Context, name string)
}

// tableColumns reads a table's columns and their declared types (see dialect.columnsQuery).
func tableColumns(ctx context.Context, db *sql.DB, d dialect, table string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, d.columnsQuery(), table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, err
		}
		cols[name] = typ
	}
	return cols, rows.Err()
}
