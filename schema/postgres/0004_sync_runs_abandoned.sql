-- A run whose process stopped before it finished (killed, the machine lost) is closed by the next
-- process that holds the sync lock with status 'abandoned' and finished_at the time it noticed.
ALTER TABLE sync_runs DROP CONSTRAINT sync_runs_status_check;
ALTER TABLE sync_runs ADD CONSTRAINT sync_runs_status_check
    CHECK (status IN ('running', 'ok', 'failed', 'inconsistent', 'guarded', 'abandoned'));
