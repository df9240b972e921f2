package sink

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/hrsync/hrsync/schema"
)

const versionTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at text NOT NULL
)`

// schemaVersion reads the applied version (0 for a fresh database).
func schemaVersion(ctx context.Context, db *sql.DB, d dialect) (int, error) {
	exists, err := d.tableExists(ctx, db, "schema_migrations")
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// checkSchema refuses a warehouse whose schema is behind (*schema.BehindError) or ahead
// (*schema.AheadError, which is schema.ErrAhead): an older build never reads or writes a schema
// a newer one migrated, whatever the newer migrations were.
func checkSchema(ctx context.Context, db *sql.DB, d dialect) error {
	cur, err := schemaVersion(ctx, db, d)
	if err != nil {
		return err
	}
	latest := schema.Latest(d.name())
	switch {
	case cur < latest:
		return &schema.BehindError{Current: cur, Latest: latest}
	case cur > latest:
		return &schema.AheadError{Current: cur, Latest: latest}
	}
	return nil
}

// migrate applies the migrations not yet applied, each in its own transaction, and returns the
// versions it applied. Concurrent migrators are serialized (dialect.lockMigrations), so each
// step runs once. On Postgres the connection's search_path must name the target schema, which
// must exist.
//
// A warehouse already at this build's version is only read: migrate then takes no write lock,
// so opening a current SQLite file never waits for (or fails behind) another process's write.
func migrate(ctx context.Context, db *sql.DB, d dialect) ([]int, error) {
	ms, err := schema.Migrations(d.name())
	if err != nil {
		return nil, err
	}
	cur, err := schemaVersion(ctx, db, d)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var applied []int
	if cur < len(ms) {
		if _, err := db.ExecContext(ctx, versionTable); err != nil {
			return nil, fmt.Errorf("migrate: create version table: %w", err)
		}
		for i, m := range ms {
			done, err := applyMigration(ctx, db, d, m, i == len(ms)-1)
			if err != nil {
				return applied, fmt.Errorf("migrate: %04d_%s: %w", m.Version, m.Name, err)
			}
			if done {
				applied = append(applied, m.Version)
			}
		}
		// Read again: a newer build may have migrated further meanwhile.
		if cur, err = schemaVersion(ctx, db, d); err != nil {
			return applied, err
		}
	}
	if cur > len(ms) {
		return applied, fmt.Errorf("migrate: %w", &schema.AheadError{Current: cur, Latest: len(ms)})
	}
	// The history triggers are made from the declarations: a warehouse whose triggers another
	// build made (or a hand) gets this build's, here when no migration was left to make them.
	// Only read when they are this build's already.
	if err := historyCurrent(ctx, db, d); err != nil {
		return applied, fmt.Errorf("migrate: %w", err)
	}
	return applied, nil
}

// historyCurrent makes the history triggers this build declares, unless the warehouse has them.
func historyCurrent(ctx context.Context, db *sql.DB, d dialect) error {
	stale, err := staleHistory(ctx, db, d, historyTriggers(d, tables))
	if err != nil || len(stale) == 0 {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := d.lockMigrations(ctx, tx); err != nil {
		return err
	}
	if err := remakeHistory(ctx, tx, d, historyTriggers(d, tables)); err != nil {
		return err
	}
	return tx.Commit()
}

// applyMigration applies m in its own transaction, unless another migrator did. The last
// migration's transaction also makes the history triggers (history.go), so the warehouse is
// never at this build's version with another build's triggers.
func applyMigration(ctx context.Context, db *sql.DB, d dialect, m schema.Migration, last bool) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	if err := d.lockMigrations(ctx, tx); err != nil {
		return false, err
	}
	bind := sqlx.BindType(string(d.name()))
	var n int
	if err := tx.QueryRowContext(ctx, sqlx.Rebind(bind, `SELECT count(*) FROM schema_migrations WHERE version = ?`), m.Version).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return false, err
	}
	if last {
		if err := remakeHistory(ctx, tx, d, historyTriggers(d, tables)); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, sqlx.Rebind(bind, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, `+d.read(KindTimestamp, d.now())+`)`), m.Version, m.Name); err != nil {
		return false, err
	}
	return true, tx.Commit()
}
