-- A collection the account does not offer (the source answers 403 or 404 on its first page) is
-- recorded with status 'unavailable': skipped, nothing written, not a failure.
ALTER TABLE sync_runs DROP CONSTRAINT sync_runs_status_check;
ALTER TABLE sync_runs ADD CONSTRAINT sync_runs_status_check
    CHECK (status IN ('running', 'ok', 'failed', 'inconsistent', 'guarded', 'abandoned', 'unavailable'));
