-- History: every version of every employee row, with the period it was current in the warehouse.
-- valid_from is when the change was written (the writing transaction's time), valid_to when the
-- next version replaced it (NULL: still current). Triggers keep it, so syncs, creates and direct
-- SQL edits are all recorded. "Who was in which department on date X":
--   SELECT id, first_name, last_name, department_id FROM hr.employees_history
--   WHERE valid_from <= X AND (valid_to IS NULL OR valid_to > X) AND listed AND deleted_at IS NULL;
CREATE TABLE employees_history (
    id                          bigint NOT NULL,
    valid_from                  timestamptz NOT NULL,
    valid_to                    timestamptz,
    account_id                  bigint,
    first_name                  text,
    last_name                   text,
    email                       text,
    job_title                   text,
    status                      text,
    company_join_date           date,
    job_start_date              date,
    length_of_service_in_months integer,
    age                         json,
    full_or_part_time           json,
    notice_period               json,
    working_pattern_id          bigint,
    holiday_allowance_id        bigint,
    department_id               bigint,
    line_manager_id             bigint,
    holiday_approver_id         bigint,
    receives_statutory_holidays boolean,
    hr                          boolean,
    created_at                  timestamptz,
    updated_at                  timestamptz,
    extra                       json,
    listed                      boolean NOT NULL,
    origin                      text NOT NULL,
    deleted_at                  timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX employees_history_period ON employees_history (valid_from, valid_to);

CREATE FUNCTION employees_history_write() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        UPDATE employees_history h SET valid_to = now()
        FROM old_rows o WHERE h.id = o.id AND h.valid_to IS NULL AND h.valid_from < now();
    END IF;
    -- Two writes of one row in one transaction leave one version: the last.
    INSERT INTO employees_history (id, valid_from, valid_to, account_id, first_name, last_name,
        email, job_title, status, company_join_date, job_start_date, length_of_service_in_months,
        age, full_or_part_time, notice_period, working_pattern_id, holiday_allowance_id,
        department_id, line_manager_id, holiday_approver_id, receives_statutory_holidays, hr,
        created_at, updated_at, extra, listed, origin, deleted_at)
    SELECT n.id, now(), NULL, n.account_id, n.first_name, n.last_name, n.email, n.job_title,
        n.status, n.company_join_date, n.job_start_date, n.length_of_service_in_months, n.age,
        n.full_or_part_time, n.notice_period, n.working_pattern_id, n.holiday_allowance_id,
        n.department_id, n.line_manager_id, n.holiday_approver_id, n.receives_statutory_holidays,
        n.hr, n.created_at, n.updated_at, n.extra, n.listed, n.origin, n.deleted_at
    FROM new_rows n
    ON CONFLICT (id, valid_from) DO UPDATE SET valid_to = NULL, account_id = excluded.account_id,
        first_name = excluded.first_name, last_name = excluded.last_name, email = excluded.email,
        job_title = excluded.job_title, status = excluded.status,
        company_join_date = excluded.company_join_date, job_start_date = excluded.job_start_date,
        length_of_service_in_months = excluded.length_of_service_in_months, age = excluded.age,
        full_or_part_time = excluded.full_or_part_time, notice_period = excluded.notice_period,
        working_pattern_id = excluded.working_pattern_id,
        holiday_allowance_id = excluded.holiday_allowance_id, department_id = excluded.department_id,
        line_manager_id = excluded.line_manager_id, holiday_approver_id = excluded.holiday_approver_id,
        receives_statutory_holidays = excluded.receives_statutory_holidays, hr = excluded.hr,
        created_at = excluded.created_at, updated_at = excluded.updated_at, extra = excluded.extra,
        listed = excluded.listed, origin = excluded.origin, deleted_at = excluded.deleted_at;
    RETURN NULL;
END $$;

CREATE TRIGGER employees_history_ins AFTER INSERT ON employees REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION employees_history_write();
CREATE TRIGGER employees_history_upd AFTER UPDATE ON employees REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION employees_history_write();

-- Rows already there when history began get their first version now.
INSERT INTO employees_history (id, valid_from, account_id, first_name, last_name, email, job_title,
    status, company_join_date, job_start_date, length_of_service_in_months, age, full_or_part_time,
    notice_period, working_pattern_id, holiday_allowance_id, department_id, line_manager_id,
    holiday_approver_id, receives_statutory_holidays, hr, created_at, updated_at, extra, listed,
    origin, deleted_at)
SELECT id, now(), account_id, first_name, last_name, email, job_title, status, company_join_date,
    job_start_date, length_of_service_in_months, age, full_or_part_time, notice_period,
    working_pattern_id, holiday_allowance_id, department_id, line_manager_id, holiday_approver_id,
    receives_statutory_holidays, hr, created_at, updated_at, extra, listed, origin, deleted_at
FROM employees;

-- The run ledger: one row per resource per sync run.
CREATE TABLE sync_runs (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id            text NOT NULL,   -- groups the resources of one `hrsync sync`
    resource          text NOT NULL CHECK (resource IN ('employees', 'working_patterns')),
    started_at        timestamptz NOT NULL,
    finished_at       timestamptz,
    status            text NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'inconsistent', 'guarded')),
    pages             integer NOT NULL DEFAULT 0,
    requests          integer NOT NULL DEFAULT 0,
    retries           integer NOT NULL DEFAULT 0,
    rate_limited      integer NOT NULL DEFAULT 0,  -- 429 answers
    walks             integer NOT NULL DEFAULT 0,
    total_reported    bigint,                      -- the source's Total
    records_seen      bigint NOT NULL DEFAULT 0,   -- records received, duplicates included
    distinct_records  bigint NOT NULL DEFAULT 0,
    inserted          bigint NOT NULL DEFAULT 0,
    updated           bigint NOT NULL DEFAULT 0,
    unchanged         bigint NOT NULL DEFAULT 0,
    deleted           bigint NOT NULL DEFAULT 0,
    deletions_refused bigint NOT NULL DEFAULT 0,
    error             text
);
CREATE INDEX sync_runs_resource_started ON sync_runs (resource, started_at);
