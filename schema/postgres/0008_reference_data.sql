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
