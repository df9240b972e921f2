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

func (pgDialect) jsonMembers(expr string) (from, filled, value string) {
	return "json_each(" + expr + ") e",
		`CASE json_typeof(e.value) WHEN 'null' THEN false WHEN 'string' THEN trim(e.value #>> '{}') <> ''
    WHEN 'array' THEN json_array_length(e.value) > 0 WHEN 'object' THEN e.value::text !~ '^\s*\{\s*\}\s*$' ELSE true END`,
		"e.value::text"
}

func (pgDialect) idIn(expr string) string { return expr + " = ANY(?)" }

func (pgDialect) idList(ids []int64) any { return pq.Int64Array(ids) }

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

func (pgDialect) today() string { return `(now() AT TIME ZONE 'UTC')::date` }

func (pgDialect) forUpdate() string { return ` FOR UPDATE` }

// analyzeSmall: autovacuum would gather the table's statistics late.
func (pgDialect) analyzeSmall(ctx context.Context, tx *sqlx.Tx, table string) error {
	if _, err := tx.ExecContext(ctx, `ANALYZE `+table); err != nil {
		return fmt.Errorf("analyze %s: %w", table, err)
	}
	return nil
}

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

// givenID lets an INSERT write a GENERATED ALWAYS identity column.
func (pgDialect) givenID() string { return "OVERRIDING SYSTEM VALUE" }

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

// open opens the warehouse in schema opts.Schema of the database at rawURL.
func (postgresBackend) open(_ context.Context, s *Store, rawURL string) error {
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
	// No JIT compilation in any session. The models' views are large plans: with statistics
	// they are costed under jit_above_cost (migration 0029's design), but without (tables not
	// analyzed yet, a small warehouse) the estimate crosses it, and compiling took seconds where
	// running took milliseconds: model_bradford on a six-person warehouse, 4.3 s of which LLVM
	// took 4.2 s (EXPLAIN ANALYZE) for 90 ms of work; a demo's absence refresh 5.2 s against
	// 0.36 s. Refreshes and the report turned it off per transaction; every read of hrsync's now
	// does. At 20,000 employees the models read the same with or without it (docs/benchmarks.md).
	q.Set("jit", "off")
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
	connector.silenced = s.silenced
	n := s.opts.MaxOpenConns
	if n <= 0 {
		n = DefaultMaxOpenConns
	}
	db.SetMaxOpenConns(n)
	// Unused connections close after ConnMaxIdleTime, so a warehouse with no work holds no
	// session (locks are leases that pin none: see leaseLock); as many as may be open may stay
	// idle meanwhile, so a busy serve does not reconnect per request.
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(s.opts.ConnMaxIdleTime)
	s.db, s.d = db, pgDialect{}
	return nil
}

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
	// ANALYZE with it: the planner's statistics of a table (pg_statistic, read through
	// pg_stats by any role that may read the table) keep its most common values and histogram
	// bounds, erased names and emails among them, until the table is analyzed again, which
	// replaces its rows there. scrubStatistics then reclaims the rows replaced.
	if _, err := conn.ExecContext(ctx, `VACUUM (FULL, ANALYZE) `+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("vacuum (full, analyze): %w", err)
	}
	return nil
}

// scrubStatistics, after a scrub analyzed the tables an erase changed, rewrites the catalog of
// the planner's statistics (VACUUM (FULL) pg_catalog.pg_statistic): the rows the ANALYZE
// replaced, with the erased values among their samples, stay in its file as dead rows until
// then (a plain VACUUM frees their space but leaves their bytes). Only the catalog's owner (a
// superuser) may, or from Postgres 16 a role granted MAINTAIN on it; a warehouse role that is
// neither leaves them to autovacuum, which frees their space, and this says so once, at WARN,
// with no value. It holds pg_statistic's lock for the rewrite (well under a second for a
// warehouse's catalog): queries planned meanwhile wait for it.
func (s *Store) scrubStatistics(ctx context.Context, conn *sqlx.Conn) {
	if s.pg == nil {
		return
	}
	var may bool
	err := conn.QueryRowxContext(ctx, `SELECT coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false)
    OR pg_has_role(current_user, c.relowner, 'USAGE')
    OR CASE WHEN current_setting('server_version_num')::int >= 160000 THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END
FROM pg_class c WHERE c.oid = 'pg_catalog.pg_statistic'::regclass`).Scan(&may)
	if err == nil && may {
		if _, err = conn.ExecContext(ctx, `VACUUM (FULL) pg_catalog.pg_statistic`); err == nil {
			return
		}
	}
	if s.statsWarned.Swap(true) {
		return
	}
	args := []any{"why", "the warehouse's role is neither pg_statistic's owner nor granted MAINTAIN on it (Postgres 16 and later)"}
	if err != nil {
		args = []any{"err", err}
	}
	s.log.Warn("erase: the planner statistics were gathered again without the erased values, "+
		"but their old rows may stay in the file of pg_catalog.pg_statistic until autovacuum reclaims them; "+
		"run VACUUM (FULL) pg_catalog.pg_statistic as a superuser to remove them now (docs/personal-data.md)",
		args...)
}
