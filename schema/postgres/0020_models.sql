-- People models (docs/models.md): views named model_… that answer HR's questions (headcount and
-- FTE on a day or at each month's end, starters and leavers, turnover, tenure) from the synced
-- tables and employees_history, the same columns and answers as schema/sqlite/0020_models.sql.
-- "Today" is the current date in UTC, as the leavers' rule (sink/leavers.go) takes it.

-- One row per day, 1990-01-01 to 2059-12-31: the days the daily models are reported on, so that
-- "on a date" is an index lookup here (WHERE day = '2025-03-31' on a model reads one row of it).
CREATE TABLE model_calendar (
    day       date PRIMARY KEY,
    month     date NOT NULL,     -- the first of day's month
    month_end date NOT NULL,     -- the last of day's month
    year      integer NOT NULL,
    month_day text NOT NULL      -- 'MM-DD': tenure counts a year at each anniversary of the start
);
INSERT INTO model_calendar (day, month, month_end, year, month_day)
SELECT d::date, date_trunc('month', d)::date, (date_trunc('month', d) + interval '1 month' - interval '1 day')::date,
    extract(year FROM d)::integer, to_char(d, 'MM-DD')
FROM generate_series(timestamp '1990-01-01', timestamp '2059-12-31', interval '1 day') d;
CREATE INDEX model_calendar_month ON model_calendar (month);
ANALYZE model_calendar;

-- One row per listed employee with a join date (not the seed's rows): employed from start_date
-- through end_date, both days included; end_date is the leaving day by sink/leavers.go's rule,
-- the one retention counts from: a leaving_date sent and passed (unless they are still a current
-- employee, still listed), else the day of the first sync that saw them as Ex-employee, else the
-- day of the sync that stopped seeing them (deleted_at); NULL while employed.
CREATE VIEW model_employment AS
SELECT x.employee_id, x.start_date,
    CASE x.left_by
    WHEN 'leaving_date' THEN x.leaving_date
    WHEN 'status' THEN (x.seen_left AT TIME ZONE 'UTC')::date
    WHEN 'unlisted' THEN (x.deleted_at AT TIME ZONE 'UTC')::date
    END AS end_date,
    x.left_by
FROM (
    SELECT e.id AS employee_id, e.company_join_date AS start_date, e.leaving_date, e.deleted_at,
        -- the first sync that saw them as Ex-employee: when the last version that was not
        -- stopped being current, else (never seen otherwise) when they were first seen
        coalesce(h.last_current, h.first_seen) AS seen_left,
        CASE
        WHEN e.leaving_date IS NOT NULL AND e.leaving_date <= (now() AT TIME ZONE 'UTC')::date
            AND (coalesce(e.status, '') <> 'Current employee' OR e.deleted_at IS NOT NULL) THEN 'leaving_date'
        WHEN e.status = 'Ex-employee' AND coalesce(h.last_current, h.first_seen) IS NOT NULL THEN 'status'
        WHEN e.deleted_at IS NOT NULL THEN 'unlisted'
        END AS left_by
    FROM employees e
    LEFT JOIN (
        SELECT id, max(CASE WHEN status IS NULL OR status <> 'Ex-employee' THEN valid_to END) AS last_current,
            min(valid_from) AS first_seen
        FROM employees_history
        GROUP BY id
    ) h ON h.id = e.id
    WHERE e.listed AND e.origin <> 'seed' AND e.company_join_date IS NOT NULL
) x;

-- Per employee, the periods over which their department, division, location and working
-- pattern held, from employees_history: a version holds from the day (UTC) the warehouse wrote
-- it (the last version written on a day is that day's) until the day the next different one was
-- written (valid_to: the first day it no longer held). The warehouse did not exist before its
-- first sync, so the first version is taken to have held since always (valid_from 0001-01-01),
-- and the current one holds on (valid_to 9999-12-31).
CREATE VIEW model_employee_versions AS
SELECT p.employee_id,
    CASE WHEN p.n = 1 THEN date '0001-01-01' ELSE p.day END AS valid_from,
    coalesce(p.next_day, date '9999-12-31') AS valid_to,
    p.department_id, p.division_id, p.location_id, p.working_pattern_id
FROM (
    SELECT c.*, row_number() OVER w AS n, lead(c.day) OVER w AS next_day
    FROM (
        SELECT d.*, (lag(d.day) OVER w IS NULL
            OR d.department_id IS DISTINCT FROM lag(d.department_id) OVER w
            OR d.division_id IS DISTINCT FROM lag(d.division_id) OVER w
            OR d.location_id IS DISTINCT FROM lag(d.location_id) OVER w
            OR d.working_pattern_id IS DISTINCT FROM lag(d.working_pattern_id) OVER w) AS changed
        FROM (
            SELECT h.id AS employee_id, (h.valid_from AT TIME ZONE 'UTC')::date AS day,
                h.department_id, h.division_id, h.location_id, h.working_pattern_id,
                row_number() OVER (PARTITION BY h.id, (h.valid_from AT TIME ZONE 'UTC')::date
                                   ORDER BY h.valid_from DESC) AS last_of_day
            FROM employees_history h
        ) d
        WHERE d.last_of_day = 1
        WINDOW w AS (PARTITION BY d.employee_id ORDER BY d.day)
    ) c
    WHERE c.changed
    WINDOW w AS (PARTITION BY c.employee_id ORDER BY c.day)
) p;

-- Each employee's versions (model_employee_versions) cut to the days they were employed up to
-- today, lo through hi (a version wholly outside them is no row), with the version's FTE: its
-- working pattern's total_hours over the full-time hours (the default pattern's, else the
-- largest pattern's), at most 1, and 1 where either is unknown or 0. The headcount models count
-- these on the calendar's days.
CREATE VIEW model_employed_spans AS
SELECT x.employee_id, x.department_id, x.division_id, x.location_id, x.working_pattern_id,
    x.fte, x.lo, x.hi
FROM (
    SELECT v.employee_id, v.department_id, v.division_id, v.location_id, v.working_pattern_id,
        CASE WHEN wp.total_hours > 0 AND ft.hours > 0 THEN least(wp.total_hours / ft.hours, 1) ELSE 1 END AS fte,
        greatest(m.start_date, v.valid_from) AS lo,
        least(coalesce(m.end_date, (now() AT TIME ZONE 'UTC')::date), (v.valid_to - 1), (now() AT TIME ZONE 'UTC')::date) AS hi
    FROM model_employment m
    JOIN model_employee_versions v ON v.employee_id = m.employee_id
    LEFT JOIN working_patterns wp ON wp.id = v.working_pattern_id
    CROSS JOIN (SELECT coalesce(
        (SELECT max(total_hours) FROM working_patterns WHERE is_default AND deleted_at IS NULL AND total_hours > 0),
        (SELECT max(total_hours) FROM working_patterns WHERE deleted_at IS NULL AND total_hours > 0)) AS hours) ft
) x
WHERE x.lo <= x.hi;

-- People employed on each day up to today, by the department, division and location they had
-- that day (names: the reference rows as they are now), with the sum of their FTEs
-- (model_employed_spans) rounded to 2 decimals.
CREATE VIEW model_headcount_daily AS
SELECT c.day, s.department_id, dp.name AS department, s.division_id, dv.name AS division,
    s.location_id, lc.name AS location, count(*) AS headcount,
    round(sum(s.fte), 2) AS fte
FROM model_employed_spans s
JOIN model_calendar c ON c.day >= s.lo AND c.day <= s.hi
LEFT JOIN departments dp ON dp.id = s.department_id
LEFT JOIN divisions dv ON dv.id = s.division_id
LEFT JOIN locations lc ON lc.id = s.location_id
GROUP BY c.day, s.department_id, dp.name, s.division_id, dv.name, s.location_id, lc.name;

-- model_headcount_daily on each month's last day (today, for the current month).
CREATE VIEW model_headcount_monthly AS
SELECT c.month, s.department_id, dp.name AS department, s.division_id, dv.name AS division,
    s.location_id, lc.name AS location, count(*) AS headcount,
    round(sum(s.fte), 2) AS fte
FROM model_employed_spans s
JOIN (
    SELECT day, month FROM model_calendar WHERE day = month_end AND day < (now() AT TIME ZONE 'UTC')::date
    UNION ALL
    SELECT day, month FROM model_calendar WHERE day = (now() AT TIME ZONE 'UTC')::date
) c ON c.day >= s.lo AND c.day <= s.hi
LEFT JOIN departments dp ON dp.id = s.department_id
LEFT JOIN divisions dv ON dv.id = s.division_id
LEFT JOIN locations lc ON lc.id = s.location_id
GROUP BY c.month, s.department_id, dp.name, s.division_id, dv.name, s.location_id, lc.name;

-- Starters (by start_date) and leavers (by end_date) of each month up to today, by the
-- department they had on their first and last day.
CREATE VIEW model_starters_leavers_monthly AS
SELECT date_trunc('month', ev.day)::date AS month, v.department_id, dp.name AS department,
    sum(ev.starter) AS starters, sum(ev.leaver) AS leavers
FROM (
    SELECT employee_id, start_date AS day, 1 AS starter, 0 AS leaver FROM model_employment
    UNION ALL
    SELECT employee_id, end_date, 0, 1 FROM model_employment WHERE end_date IS NOT NULL
) ev
LEFT JOIN model_employee_versions v ON v.employee_id = ev.employee_id AND v.valid_from <= ev.day AND ev.day < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id
WHERE ev.day <= (now() AT TIME ZONE 'UTC')::date
GROUP BY date_trunc('month', ev.day)::date, v.department_id, dp.name;

-- Turnover of each month from the first start's to today's: leavers over the average of the
-- headcounts on the month's first and last day (today, for the current month); over 12 months,
-- the leavers of the 12 months ending with this one over the mean of their 12 averages (a month
-- before the first start averages 0).
CREATE VIEW model_turnover_monthly AS
SELECT t.month, t.leavers, t.headcount_start, t.headcount_end,
    round((t.headcount_start + t.headcount_end) / 2.0, 2) AS average_headcount,
    CASE WHEN t.headcount_start + t.headcount_end > 0
        THEN round(t.leavers * 2.0 / (t.headcount_start + t.headcount_end), 4) END AS turnover,
    sum(t.leavers) OVER w AS leavers_12m,
    round(sum(t.headcount_start + t.headcount_end) OVER w / 24.0, 4) AS average_headcount_12m,
    CASE WHEN sum(t.headcount_start + t.headcount_end) OVER w > 0
        THEN round(sum(t.leavers) OVER w * 24.0 / sum(t.headcount_start + t.headcount_end) OVER w, 4) END AS turnover_12m
FROM (
    SELECT mo.month,
        sum(CASE WHEN m.end_date >= mo.month AND m.end_date <= mo.month_end THEN 1 ELSE 0 END) AS leavers,
        sum(CASE WHEN m.start_date <= mo.month AND (m.end_date IS NULL OR m.end_date >= mo.month) THEN 1 ELSE 0 END) AS headcount_start,
        sum(CASE WHEN m.start_date <= mo.last_day AND (m.end_date IS NULL OR m.end_date >= mo.last_day) THEN 1 ELSE 0 END) AS headcount_end
    FROM (
        SELECT c.month, c.month_end, least(c.month_end, (now() AT TIME ZONE 'UTC')::date) AS last_day
        FROM model_calendar c
        WHERE c.day = c.month AND c.day <= (now() AT TIME ZONE 'UTC')::date
            AND c.month >= (SELECT date_trunc('month', min(start_date))::date FROM model_employment)
    ) mo
    LEFT JOIN model_employment m ON m.start_date <= mo.last_day AND (m.end_date IS NULL OR m.end_date >= mo.month)
    GROUP BY mo.month
) t
WINDOW w AS (ORDER BY t.month ROWS BETWEEN 11 PRECEDING AND CURRENT ROW);

-- People employed on each day up to today by their tenure that day: the whole years since
-- start_date (a year counts on the anniversary; a 29 February start's on 1 March).
CREATE VIEW model_tenure_daily AS
SELECT t.day, CASE WHEN t.years < 1 THEN '<1y' WHEN t.years < 2 THEN '1-2y' WHEN t.years < 5 THEN '2-5y'
        WHEN t.years < 10 THEN '5-10y' ELSE '10y+' END AS band,
    count(*) AS headcount
FROM (
    SELECT c.day, c.year - extract(year FROM m.start_date)::integer
        - CASE WHEN c.month_day < to_char(m.start_date, 'MM-DD') THEN 1 ELSE 0 END AS years
    FROM model_calendar c
    JOIN model_employment m ON m.start_date <= c.day AND (m.end_date IS NULL OR c.day <= m.end_date)
    WHERE c.day <= (now() AT TIME ZONE 'UTC')::date
) t
GROUP BY t.day, 2;
