-- The rest of the API (UPSTREAM.md, "The rest of the API"): reference data and the events that
-- point at employees. Each table is what sink/collections.go declares for it (a test holds the two
-- together): a column per field of the wire declaration (source/v1/collections.go), a foreign key
-- per nested reference to a table the warehouse holds (an id column for one it does not), extra
-- (the fields not modelled) and nested (the nested objects' forms as sent), then the bookkeeping
-- every served table has. Every table is counted in meta and bumps its version, as the others.

-- meta_bump and a per-table recount, by the table's name: a new collection needs only its
-- <name>_total column and its triggers.
CREATE OR REPLACE FUNCTION meta_bump(collection text, d bigint) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    EXECUTE format('UPDATE meta SET version = version + 1, %I = %I + $1', collection || '_total', collection || '_total') USING d;
END $$;

CREATE FUNCTION recount_listed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    EXECUTE format('UPDATE meta SET version = version + 1, %I = (SELECT count(*) FROM %I WHERE listed AND deleted_at IS NULL)',
        TG_TABLE_NAME || '_total', TG_TABLE_NAME);
    RETURN NULL;
END $$;

ALTER TABLE meta ADD COLUMN divisions_total bigint NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN locations_total bigint NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN other_leave_reasons_total bigint NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN statutory_holiday_countries_total bigint NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN company_training_types_total bigint NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN absences_total bigint NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN sicknesses_total bigint NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN leave_requests_total bigint NOT NULL DEFAULT 0;
ALTER TABLE meta ADD COLUMN employee_training_courses_total bigint NOT NULL DEFAULT 0;

CREATE TABLE divisions (
    id         bigint PRIMARY KEY,
    name       text,
    extra      json,
    listed     boolean NOT NULL DEFAULT true,
    origin     text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at timestamptz,
    synced_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX divisions_visible_id ON divisions (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER divisions_ins AFTER INSERT ON divisions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER divisions_upd AFTER UPDATE ON divisions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER divisions_del AFTER DELETE ON divisions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER divisions_trunc AFTER TRUNCATE ON divisions FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

CREATE TABLE locations (
    id         bigint PRIMARY KEY,
    name       text,
    extra      json,
    listed     boolean NOT NULL DEFAULT true,
    origin     text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at timestamptz,
    synced_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX locations_visible_id ON locations (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER locations_ins AFTER INSERT ON locations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER locations_upd AFTER UPDATE ON locations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER locations_del AFTER DELETE ON locations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER locations_trunc AFTER TRUNCATE ON locations FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

CREATE TABLE other_leave_reasons (
    id         bigint PRIMARY KEY,
    name       text,
    extra      json,
    listed     boolean NOT NULL DEFAULT true,
    origin     text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at timestamptz,
    synced_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX other_leave_reasons_visible_id ON other_leave_reasons (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER other_leave_reasons_ins AFTER INSERT ON other_leave_reasons REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER other_leave_reasons_upd AFTER UPDATE ON other_leave_reasons REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER other_leave_reasons_del AFTER DELETE ON other_leave_reasons REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER other_leave_reasons_trunc AFTER TRUNCATE ON other_leave_reasons FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

CREATE TABLE statutory_holiday_countries (
    id         bigint PRIMARY KEY,
    name       text,
    extra      json,
    listed     boolean NOT NULL DEFAULT true,
    origin     text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at timestamptz,
    synced_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX statutory_holiday_countries_visible_id ON statutory_holiday_countries (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER statutory_holiday_countries_ins AFTER INSERT ON statutory_holiday_countries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER statutory_holiday_countries_upd AFTER UPDATE ON statutory_holiday_countries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER statutory_holiday_countries_del AFTER DELETE ON statutory_holiday_countries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER statutory_holiday_countries_trunc AFTER TRUNCATE ON statutory_holiday_countries FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

CREATE TABLE company_training_types (
    id         bigint PRIMARY KEY,
    name       text,
    extra      json,
    listed     boolean NOT NULL DEFAULT true,
    origin     text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at timestamptz,
    synced_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX company_training_types_visible_id ON company_training_types (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER company_training_types_ins AFTER INSERT ON company_training_types REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER company_training_types_upd AFTER UPDATE ON company_training_types REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER company_training_types_del AFTER DELETE ON company_training_types REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER company_training_types_trunc AFTER TRUNCATE ON company_training_types FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

CREATE TABLE absences (
    id               bigint PRIMARY KEY,
    employee_id      bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    approved_by_id   bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    leave_reason_id  bigint REFERENCES other_leave_reasons (id) DEFERRABLE INITIALLY DEFERRED,
    deducted         numeric,
    work_units       numeric,
    start_date       date,
    end_date         date,
    half_start       boolean,
    half_end         boolean,
    half_start_am_pm text,
    half_end_am_pm   text,
    cancelled        boolean,
    notes            text,
    type             text,
    created_at       timestamptz,
    updated_at       timestamptz,
    extra            json,
    nested           json,
    listed           boolean NOT NULL DEFAULT true,
    origin           text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at       timestamptz,
    synced_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX absences_visible_id ON absences (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX absences_employee_id ON absences (employee_id);
CREATE INDEX absences_approved_by_id ON absences (approved_by_id);
CREATE INDEX absences_leave_reason_id ON absences (leave_reason_id);
CREATE INDEX absences_dates ON absences (start_date, end_date);
CREATE TRIGGER absences_ins AFTER INSERT ON absences REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER absences_upd AFTER UPDATE ON absences REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER absences_del AFTER DELETE ON absences REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER absences_trunc AFTER TRUNCATE ON absences FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

CREATE TABLE sicknesses (
    id                      bigint PRIMARY KEY,
    employee_id             bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    company_sicknesstype_id bigint,
    start_date              date,
    end_date                date,
    half_start              boolean,
    half_start_am_pm        text,
    half_end                boolean,
    half_end_am_pm          text,
    deducted                numeric,
    status                  text,
    reason                  text,
    review_notes            text,
    fit_note_required       boolean,
    extra                   json,
    nested                  json,
    listed                  boolean NOT NULL DEFAULT true,
    origin                  text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at              timestamptz,
    synced_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sicknesses_visible_id ON sicknesses (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX sicknesses_employee_id ON sicknesses (employee_id);
CREATE INDEX sicknesses_dates ON sicknesses (start_date, end_date);
CREATE TRIGGER sicknesses_ins AFTER INSERT ON sicknesses REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER sicknesses_upd AFTER UPDATE ON sicknesses REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER sicknesses_del AFTER DELETE ON sicknesses REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER sicknesses_trunc AFTER TRUNCATE ON sicknesses FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

CREATE TABLE leave_requests (
    id               bigint PRIMARY KEY,
    employee_id      bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    approved_by_id   bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    leave_reason_id  bigint REFERENCES other_leave_reasons (id) DEFERRABLE INITIALLY DEFERRED,
    deducted         numeric,
    work_units       numeric,
    start_date       date,
    end_date         date,
    half_start       boolean,
    half_end         boolean,
    half_start_am_pm text,
    half_end_am_pm   text,
    status           text,
    notes            text,
    type             text,
    created_at       timestamptz,
    updated_at       timestamptz,
    extra            json,
    nested           json,
    listed           boolean NOT NULL DEFAULT true,
    origin           text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at       timestamptz,
    synced_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX leave_requests_visible_id ON leave_requests (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX leave_requests_employee_id ON leave_requests (employee_id);
CREATE INDEX leave_requests_approved_by_id ON leave_requests (approved_by_id);
CREATE INDEX leave_requests_leave_reason_id ON leave_requests (leave_reason_id);
CREATE INDEX leave_requests_dates ON leave_requests (start_date);
CREATE TRIGGER leave_requests_ins AFTER INSERT ON leave_requests REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER leave_requests_upd AFTER UPDATE ON leave_requests REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER leave_requests_del AFTER DELETE ON leave_requests REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER leave_requests_trunc AFTER TRUNCATE ON leave_requests FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();

CREATE TABLE employee_training_courses (
    id                           bigint PRIMARY KEY,
    name                         text,
    start_on                     date,
    end_on                       date,
    expires_on                   date,
    half_day                     boolean,
    half_day_am_pm               text,
    hours                        numeric,
    cost                         numeric,
    status                       text,
    outcome                      text,
    rejection_reason             text,
    notes                        text,
    followup_date                date,
    remuneration_currency_id     integer,
    employee_id                  bigint REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    company_training_type_id     bigint REFERENCES company_training_types (id) DEFERRABLE INITIALLY DEFERRED,
    company_training_category_id bigint,
    company_training_provider_id bigint,
    extra                        json,
    nested                       json,
    listed                       boolean NOT NULL DEFAULT true,
    origin                       text NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at                   timestamptz,
    synced_at                    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX employee_training_courses_visible_id ON employee_training_courses (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX employee_training_courses_employee_id ON employee_training_courses (employee_id);
CREATE INDEX employee_training_courses_company_training_type_id ON employee_training_courses (company_training_type_id);
CREATE TRIGGER employee_training_courses_ins AFTER INSERT ON employee_training_courses REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER employee_training_courses_upd AFTER UPDATE ON employee_training_courses REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER employee_training_courses_del AFTER DELETE ON employee_training_courses REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listed_changed();
CREATE TRIGGER employee_training_courses_trunc AFTER TRUNCATE ON employee_training_courses FOR EACH STATEMENT EXECUTE FUNCTION recount_listed();
