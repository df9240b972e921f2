-- Departments and holiday allowances become collections the sync walks, like divisions and
-- locations (0005): a listed walk fills them, and ids known only from employees' references are
-- kept unlisted (listed = false), served by neither /v1/departments nor /v1/holiday_allowances.
-- Their tables are then what sink derives from the wire's declarations (source/v1/collections.go).
--
-- Every row they hold came from a reference (they were never walked), so those rows start
-- unlisted; the seed allowance of a standalone warehouse stays served until a walk of the
-- source's allowances retires it, as the seed pattern is.
DROP TRIGGER departments_ins ON departments;
DROP TRIGGER departments_upd ON departments;
DROP TRIGGER departments_del ON departments;
DROP TRIGGER departments_trunc ON departments;
DROP TRIGGER holiday_allowances_ins ON holiday_allowances;
DROP TRIGGER holiday_allowances_upd ON holiday_allowances;
DROP TRIGGER holiday_allowances_del ON holiday_allowances;
DROP TRIGGER holiday_allowances_trunc ON holiday_allowances;
DROP FUNCTION ref_changed();

ALTER TABLE departments ADD COLUMN listed boolean NOT NULL DEFAULT true;
ALTER TABLE holiday_allowances ADD COLUMN listed boolean NOT NULL DEFAULT true;
UPDATE departments SET listed = false WHERE origin = 'source';
UPDATE holiday_allowances SET listed = false WHERE origin = 'source';
UPDATE meta SET version = version + 1,
    departments_total = (SELECT count(*) FROM departments WHERE listed AND deleted_at IS NULL),
    holiday_allowances_total = (SELECT count(*) FROM holiday_allowances WHERE listed AND deleted_at IS NULL);

CREATE INDEX departments_visible_id ON departments (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX holiday_allowances_visible_id ON holiday_allowances (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER departments_ins AFTER INSERT ON departments REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER departments_upd AFTER UPDATE ON departments REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER departments_del AFTER DELETE ON departments REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER departments_trunc AFTER TRUNCATE ON departments FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();
CREATE TRIGGER holiday_allowances_ins AFTER INSERT ON holiday_allowances REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER holiday_allowances_upd AFTER UPDATE ON holiday_allowances REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER holiday_allowances_del AFTER DELETE ON holiday_allowances REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER holiday_allowances_trunc AFTER TRUNCATE ON holiday_allowances FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

-- A TRUNCATE of employees or working patterns recounts every table of 0001: departments and
-- holiday allowances now count their listed rows only.
CREATE OR REPLACE FUNCTION recount() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE meta SET version = version + 1,
        employees_total = (SELECT count(*) FROM employees WHERE listed AND deleted_at IS NULL),
        working_patterns_total = (SELECT count(*) FROM working_patterns WHERE listed AND deleted_at IS NULL),
        departments_total = (SELECT count(*) FROM departments WHERE listed AND deleted_at IS NULL),
        holiday_allowances_total = (SELECT count(*) FROM holiday_allowances WHERE listed AND deleted_at IS NULL);
    RETURN NULL;
END $$;

-- Employees' division and location (UPSTREAM.md: nested {id, name}) become references, as the
-- department is: foreign keys to divisions and locations, with an unlisted row there for an id no
-- walk of those collections has listed. Until now the objects were kept in employees.extra; they
-- move out of it into the new columns, the target rows and employees.nested, written exactly as
-- the sync now writes them (the merge compares extra and nested as text: keys sorted, compact), so
-- the next sync finds nothing changed. A value that is not an object (a location given by its
-- name alone, null, "") stays in extra, as the sync keeps it.
ALTER TABLE employees ADD COLUMN division_id bigint REFERENCES divisions (id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE employees ADD COLUMN location_id bigint REFERENCES locations (id) DEFERRABLE INITIALLY DEFERRED;
CREATE INDEX employees_division_id ON employees (division_id);
CREATE INDEX employees_location_id ON employees (location_id);

-- History keeps them too: "who was in which division on date X".
ALTER TABLE employees_history ADD COLUMN division_id bigint;
ALTER TABLE employees_history ADD COLUMN location_id bigint;
CREATE OR REPLACE FUNCTION employees_history_write() RETURNS trigger
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
        department_id, division_id, location_id, line_manager_id, holiday_approver_id,
        receives_statutory_holidays, hr, created_at, updated_at, extra, listed, origin, deleted_at)
    SELECT n.id, now(), NULL, n.account_id, n.first_name, n.last_name, n.email, n.job_title,
        n.status, n.company_join_date, n.job_start_date, n.length_of_service_in_months, n.age,
        n.full_or_part_time, n.notice_period, n.working_pattern_id, n.holiday_allowance_id,
        n.department_id, n.division_id, n.location_id, n.line_manager_id, n.holiday_approver_id,
        n.receives_statutory_holidays, n.hr, n.created_at, n.updated_at, n.extra, n.listed,
        n.origin, n.deleted_at
    FROM new_rows n
    ON CONFLICT (id, valid_from) DO UPDATE SET valid_to = NULL, account_id = excluded.account_id,
        first_name = excluded.first_name, last_name = excluded.last_name, email = excluded.email,
        job_title = excluded.job_title, status = excluded.status,
        company_join_date = excluded.company_join_date, job_start_date = excluded.job_start_date,
        length_of_service_in_months = excluded.length_of_service_in_months, age = excluded.age,
        full_or_part_time = excluded.full_or_part_time, notice_period = excluded.notice_period,
        working_pattern_id = excluded.working_pattern_id,
        holiday_allowance_id = excluded.holiday_allowance_id, department_id = excluded.department_id,
        division_id = excluded.division_id, location_id = excluded.location_id,
        line_manager_id = excluded.line_manager_id, holiday_approver_id = excluded.holiday_approver_id,
        receives_statutory_holidays = excluded.receives_statutory_holidays, hr = excluded.hr,
        created_at = excluded.created_at, updated_at = excluded.updated_at, extra = excluded.extra,
        listed = excluded.listed, origin = excluded.origin, deleted_at = excluded.deleted_at;
    RETURN NULL;
END $$;

-- The versions written so far get the ids their extra holds; the current ones are replaced by
-- the update of the employees below (one version each, the same facts in the new columns).
UPDATE employees_history SET
    division_id = CASE WHEN json_typeof(extra->'division') = 'object' AND extra->'division'->>'id' ~ '^-?[0-9]{1,18}$'
        THEN CAST(extra->'division'->>'id' AS bigint) END,
    location_id = CASE WHEN json_typeof(extra->'location') = 'object' AND extra->'location'->>'id' ~ '^-?[0-9]{1,18}$'
        THEN CAST(extra->'location'->>'id' AS bigint) END
WHERE extra IS NOT NULL;

-- The objects to move: one row per employee and field.
CREATE TEMPORARY TABLE employee_refs ON COMMIT DROP AS
SELECT employee_id, field, form, CAST(form->>'id' AS bigint) AS ref_id,
    -- the object's members other than id and name, as the sync keeps them (v1.Extra)
    (SELECT '{' || string_agg(to_json(k.key)::text || ':' || k.value::text, ',' ORDER BY k.key COLLATE "C") || '}'
     FROM json_each(form) k WHERE k.key NOT IN ('id', 'name')) AS rest
FROM (SELECT e.id AS employee_id, f.key AS field, f.value AS form
      -- (an extra hand-edited into anything but an object is left alone)
      FROM employees e, json_each(CASE WHEN json_typeof(e.extra) = 'object' THEN e.extra END) f
      WHERE f.key IN ('division', 'location') AND json_typeof(f.value) = 'object') o
WHERE form->>'id' ~ '^-?[0-9]{1,18}$';
-- Looked up once per employee below: indexed, and counted for the planner (autovacuum never
-- sees a temporary table).
CREATE INDEX employee_refs_employee ON employee_refs (employee_id, field);
ANALYZE employee_refs;

-- The rows they point at, unlisted, picked per id as the merge picks them (max).
INSERT INTO divisions (id, name, extra, listed, origin)
SELECT ref_id, max(NULLIF(form->>'name', '')), CAST(max(rest) AS json), false, 'source'
FROM employee_refs WHERE field = 'division' GROUP BY ref_id
ON CONFLICT (id) DO NOTHING;
INSERT INTO locations (id, name, extra, listed, origin)
SELECT ref_id, max(NULLIF(form->>'name', '')), CAST(max(rest) AS json), false, 'source'
FROM employee_refs WHERE field = 'location' GROUP BY ref_id
ON CONFLICT (id) DO NOTHING;

UPDATE employees e SET
    division_id = (SELECT ref_id FROM employee_refs r WHERE r.employee_id = e.id AND r.field = 'division'),
    location_id = (SELECT ref_id FROM employee_refs r WHERE r.employee_id = e.id AND r.field = 'location'),
    extra = (SELECT CAST('{' || string_agg(to_json(k.key)::text || ':' || k.value::text, ',' ORDER BY k.key COLLATE "C") || '}' AS json)
             FROM json_each(e.extra) k
             WHERE k.key NOT IN (SELECT field FROM employee_refs r WHERE r.employee_id = e.id)),
    nested = (SELECT CAST('{' || string_agg(to_json(n.key)::text || ':' || n.value, ',' ORDER BY n.key COLLATE "C") || '}' AS json)
              FROM (SELECT key, value::text AS value FROM json_each(CASE WHEN json_typeof(e.nested) = 'object' THEN e.nested END)
                    UNION ALL
                    SELECT field, form::text FROM employee_refs r WHERE r.employee_id = e.id) n)
WHERE e.id IN (SELECT employee_id FROM employee_refs);

-- The financial module (UPSTREAM.md: /v1/salaries, /v1/bonuses, /v1/benefits; shapes unknown,
-- sensitive): what is declared of each record is its id and the employee it belongs to; every
-- other field is kept in extra, the nested employee's form in nested. The sync walks them only
-- when they are named (v1.Collection.Sensitive).
ALTER TABLE meta ADD COLUMN salaries_total bigint NOT NULL DEFAULT 0;
CREATE TABLE salaries (
    id          bigint PRIMARY KEY,
    employee_id bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    extra       json,
    nested      json,
    listed      boolean NOT NULL DEFAULT true,
    origin      text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at  timestamptz,
    synced_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX salaries_visible_id ON salaries (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX salaries_employee_id ON salaries (employee_id);
CREATE TRIGGER salaries_ins AFTER INSERT ON salaries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER salaries_upd AFTER UPDATE ON salaries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER salaries_del AFTER DELETE ON salaries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER salaries_trunc AFTER TRUNCATE ON salaries FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

ALTER TABLE meta ADD COLUMN bonuses_total bigint NOT NULL DEFAULT 0;
CREATE TABLE bonuses (
    id          bigint PRIMARY KEY,
    employee_id bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    extra       json,
    nested      json,
    listed      boolean NOT NULL DEFAULT true,
    origin      text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at  timestamptz,
    synced_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bonuses_visible_id ON bonuses (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX bonuses_employee_id ON bonuses (employee_id);
CREATE TRIGGER bonuses_ins AFTER INSERT ON bonuses REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER bonuses_upd AFTER UPDATE ON bonuses REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER bonuses_del AFTER DELETE ON bonuses REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER bonuses_trunc AFTER TRUNCATE ON bonuses FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

ALTER TABLE meta ADD COLUMN benefits_total bigint NOT NULL DEFAULT 0;
CREATE TABLE benefits (
    id          bigint PRIMARY KEY,
    employee_id bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    extra       json,
    nested      json,
    listed      boolean NOT NULL DEFAULT true,
    origin      text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at  timestamptz,
    synced_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX benefits_visible_id ON benefits (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX benefits_employee_id ON benefits (employee_id);
CREATE TRIGGER benefits_ins AFTER INSERT ON benefits REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER benefits_upd AFTER UPDATE ON benefits REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER benefits_del AFTER DELETE ON benefits REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER benefits_trunc AFTER TRUNCATE ON benefits FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();
