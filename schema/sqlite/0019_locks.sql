-- The named locks' lease table, as in schema/postgres/0019_locks.sql. SQLite's locks are flocks
-- on files beside the database (released by the kernel when their process dies), so this table
-- stays empty: it keeps the two dialects' tables in step.
CREATE TABLE locks (
    name       TEXT PRIMARY KEY CHECK (name <> ''),
    holder     TEXT NOT NULL,
    token      INTEGER NOT NULL CHECK (token > 0),
    taken_at   TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT;
