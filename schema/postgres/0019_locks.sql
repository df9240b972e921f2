-- The warehouse's named locks (sink.Store.TryLock), as leases: a row per lock name, held by the
-- process named holder until expires_at (the database's clock), renewed by its holder well
-- inside that time. token rises by one at every take, so a holder whose lease was taken over
-- (its token changed) knows it, and a merge under the lock locks its row first: a taker waits
-- for that merge to end. A released lease keeps its row (expired), so tokens never repeat.
-- Replaces the session advisory locks, which pinned a session per lock held.
CREATE TABLE locks (
    name       text PRIMARY KEY CHECK (name <> ''),
    holder     text NOT NULL,
    token      bigint NOT NULL CHECK (token > 0),
    taken_at   timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
