-- Load guards (docs/sync.md#load-guards): a run whose load a guard held ends 'held' (nothing of
-- it written), the ledger says who accepted a hold and why, and each run keeps the profile of
-- its load and the guards that tripped.
ALTER TABLE sync_runs DROP CONSTRAINT sync_runs_status_check;
ALTER TABLE sync_runs ADD CONSTRAINT sync_runs_status_check
    CHECK (status IN ('running', 'ok', 'failed', 'inconsistent', 'guarded', 'abandoned', 'unavailable', 'held'));
ALTER TABLE sync_runs ADD COLUMN accepted_by text CHECK (accepted_by <> '');
ALTER TABLE sync_runs ADD COLUMN accept_reason text CHECK (accept_reason <> '');

-- The profile of each run's load, one row per column of the collection's table: how many
-- records hold a value (not null, not empty) among those served before the merge (in the
-- walk's scope) and among those staged, how many distinct values were staged (counted up to
-- a cap), and for a reference, how many point at no listed row.
CREATE TABLE load_profiles (
    run             bigint NOT NULL REFERENCES sync_runs (id) ON DELETE CASCADE,
    column_name     text NOT NULL CHECK (column_name <> ''),
    records_before  bigint NOT NULL,
    filled_before   bigint NOT NULL,
    records_after   bigint NOT NULL,
    filled_after    bigint NOT NULL,
    distinct_after  bigint NOT NULL,
    distinct_capped boolean NOT NULL,
    unlisted_before bigint,
    unlisted_after  bigint,
    PRIMARY KEY (run, column_name)
);

-- The guards a run's load tripped: held (accepted false) or let through (accepted: by a person
-- with hrsync sync --accept, or for good by the setting sync.guards.accept).
CREATE TABLE load_holds (
    run          bigint NOT NULL REFERENCES sync_runs (id) ON DELETE CASCADE,
    guard        text NOT NULL CHECK (guard <> ''),
    message      text NOT NULL,
    before_count bigint NOT NULL,
    before_of    bigint NOT NULL,
    after_count  bigint NOT NULL,
    after_of     bigint NOT NULL,
    accepted     boolean NOT NULL,
    PRIMARY KEY (run, guard)
);
