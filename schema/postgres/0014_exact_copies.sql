-- Exact copies. Every collection declared on the wire (all but employees and working patterns)
-- gets sent: the record exactly as the source sent it, compacted (its members in its order, "",
-- null and an absent member kept apart, numbers and strings as written). Serve mode gives a
-- record back from it. The typed columns stay the analysts', in their normal forms: there "" and
-- null are both NULL, timestamps UTC, a member the source left out NULL too.
-- A row stored before this migration has no sent and is served from the typed columns as before,
-- until a sync walks it again: that sync updates each such row once (and
-- records that version in the history), as what it serves changes; the syncs after it write
-- only what changed. Histories keep sent too (history_write, 0009, copies columns by name).
ALTER TABLE departments ADD COLUMN sent json;
ALTER TABLE divisions ADD COLUMN sent json;
ALTER TABLE locations ADD COLUMN sent json;
ALTER TABLE holiday_allowances ADD COLUMN sent json;
ALTER TABLE other_leave_reasons ADD COLUMN sent json;
ALTER TABLE statutory_holiday_countries ADD COLUMN sent json;
ALTER TABLE company_training_types ADD COLUMN sent json;
ALTER TABLE absences ADD COLUMN sent json;
ALTER TABLE sicknesses ADD COLUMN sent json;
ALTER TABLE leave_requests ADD COLUMN sent json;
ALTER TABLE employee_training_courses ADD COLUMN sent json;
ALTER TABLE salaries ADD COLUMN sent json;
ALTER TABLE bonuses ADD COLUMN sent json;
ALTER TABLE benefits ADD COLUMN sent json;
ALTER TABLE absences_history ADD COLUMN sent json;
ALTER TABLE sicknesses_history ADD COLUMN sent json;
ALTER TABLE leave_requests_history ADD COLUMN sent json;
ALTER TABLE employee_training_courses_history ADD COLUMN sent json;
ALTER TABLE departments_history ADD COLUMN sent json;
ALTER TABLE divisions_history ADD COLUMN sent json;
ALTER TABLE locations_history ADD COLUMN sent json;
ALTER TABLE holiday_allowances_history ADD COLUMN sent json;
ALTER TABLE other_leave_reasons_history ADD COLUMN sent json;
ALTER TABLE statutory_holiday_countries_history ADD COLUMN sent json;
ALTER TABLE company_training_types_history ADD COLUMN sent json;

-- Employees and working patterns get sent too, the record exactly as the source sent it,
-- compacted, and serve mode gives a record back from it (join_date under
-- its own name, "" apart from null in any member, nested objects and dates sent as "" kept so,
-- numbers and strings as written, timestamps with their offsets, members the source left out
-- left out). The typed columns stay the analysts', in the interface document's normal forms:
-- company_join_date (from join_date when the source sends that), YYYY-MM-DD dates, UTC
-- timestamps, integers, "" and null both NULL. A row without sent (created here by serve mode,
-- or stored before this migration until a sync walks it again: that sync updates each such row
-- once, and the history keeps that version) is served from the typed columns as before.
ALTER TABLE employees ADD COLUMN sent json;
ALTER TABLE employees_history ADD COLUMN sent json;
ALTER TABLE working_patterns ADD COLUMN sent json;
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
        receives_statutory_holidays, hr, created_at, updated_at, extra, sent, listed, origin,
        deleted_at)
    SELECT n.id, now(), NULL, n.account_id, n.first_name, n.last_name, n.email, n.job_title,
        n.status, n.company_join_date, n.job_start_date, n.length_of_service_in_months, n.age,
        n.full_or_part_time, n.notice_period, n.working_pattern_id, n.holiday_allowance_id,
        n.department_id, n.division_id, n.location_id, n.line_manager_id, n.holiday_approver_id,
        n.receives_statutory_holidays, n.hr, n.created_at, n.updated_at, n.extra, n.sent, n.listed,
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
        sent = excluded.sent,
        listed = excluded.listed, origin = excluded.origin, deleted_at = excluded.deleted_at;
    RETURN NULL;
END $$;
