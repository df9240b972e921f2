-- As schema/postgres/0014_exact_copies.sql: sent, the record exactly as the source sent it, on
-- every collection declared on the wire and on the histories of those that have one. The history
-- triggers name every column, so they are made again with sent.
ALTER TABLE departments ADD COLUMN sent TEXT;
ALTER TABLE divisions ADD COLUMN sent TEXT;
ALTER TABLE locations ADD COLUMN sent TEXT;
ALTER TABLE holiday_allowances ADD COLUMN sent TEXT;
ALTER TABLE other_leave_reasons ADD COLUMN sent TEXT;
ALTER TABLE statutory_holiday_countries ADD COLUMN sent TEXT;
ALTER TABLE company_training_types ADD COLUMN sent TEXT;
ALTER TABLE absences ADD COLUMN sent TEXT;
ALTER TABLE sicknesses ADD COLUMN sent TEXT;
ALTER TABLE leave_requests ADD COLUMN sent TEXT;
ALTER TABLE employee_training_courses ADD COLUMN sent TEXT;
ALTER TABLE salaries ADD COLUMN sent TEXT;
ALTER TABLE bonuses ADD COLUMN sent TEXT;
ALTER TABLE benefits ADD COLUMN sent TEXT;
ALTER TABLE absences_history ADD COLUMN sent TEXT;
ALTER TABLE sicknesses_history ADD COLUMN sent TEXT;
ALTER TABLE leave_requests_history ADD COLUMN sent TEXT;
ALTER TABLE employee_training_courses_history ADD COLUMN sent TEXT;
ALTER TABLE departments_history ADD COLUMN sent TEXT;
ALTER TABLE divisions_history ADD COLUMN sent TEXT;
ALTER TABLE locations_history ADD COLUMN sent TEXT;
ALTER TABLE holiday_allowances_history ADD COLUMN sent TEXT;
ALTER TABLE other_leave_reasons_history ADD COLUMN sent TEXT;
ALTER TABLE statutory_holiday_countries_history ADD COLUMN sent TEXT;
ALTER TABLE company_training_types_history ADD COLUMN sent TEXT;

DROP TRIGGER absences_history_ins;
CREATE TRIGGER absences_history_ins AFTER INSERT ON absences BEGIN
    DELETE FROM absences_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO absences_history (valid_from, id, employee_id, approved_by_id, leave_reason_id,
        deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
        half_end_am_pm, cancelled, notes, type, created_at, updated_at, extra, nested, sent, listed,
        origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id, NEW.approved_by_id,
        NEW.leave_reason_id, NEW.deducted, NEW.work_units, NEW.start_date, NEW.end_date,
        NEW.half_start, NEW.half_end, NEW.half_start_am_pm, NEW.half_end_am_pm, NEW.cancelled,
        NEW.notes, NEW.type, NEW.created_at, NEW.updated_at, NEW.extra, NEW.nested, NEW.sent, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER absences_history_upd;
CREATE TRIGGER absences_history_upd AFTER UPDATE ON absences BEGIN
    UPDATE absences_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM absences_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO absences_history (valid_from, id, employee_id, approved_by_id, leave_reason_id,
        deducted, work_units, start_date, end_date, half_start, half_end, half_start_am_pm,
        half_end_am_pm, cancelled, notes, type, created_at, updated_at, extra, nested, sent, listed,
        origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id, NEW.approved_by_id,
        NEW.leave_reason_id, NEW.deducted, NEW.work_units, NEW.start_date, NEW.end_date,
        NEW.half_start, NEW.half_end, NEW.half_start_am_pm, NEW.half_end_am_pm, NEW.cancelled,
        NEW.notes, NEW.type, NEW.created_at, NEW.updated_at, NEW.extra, NEW.nested, NEW.sent, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER sicknesses_history_ins;
CREATE TRIGGER sicknesses_history_ins AFTER INSERT ON sicknesses BEGIN
    DELETE FROM sicknesses_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO sicknesses_history (valid_from, id, employee_id, company_sicknesstype_id,
        start_date, end_date, half_start, half_start_am_pm, half_end, half_end_am_pm, deducted,
        status, reason, review_notes, fit_note_required, extra, nested, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id,
        NEW.company_sicknesstype_id, NEW.start_date, NEW.end_date, NEW.half_start,
        NEW.half_start_am_pm, NEW.half_end, NEW.half_end_am_pm, NEW.deducted, NEW.status,
        NEW.reason, NEW.review_notes, NEW.fit_note_required, NEW.extra, NEW.nested, NEW.sent, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER sicknesses_history_upd;
CREATE TRIGGER sicknesses_history_upd AFTER UPDATE ON sicknesses BEGIN
    UPDATE sicknesses_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM sicknesses_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO sicknesses_history (valid_from, id, employee_id, company_sicknesstype_id,
        start_date, end_date, half_start, half_start_am_pm, half_end, half_end_am_pm, deducted,
        status, reason, review_notes, fit_note_required, extra, nested, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id,
        NEW.company_sicknesstype_id, NEW.start_date, NEW.end_date, NEW.half_start,
        NEW.half_start_am_pm, NEW.half_end, NEW.half_end_am_pm, NEW.deducted, NEW.status,
        NEW.reason, NEW.review_notes, NEW.fit_note_required, NEW.extra, NEW.nested, NEW.sent, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER leave_requests_history_ins;
CREATE TRIGGER leave_requests_history_ins AFTER INSERT ON leave_requests BEGIN
    DELETE FROM leave_requests_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO leave_requests_history (valid_from, id, employee_id, approved_by_id,
        leave_reason_id, deducted, work_units, start_date, end_date, half_start, half_end,
        half_start_am_pm, half_end_am_pm, status, notes, type, created_at, updated_at, extra,
        nested, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id, NEW.approved_by_id,
        NEW.leave_reason_id, NEW.deducted, NEW.work_units, NEW.start_date, NEW.end_date,
        NEW.half_start, NEW.half_end, NEW.half_start_am_pm, NEW.half_end_am_pm, NEW.status,
        NEW.notes, NEW.type, NEW.created_at, NEW.updated_at, NEW.extra, NEW.nested, NEW.sent, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER leave_requests_history_upd;
CREATE TRIGGER leave_requests_history_upd AFTER UPDATE ON leave_requests BEGIN
    UPDATE leave_requests_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM leave_requests_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO leave_requests_history (valid_from, id, employee_id, approved_by_id,
        leave_reason_id, deducted, work_units, start_date, end_date, half_start, half_end,
        half_start_am_pm, half_end_am_pm, status, notes, type, created_at, updated_at, extra,
        nested, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.employee_id, NEW.approved_by_id,
        NEW.leave_reason_id, NEW.deducted, NEW.work_units, NEW.start_date, NEW.end_date,
        NEW.half_start, NEW.half_end, NEW.half_start_am_pm, NEW.half_end_am_pm, NEW.status,
        NEW.notes, NEW.type, NEW.created_at, NEW.updated_at, NEW.extra, NEW.nested, NEW.sent, NEW.listed,
        NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER employee_training_courses_history_ins;
CREATE TRIGGER employee_training_courses_history_ins AFTER INSERT ON employee_training_courses BEGIN
    DELETE FROM employee_training_courses_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employee_training_courses_history (valid_from, id, name, start_on, end_on,
        expires_on, half_day, half_day_am_pm, hours, cost, status, outcome, rejection_reason,
        notes, followup_date, remuneration_currency_id, employee_id, company_training_type_id,
        company_training_category_id, company_training_provider_id, extra, nested, sent, listed, origin,
        deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.start_on, NEW.end_on,
        NEW.expires_on, NEW.half_day, NEW.half_day_am_pm, NEW.hours, NEW.cost, NEW.status,
        NEW.outcome, NEW.rejection_reason, NEW.notes, NEW.followup_date,
        NEW.remuneration_currency_id, NEW.employee_id, NEW.company_training_type_id,
        NEW.company_training_category_id, NEW.company_training_provider_id, NEW.extra, NEW.nested,
        NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER employee_training_courses_history_upd;
CREATE TRIGGER employee_training_courses_history_upd AFTER UPDATE ON employee_training_courses BEGIN
    UPDATE employee_training_courses_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM employee_training_courses_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employee_training_courses_history (valid_from, id, name, start_on, end_on,
        expires_on, half_day, half_day_am_pm, hours, cost, status, outcome, rejection_reason,
        notes, followup_date, remuneration_currency_id, employee_id, company_training_type_id,
        company_training_category_id, company_training_provider_id, extra, nested, sent, listed, origin,
        deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.start_on, NEW.end_on,
        NEW.expires_on, NEW.half_day, NEW.half_day_am_pm, NEW.hours, NEW.cost, NEW.status,
        NEW.outcome, NEW.rejection_reason, NEW.notes, NEW.followup_date,
        NEW.remuneration_currency_id, NEW.employee_id, NEW.company_training_type_id,
        NEW.company_training_category_id, NEW.company_training_provider_id, NEW.extra, NEW.nested,
        NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER departments_history_ins;
CREATE TRIGGER departments_history_ins AFTER INSERT ON departments BEGIN
    DELETE FROM departments_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO departments_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER departments_history_upd;
CREATE TRIGGER departments_history_upd AFTER UPDATE ON departments BEGIN
    UPDATE departments_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM departments_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO departments_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER divisions_history_ins;
CREATE TRIGGER divisions_history_ins AFTER INSERT ON divisions BEGIN
    DELETE FROM divisions_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO divisions_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER divisions_history_upd;
CREATE TRIGGER divisions_history_upd AFTER UPDATE ON divisions BEGIN
    UPDATE divisions_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM divisions_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO divisions_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER locations_history_ins;
CREATE TRIGGER locations_history_ins AFTER INSERT ON locations BEGIN
    DELETE FROM locations_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO locations_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER locations_history_upd;
CREATE TRIGGER locations_history_upd AFTER UPDATE ON locations BEGIN
    UPDATE locations_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM locations_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO locations_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER holiday_allowances_history_ins;
CREATE TRIGGER holiday_allowances_history_ins AFTER INSERT ON holiday_allowances BEGIN
    DELETE FROM holiday_allowances_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO holiday_allowances_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER holiday_allowances_history_upd;
CREATE TRIGGER holiday_allowances_history_upd AFTER UPDATE ON holiday_allowances BEGIN
    UPDATE holiday_allowances_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM holiday_allowances_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO holiday_allowances_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER other_leave_reasons_history_ins;
CREATE TRIGGER other_leave_reasons_history_ins AFTER INSERT ON other_leave_reasons BEGIN
    DELETE FROM other_leave_reasons_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO other_leave_reasons_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER other_leave_reasons_history_upd;
CREATE TRIGGER other_leave_reasons_history_upd AFTER UPDATE ON other_leave_reasons BEGIN
    UPDATE other_leave_reasons_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM other_leave_reasons_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO other_leave_reasons_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER statutory_holiday_countries_history_ins;
CREATE TRIGGER statutory_holiday_countries_history_ins AFTER INSERT ON statutory_holiday_countries BEGIN
    DELETE FROM statutory_holiday_countries_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO statutory_holiday_countries_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER statutory_holiday_countries_history_upd;
CREATE TRIGGER statutory_holiday_countries_history_upd AFTER UPDATE ON statutory_holiday_countries BEGIN
    UPDATE statutory_holiday_countries_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM statutory_holiday_countries_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO statutory_holiday_countries_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;

DROP TRIGGER company_training_types_history_ins;
CREATE TRIGGER company_training_types_history_ins AFTER INSERT ON company_training_types BEGIN
    DELETE FROM company_training_types_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO company_training_types_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
DROP TRIGGER company_training_types_history_upd;
CREATE TRIGGER company_training_types_history_upd AFTER UPDATE ON company_training_types BEGIN
    UPDATE company_training_types_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM company_training_types_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO company_training_types_history (valid_from, id, name, extra, sent, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;

-- Employees and working patterns, as in schema/postgres/0014_exact_copies.sql: sent on employees,
-- their history and working patterns. The history triggers name every column, so they are
-- dropped first and made again with sent.
ALTER TABLE employees ADD COLUMN sent TEXT;
ALTER TABLE employees_history ADD COLUMN sent TEXT;
ALTER TABLE working_patterns ADD COLUMN sent TEXT;
DROP TRIGGER employees_history_ins;
DROP TRIGGER employees_history_upd;
CREATE TRIGGER employees_history_ins AFTER INSERT ON employees BEGIN
    DELETE FROM employees_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employees_history (id, valid_from, valid_to, account_id, first_name, last_name,
        email, job_title, status, company_join_date, job_start_date, length_of_service_in_months,
        age, full_or_part_time, notice_period, working_pattern_id, holiday_allowance_id,
        department_id, division_id, location_id, line_manager_id, holiday_approver_id,
        receives_statutory_holidays, hr, created_at, updated_at, extra, sent, listed, origin,
        deleted_at)
    VALUES (NEW.id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL,
        NEW.account_id, NEW.first_name, NEW.last_name, NEW.email, NEW.job_title, NEW.status,
        NEW.company_join_date, NEW.job_start_date, NEW.length_of_service_in_months, NEW.age,
        NEW.full_or_part_time, NEW.notice_period, NEW.working_pattern_id, NEW.holiday_allowance_id,
        NEW.department_id, NEW.division_id, NEW.location_id, NEW.line_manager_id, NEW.holiday_approver_id,
        NEW.receives_statutory_holidays, NEW.hr, NEW.created_at, NEW.updated_at, NEW.extra,
        NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER employees_history_upd AFTER UPDATE ON employees BEGIN
    UPDATE employees_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM employees_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO employees_history (id, valid_from, valid_to, account_id, first_name, last_name,
        email, job_title, status, company_join_date, job_start_date, length_of_service_in_months,
        age, full_or_part_time, notice_period, working_pattern_id, holiday_allowance_id,
        department_id, division_id, location_id, line_manager_id, holiday_approver_id,
        receives_statutory_holidays, hr, created_at, updated_at, extra, sent, listed, origin,
        deleted_at)
    VALUES (NEW.id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL,
        NEW.account_id, NEW.first_name, NEW.last_name, NEW.email, NEW.job_title, NEW.status,
        NEW.company_join_date, NEW.job_start_date, NEW.length_of_service_in_months, NEW.age,
        NEW.full_or_part_time, NEW.notice_period, NEW.working_pattern_id, NEW.holiday_allowance_id,
        NEW.department_id, NEW.division_id, NEW.location_id, NEW.line_manager_id, NEW.holiday_approver_id,
        NEW.receives_statutory_holidays, NEW.hr, NEW.created_at, NEW.updated_at, NEW.extra,
        NEW.sent, NEW.listed, NEW.origin, NEW.deleted_at);
END;
