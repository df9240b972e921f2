-- Erasure, as in schema/postgres/0018_erasures.sql: erasures, the sticky state (what stays
-- erased across syncs), and erasure_log, the audit ledger (never an erased value).
CREATE TABLE erasures (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('employee', 'record')),
    collection  TEXT NOT NULL CHECK (collection <> ''),
    subject_id  INTEGER NOT NULL,
    classes     TEXT NOT NULL CHECK (classes <> ''),
    cause       TEXT NOT NULL CHECK (cause = 'request' OR cause LIKE 'retention: %'),
    reason      TEXT NOT NULL DEFAULT '',
    erased_at   TEXT NOT NULL,
    lifted_at   TEXT,
    lift_reason TEXT
) STRICT;
CREATE INDEX erasures_subject ON erasures (collection, subject_id);

CREATE TABLE erasure_log (
    id      INTEGER PRIMARY KEY,
    at      TEXT NOT NULL,
    action  TEXT NOT NULL CHECK (action IN ('erase', 'lift', 'retention')),
    cause   TEXT NOT NULL,
    reason  TEXT NOT NULL DEFAULT '',
    subject TEXT NOT NULL,
    classes TEXT NOT NULL,
    rows    TEXT NOT NULL DEFAULT '{}'
) STRICT;
