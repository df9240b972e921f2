-- History of absences, sicknesses, leave requests and training courses, as in
-- schema/postgres/0009_event_history.sql and employees_history (0002): valid_from and valid_to are
-- TEXT timestamps with milliseconds; a second write of a row in the same millisecond replaces that
-- millisecond's version. Row triggers name every column: a column added to a table must be added
-- to its history and to these triggers (TestDeclarationsMatchMigrations holds the tables together).

CREATE TABLE absences_history (
    id               INTEGER NOT NULL,
    valid_from       TEXT NOT NULL,
    valid_to         TEXT,
    employee_id      INTEGER,
    approved_by_id   INTEGER,
    leave_reason_id  INTEGER,
    deducted         TEXT,
    work_units       TEXT,
    start_date       TEXT,
    end_date         TEXT,
    half_start       INTEGER,
    half_end         INTEGER,
    half_start_am_pm TEXT,
    half_end_am_pm   TEXT,
    cancelled        INTEGER,
    notes            TEXT,
    type             TEXT,
    created_at       TEXT,
    updated_at       TEXT,
    extra            TEXT,
    nested           TEXT,
    listed           INTEGER NOT NULL,
    origin           TEXT NOT NULL,
    deleted_at       TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX absences_history_period ON absences_history (valid_from, valid_to);
CREATE TRIGGER absences_history_ins AFTER INSERT ON absences BEGIN
    DELETE FROM absences_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO absences_history (valid_from, id, employee_id, approved_by_id, leave_reason_id,
        deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
        half_end_am_pm, cancelled, notes, type, created_at, updated_at, extra, nested, listed,
        origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id, NEW.approved_by_id,
        NEW.leave_reason_id, NEW.deducted, NEW.work_units, NEW.start_date, NEW.end_date,
        NEW.half_start, NEW.half_end, NEW.half_start_am_pm, NEW.half_end_am_pm, NEW.cancelled,
        NEW.notes, NEW.type, NEW.created_at, NEW.updated_at, NEW.extra, NEW.nested, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER absences_history_upd AFTER UPDATE ON absences BEGIN
    UPDATE absences_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM absences_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO absences_history (valid_from, id, employee_id, approved_by_id, leave_reason_id,
        deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
        half_end_am_pm, cancelled, notes, type, created_at, updated_at, extra, nested, listed,
        origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id, NEW.approved_by_id,
        NEW.leave_reason_id, NEW.deducted, NEW.work_units, NEW.start_date, NEW.end_date,
        NEW.half_start, NEW.half_end, NEW.half_start_am_pm, NEW.half_end_am_pm, NEW.cancelled,
        NEW.notes, NEW.type, NEW.created_at, NEW.updated_at, NEW.extra, NEW.nested, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER absences_history_del AFTER DELETE ON absences BEGIN
    UPDATE absences_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM absences_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO absences_history (valid_from, id, employee_id, approved_by_id, leave_reason_id,
    deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
    half_end_am_pm, cancelled, notes, type, created_at, updated_at, extra, nested, listed, origin,
    deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, employee_id, approved_by_id, leave_reason_id,
    deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
    half_end_am_pm, cancelled, notes, type, created_at, updated_at, extra, nested, listed, origin,
    deleted_at
FROM absences;

CREATE TABLE sicknesses_history (
    id                      INTEGER NOT NULL,
    valid_from              TEXT NOT NULL,
    valid_to                TEXT,
    employee_id             INTEGER,
    company_sicknesstype_id INTEGER,
    start_date              TEXT,
    end_date                TEXT,
    half_start              INTEGER,
    half_start_am_pm        TEXT,
    half_end                INTEGER,
    half_end_am_pm          TEXT,
    deducted                TEXT,
    status                  TEXT,
    reason                  TEXT,
    review_notes            TEXT,
    fit_note_required       INTEGER,
    extra                   TEXT,
    nested                  TEXT,
    listed                  INTEGER NOT NULL,
    origin                  TEXT NOT NULL,
    deleted_at              TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX sicknesses_history_period ON sicknesses_history (valid_from, valid_to);
CREATE TRIGGER sicknesses_history_ins AFTER INSERT ON sicknesses BEGIN
    DELETE FROM sicknesses_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO sicknesses_history (valid_from, id, employee_id, company_sicknesstype_id,
        start_date, end_date, half_start, half_start_am_pm, half_end, half_end_am_pm, deducted,
        status, reason, review_notes, fit_note_required, extra, nested, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id,
        NEW.company_sicknesstype_id, NEW.start_date, NEW.end_date, NEW.half_start,
        NEW.half_start_am_pm, NEW.half_end, NEW.half_end_am_pm, NEW.deducted, NEW.status,
        NEW.reason, NEW.review_notes, NEW.fit_note_required, NEW.extra, NEW.nested, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER sicknesses_history_upd AFTER UPDATE ON sicknesses BEGIN
    UPDATE sicknesses_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM sicknesses_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO sicknesses_history (valid_from, id, employee_id, company_sicknesstype_id,
        start_date, end_date, half_start, half_start_am_pm, half_end, half_end_am_pm, deducted,
        status, reason, review_notes, fit_note_required, extra, nested, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id,
        NEW.company_sicknesstype_id, NEW.start_date, NEW.end_date, NEW.half_start,
        NEW.half_start_am_pm, NEW.half_end, NEW.half_end_am_pm, NEW.deducted, NEW.status,
        NEW.reason, NEW.review_notes, NEW.fit_note_required, NEW.extra, NEW.nested, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER sicknesses_history_del AFTER DELETE ON sicknesses BEGIN
    UPDATE sicknesses_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM sicknesses_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO sicknesses_history (valid_from, id, employee_id, company_sicknesstype_id, start_date,
    end_date, half_start, half_start_am_pm, half_end, half_end_am_pm, deducted, status, reason,
    review_notes, fit_note_required, extra, nested, listed, origin, deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, employee_id, company_sicknesstype_id, start_date,
    end_date, half_start, half_start_am_pm, half_end, half_end_am_pm, deducted, status, reason,
    review_notes, fit_note_required, extra, nested, listed, origin, deleted_at
FROM sicknesses;

CREATE TABLE leave_requests_history (
    id               INTEGER NOT NULL,
    valid_from       TEXT NOT NULL,
    valid_to         TEXT,
    employee_id      INTEGER,
    approved_by_id   INTEGER,
    leave_reason_id  INTEGER,
    deducted         TEXT,
    work_units       TEXT,
    start_date       TEXT,
    end_date         TEXT,
    half_start       INTEGER,
    half_end         INTEGER,
    half_start_am_pm TEXT,
    half_end_am_pm   TEXT,
    status           TEXT,
    notes            TEXT,
    type             TEXT,
    created_at       TEXT,
    updated_at       TEXT,
    extra            TEXT,
    nested           TEXT,
    listed           INTEGER NOT NULL,
    origin           TEXT NOT NULL,
    deleted_at       TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX leave_requests_history_period ON leave_requests_history (valid_from, valid_to);
CREATE TRIGGER leave_requests_history_ins AFTER INSERT ON leave_requests BEGIN
    DELETE FROM leave_requests_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO leave_requests_history (valid_from, id, employee_id, approved_by_id,
        leave_reason_id, deducted, work_units, start_date, end_date, half_start, half_end,
        half_start_am_pm, half_end_am_pm, status, notes, type, created_at, updated_at, extra,
        nested, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id, NEW.approved_by_id,
        NEW.leave_reason_id, NEW.deducted, NEW.work_units, NEW.start_date, NEW.end_date,
        NEW.half_start, NEW.half_end, NEW.half_start_am_pm, NEW.half_end_am_pm, NEW.status,
        NEW.notes, NEW.type, NEW.created_at, NEW.updated_at, NEW.extra, NEW.nested, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER leave_requests_history_upd AFTER UPDATE ON leave_requests BEGIN
    UPDATE leave_requests_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM leave_requests_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO leave_requests_history (valid_from, id, employee_id, approved_by_id,
        leave_reason_id, deducted, work_units, start_date, end_date, half_start, half_end,
        half_start_am_pm, half_end_am_pm, status, notes, type, created_at, updated_at, extra,
        nested, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id, NEW.approved_by_id,
        NEW.leave_reason_id, NEW.deducted, NEW.work_units, NEW.start_date, NEW.end_date,
        NEW.half_start, NEW.half_end, NEW.half_start_am_pm, NEW.half_end_am_pm, NEW.status,
        NEW.notes, NEW.type, NEW.created_at, NEW.updated_at, NEW.extra, NEW.nested, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER leave_requests_history_del AFTER DELETE ON leave_requests BEGIN
    UPDATE leave_requests_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM leave_requests_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO leave_requests_history (valid_from, id, employee_id, approved_by_id, leave_reason_id,
    deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
    half_end_am_pm, status, notes, type, created_at, updated_at, extra, nested, listed, origin,
    deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, employee_id, approved_by_id, leave_reason_id,
    deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
    half_end_am_pm, status, notes, type, created_at, updated_at, extra, nested, listed, origin,
    deleted_at
FROM leave_requests;

CREATE TABLE employee_training_courses_history (
    id                           INTEGER NOT NULL,
    valid_from                   TEXT NOT NULL,
    valid_to                     TEXT,
    name                         TEXT,
    start_on                     TEXT,
    end_on                       TEXT,
    expires_on                   TEXT,
    half_day                     INTEGER,
    half_day_am_pm               TEXT,
    hours                        TEXT,
    cost                         TEXT,
    status                       TEXT,
    outcome                      TEXT,
    rejection_reason             TEXT,
    notes                        TEXT,
    followup_date                TEXT,
    remuneration_currency_id     INTEGER,
    employee_id                  INTEGER,
    company_training_type_id     INTEGER,
    company_training_category_id INTEGER,
    company_training_provider_id INTEGER,
    extra                        TEXT,
    nested                       TEXT,
    listed                       INTEGER NOT NULL,
    origin                       TEXT NOT NULL,
    deleted_at                   TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX employee_training_courses_history_period ON employee_training_courses_history (valid_from, valid_to);
CREATE TRIGGER employee_training_courses_history_ins AFTER INSERT ON employee_training_courses BEGIN
    DELETE FROM employee_training_courses_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employee_training_courses_history (valid_from, id, name, start_on, end_on,
        expires_on, half_day, half_day_am_pm, hours, cost, status, outcome, rejection_reason,
        notes, followup_date, remuneration_currency_id, employee_id, company_training_type_id,
        company_training_category_id, company_training_provider_id, extra, nested, listed, origin,
        deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.start_on, NEW.end_on,
        NEW.expires_on, NEW.half_day, NEW.half_day_am_pm, NEW.hours, NEW.cost, NEW.status,
        NEW.outcome, NEW.rejection_reason, NEW.notes, NEW.followup_date,
        NEW.remuneration_currency_id, NEW.employee_id, NEW.company_training_type_id,
        NEW.company_training_category_id, NEW.company_training_provider_id, NEW.extra, NEW.nested,
        NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER employee_training_courses_history_upd AFTER UPDATE ON employee_training_courses BEGIN
    UPDATE employee_training_courses_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM employee_training_courses_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employee_training_courses_history (valid_from, id, name, start_on, end_on,
        expires_on, half_day, half_day_am_pm, hours, cost, status, outcome, rejection_reason,
        notes, followup_date, remuneration_currency_id, employee_id, company_training_type_id,
        company_training_category_id, company_training_provider_id, extra, nested, listed, origin,
        deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.start_on, NEW.end_on,
        NEW.expires_on, NEW.half_day, NEW.half_day_am_pm, NEW.hours, NEW.cost, NEW.status,
        NEW.outcome, NEW.rejection_reason, NEW.notes, NEW.followup_date,
        NEW.remuneration_currency_id, NEW.employee_id, NEW.company_training_type_id,
        NEW.company_training_category_id, NEW.company_training_provider_id, NEW.extra, NEW.nested,
        NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER employee_training_courses_history_del AFTER DELETE ON employee_training_courses BEGIN
    UPDATE employee_training_courses_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM employee_training_courses_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO employee_training_courses_history (valid_from, id, name, start_on, end_on, expires_on,
    half_day, half_day_am_pm, hours, cost, status, outcome, rejection_reason, notes, followup_date,
    remuneration_currency_id, employee_id, company_training_type_id, company_training_category_id,
    company_training_provider_id, extra, nested, listed, origin, deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, name, start_on, end_on, expires_on, half_day,
    half_day_am_pm, hours, cost, status, outcome, rejection_reason, notes, followup_date,
    remuneration_currency_id, employee_id, company_training_type_id, company_training_category_id,
    company_training_provider_id, extra, nested, listed, origin, deleted_at
FROM employee_training_courses;

