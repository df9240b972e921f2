-- The onboarding ledger: one row per CSV row, by the file's content hash and the row's line,
-- written before a create is sent and after it is answered, so a crash, a retry or the same file
-- dropped again never creates anyone twice.
CREATE TABLE onboarding_rows (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    file_hash   text NOT NULL,     -- sha256 of the file's bytes
    file_name   text NOT NULL,
    line        integer NOT NULL,
    email       text NOT NULL,     -- lower case
    status      text NOT NULL CHECK (status IN ('sending', 'created', 'skipped', 'rejected', 'failed')),
    employee_id bigint,
    reason      text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (file_hash, line)
);
CREATE INDEX onboarding_rows_email ON onboarding_rows (email);
