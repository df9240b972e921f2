-- History of the reference data: departments, divisions, locations, holiday allowances, other
-- leave reasons, statutory holiday countries and company training types, kept as the events'
-- (0009) and employees' (0002) are: every version of every row with the period it was current in
-- the warehouse, written by triggers (history_write, 0009, copies the columns by name). A
-- department renamed, a location closed (soft-deleted) or a leave reason reworded keeps its old
-- form for the figures of its time. Employees' history keeps which department an employee was in
-- (department_id); this keeps what that department was called then:
--   SELECT h.id, h.first_name, h.last_name, d.name AS department
--   FROM hr.employees_history h
--   LEFT JOIN hr.departments_history d ON d.id = h.department_id
--       AND d.valid_from <= '2026-03-01' AND (d.valid_to IS NULL OR d.valid_to > '2026-03-01')
--   WHERE h.valid_from <= '2026-03-01' AND (h.valid_to IS NULL OR h.valid_to > '2026-03-01')
--     AND h.listed AND h.deleted_at IS NULL;

CREATE TABLE departments_history (
    id         bigint NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    name       text,
    extra      json,
    listed     boolean NOT NULL,
    origin     text NOT NULL,
    deleted_at timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX departments_history_period ON departments_history (valid_from, valid_to);
CREATE TRIGGER departments_history_ins AFTER INSERT ON departments REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER departments_history_upd AFTER UPDATE ON departments REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER departments_history_del AFTER DELETE ON departments REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO departments_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT now(), id, name, extra, listed, origin, deleted_at FROM departments;

CREATE TABLE divisions_history (
    id         bigint NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    name       text,
    extra      json,
    listed     boolean NOT NULL,
    origin     text NOT NULL,
    deleted_at timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX divisions_history_period ON divisions_history (valid_from, valid_to);
CREATE TRIGGER divisions_history_ins AFTER INSERT ON divisions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER divisions_history_upd AFTER UPDATE ON divisions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER divisions_history_del AFTER DELETE ON divisions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO divisions_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT now(), id, name, extra, listed, origin, deleted_at FROM divisions;

CREATE TABLE locations_history (
    id         bigint NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    name       text,
    extra      json,
    listed     boolean NOT NULL,
    origin     text NOT NULL,
    deleted_at timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX locations_history_period ON locations_history (valid_from, valid_to);
CREATE TRIGGER locations_history_ins AFTER INSERT ON locations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER locations_history_upd AFTER UPDATE ON locations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER locations_history_del AFTER DELETE ON locations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO locations_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT now(), id, name, extra, listed, origin, deleted_at FROM locations;

CREATE TABLE holiday_allowances_history (
    id         bigint NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    name       text,
    extra      json,
    listed     boolean NOT NULL,
    origin     text NOT NULL,
    deleted_at timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX holiday_allowances_history_period ON holiday_allowances_history (valid_from, valid_to);
CREATE TRIGGER holiday_allowances_history_ins AFTER INSERT ON holiday_allowances REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER holiday_allowances_history_upd AFTER UPDATE ON holiday_allowances REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER holiday_allowances_history_del AFTER DELETE ON holiday_allowances REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO holiday_allowances_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT now(), id, name, extra, listed, origin, deleted_at FROM holiday_allowances;

CREATE TABLE other_leave_reasons_history (
    id         bigint NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    name       text,
    extra      json,
    listed     boolean NOT NULL,
    origin     text NOT NULL,
    deleted_at timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX other_leave_reasons_history_period ON other_leave_reasons_history (valid_from, valid_to);
CREATE TRIGGER other_leave_reasons_history_ins AFTER INSERT ON other_leave_reasons REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER other_leave_reasons_history_upd AFTER UPDATE ON other_leave_reasons REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER other_leave_reasons_history_del AFTER DELETE ON other_leave_reasons REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO other_leave_reasons_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT now(), id, name, extra, listed, origin, deleted_at FROM other_leave_reasons;

CREATE TABLE statutory_holiday_countries_history (
    id         bigint NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    name       text,
    extra      json,
    listed     boolean NOT NULL,
    origin     text NOT NULL,
    deleted_at timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX statutory_holiday_countries_history_period ON statutory_holiday_countries_history (valid_from, valid_to);
CREATE TRIGGER statutory_holiday_countries_history_ins AFTER INSERT ON statutory_holiday_countries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER statutory_holiday_countries_history_upd AFTER UPDATE ON statutory_holiday_countries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER statutory_holiday_countries_history_del AFTER DELETE ON statutory_holiday_countries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO statutory_holiday_countries_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT now(), id, name, extra, listed, origin, deleted_at FROM statutory_holiday_countries;

CREATE TABLE company_training_types_history (
    id         bigint NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    name       text,
    extra      json,
    listed     boolean NOT NULL,
    origin     text NOT NULL,
    deleted_at timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX company_training_types_history_period ON company_training_types_history (valid_from, valid_to);
CREATE TRIGGER company_training_types_history_ins AFTER INSERT ON company_training_types REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER company_training_types_history_upd AFTER UPDATE ON company_training_types REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER company_training_types_history_del AFTER DELETE ON company_training_types REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO company_training_types_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT now(), id, name, extra, listed, origin, deleted_at FROM company_training_types;
