-- The account's request budget, shared by every hrsync process of the account (worker, manual
-- sync, onboard, forwarding serve replicas): the upstream allows 60 requests a minute per
-- account, whoever sends them. Each request reserves the next slot in one statement (GCRA, the
-- "theoretical arrival time"): tat is when the slot after the last one reserved starts; a
-- reservation takes greatest(tat, now) and moves tat one interval on. One row per account name
-- (source.account); the row is made by the first reservation. UNLOGGED: a reservation then
-- commits without waiting for the WAL to reach the disk (0.3 ms instead of 4.7 ms a request on
-- the benchmark machine). After a crash, or on a promoted standby, the table is empty: the
-- budget starts afresh, forgetting at most the slots of the next few seconds.
CREATE UNLOGGED TABLE request_budget (
    account text PRIMARY KEY CHECK (account <> ''),
    tat     timestamptz NOT NULL
);
