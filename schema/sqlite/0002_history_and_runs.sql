-- History and the run ledger, as in schema/postgres/0002_history_and_runs.sql. valid_from and
-- valid_to are TEXT timestamps with milliseconds (YYYY-MM-DDTHH:MM:SS.SSSZ: one length, so they
-- compare in time order; Postgres keeps microseconds).
CREATE TABLE employees_history (
    id                          INTEGER NOT NULL,
    valid_from                  TEXT NOT NULL,
    valid_to                    TEXT,
    account_id                  INTEGER,
    first_name                  TEXT,
    last_name                   TEXT,
    email                       TEXT,
    job_title                   TEXT,
    status                      TEXT,
    company_join_date           TEXT,
    job_start_date              TEXT,
    length_of_service_in_months INTEGER,
    age                         TEXT,
    full_or_part_time           TEXT,
    notice_period               TEXT,
    working_pattern_id          INTEGER,
    holiday_allowance_id        INTEGER,
    department_id               INTEGER,
    line_manager_id             INTEGER,
    holiday_approver_id         INTEGER,
    receives_statutory_holidays INTEGER,
    hr                          INTEGER,
    created_at                  TEXT,
    updated_at                  TEXT,
    extra                       TEXT,
    listed                      INTEGER NOT NULL,
    origin                      TEXT NOT NULL,
    deleted_at                  TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX employees_history_period ON employees_history (valid_from, valid_to);

-- A second write of a row in the same millisecond replaces that millisecond's version. (Not INSERT OR
-- REPLACE: inside a trigger the outer statement's conflict handling overrides it.)
CREATE TRIGGER employees_history_ins AFTER INSERT ON employees BEGIN
    DELETE FROM employees_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employees_history VALUES (NEW.id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL,
        NEW.account_id, NEW.first_name, NEW.last_name, NEW.email, NEW.job_title, NEW.status,
        NEW.company_join_date, NEW.job_start_date, NEW.length_of_service_in_months, NEW.age,
        NEW.full_or_part_time, NEW.notice_period, NEW.working_pattern_id, NEW.holiday_allowance_id,
        NEW.department_id, NEW.line_manager_id, NEW.holiday_approver_id,
        NEW.receives_statutory_holidays, NEW.hr, NEW.created_at, NEW.updated_at, NEW.extra,
        NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER employees_history_upd AFTER UPDATE ON employees BEGIN
    UPDATE employees_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM employees_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employees_history VALUES (NEW.id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL,
        NEW.account_id, NEW.first_name, NEW.last_name, NEW.email, NEW.job_title, NEW.status,
        NEW.company_join_date, NEW.job_start_date, NEW.length_of_service_in_months, NEW.age,
        NEW.full_or_part_time, NEW.notice_period, NEW.working_pattern_id, NEW.holiday_allowance_id,
        NEW.department_id, NEW.line_manager_id, NEW.holiday_approver_id,
        NEW.receives_statutory_holidays, NEW.hr, NEW.created_at, NEW.updated_at, NEW.extra,
        NEW.listed, NEW.origin, NEW.deleted_at);
END;

INSERT INTO employees_history SELECT id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL, account_id,
    first_name, last_name, email, job_title, status, company_join_date, job_start_date,
    length_of_service_in_months, age, full_or_part_time, notice_period, working_pattern_id,
    holiday_allowance_id, department_id, line_manager_id, holiday_approver_id,
    receives_statutory_holidays, hr, created_at, updated_at, extra, listed, origin, deleted_at
FROM employees;

CREATE TABLE sync_runs (
    id                INTEGER PRIMARY KEY,
    run_id            TEXT NOT NULL,
    resource          TEXT NOT NULL CHECK (resource IN ('employees', 'working_patterns')),
    started_at        TEXT NOT NULL,
    finished_at       TEXT,
    status            TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'inconsistent', 'guarded')),
    pages             INTEGER NOT NULL DEFAULT 0,
    requests          INTEGER NOT NULL DEFAULT 0,
    retries           INTEGER NOT NULL DEFAULT 0,
    rate_limited      INTEGER NOT NULL DEFAULT 0,
    walks             INTEGER NOT NULL DEFAULT 0,
    total_reported    INTEGER,
    records_seen      INTEGER NOT NULL DEFAULT 0,
    distinct_records  INTEGER NOT NULL DEFAULT 0,
    inserted          INTEGER NOT NULL DEFAULT 0,
    updated           INTEGER NOT NULL DEFAULT 0,
    unchanged         INTEGER NOT NULL DEFAULT 0,
    deleted           INTEGER NOT NULL DEFAULT 0,
    deletions_refused INTEGER NOT NULL DEFAULT 0,
    error             TEXT
) STRICT;
CREATE INDEX sync_runs_resource_started ON sync_runs (resource, started_at);
