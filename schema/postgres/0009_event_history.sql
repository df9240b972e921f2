-- History of the events that change after they are first synced: absences, sicknesses, leave
-- requests and training courses (a leave request goes pending -> approved -> cancelled, an ongoing
-- sickness gets its end date, a booked course its outcome). As employees_history (0002):
-- <table>_history holds every version of every row with the period it was current in the
-- warehouse (valid_from: the writing transaction's time; valid_to: when the next version replaced
-- it, NULL while current), written by triggers, so syncs and direct SQL edits are all recorded.
-- A merge writes only the rows that changed, so a sync that changes nothing writes no version; a
-- soft delete closes the version and opens one with deleted_at set; a hard delete (by hand) closes
-- it. Each history holds every column of its table but synced_at, which valid_from is.
-- "October's approved leave, as it stood at the end of 31 October":
--   SELECT id, employee_id, start_date, end_date FROM hr.leave_requests_history
--   WHERE valid_from <= '2026-11-01' AND (valid_to IS NULL OR valid_to > '2026-11-01')
--     AND listed AND deleted_at IS NULL
--     AND status = 'approved' AND start_date <= '2026-10-31' AND end_date >= '2026-10-01';
-- The primary key (id, valid_from) serves a record's versions; <table>_history_period the
-- as-of queries over a period.

-- One trigger function for every such table: it copies the table's columns by name (the
-- catalog's list, read per statement), so a column added to a table and its history needs no new
-- function, and one added to the table alone fails the write loudly instead of being dropped
-- from the history (TestDeclarationsMatchMigrations fails first).
CREATE FUNCTION history_write() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    history text := TG_TABLE_NAME || '_history';
    cols    text;
    sets    text;
BEGIN
    SELECT string_agg(format('%I', attname), ', ' ORDER BY attnum),
           string_agg(format('%I = excluded.%I', attname, attname), ', ' ORDER BY attnum) FILTER (WHERE attname <> 'id')
    INTO cols, sets
    FROM pg_attribute
    WHERE attrelid = TG_RELID AND attnum > 0 AND NOT attisdropped AND attname <> 'synced_at';
    IF TG_OP <> 'INSERT' THEN
        EXECUTE format('UPDATE %I h SET valid_to = now() FROM old_rows o
            WHERE h.id = o.id AND h.valid_to IS NULL AND h.valid_from < now()', history);
    END IF;
    IF TG_OP = 'DELETE' THEN
        -- A version this transaction wrote was never current for anyone else.
        EXECUTE format('DELETE FROM %I h USING old_rows o WHERE h.id = o.id AND h.valid_from = now()', history);
        RETURN NULL;
    END IF;
    -- Two writes of one row in one transaction leave one version: the last.
    EXECUTE format('INSERT INTO %I (valid_from, %s) SELECT now(), %s FROM new_rows
        ON CONFLICT (id, valid_from) DO UPDATE SET valid_to = NULL, %s', history, cols, cols, sets);
    RETURN NULL;
END $$;

CREATE TABLE absences_history (
    id               bigint NOT NULL,
    valid_from       timestamptz NOT NULL,
    valid_to         timestamptz,
    employee_id      bigint,
    approved_by_id   bigint,
    leave_reason_id  bigint,
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
    listed           boolean NOT NULL,
    origin           text NOT NULL,
    deleted_at       timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX absences_history_period ON absences_history (valid_from, valid_to);
CREATE TRIGGER absences_history_ins AFTER INSERT ON absences REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER absences_history_upd AFTER UPDATE ON absences REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER absences_history_del AFTER DELETE ON absences REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO absences_history (valid_from, id, employee_id, approved_by_id, leave_reason_id,
    deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
    half_end_am_pm, cancelled, notes, type, created_at, updated_at, extra, nested, listed, origin,
    deleted_at)
SELECT now(), id, employee_id, approved_by_id, leave_reason_id, deducted, work_units, start_date,
    end_date, half_start, half_end, half_start_am_pm, half_end_am_pm, cancelled, notes, type,
    created_at, updated_at, extra, nested, listed, origin, deleted_at
FROM absences;

CREATE TABLE sicknesses_history (
    id                      bigint NOT NULL,
    valid_from              timestamptz NOT NULL,
    valid_to                timestamptz,
    employee_id             bigint,
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
    listed                  boolean NOT NULL,
    origin                  text NOT NULL,
    deleted_at              timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX sicknesses_history_period ON sicknesses_history (valid_from, valid_to);
CREATE TRIGGER sicknesses_history_ins AFTER INSERT ON sicknesses REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER sicknesses_history_upd AFTER UPDATE ON sicknesses REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER sicknesses_history_del AFTER DELETE ON sicknesses REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO sicknesses_history (valid_from, id, employee_id, company_sicknesstype_id, start_date,
    end_date, half_start, half_start_am_pm, half_end, half_end_am_pm, deducted, status, reason,
    review_notes, fit_note_required, extra, nested, listed, origin, deleted_at)
SELECT now(), id, employee_id, company_sicknesstype_id, start_date, end_date, half_start,
    half_start_am_pm, half_end, half_end_am_pm, deducted, status, reason, review_notes,
    fit_note_required, extra, nested, listed, origin, deleted_at
FROM sicknesses;

CREATE TABLE leave_requests_history (
    id               bigint NOT NULL,
    valid_from       timestamptz NOT NULL,
    valid_to         timestamptz,
    employee_id      bigint,
    approved_by_id   bigint,
    leave_reason_id  bigint,
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
    listed           boolean NOT NULL,
    origin           text NOT NULL,
    deleted_at       timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX leave_requests_history_period ON leave_requests_history (valid_from, valid_to);
CREATE TRIGGER leave_requests_history_ins AFTER INSERT ON leave_requests REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER leave_requests_history_upd AFTER UPDATE ON leave_requests REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER leave_requests_history_del AFTER DELETE ON leave_requests REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO leave_requests_history (valid_from, id, employee_id, approved_by_id, leave_reason_id,
    deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
    half_end_am_pm, status, notes, type, created_at, updated_at, extra, nested, listed, origin,
    deleted_at)
SELECT now(), id, employee_id, approved_by_id, leave_reason_id, deducted, work_units, start_date,
    end_date, half_start, half_end, half_start_am_pm, half_end_am_pm, status, notes, type,
    created_at, updated_at, extra, nested, listed, origin, deleted_at
FROM leave_requests;

CREATE TABLE employee_training_courses_history (
    id                           bigint NOT NULL,
    valid_from                   timestamptz NOT NULL,
    valid_to                     timestamptz,
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
    employee_id                  bigint,
    company_training_type_id     bigint,
    company_training_category_id bigint,
    company_training_provider_id bigint,
    extra                        json,
    nested                       json,
    listed                       boolean NOT NULL,
    origin                       text NOT NULL,
    deleted_at                   timestamptz,
    PRIMARY KEY (id, valid_from)
);
CREATE INDEX employee_training_courses_history_period ON employee_training_courses_history (valid_from, valid_to);
CREATE TRIGGER employee_training_courses_history_ins AFTER INSERT ON employee_training_courses REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER employee_training_courses_history_upd AFTER UPDATE ON employee_training_courses REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
CREATE TRIGGER employee_training_courses_history_del AFTER DELETE ON employee_training_courses REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_write();
INSERT INTO employee_training_courses_history (valid_from, id, name, start_on, end_on, expires_on,
    half_day, half_day_am_pm, hours, cost, status, outcome, rejection_reason, notes, followup_date,
    remuneration_currency_id, employee_id, company_training_type_id, company_training_category_id,
    company_training_provider_id, extra, nested, listed, origin, deleted_at)
SELECT now(), id, name, start_on, end_on, expires_on, half_day, half_day_am_pm, hours, cost,
    status, outcome, rejection_reason, notes, followup_date, remuneration_currency_id, employee_id,
    company_training_type_id, company_training_category_id, company_training_provider_id, extra,
    nested, listed, origin, deleted_at
FROM employee_training_courses;

