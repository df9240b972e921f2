-- The ledger of the rest of the API. A collection the account does not offer (the source answers
-- 403 or 404 on its first page) is recorded with status 'unavailable': skipped, nothing written,
-- not a failure. And a run may be of any collection the build declares, not only employees and
-- working patterns: the names come from the code, which the resource check would have to follow
-- migration by migration.
ALTER TABLE sync_runs DROP CONSTRAINT sync_runs_status_check;
ALTER TABLE sync_runs ADD CONSTRAINT sync_runs_status_check
    CHECK (status IN ('running', 'ok', 'failed', 'inconsistent', 'guarded', 'abandoned', 'unavailable'));
ALTER TABLE sync_runs DROP CONSTRAINT sync_runs_resource_check;
ALTER TABLE sync_runs ADD CONSTRAINT sync_runs_resource_check CHECK (resource <> '');
