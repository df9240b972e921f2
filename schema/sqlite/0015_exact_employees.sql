-- As schema/postgres/0015_exact_employees.sql: sent on employees, their history and working
-- patterns; employees.blanks (0014) goes. The history triggers name every column, so they are
-- dropped first and made again with sent.
ALTER TABLE employees ADD COLUMN sent TEXT;
ALTER TABLE employees_history ADD COLUMN sent TEXT;
ALTER TABLE working_patterns ADD COLUMN sent TEXT;
DROP TRIGGER employees_history_ins;
DROP TRIGGER employees_history_upd;
ALTER TABLE employees DROP COLUMN blanks;
ALTER TABLE employees_history DROP COLUMN blanks;
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
