-- As schema/postgres/0031_load_guards.sql: load guards (docs/sync.md#load-guards). A run whose
-- load a guard held ends 'held' (nothing of it written), says who accepted a hold and why, and
-- each run keeps the profile of its load and the guards that tripped. SQLite cannot alter a
-- CHECK, so sync_runs is rebuilt with the same columns in the same order, as in 0006, and the
-- two new ones after them.
CREATE TABLE sync_runs_new (
    id                INTEGER PRIMARY KEY,
    run_id            TEXT NOT NULL,
    resource          TEXT NOT NULL CHECK (resource <> ''),
    started_at        TEXT NOT NULL,
    finished_at       TEXT,
    status            TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'inconsistent', 'guarded', 'abandoned', 'unavailable', 'held')),
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
    error             TEXT,
    window_from       TEXT CHECK (window_from IS NULL OR window_from GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    window_to         TEXT CHECK (window_to IS NULL OR window_to GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    account           TEXT CHECK (account <> ''),
    accepted_by       TEXT CHECK (accepted_by <> ''),
    accept_reason     TEXT CHECK (accept_reason <> '')
) STRICT;
INSERT INTO sync_runs_new (id, run_id, resource, started_at, finished_at, status, pages, requests, retries,
    rate_limited, walks, total_reported, records_seen, distinct_records, inserted, updated, unchanged,
    deleted, deletions_refused, error, window_from, window_to, account)
SELECT id, run_id, resource, started_at, finished_at, status, pages, requests, retries,
    rate_limited, walks, total_reported, records_seen, distinct_records, inserted, updated, unchanged,
    deleted, deletions_refused, error, window_from, window_to, account
FROM sync_runs;
DROP TABLE sync_runs;
ALTER TABLE sync_runs_new RENAME TO sync_runs;
CREATE INDEX sync_runs_resource_started ON sync_runs (resource, started_at);

-- The profile of each run's load, one row per column of the collection's table: how many
-- records hold a value (not null, not empty) among those served before the merge (in the
-- walk's scope) and among those staged, how many distinct values were staged (counted up to
-- distinct_cap), and for a reference, how many point at no listed row.
CREATE TABLE load_profiles (
    run          INTEGER NOT NULL REFERENCES sync_runs (id) ON DELETE CASCADE,
    column_name  TEXT NOT NULL CHECK (column_name <> ''),
    records_before INTEGER NOT NULL,
    filled_before  INTEGER NOT NULL,
    records_after  INTEGER NOT NULL,
    filled_after   INTEGER NOT NULL,
    distinct_after INTEGER NOT NULL,
    distinct_capped INTEGER NOT NULL CHECK (distinct_capped IN (0, 1)),
    unlisted_before INTEGER,
    unlisted_after  INTEGER,
    PRIMARY KEY (run, column_name)
) STRICT;

-- The guards a run's load tripped: held (accepted 0) or let through (accepted 1: by a person
-- with hrsync sync --accept, or for good by the setting sync.guards.accept).
CREATE TABLE load_holds (
    run          INTEGER NOT NULL REFERENCES sync_runs (id) ON DELETE CASCADE,
    guard        TEXT NOT NULL CHECK (guard <> ''),
    message      TEXT NOT NULL,
    before_count INTEGER NOT NULL,
    before_of    INTEGER NOT NULL,
    after_count  INTEGER NOT NULL,
    after_of     INTEGER NOT NULL,
    accepted     INTEGER NOT NULL CHECK (accepted IN (0, 1)),
    PRIMARY KEY (run, guard)
) STRICT;
