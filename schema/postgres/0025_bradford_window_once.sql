-- SQLite's 0025 (schema/sqlite/0025_bradford_window_once.sql) reshapes its model_bradford so
-- that one as_of costs less there. Postgres keeps 0024's view, whose plan already computes the
-- window once (0.8 s for one as_of at 20,000 employees, docs/benchmarks.md#models): nothing
-- changes here; the number is kept so that both backends' migrations stay in step.
SELECT 1;
