-- As schema/postgres/0008_reference_data.sql: departments and holiday allowances get listed, and
-- the rows references left in them start unlisted; meta counts their listed rows.
DROP TRIGGER departments_ins;
DROP TRIGGER departments_upd;
DROP TRIGGER departments_del;
DROP TRIGGER holiday_allowances_ins;
DROP TRIGGER holiday_allowances_upd;
DROP TRIGGER holiday_allowances_del;

ALTER TABLE departments ADD COLUMN listed INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1));
ALTER TABLE holiday_allowances ADD COLUMN listed INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1));
UPDATE departments SET listed = 0 WHERE origin = 'source';
UPDATE holiday_allowances SET listed = 0 WHERE origin = 'source';
UPDATE meta SET version = version + 1,
    departments_total = (SELECT count(*) FROM departments WHERE listed AND deleted_at IS NULL),
    holiday_allowances_total = (SELECT count(*) FROM holiday_allowances WHERE listed AND deleted_at IS NULL);

CREATE INDEX departments_visible_id ON departments (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX holiday_allowances_visible_id ON holiday_allowances (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER departments_ins AFTER INSERT ON departments BEGIN
    UPDATE meta SET version = version + 1, departments_total = departments_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER departments_upd AFTER UPDATE ON departments BEGIN
    UPDATE meta SET version = version + 1,
        departments_total = departments_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER departments_del AFTER DELETE ON departments BEGIN
    UPDATE meta SET version = version + 1, departments_total = departments_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER holiday_allowances_ins AFTER INSERT ON holiday_allowances BEGIN
    UPDATE meta SET version = version + 1, holiday_allowances_total = holiday_allowances_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER holiday_allowances_upd AFTER UPDATE ON holiday_allowances BEGIN
    UPDATE meta SET version = version + 1,
        holiday_allowances_total = holiday_allowances_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER holiday_allowances_del AFTER DELETE ON holiday_allowances BEGIN
    UPDATE meta SET version = version + 1, holiday_allowances_total = holiday_allowances_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

-- Employees' division and location become references, as in the Postgres migration: the objects
-- kept in employees.extra move to division_id/location_id, unlisted rows of divisions and
-- locations, and employees.nested, written exactly as the sync now writes them (compared as
-- text: keys sorted, compact), so the next sync finds nothing changed.
ALTER TABLE employees ADD COLUMN division_id INTEGER REFERENCES divisions (id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE employees ADD COLUMN location_id INTEGER REFERENCES locations (id) DEFERRABLE INITIALLY DEFERRED;
CREATE INDEX employees_division_id ON employees (division_id);
CREATE INDEX employees_location_id ON employees (location_id);

-- History keeps them too; its triggers name their columns from now on (the new ones are last).
ALTER TABLE employees_history ADD COLUMN division_id INTEGER;
ALTER TABLE employees_history ADD COLUMN location_id INTEGER;
DROP TRIGGER employees_history_ins;
DROP TRIGGER employees_history_upd;
CREATE TRIGGER employees_history_ins AFTER INSERT ON employees BEGIN
    DELETE FROM employees_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employees_history (id, valid_from, valid_to, account_id, first_name, last_name,
        email, job_title, status, company_join_date, job_start_date, length_of_service_in_months,
        age, full_or_part_time, notice_period, working_pattern_id, holiday_allowance_id,
        department_id, division_id, location_id, line_manager_id, holiday_approver_id,
        receives_statutory_holidays, hr, created_at, updated_at, extra, listed, origin, deleted_at)
    VALUES (NEW.id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL,
        NEW.account_id, NEW.first_name, NEW.last_name, NEW.email, NEW.job_title, NEW.status,
        NEW.company_join_date, NEW.job_start_date, NEW.length_of_service_in_months, NEW.age,
        NEW.full_or_part_time, NEW.notice_period, NEW.working_pattern_id, NEW.holiday_allowance_id,
        NEW.department_id, NEW.division_id, NEW.location_id, NEW.line_manager_id, NEW.holiday_approver_id,
        NEW.receives_statutory_holidays, NEW.hr, NEW.created_at, NEW.updated_at, NEW.extra,
        NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER employees_history_upd AFTER UPDATE ON employees BEGIN
    UPDATE employees_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM employees_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employees_history (id, valid_from, valid_to, account_id, first_name, last_name,
        email, job_title, status, company_join_date, job_start_date, length_of_service_in_months,
        age, full_or_part_time, notice_period, working_pattern_id, holiday_allowance_id,
        department_id, division_id, location_id, line_manager_id, holiday_approver_id,
        receives_statutory_holidays, hr, created_at, updated_at, extra, listed, origin, deleted_at)
    VALUES (NEW.id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL,
        NEW.account_id, NEW.first_name, NEW.last_name, NEW.email, NEW.job_title, NEW.status,
        NEW.company_join_date, NEW.job_start_date, NEW.length_of_service_in_months, NEW.age,
        NEW.full_or_part_time, NEW.notice_period, NEW.working_pattern_id, NEW.holiday_allowance_id,
        NEW.department_id, NEW.division_id, NEW.location_id, NEW.line_manager_id, NEW.holiday_approver_id,
        NEW.receives_statutory_holidays, NEW.hr, NEW.created_at, NEW.updated_at, NEW.extra,
        NEW.listed, NEW.origin, NEW.deleted_at);
END;

-- The versions written so far get the ids their extra holds.
UPDATE employees_history SET
    division_id = CASE WHEN json_type(extra, '$.division') = 'object' AND json_type(extra, '$.division.id') IN ('integer', 'text')
        AND CAST(json_extract(extra, '$.division.id') AS text) GLOB '[0-9]*' AND NOT CAST(json_extract(extra, '$.division.id') AS text) GLOB '*[^0-9]*'
        THEN CAST(json_extract(extra, '$.division.id') AS INTEGER) END,
    location_id = CASE WHEN json_type(extra, '$.location') = 'object' AND json_type(extra, '$.location.id') IN ('integer', 'text')
        AND CAST(json_extract(extra, '$.location.id') AS text) GLOB '[0-9]*' AND NOT CAST(json_extract(extra, '$.location.id') AS text) GLOB '*[^0-9]*'
        THEN CAST(json_extract(extra, '$.location.id') AS INTEGER) END
WHERE extra IS NOT NULL AND json_valid(extra);

-- The objects to move: one row per employee and field.
CREATE TEMPORARY TABLE employee_refs AS
SELECT e.id AS employee_id, f.key AS field, json(f.value) AS form,
    CAST(json_extract(f.value, '$.id') AS INTEGER) AS ref_id,
    -- the object's members other than id and name, as the sync keeps them (v1.Extra)
    (SELECT NULLIF(json_group_object(k.key, CASE k.type
            WHEN 'true' THEN json('true') WHEN 'false' THEN json('false') WHEN 'null' THEN json('null')
            WHEN 'text' THEN json_quote(k.value) WHEN 'object' THEN json(k.value) WHEN 'array' THEN json(k.value)
            ELSE k.value END ORDER BY k.key), '{}')
     FROM json_each(f.value) k WHERE k.key NOT IN ('id', 'name')) AS rest
-- (an extra hand-edited into anything but an object is left alone)
FROM employees e, json_each(CASE WHEN json_valid(e.extra) THEN CASE WHEN json_type(e.extra) = 'object' THEN e.extra END END) f
WHERE f.key IN ('division', 'location') AND f.type = 'object'
    AND json_type(f.value, '$.id') IN ('integer', 'text')
    AND CAST(json_extract(f.value, '$.id') AS text) GLOB '[0-9]*' AND NOT CAST(json_extract(f.value, '$.id') AS text) GLOB '*[^0-9]*';
-- Looked up once per employee below.
CREATE INDEX temp.employee_refs_employee ON employee_refs (employee_id, field);

-- The rows they point at, unlisted, picked per id as the merge picks them (max).
INSERT INTO divisions (id, name, extra, listed, origin)
SELECT ref_id, max(NULLIF(json_extract(form, '$.name'), '')), max(rest), 0, 'source'
FROM employee_refs WHERE field = 'division' GROUP BY ref_id
ON CONFLICT (id) DO NOTHING;
INSERT INTO locations (id, name, extra, listed, origin)
SELECT ref_id, max(NULLIF(json_extract(form, '$.name'), '')), max(rest), 0, 'source'
FROM employee_refs WHERE field = 'location' GROUP BY ref_id
ON CONFLICT (id) DO NOTHING;

UPDATE employees SET
    division_id = (SELECT ref_id FROM employee_refs r WHERE r.employee_id = employees.id AND r.field = 'division'),
    location_id = (SELECT ref_id FROM employee_refs r WHERE r.employee_id = employees.id AND r.field = 'location'),
    extra = NULLIF(
        CASE WHEN EXISTS (SELECT 1 FROM employee_refs r WHERE r.employee_id = employees.id AND r.field = 'location')
        THEN json_remove(
            CASE WHEN EXISTS (SELECT 1 FROM employee_refs r WHERE r.employee_id = employees.id AND r.field = 'division')
            THEN json_remove(extra, '$.division') ELSE extra END, '$.location')
        ELSE json_remove(extra, '$.division') END, '{}'),
    nested = (SELECT json_group_object(n.key, json(n.value) ORDER BY n.key)
              FROM (SELECT key, value FROM json_each(CASE WHEN json_valid(employees.nested) THEN CASE WHEN json_type(employees.nested) = 'object' THEN employees.nested END END)
                    UNION ALL
                    SELECT field, form FROM employee_refs r WHERE r.employee_id = employees.id) n)
WHERE id IN (SELECT employee_id FROM employee_refs);
DROP TABLE employee_refs;

-- As schema/postgres/0008_reference_data.sql: the financial module's tables, counted in meta.
ALTER TABLE meta ADD COLUMN salaries_total INTEGER NOT NULL DEFAULT 0;
CREATE TABLE salaries (
    id          INTEGER PRIMARY KEY,
    employee_id INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    extra       TEXT,
    nested      TEXT,
    listed      INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin      TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at  TEXT,
    synced_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX salaries_visible_id ON salaries (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX salaries_employee_id ON salaries (employee_id);
CREATE TRIGGER salaries_ins AFTER INSERT ON salaries BEGIN
    UPDATE meta SET version = version + 1, salaries_total = salaries_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER salaries_upd AFTER UPDATE ON salaries BEGIN
    UPDATE meta SET version = version + 1,
        salaries_total = salaries_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER salaries_del AFTER DELETE ON salaries BEGIN
    UPDATE meta SET version = version + 1, salaries_total = salaries_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

ALTER TABLE meta ADD COLUMN bonuses_total INTEGER NOT NULL DEFAULT 0;
CREATE TABLE bonuses (
    id          INTEGER PRIMARY KEY,
    employee_id INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    extra       TEXT,
    nested      TEXT,
    listed      INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin      TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at  TEXT,
    synced_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX bonuses_visible_id ON bonuses (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX bonuses_employee_id ON bonuses (employee_id);
CREATE TRIGGER bonuses_ins AFTER INSERT ON bonuses BEGIN
    UPDATE meta SET version = version + 1, bonuses_total = bonuses_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER bonuses_upd AFTER UPDATE ON bonuses BEGIN
    UPDATE meta SET version = version + 1,
        bonuses_total = bonuses_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER bonuses_del AFTER DELETE ON bonuses BEGIN
    UPDATE meta SET version = version + 1, bonuses_total = bonuses_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

ALTER TABLE meta ADD COLUMN benefits_total INTEGER NOT NULL DEFAULT 0;
CREATE TABLE benefits (
    id          INTEGER PRIMARY KEY,
    employee_id INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    extra       TEXT,
    nested      TEXT,
    listed      INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin      TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at  TEXT,
    synced_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX benefits_visible_id ON benefits (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX benefits_employee_id ON benefits (employee_id);
CREATE TRIGGER benefits_ins AFTER INSERT ON benefits BEGIN
    UPDATE meta SET version = version + 1, benefits_total = benefits_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER benefits_upd AFTER UPDATE ON benefits BEGIN
    UPDATE meta SET version = version + 1,
        benefits_total = benefits_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER benefits_del AFTER DELETE ON benefits BEGIN
    UPDATE meta SET version = version + 1, benefits_total = benefits_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;
