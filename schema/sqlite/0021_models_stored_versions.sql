-- The people models fast enough to click at 20,000 employees and ten years (docs/models.md,
-- docs/benchmarks.md): the same names, columns and answers as 0020, from cheaper work; the same
-- as schema/postgres/0021_models_stored_versions.sql.
--
-- 1. model_employee_versions is a table kept by triggers on employees_history, not a view: the
--    periods of an employee's department, division, location and pattern are worked out again
--    for the employee whose history row was written (by a sync's load, serve's creates, an
--    erasure, a restore), in the same transaction. Three window passes over all of history at
--    every read of every model were most of their time.
-- 2. model_headcount_monthly and model_turnover_monthly count people by running sums of starts
--    and ends per month, not by joining every span or employment to every month.

DROP VIEW model_employee_versions;

CREATE TABLE model_employee_versions (
    employee_id        INTEGER NOT NULL,
    valid_from         TEXT NOT NULL,  -- the first day it held (0001-01-01: since always)
    valid_to           TEXT NOT NULL,  -- the first day it no longer held (9999-12-31: holds on)
    department_id      INTEGER,
    division_id        INTEGER,
    location_id        INTEGER,
    working_pattern_id INTEGER,
    PRIMARY KEY (employee_id, valid_from)
);

-- The periods, from history: a version holds from the day (UTC) the warehouse wrote it (the last
-- version written on a day is that day's) until the day the next different one was written. The
-- warehouse did not exist before its first sync, so the first version is taken to have held since
-- always, and the current one holds on. Read for one employee (WHERE employee_id = …), SQLite
-- pushes the filter down through the window functions (they are partitioned by the employee) to
-- a search of the history's primary key: the triggers below read it so, a row at a time
-- (TestModelVersionsDerivedReadsOneEmployee holds the plan).
CREATE VIEW model_employee_versions_derived AS
SELECT p.employee_id,
    CASE WHEN p.n = 1 THEN '0001-01-01' ELSE p.day END AS valid_from,
    coalesce(p.next_day, '9999-12-31') AS valid_to,
    p.department_id, p.division_id, p.location_id, p.working_pattern_id
FROM (
    SELECT c.*, row_number() OVER w AS n, lead(c.day) OVER w AS next_day
    FROM (
        SELECT d.*, (lag(d.day) OVER w IS NULL
            OR d.department_id IS NOT lag(d.department_id) OVER w
            OR d.division_id IS NOT lag(d.division_id) OVER w
            OR d.location_id IS NOT lag(d.location_id) OVER w
            OR d.working_pattern_id IS NOT lag(d.working_pattern_id) OVER w) AS changed
        FROM (
            SELECT h.id AS employee_id, substr(h.valid_from, 1, 10) AS day,
                h.department_id, h.division_id, h.location_id, h.working_pattern_id,
                row_number() OVER (PARTITION BY h.id, substr(h.valid_from, 1, 10)
                                   ORDER BY h.valid_from DESC) AS last_of_day
            FROM employees_history h
        ) d
        WHERE d.last_of_day = 1
        WINDOW w AS (PARTITION BY d.employee_id ORDER BY d.day)
    ) c
    WHERE c.changed
    WINDOW w AS (PARTITION BY c.employee_id ORDER BY c.day)
) p;

INSERT INTO model_employee_versions SELECT * FROM model_employee_versions_derived;

CREATE TRIGGER model_versions_ins AFTER INSERT ON employees_history BEGIN
    DELETE FROM model_employee_versions WHERE employee_id = NEW.id;
    INSERT INTO model_employee_versions SELECT * FROM model_employee_versions_derived WHERE employee_id = NEW.id;
END;

-- Closing a version (valid_to) or an erasure's nulls change none of what the versions read.
CREATE TRIGGER model_versions_upd AFTER UPDATE OF id, valid_from, department_id, division_id, location_id, working_pattern_id
ON employees_history BEGIN
    DELETE FROM model_employee_versions WHERE employee_id IN (OLD.id, NEW.id);
    INSERT INTO model_employee_versions SELECT * FROM model_employee_versions_derived WHERE employee_id IN (OLD.id, NEW.id);
END;

CREATE TRIGGER model_versions_del AFTER DELETE ON employees_history BEGIN
    DELETE FROM model_employee_versions WHERE employee_id = OLD.id;
    INSERT INTO model_employee_versions SELECT * FROM model_employee_versions_derived WHERE employee_id = OLD.id;
END;

-- model_employed_spans and model_headcount_daily read the table as they read the view: SQLite
-- finds it by its name.

-- Starters and leavers as in 0020, model_employment read once.
DROP VIEW model_starters_leavers_monthly;
CREATE VIEW model_starters_leavers_monthly AS
WITH employment AS MATERIALIZED (SELECT employee_id, start_date, end_date FROM model_employment)
SELECT substr(ev.day, 1, 7) || '-01' AS month, v.department_id, dp.name AS department,
    sum(ev.starter) AS starters, sum(ev.leaver) AS leavers
FROM (
    SELECT employee_id, start_date AS day, 1 AS starter, 0 AS leaver FROM employment
    UNION ALL
    SELECT employee_id, end_date, 0, 1 FROM employment WHERE end_date IS NOT NULL
) ev
LEFT JOIN model_employee_versions v ON v.employee_id = ev.employee_id AND v.valid_from <= ev.day AND ev.day < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id
WHERE ev.day <= date('now')
GROUP BY substr(ev.day, 1, 7) || '-01', v.department_id, dp.name;

-- model_headcount_daily on each month's last day (today, for the current month), as in 0020,
-- counted by running sums: a span counts from the month of its first day through the last
-- month whose reporting day (its last; today for the current one) it reaches, so each adds one
-- (and its FTE) at its first month and takes it away the month after its last, and a group's
-- headcount at a month is the sum of its changes up to it.
DROP VIEW model_headcount_monthly;
CREATE VIEW model_headcount_monthly AS
WITH spans AS MATERIALIZED (
    -- months as whole numbers (year * 12 + month - 1): SQLite's date functions cost more than the
    -- rest of the sums; the calendar says whether the span's last day is its month's last
    SELECT s.department_id, s.division_id, s.location_id, s.fte,
        CAST(substr(s.lo, 1, 4) AS INTEGER) * 12 + CAST(substr(s.lo, 6, 2) AS INTEGER) - 1 AS first_month,
        CAST(substr(s.hi, 1, 4) AS INTEGER) * 12 + CAST(substr(s.hi, 6, 2) AS INTEGER) - 1
            - CASE WHEN s.hi = c.month_end OR s.hi = date('now') THEN 0 ELSE 1 END AS last_month
    FROM model_employed_spans s
    JOIN model_calendar c ON c.day = s.hi
), changes AS MATERIALIZED (
    SELECT department_id, division_id, location_id, month, sum(n) AS n, sum(fte) AS fte
    FROM (
        SELECT department_id, division_id, location_id, first_month AS month, 1 AS n, fte
        FROM spans WHERE last_month >= first_month
        UNION ALL
        SELECT department_id, division_id, location_id, last_month + 1, -1, -fte
        FROM spans WHERE last_month >= first_month
    )
    GROUP BY department_id, division_id, location_id, month
), groups AS (
    SELECT department_id, division_id, location_id, min(month) AS since FROM changes
    GROUP BY department_id, division_id, location_id
), months AS MATERIALIZED (
    SELECT year * 12 + CAST(substr(month, 6, 2) AS INTEGER) - 1 AS month
    FROM model_calendar WHERE day = month AND day <= date('now')
), running AS (
    SELECT x.month, x.department_id, x.division_id, x.location_id,
        sum(sum(x.n)) OVER w AS headcount, sum(sum(x.fte)) OVER w AS fte
    FROM (
        SELECT month, department_id, division_id, location_id, n, fte FROM changes
        UNION ALL -- every month of every group, so that a month without changes has its row
        SELECT m.month, g.department_id, g.division_id, g.location_id, 0, 0
        FROM groups g
        JOIN months m ON m.month > g.since
    ) x
    GROUP BY x.month, x.department_id, x.division_id, x.location_id
    WINDOW w AS (PARTITION BY x.department_id, x.division_id, x.location_id ORDER BY x.month)
)
SELECT printf('%04d-%02d-01', r.month / 12, r.month % 12 + 1) AS month,
    r.department_id, dp.name AS department, r.division_id, dv.name AS division,
    r.location_id, lc.name AS location, r.headcount, round(r.fte, 2) AS fte
FROM running r
LEFT JOIN departments dp ON dp.id = r.department_id
LEFT JOIN divisions dv ON dv.id = r.division_id
LEFT JOIN locations lc ON lc.id = r.location_id
WHERE r.headcount > 0 AND r.month <= (SELECT max(month) FROM months);

-- Turnover as in 0020, its headcounts by running sums of starts and ends per month: employed on
-- a day are those who started on or before it less those who ended before it. (0020 counted a
-- leaver whose leaving day came before their start day; here such a row is counted nowhere.)
DROP VIEW model_turnover_monthly;
CREATE VIEW model_turnover_monthly AS
WITH employment AS MATERIALIZED (SELECT start_date, end_date FROM model_employment)
SELECT t.month, t.leavers, t.headcount_start, t.headcount_end,
    round((t.headcount_start + t.headcount_end) / 2.0, 2) AS average_headcount,
    CASE WHEN t.headcount_start + t.headcount_end > 0
        THEN round(t.leavers * 2.0 / (t.headcount_start + t.headcount_end), 4) END AS turnover,
    sum(t.leavers) OVER w AS leavers_12m,
    round(sum(t.headcount_start + t.headcount_end) OVER w / 24.0, 4) AS average_headcount_12m,
    CASE WHEN sum(t.headcount_start + t.headcount_end) OVER w > 0
        THEN round(sum(t.leavers) OVER w * 24.0 / sum(t.headcount_start + t.headcount_end) OVER w, 4) END AS turnover_12m
FROM (
    SELECT m.month, m.ends AS leavers,
        coalesce(sum(m.starts) OVER earlier, 0) + m.starts_first - coalesce(sum(m.ends) OVER earlier, 0) AS headcount_start,
        coalesce(sum(m.starts) OVER earlier, 0) + m.starts - coalesce(sum(m.ends) OVER earlier, 0) - m.ends + m.ends_last AS headcount_end
    FROM (
        SELECT e.month, sum(e.starts) AS starts, sum(e.starts_first) AS starts_first,
            sum(e.ends) AS ends, sum(e.ends_last) AS ends_last
        FROM (
            SELECT substr(start_date, 1, 7) || '-01' AS month, 1 AS starts,
                CASE WHEN substr(start_date, 9, 2) = '01' THEN 1 ELSE 0 END AS starts_first, 0 AS ends, 0 AS ends_last
            FROM employment
            WHERE start_date <= date('now') AND (end_date IS NULL OR end_date >= start_date)
            UNION ALL
            SELECT substr(end_date, 1, 7) || '-01', 0, 0, 1,
                CASE WHEN end_date = min(date(end_date, 'start of month', '+1 month', '-1 day'), date('now')) THEN 1 ELSE 0 END
            FROM employment
            WHERE end_date >= start_date
            UNION ALL -- every month from the first start's to the current one
            SELECT c.month, 0, 0, 0, 0
            FROM model_calendar c
            WHERE c.day = c.month AND c.day <= date('now')
                AND c.month >= (SELECT substr(min(start_date), 1, 7) || '-01' FROM employment)
        ) e
        GROUP BY e.month
    ) m
    WINDOW earlier AS (ORDER BY m.month ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
) t
WHERE t.month <= date('now')
WINDOW w AS (ORDER BY t.month ROWS BETWEEN 11 PRECEDING AND CURRENT ROW);
