-- The onboarding ledger, as in schema/postgres/0003_onboarding.sql.
CREATE TABLE onboarding_rows (
    id          INTEGER PRIMARY KEY,
    file_hash   TEXT NOT NULL,
    file_name   TEXT NOT NULL,
    line        INTEGER NOT NULL,
    email       TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('sending', 'created', 'skipped', 'rejected', 'failed')),
    employee_id INTEGER,
    reason      TEXT,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    updated_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    UNIQUE (file_hash, line)
) STRICT;
CREATE INDEX onboarding_rows_email ON onboarding_rows (email);
