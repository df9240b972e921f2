-- As schema/postgres/0005_rest_of_the_api.sql: the reference data and the events of the rest of
-- the API, each as sink/collections.go declares it, counted in meta by row-level triggers.

ALTER TABLE meta ADD COLUMN divisions_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN locations_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN other_leave_reasons_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN statutory_holiday_countries_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN company_training_types_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN absences_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN sicknesses_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN leave_requests_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN employee_training_courses_total INTEGER NOT NULL DEFAULT 0;

CREATE TABLE divisions (
    id         INTEGER PRIMARY KEY,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin     TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at TEXT,
    synced_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX divisions_visible_id ON divisions (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER divisions_ins AFTER INSERT ON divisions BEGIN
    UPDATE meta SET version = version + 1, divisions_total = divisions_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER divisions_upd AFTER UPDATE ON divisions BEGIN
    UPDATE meta SET version = version + 1,
        divisions_total = divisions_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER divisions_del AFTER DELETE ON divisions BEGIN
    UPDATE meta SET version = version + 1, divisions_total = divisions_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

CREATE TABLE locations (
    id         INTEGER PRIMARY KEY,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin     TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at TEXT,
    synced_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX locations_visible_id ON locations (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER locations_ins AFTER INSERT ON locations BEGIN
    UPDATE meta SET version = version + 1, locations_total = locations_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER locations_upd AFTER UPDATE ON locations BEGIN
    UPDATE meta SET version = version + 1,
        locations_total = locations_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER locations_del AFTER DELETE ON locations BEGIN
    UPDATE meta SET version = version + 1, locations_total = locations_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

CREATE TABLE other_leave_reasons (
    id         INTEGER PRIMARY KEY,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin     TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at TEXT,
    synced_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX other_leave_reasons_visible_id ON other_leave_reasons (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER other_leave_reasons_ins AFTER INSERT ON other_leave_reasons BEGIN
    UPDATE meta SET version = version + 1, other_leave_reasons_total = other_leave_reasons_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER other_leave_reasons_upd AFTER UPDATE ON other_leave_reasons BEGIN
    UPDATE meta SET version = version + 1,
        other_leave_reasons_total = other_leave_reasons_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER other_leave_reasons_del AFTER DELETE ON other_leave_reasons BEGIN
    UPDATE meta SET version = version + 1, other_leave_reasons_total = other_leave_reasons_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

CREATE TABLE statutory_holiday_countries (
    id         INTEGER PRIMARY KEY,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin     TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at TEXT,
    synced_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX statutory_holiday_countries_visible_id ON statutory_holiday_countries (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER statutory_holiday_countries_ins AFTER INSERT ON statutory_holiday_countries BEGIN
    UPDATE meta SET version = version + 1, statutory_holiday_countries_total = statutory_holiday_countries_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER statutory_holiday_countries_upd AFTER UPDATE ON statutory_holiday_countries BEGIN
    UPDATE meta SET version = version + 1,
        statutory_holiday_countries_total = statutory_holiday_countries_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER statutory_holiday_countries_del AFTER DELETE ON statutory_holiday_countries BEGIN
    UPDATE meta SET version = version + 1, statutory_holiday_countries_total = statutory_holiday_countries_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

CREATE TABLE company_training_types (
    id         INTEGER PRIMARY KEY,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin     TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at TEXT,
    synced_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX company_training_types_visible_id ON company_training_types (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER company_training_types_ins AFTER INSERT ON company_training_types BEGIN
    UPDATE meta SET version = version + 1, company_training_types_total = company_training_types_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER company_training_types_upd AFTER UPDATE ON company_training_types BEGIN
    UPDATE meta SET version = version + 1,
        company_training_types_total = company_training_types_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER company_training_types_del AFTER DELETE ON company_training_types BEGIN
    UPDATE meta SET version = version + 1, company_training_types_total = company_training_types_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

CREATE TABLE absences (
    id               INTEGER PRIMARY KEY,
    employee_id      INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    approved_by_id   INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    leave_reason_id  INTEGER REFERENCES other_leave_reasons (id) DEFERRABLE INITIALLY DEFERRED,
    deducted         TEXT,
    work_units       TEXT,
    start_date       TEXT,
    end_date         TEXT,
    half_start       INTEGER CHECK (half_start IN (0, 1)),
    half_end         INTEGER CHECK (half_end IN (0, 1)),
    half_start_am_pm TEXT,
    half_end_am_pm   TEXT,
    cancelled        INTEGER CHECK (cancelled IN (0, 1)),
    notes            TEXT,
    type             TEXT,
    created_at       TEXT,
    updated_at       TEXT,
    extra            TEXT,
    nested           TEXT,
    listed           INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin           TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at       TEXT,
    synced_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX absences_visible_id ON absences (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX absences_employee_id ON absences (employee_id);
CREATE INDEX absences_approved_by_id ON absences (approved_by_id);
CREATE INDEX absences_leave_reason_id ON absences (leave_reason_id);
CREATE INDEX absences_dates ON absences (start_date, end_date);
CREATE TRIGGER absences_ins AFTER INSERT ON absences BEGIN
    UPDATE meta SET version = version + 1, absences_total = absences_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER absences_upd AFTER UPDATE ON absences BEGIN
    UPDATE meta SET version = version + 1,
        absences_total = absences_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER absences_del AFTER DELETE ON absences BEGIN
    UPDATE meta SET version = version + 1, absences_total = absences_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

CREATE TABLE sicknesses (
    id                      INTEGER PRIMARY KEY,
    employee_id             INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    company_sicknesstype_id INTEGER,
    start_date              TEXT,
    end_date                TEXT,
    half_start              INTEGER CHECK (half_start IN (0, 1)),
    half_start_am_pm        TEXT,
    half_end                INTEGER CHECK (half_end IN (0, 1)),
    half_end_am_pm          TEXT,
    deducted                TEXT,
    status                  TEXT,
    reason                  TEXT,
    review_notes            TEXT,
    fit_note_required       INTEGER CHECK (fit_note_required IN (0, 1)),
    extra                   TEXT,
    nested                  TEXT,
    listed                  INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin                  TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at              TEXT,
    synced_at               TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX sicknesses_visible_id ON sicknesses (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX sicknesses_employee_id ON sicknesses (employee_id);
CREATE INDEX sicknesses_dates ON sicknesses (start_date, end_date);
CREATE TRIGGER sicknesses_ins AFTER INSERT ON sicknesses BEGIN
    UPDATE meta SET version = version + 1, sicknesses_total = sicknesses_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER sicknesses_upd AFTER UPDATE ON sicknesses BEGIN
    UPDATE meta SET version = version + 1,
        sicknesses_total = sicknesses_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER sicknesses_del AFTER DELETE ON sicknesses BEGIN
    UPDATE meta SET version = version + 1, sicknesses_total = sicknesses_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

CREATE TABLE leave_requests (
    id               INTEGER PRIMARY KEY,
    employee_id      INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    approved_by_id   INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    leave_reason_id  INTEGER REFERENCES other_leave_reasons (id) DEFERRABLE INITIALLY DEFERRED,
    deducted         TEXT,
    work_units       TEXT,
    start_date       TEXT,
    end_date         TEXT,
    half_start       INTEGER CHECK (half_start IN (0, 1)),
    half_end         INTEGER CHECK (half_end IN (0, 1)),
    half_start_am_pm TEXT,
    half_end_am_pm   TEXT,
    status           TEXT,
    notes            TEXT,
    type             TEXT,
    created_at       TEXT,
    updated_at       TEXT,
    extra            TEXT,
    nested           TEXT,
    listed           INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin           TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at       TEXT,
    synced_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX leave_requests_visible_id ON leave_requests (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX leave_requests_employee_id ON leave_requests (employee_id);
CREATE INDEX leave_requests_approved_by_id ON leave_requests (approved_by_id);
CREATE INDEX leave_requests_leave_reason_id ON leave_requests (leave_reason_id);
CREATE INDEX leave_requests_dates ON leave_requests (start_date);
CREATE TRIGGER leave_requests_ins AFTER INSERT ON leave_requests BEGIN
    UPDATE meta SET version = version + 1, leave_requests_total = leave_requests_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER leave_requests_upd AFTER UPDATE ON leave_requests BEGIN
    UPDATE meta SET version = version + 1,
        leave_requests_total = leave_requests_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER leave_requests_del AFTER DELETE ON leave_requests BEGIN
    UPDATE meta SET version = version + 1, leave_requests_total = leave_requests_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;

CREATE TABLE employee_training_courses (
    id                           INTEGER PRIMARY KEY,
    name                         TEXT,
    start_on                     TEXT,
    end_on                       TEXT,
    expires_on                   TEXT,
    half_day                     INTEGER CHECK (half_day IN (0, 1)),
    half_day_am_pm               TEXT,
    hours                        TEXT,
    cost                         TEXT,
    status                       TEXT,
    outcome                      TEXT,
    rejection_reason             TEXT,
    notes                        TEXT,
    followup_date                TEXT,
    remuneration_currency_id     INTEGER,
    employee_id                  INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    company_training_type_id     INTEGER REFERENCES company_training_types (id) DEFERRABLE INITIALLY DEFERRED,
    company_training_category_id INTEGER,
    company_training_provider_id INTEGER,
    extra                        TEXT,
    nested                       TEXT,
    listed                       INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin                       TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at                   TEXT,
    synced_at                    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX employee_training_courses_visible_id ON employee_training_courses (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX employee_training_courses_employee_id ON employee_training_courses (employee_id);
CREATE INDEX employee_training_courses_company_training_type_id ON employee_training_courses (company_training_type_id);
CREATE TRIGGER employee_training_courses_ins AFTER INSERT ON employee_training_courses BEGIN
    UPDATE meta SET version = version + 1, employee_training_courses_total = employee_training_courses_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER employee_training_courses_upd AFTER UPDATE ON employee_training_courses BEGIN
    UPDATE meta SET version = version + 1,
        employee_training_courses_total = employee_training_courses_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER employee_training_courses_del AFTER DELETE ON employee_training_courses BEGIN
    UPDATE meta SET version = version + 1, employee_training_courses_total = employee_training_courses_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;
