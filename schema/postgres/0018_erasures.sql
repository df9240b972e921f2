-- Erasure (UK/EU GDPR Art. 17; docs/personal-data.md, "Erasure on request"). erasures is the
-- sticky state: what stays erased across syncs. An employee's erasure (kind 'employee',
-- collection 'employees') takes the classes of that person out of their records, their events'
-- and every copy of them on other records; a record's (kind 'record': retention of a sickness's
-- health details) out of that one record. A sync erases the same classes of what it stages
-- before the merge, so nothing erased is written again, until the erasure is lifted (lifted_at).
-- classes are the class names (v1.Class), comma-separated; cause is 'request' or
-- 'retention: <rule>'. reason is what the operator wrote, and never names the person.
CREATE TABLE erasures (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text NOT NULL CHECK (kind IN ('employee', 'record')),
    collection  text NOT NULL CHECK (collection <> ''),
    subject_id  bigint NOT NULL,
    classes     text NOT NULL CHECK (classes <> ''),
    cause       text NOT NULL CHECK (cause = 'request' OR cause LIKE 'retention: %'),
    reason      text NOT NULL DEFAULT '',
    erased_at   timestamptz NOT NULL,
    lifted_at   timestamptz,
    lift_reason text
);
CREATE INDEX erasures_subject ON erasures (collection, subject_id);

-- erasure_log is the audit ledger: every erase, retention and lift, when, why, of whom (subject:
-- 'employee 42', 'sicknesses 7'), which classes, and rows: a JSON object of the rows changed per
-- table. It never holds an erased value.
CREATE TABLE erasure_log (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at      timestamptz NOT NULL,
    action  text NOT NULL CHECK (action IN ('erase', 'lift', 'retention')),
    cause   text NOT NULL,
    reason  text NOT NULL DEFAULT '',
    subject text NOT NULL,
    classes text NOT NULL,
    rows    text NOT NULL DEFAULT '{}'
);
