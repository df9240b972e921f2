-- As schema/postgres/0006_sync_runs_ledger.sql: sync_runs.status may be 'unavailable' (a
-- collection the account does not offer), and resource any collection's name. SQLite cannot
-- alter a CHECK, so the table is rebuilt with the same columns in the same order, as in 0004.
CREATE TABLE sync_runs_new (
    id                INTEGER PRIMARY KEY,
    run_id            TEXT NOT NULL,
    resource          TEXT NOT NULL CHECK (resource <> ''),
    started_at        TEXT NOT NULL,
    finished_at       TEXT,
    status            TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'inconsistent', 'guarded', 'abandoned', 'unavailable')),
    pages             INTEGER NOT NULL DEFAULT 0,
    requests          INTEGER NOT NULL DEFAULT 0,
    retries           INTEGER NOT NULL DEFAULT 0,
    rate_limited      INTEGER NOT NULL DEFAULT 0,
    walks             INTEGER NOT NULL DEFAULT 0,
    total_reported    INTEGER,
    records_seen      INTEGER NOT NULL DEFAULT 0,
    distinct_records  INTEGER NOT NULL DEFAULT 0,
    inserted          INTEGER NOT NULL DEFAULT 0,
    updated           INTEGER NOT NULL DEFAULT 0,
    unchanged         INTEGER NOT NULL DEFAULT 0,
    deleted           INTEGER NOT NULL DEFAULT 0,
    deletions_refused INTEGER NOT NULL DEFAULT 0,
    error             TEXT
) STRICT;
INSERT INTO sync_runs_new SELECT * FROM sync_runs;
DROP TABLE sync_runs;
ALTER TABLE sync_runs_new RENAME TO sync_runs;
CREATE INDEX sync_runs_resource_started ON sync_runs (resource, started_at);
