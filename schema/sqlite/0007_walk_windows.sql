-- As schema/postgres/0007_walk_windows.sql: the part of the collection each run walked,
-- window_from..window_to (YYYY-MM-DD, inclusive), or both null for a whole walk. SQLite adds a
-- column with a CHECK that names only that column; the pair's rule is kept by the code that
-- writes them (sink.FinishRun writes both or neither).
ALTER TABLE sync_runs ADD COLUMN window_from TEXT CHECK (window_from IS NULL OR window_from GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]');
ALTER TABLE sync_runs ADD COLUMN window_to TEXT CHECK (window_to IS NULL OR window_to GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]');
