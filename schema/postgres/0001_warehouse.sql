-- The warehouse model. Runs with search_path set to the warehouse schema (hr by default).
--
-- Every table's rows are "visible" (served, counted in Total) while deleted_at IS NULL and, for
-- employees and working patterns, while listed: a record seen only as a nested reference (a
-- manager who left, a pattern the collection lacks) is kept with listed = false.
-- origin says where a row came from: 'source' (the upstream), 'local' (created here), 'seed'.

CREATE TABLE meta (
    id                       boolean PRIMARY KEY DEFAULT true CHECK (id),
    -- bumped by every statement that changes a served table: the ETag of serve mode
    version                  bigint NOT NULL DEFAULT 1,
    -- visible rows per collection, kept by the triggers below so Total never needs COUNT(*)
    employees_total          bigint NOT NULL DEFAULT 0,
    working_patterns_total   bigint NOT NULL DEFAULT 0,
    departments_total        bigint NOT NULL DEFAULT 0,
    holiday_allowances_total bigint NOT NULL DEFAULT 0
);
INSERT INTO meta DEFAULT VALUES;

CREATE TABLE working_patterns (
    id          bigint PRIMARY KEY,
    name        text,
    is_default  boolean,
    total_hours numeric,
    mon boolean, tue boolean, wed boolean, thu boolean, fri boolean, sat boolean, sun boolean,
    mon_hr numeric, tue_hr numeric, wed_hr numeric, thu_hr numeric, fri_hr numeric, sat_hr numeric, sun_hr numeric,
    created_at  timestamptz,
    updated_at  timestamptz,
    extra       json,     -- fields the source sent that are not modelled, as an object
    listed      boolean NOT NULL DEFAULT true,
    origin      text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at  timestamptz,
    synced_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE holiday_allowances (
    id         bigint PRIMARY KEY,
    name       text,
    extra      json,
    origin     text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at timestamptz,
    synced_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE departments (
    id         bigint PRIMARY KEY,
    name       text,
    extra      json,
    origin     text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at timestamptz,
    synced_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE employees (
    id                          bigint PRIMARY KEY,
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
    working_pattern_id          bigint REFERENCES working_patterns (id) DEFERRABLE INITIALLY DEFERRED,
    holiday_allowance_id        bigint REFERENCES holiday_allowances (id) DEFERRABLE INITIALLY DEFERRED,
    department_id               bigint REFERENCES departments (id) DEFERRABLE INITIALLY DEFERRED,
    line_manager_id             bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    holiday_approver_id         bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    receives_statutory_holidays boolean,
    hr                          boolean,
    created_at                  timestamptz,
    updated_at                  timestamptz,
    extra                       json,  -- fields the source sent that are not modelled, as an object
    -- this record's nested objects (working_pattern, holiday_allowance, department,
    -- line_manager, holiday_approver) exactly as the source sent them: the source embeds one
    -- person in different forms in different records, so the form belongs to the reference
    nested                      json,
    listed                      boolean NOT NULL DEFAULT true,
    origin                      text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at                  timestamptz,
    synced_at                   timestamptz NOT NULL DEFAULT now()
);
-- The served collection, in id order, without touching the heap for the id list.
CREATE INDEX employees_visible_id ON employees (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX employees_visible_email ON employees (lower(email)) WHERE listed AND deleted_at IS NULL;
CREATE INDEX employees_working_pattern_id ON employees (working_pattern_id);
CREATE INDEX employees_holiday_allowance_id ON employees (holiday_allowance_id);
CREATE INDEX employees_department_id ON employees (department_id);
CREATE INDEX employees_line_manager_id ON employees (line_manager_id);
CREATE INDEX employees_holiday_approver_id ON employees (holiday_approver_id);

-- Statement-level triggers keep meta: one UPDATE per changing statement however many rows it
-- touched, and none for a statement that changed nothing (an unchanged sync writes zero rows).
-- SET search_path FROM CURRENT pins the functions to this schema whatever the caller's path.
CREATE FUNCTION meta_bump(collection text, d bigint) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    CASE collection
    WHEN 'employees' THEN UPDATE meta SET version = version + 1, employees_total = employees_total + d;
    WHEN 'working_patterns' THEN UPDATE meta SET version = version + 1, working_patterns_total = working_patterns_total + d;
    WHEN 'departments' THEN UPDATE meta SET version = version + 1, departments_total = departments_total + d;
    WHEN 'holiday_allowances' THEN UPDATE meta SET version = version + 1, holiday_allowances_total = holiday_allowances_total + d;
    END CASE;
END $$;

CREATE FUNCTION listed_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    n bigint := 0;
    d bigint := 0;
    c bigint;
    v bigint;
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT count(*), count(*) FILTER (WHERE listed AND deleted_at IS NULL) INTO c, v FROM new_rows;
        n := n + c; d := d + v;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT count(*), count(*) FILTER (WHERE listed AND deleted_at IS NULL) INTO c, v FROM old_rows;
        n := n + c; d := d - v;
    END IF;
    IF n > 0 THEN
        PERFORM meta_bump(TG_TABLE_NAME, d);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION ref_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    n bigint := 0;
    d bigint := 0;
    c bigint;
    v bigint;
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT count(*), count(*) FILTER (WHERE deleted_at IS NULL) INTO c, v FROM new_rows;
        n := n + c; d := d + v;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT count(*), count(*) FILTER (WHERE deleted_at IS NULL) INTO c, v FROM old_rows;
        n := n + c; d := d - v;
    END IF;
    IF n > 0 THEN
        PERFORM meta_bump(TG_TABLE_NAME, d);
    END IF;
    RETURN NULL;
END $$;

-- TRUNCATE has no transition table: recount.
CREATE FUNCTION recount() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE meta SET version = version + 1,
        employees_total = (SELECT count(*) FROM employees WHERE listed AND deleted_at IS NULL),
        working_patterns_total = (SELECT count(*) FROM working_patterns WHERE listed AND deleted_at IS NULL),
        departments_total = (SELECT count(*) FROM departments WHERE deleted_at IS NULL),
        holiday_allowances_total = (SELECT count(*) FROM holiday_allowances WHERE deleted_at IS NULL);
    RETURN NULL;
END $$;

CREATE TRIGGER employees_ins AFTER INSERT ON employees REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER employees_upd AFTER UPDATE ON employees REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER employees_del AFTER DELETE ON employees REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER employees_trunc AFTER TRUNCATE ON employees FOR EACH STATEMENT EXECUTE FUNCTION recount();
CREATE TRIGGER working_patterns_ins AFTER INSERT ON working_patterns REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER working_patterns_upd AFTER UPDATE ON working_patterns REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER working_patterns_del AFTER DELETE ON working_patterns REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER working_patterns_trunc AFTER TRUNCATE ON working_patterns FOR EACH STATEMENT EXECUTE FUNCTION recount();
CREATE TRIGGER departments_ins AFTER INSERT ON departments REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ref_changed();
CREATE TRIGGER departments_upd AFTER UPDATE ON departments REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ref_changed();
CREATE TRIGGER departments_del AFTER DELETE ON departments REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ref_changed();
CREATE TRIGGER departments_trunc AFTER TRUNCATE ON departments FOR EACH STATEMENT EXECUTE FUNCTION recount();
CREATE TRIGGER holiday_allowances_ins AFTER INSERT ON holiday_allowances REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ref_changed();
CREATE TRIGGER holiday_allowances_upd AFTER UPDATE ON holiday_allowances REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ref_changed();
CREATE TRIGGER holiday_allowances_del AFTER DELETE ON holiday_allowances REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ref_changed();
CREATE TRIGGER holiday_allowances_trunc AFTER TRUNCATE ON holiday_allowances FOR EACH STATEMENT EXECUTE FUNCTION recount();

-- A standalone warehouse can take creates at once: one default working pattern (Mon–Fri 7.5 h,
-- 37.5 in all) and one holiday allowance. A sync replaces or retires them like any other row.
INSERT INTO working_patterns (id, name, is_default, total_hours, mon, tue, wed, thu, fri, sat, sun,
    mon_hr, tue_hr, wed_hr, thu_hr, fri_hr, sat_hr, sun_hr, created_at, updated_at, origin)
VALUES (1, 'Standard', true, 37.5, true, true, true, true, true, false, false,
    7.5, 7.5, 7.5, 7.5, 7.5, 0.0, 0.0, date_trunc('second', now()), date_trunc('second', now()), 'seed');
INSERT INTO holiday_allowances (id, name, origin) VALUES (1, 'Standard', 'seed');
