-- Windowed walks. A nightly sync may walk a growing, dated collection (absences, sicknesses,
-- leave requests) only within a window around today; the ledger says which part each run
-- walked: window_from..window_to (dates, inclusive), or both null for a walk of the whole
-- collection. The last ok run with no window is when the collection was last walked whole,
-- which decides when the next full walk is due.
ALTER TABLE sync_runs ADD COLUMN window_from date;
ALTER TABLE sync_runs ADD COLUMN window_to date;
ALTER TABLE sync_runs ADD CONSTRAINT sync_runs_window_check
    CHECK ((window_from IS NULL) = (window_to IS NULL) AND (window_from IS NULL OR window_from <= window_to));
