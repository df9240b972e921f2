-- Creates sent to serve mode with an Idempotency-Key: the first answer, given back to a retry
-- with the same key instead of a second create. One row per serve key (its name: two consumers
-- never see each other's) and Idempotency-Key value. status 0 is a create in progress;
-- employee_id is set in the transaction that created the employee (local writes), so a create
-- is never made twice even when the process dies before it stores the answer. created_at is
-- Unix seconds; rows older than serve.idempotency_ttl are ignored and deleted a few at a time.
CREATE TABLE idempotency_keys (
    client       text NOT NULL CHECK (client <> ''),
    idem_key     text NOT NULL CHECK (idem_key <> ''),
    request_hash text NOT NULL,
    status       integer NOT NULL DEFAULT 0,
    body         BLOB,
    location     text NOT NULL DEFAULT '',
    employee_id  bigint,
    created_at   bigint NOT NULL,
    PRIMARY KEY (client, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
