-- An erased person's emails as keyed fingerprints, and the warehouse's secret they are keyed
-- with, as in schema/postgres/0026_erased_identities.sql.
CREATE TABLE erasure_secret (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    secret BLOB NOT NULL CHECK (length(secret) = 32)
) STRICT;

CREATE TABLE erased_identities (
    erasure_id INTEGER NOT NULL REFERENCES erasures (id),
    email_key  TEXT NOT NULL CHECK (email_key <> ''),
    PRIMARY KEY (erasure_id, email_key)
) STRICT;
CREATE INDEX erased_identities_key ON erased_identities (email_key);
