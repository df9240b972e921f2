-- As schema/postgres/0022_training_and_management_models.sql, statement for statement: dates
-- are TEXT (YYYY-MM-DD), hours TEXT (read as REAL), booleans 0 or 1.

-- The courses that count as completed, for the training models: status 'Completed' (any case)
-- and an outcome other than 'Failed' (any outcome else, none included, counts: 'Passed',
-- 'Attended'), listed and not deleted; the models keep those of employees who count
-- (model_employment's: listed, with a join date, not a seed row). The models read every such
-- course: the index holds what they read, not the wide rows.
CREATE INDEX employee_training_courses_completed ON employee_training_courses
    (employee_id, end_on, start_on, company_training_type_id, hours, expires_on, name)
    WHERE listed AND deleted_at IS NULL AND lower(status) = 'completed' AND coalesce(lower(outcome), '') <> 'failed';

-- Completed training by month, department (as on the completion day) and training type: the
-- completed courses (above) on their completion day, end_on, else (a one-day course sent
-- without one) start_on, on or before today. The department is model_employee_versions' on that
-- day (a table kept from history, 0021, read by its primary key).
CREATE VIEW model_training_completed_monthly AS
SELECT substr(t.day, 1, 7) || '-01' AS month, v.department_id, dp.name AS department,
    t.company_training_type_id AS training_type_id, tt.name AS training_type,
    count(*) AS courses_completed, round(coalesce(sum(CAST(t.hours AS REAL)), 0), 2) AS hours
FROM (
    SELECT c.employee_id, c.company_training_type_id, c.hours, coalesce(c.end_on, c.start_on) AS day
    FROM employee_training_courses c
    JOIN employees e ON e.id = c.employee_id AND e.listed AND e.origin <> 'seed' AND e.company_join_date IS NOT NULL
    WHERE c.listed AND c.deleted_at IS NULL AND lower(c.status) = 'completed'
        AND coalesce(lower(c.outcome), '') <> 'failed' AND coalesce(c.end_on, c.start_on) <= date('now')
) t
LEFT JOIN model_employee_versions v ON v.employee_id = t.employee_id AND v.valid_from <= t.day AND t.day < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id
LEFT JOIN company_training_types tt ON tt.id = t.company_training_type_id
GROUP BY substr(t.day, 1, 7) || '-01', v.department_id, dp.name, t.company_training_type_id, tt.name;

-- The certificates of current staff (model_employment, end_date NULL) that expire from today to
-- today + 90 days: completed courses (as above, done on or before today) with an expires_on,
-- where of an employee's courses of the same training type and name only the one expiring last
-- counts (a renewal supersedes the certificate it renews).
CREATE VIEW model_certificates_expiring AS
SELECT x.employee_id, x.course_id, x.name, x.training_type_id, tt.name AS training_type,
    x.expires_on, x.days_left,
    CASE WHEN x.days_left <= 30 THEN '30' WHEN x.days_left <= 60 THEN '60' ELSE '90' END AS window_days
FROM (
    SELECT c.employee_id, c.id AS course_id, c.name, c.company_training_type_id AS training_type_id,
        c.expires_on, CAST(julianday(c.expires_on) - julianday(date('now')) AS INTEGER) AS days_left,
        row_number() OVER (PARTITION BY c.employee_id, c.company_training_type_id, c.name
                           ORDER BY c.expires_on DESC, c.id DESC) AS n
    FROM employee_training_courses c
    JOIN model_employment m ON m.employee_id = c.employee_id AND m.end_date IS NULL
    WHERE c.listed AND c.deleted_at IS NULL AND lower(c.status) = 'completed'
        AND coalesce(lower(c.outcome), '') <> 'failed' AND coalesce(c.end_on, c.start_on) <= date('now')
        AND c.expires_on IS NOT NULL
) x
LEFT JOIN company_training_types tt ON tt.id = x.training_type_id
WHERE x.n = 1 AND x.expires_on >= date('now') AND x.expires_on <= date('now', '+90 days');

-- The line managers above each of the current staff (model_employment, end_date NULL): one row
-- per employee and manager, levels 1 for their line manager (employees.line_manager_id, unless
-- it is themselves), 2 for the line manager's, and on up through managers who are current staff
-- themselves; path: the ids from that manager down to the employee, '/'-separated. A manager
-- already on the path is not followed again: a cycle in the source's data (A manages B manages
-- A) stops there instead of looping.
CREATE VIEW model_reporting_lines AS
WITH RECURSIVE staff(id, manager_id) AS (
    SELECT e.id, CASE WHEN e.line_manager_id <> e.id THEN e.line_manager_id END
    FROM model_employment m
    JOIN employees e ON e.id = m.employee_id
    WHERE m.end_date IS NULL
), up(employee_id, manager_id, levels, path) AS (
    SELECT id, manager_id, 1, manager_id || '/' || id FROM staff WHERE manager_id IS NOT NULL
    UNION ALL
    SELECT u.employee_id, s.manager_id, u.levels + 1, s.manager_id || '/' || u.path
    FROM up u
    JOIN staff s ON s.id = u.manager_id
    WHERE s.manager_id IS NOT NULL AND '/' || u.path || '/' NOT LIKE '%/' || s.manager_id || '/%'
)
SELECT employee_id, manager_id, levels, path FROM up;

-- Per line manager of current staff: their direct reports, everyone below them (all levels of
-- model_reporting_lines), their depth (the managers above them, 0 at the top; a manager who
-- left is at the top of what they still manage), whether they left (not current staff), and
-- whether their line runs round a cycle back to them.
CREATE VIEW model_management_tree AS
WITH r AS MATERIALIZED (SELECT employee_id, manager_id, levels FROM model_reporting_lines)
SELECT t.manager_id, t.direct_reports, t.total_reports, coalesce(a.depth, 0) AS depth,
    CASE WHEN s.employee_id IS NULL THEN 1 ELSE 0 END AS manager_left,
    CASE WHEN cy.employee_id IS NULL THEN 0 ELSE 1 END AS in_cycle
FROM (
    SELECT manager_id, sum(CASE WHEN levels = 1 THEN 1 ELSE 0 END) AS direct_reports, count(*) AS total_reports
    FROM r GROUP BY manager_id
) t
LEFT JOIN (SELECT employee_id, count(*) AS depth FROM r GROUP BY employee_id) a ON a.employee_id = t.manager_id
LEFT JOIN (SELECT employee_id FROM model_employment WHERE end_date IS NULL) s ON s.employee_id = t.manager_id
LEFT JOIN (
    SELECT DISTINCT c.employee_id FROM r c
    JOIN r d ON d.employee_id = c.manager_id AND d.manager_id = c.employee_id AND d.levels = 1
) cy ON cy.employee_id = t.manager_id;
