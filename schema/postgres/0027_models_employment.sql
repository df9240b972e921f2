-- The people models' employment rules an HR director would sign (issue 36, docs/models.md), the
-- same names, columns and answers as schema/sqlite/0027_models_employment.sql. "Today" is the
-- current date in UTC.
--
-- 1. Leaving days that can be trusted: a sent leaving_date first; else the day the warehouse
--    first saw the person as Ex-employee, or stopped listing them, only when it had seen them
--    employed before; else the leaving day is unknown and the person is left out of
--    model_employment (and so of every model that counts people), listed in model_left_out.
-- 2. A working pattern with no contracted hours is FTE 0, and counted apart (zero_hours).
-- 3. Current staff are employed today: a future starter is not, and is in model_starting_soon.
--
-- Every view is replaced in place (CREATE OR REPLACE, the same columns, new ones at the end), so
-- the views that read them (the absence models, 0024 and 0025) stay as they are.

-- Every person of the account (listed, not a seed row) and what the employment rule makes of
-- them: start_date (company_join_date), end_date (the leaving day, NULL while employed or when
-- unknown) and left_by, the first rule that applies:
--   'leaving_date': a sent leaving_date, unless they are a current employee still listed (a
--       returner, or a date left behind): left on it once it has passed; a date still to come
--       leaves them employed (left_by NULL) whatever their status;
--   'status': Ex-employee, seen employed before: left on the day (UTC) the last version of them
--       that was employed (listed, not unlisted, not Ex-employee) stopped being current, i.e. the
--       first sync that saw them as a leaver;
--   'unlisted': no longer listed (deleted_at), seen employed before: left on the day of deleted_at;
--   'unknown': Ex-employee or unlisted, never seen employed: the leaving day is not known.
-- first_seen is the day the warehouse first wrote a version of them.
CREATE VIEW model_people AS
SELECT x.employee_id, x.status, x.start_date,
    CASE x.left_by
    WHEN 'leaving_date' THEN x.leaving_date
    WHEN 'status' THEN (x.last_employed AT TIME ZONE 'UTC')::date
    WHEN 'unlisted' THEN (x.deleted_at AT TIME ZONE 'UTC')::date
    END AS end_date,
    x.left_by, (x.first_seen AT TIME ZONE 'UTC')::date AS first_seen
FROM (
    SELECT e.id AS employee_id, e.status, e.company_join_date AS start_date, e.leaving_date, e.deleted_at,
        h.last_employed, h.first_seen,
        CASE
        WHEN e.leaving_date IS NOT NULL AND (coalesce(e.status, '') <> 'Current employee' OR e.deleted_at IS NOT NULL) THEN
            CASE WHEN e.leaving_date <= (now() AT TIME ZONE 'UTC')::date THEN 'leaving_date' END
        WHEN e.status = 'Ex-employee' THEN
            CASE WHEN h.last_employed IS NOT NULL THEN 'status' ELSE 'unknown' END
        WHEN e.deleted_at IS NOT NULL THEN
            CASE WHEN h.employed_since < e.deleted_at THEN 'unlisted' ELSE 'unknown' END
        END AS left_by
    FROM employees e
    LEFT JOIN (
        SELECT id,
            max(CASE WHEN listed AND deleted_at IS NULL AND coalesce(status, '') <> 'Ex-employee' THEN valid_to END) AS last_employed,
            min(CASE WHEN listed AND deleted_at IS NULL AND coalesce(status, '') <> 'Ex-employee' THEN valid_from END) AS employed_since,
            min(valid_from) AS first_seen
        FROM employees_history
        GROUP BY id
    ) h ON h.id = e.id
    WHERE e.listed AND e.origin <> 'seed'
) x;

-- One row per person who counts: with a join date, and a leaving day known (or none yet).
CREATE OR REPLACE VIEW model_employment AS
SELECT employee_id, start_date, end_date, left_by
FROM model_people
WHERE start_date IS NOT NULL AND (left_by IS NULL OR left_by <> 'unknown');

-- The people of the account model_employment leaves out, and why: 'no_join_date' (no
-- company_join_date: they cannot be placed on any day) before 'no_leaving_date' (Ex-employee or
-- no longer listed, never seen employed by hrsync, no leaving_date sent). end_date: the leaving
-- day where it is known (a no_join_date person who left).
CREATE VIEW model_left_out AS
SELECT employee_id, CASE WHEN start_date IS NULL THEN 'no_join_date' ELSE 'no_leaving_date' END AS reason,
    status, start_date, end_date, first_seen
FROM model_people
WHERE start_date IS NULL OR left_by = 'unknown';

-- As in 0021, and an FTE of 0 for a version whose working pattern has no contracted hours (no
-- total_hours, no hours on any day: zero_hours 1); no pattern, or one not in working_patterns,
-- is FTE 1 as before.
CREATE OR REPLACE VIEW model_employed_spans AS
SELECT x.employee_id, x.department_id, x.division_id, x.location_id, x.working_pattern_id,
    x.fte, x.lo, x.hi, x.zero_hours
FROM (
    SELECT v.employee_id, v.department_id, v.division_id, v.location_id, v.working_pattern_id,
        CASE WHEN wp.zero THEN 0
            WHEN wp.total_hours > 0 AND ft.hours > 0 THEN least(wp.total_hours / ft.hours, 1) ELSE 1 END AS fte,
        greatest(m.start_date, v.valid_from) AS lo,
        least(coalesce(m.end_date, (now() AT TIME ZONE 'UTC')::date), (v.valid_to - 1), (now() AT TIME ZONE 'UTC')::date) AS hi,
        CASE WHEN wp.zero THEN 1 ELSE 0 END AS zero_hours
    FROM model_employment m
    JOIN model_employee_versions v ON v.employee_id = m.employee_id
    LEFT JOIN (
        SELECT id, total_hours,
            coalesce(total_hours, 0) = 0 AND coalesce(mon_hr, 0) + coalesce(tue_hr, 0) + coalesce(wed_hr, 0) + coalesce(thu_hr, 0)
                + coalesce(fri_hr, 0) + coalesce(sat_hr, 0) + coalesce(sun_hr, 0) = 0 AS zero
        FROM working_patterns
    ) wp ON wp.id = v.working_pattern_id
    CROSS JOIN (SELECT coalesce(
        (SELECT max(total_hours) FROM working_patterns WHERE is_default AND deleted_at IS NULL AND total_hours > 0),
        (SELECT max(total_hours) FROM working_patterns WHERE deleted_at IS NULL AND total_hours > 0)) AS hours) ft
) x
WHERE x.lo <= x.hi;

-- As in 0021, with zero_hours: how many of the headcount are on a pattern with no contracted
-- hours (FTE 0).
CREATE OR REPLACE VIEW model_headcount_daily AS
SELECT c.day, s.department_id, dp.name AS department, s.division_id, dv.name AS division,
    s.location_id, lc.name AS location, count(*) AS headcount,
    round(sum(s.fte), 2) AS fte, sum(s.zero_hours) AS zero_hours
FROM model_employed_spans s
JOIN model_calendar c ON c.day >= s.lo AND c.day <= s.hi
LEFT JOIN departments dp ON dp.id = s.department_id
LEFT JOIN divisions dv ON dv.id = s.division_id
LEFT JOIN locations lc ON lc.id = s.location_id
GROUP BY c.day, s.department_id, dp.name, s.division_id, dv.name, s.location_id, lc.name;

-- As in 0021, with zero_hours counted by the same running sums as the headcount.
CREATE OR REPLACE VIEW model_headcount_monthly AS
WITH spans AS MATERIALIZED (
    SELECT s.department_id, s.division_id, s.location_id, s.fte, s.zero_hours,
        date_trunc('month', s.lo)::date AS first_month,
        CASE WHEN s.hi = (date_trunc('month', s.hi) + interval '1 month' - interval '1 day')::date
                OR s.hi = (now() AT TIME ZONE 'UTC')::date
            THEN date_trunc('month', s.hi)::date
            ELSE (date_trunc('month', s.hi) - interval '1 month')::date END AS last_month
    FROM model_employed_spans s
), changes AS MATERIALIZED (
    SELECT department_id, division_id, location_id, first_month AS month, 1 AS n, fte, zero_hours AS z
    FROM spans WHERE last_month >= first_month
    UNION ALL
    SELECT department_id, division_id, location_id, (last_month + interval '1 month')::date, -1, -fte, -zero_hours
    FROM spans WHERE last_month >= first_month
), groups AS (
    SELECT department_id, division_id, location_id, min(month) AS since FROM changes
    GROUP BY department_id, division_id, location_id
), running AS (
    SELECT x.month, x.department_id, x.division_id, x.location_id,
        sum(sum(x.n)) OVER w AS headcount, sum(sum(x.fte)) OVER w AS fte, sum(sum(x.z)) OVER w AS zero_hours
    FROM (
        SELECT month, department_id, division_id, location_id, n, fte, z FROM changes
        UNION ALL -- every month of every group, so that a month without changes has its row
        SELECT c.month, g.department_id, g.division_id, g.location_id, 0, 0, 0
        FROM groups g
        JOIN model_calendar c ON c.day = c.month AND c.day > g.since AND c.day <= (now() AT TIME ZONE 'UTC')::date
    ) x
    GROUP BY x.month, x.department_id, x.division_id, x.location_id
    WINDOW w AS (PARTITION BY x.department_id, x.division_id, x.location_id ORDER BY x.month)
)
SELECT r.month, r.department_id, dp.name AS department, r.division_id, dv.name AS division,
    r.location_id, lc.name AS location, r.headcount, round(r.fte, 2) AS fte, r.zero_hours
FROM running r
LEFT JOIN departments dp ON dp.id = r.department_id
LEFT JOIN divisions dv ON dv.id = r.division_id
LEFT JOIN locations lc ON lc.id = r.location_id
WHERE r.headcount > 0 AND r.month <= (now() AT TIME ZONE 'UTC')::date;

-- Current staff are the people of model_employment employed today: started on or before today,
-- not left. As in 0022 otherwise.
CREATE OR REPLACE VIEW model_certificates_expiring AS
SELECT x.employee_id, x.course_id, x.name, x.training_type_id, tt.name AS training_type,
    x.expires_on, x.days_left,
    CASE WHEN x.days_left <= 30 THEN '30' WHEN x.days_left <= 60 THEN '60' ELSE '90' END AS window_days
FROM (
    SELECT c.employee_id, c.id AS course_id, c.name, c.company_training_type_id AS training_type_id,
        c.expires_on, c.expires_on - (now() AT TIME ZONE 'UTC')::date AS days_left,
        row_number() OVER (PARTITION BY c.employee_id, c.company_training_type_id, c.name
                           ORDER BY c.expires_on DESC, c.id DESC) AS n
    FROM employee_training_courses c
    JOIN model_employment m ON m.employee_id = c.employee_id AND m.end_date IS NULL
        AND m.start_date <= (now() AT TIME ZONE 'UTC')::date
    WHERE c.listed AND c.deleted_at IS NULL AND lower(c.status) = 'completed'
        AND coalesce(lower(c.outcome), '') <> 'failed' AND coalesce(c.end_on, c.start_on) <= (now() AT TIME ZONE 'UTC')::date
        AND c.expires_on IS NOT NULL
) x
LEFT JOIN company_training_types tt ON tt.id = x.training_type_id
WHERE x.n = 1 AND x.expires_on >= (now() AT TIME ZONE 'UTC')::date AND x.expires_on <= (now() AT TIME ZONE 'UTC')::date + 90;

CREATE OR REPLACE VIEW model_reporting_lines AS
WITH RECURSIVE staff(id, manager_id) AS (
    SELECT e.id, CASE WHEN e.line_manager_id <> e.id THEN e.line_manager_id END
    FROM model_employment m
    JOIN employees e ON e.id = m.employee_id
    WHERE m.end_date IS NULL AND m.start_date <= (now() AT TIME ZONE 'UTC')::date
), up(employee_id, manager_id, levels, path) AS (
    SELECT id, manager_id, 1, manager_id::text || '/' || id::text FROM staff WHERE manager_id IS NOT NULL
    UNION ALL
    SELECT u.employee_id, s.manager_id, u.levels + 1, s.manager_id::text || '/' || u.path
    FROM up u
    JOIN staff s ON s.id = u.manager_id
    WHERE s.manager_id IS NOT NULL AND '/' || u.path || '/' NOT LIKE '%/' || s.manager_id::text || '/%'
)
SELECT employee_id, manager_id, levels, path FROM up;

CREATE OR REPLACE VIEW model_management_tree AS
WITH r AS MATERIALIZED (SELECT employee_id, manager_id, levels FROM model_reporting_lines)
SELECT t.manager_id, t.direct_reports, t.total_reports, coalesce(a.depth, 0) AS depth,
    s.employee_id IS NULL AS manager_left,
    cy.employee_id IS NOT NULL AS in_cycle
FROM (
    SELECT manager_id, sum(CASE WHEN levels = 1 THEN 1 ELSE 0 END) AS direct_reports, count(*) AS total_reports
    FROM r GROUP BY manager_id
) t
LEFT JOIN (SELECT employee_id, count(*) AS depth FROM r GROUP BY employee_id) a ON a.employee_id = t.manager_id
LEFT JOIN (SELECT employee_id FROM model_employment WHERE end_date IS NULL AND start_date <= (now() AT TIME ZONE 'UTC')::date) s
    ON s.employee_id = t.manager_id
LEFT JOIN (
    SELECT DISTINCT c.employee_id FROM r c
    JOIN r d ON d.employee_id = c.manager_id AND d.manager_id = c.employee_id AND d.levels = 1
) cy ON cy.employee_id = t.manager_id;

-- The people whose start date is still to come (and who have not left before it): not current
-- staff, in no count yet. Their department and line manager as the employees' rows have them now.
CREATE VIEW model_starting_soon AS
SELECT m.employee_id, m.start_date, e.department_id, dp.name AS department, e.line_manager_id
FROM model_employment m
JOIN employees e ON e.id = m.employee_id
LEFT JOIN departments dp ON dp.id = e.department_id
WHERE m.start_date > (now() AT TIME ZONE 'UTC')::date AND m.end_date IS NULL;
