-- The account's request budget, as in schema/postgres/0011_request_budget.sql: one row per
-- account name, tat the start of the slot after the last one reserved, here in microseconds
-- since the Unix epoch (SQLite has no timestamp type to compute with). Every process of the
-- account opens the same file, so the file's clock is the host's.
CREATE TABLE request_budget (
    account TEXT PRIMARY KEY CHECK (account <> ''),
    tat     INTEGER NOT NULL
);
