-- The people models fast enough to click at 20,000 employees and ten years (docs/models.md,
-- docs/benchmarks.md): the same names, columns and answers as 0020, from cheaper work.
--
-- 1. model_employee_versions is a table kept by triggers on employees_history, not a view: the
--    periods of an employee's department, division, location and pattern are worked out again
--    for the employees a statement's history rows belong to, whoever writes them (a sync's load,
--    serve's creates, an erasure, a restore), in the same transaction. Three window passes over
--    all of history at every read of every model were most of their time.
-- 2. model_headcount_monthly and model_turnover_monthly count people by running sums of starts
--    and ends per month, not by joining every span or employment to every month.

DROP VIEW model_employee_versions CASCADE; -- and model_employed_spans, model_headcount_daily,
                                           -- model_headcount_monthly, model_starters_leavers_monthly

CREATE TABLE model_employee_versions (
    employee_id        bigint NOT NULL,
    valid_from         date NOT NULL,  -- the first day it held (0001-01-01: since always)
    valid_to           date NOT NULL,  -- the first day it no longer held (9999-12-31: holds on)
    department_id      bigint,
    division_id        bigint,
    location_id        bigint,
    working_pattern_id bigint,
    PRIMARY KEY (employee_id, valid_from)
);

-- The periods of the employees whose ids are in the array, from their history: a version holds
-- from the day (UTC) the warehouse wrote it (the last version written on a day is that day's)
-- until the day the next different one was written. The warehouse did not exist before its
-- first sync, so the first version is taken to have held since always, and the current one
-- holds on. (SET search_path FROM CURRENT pins this and the trigger functions below to this
-- schema whatever the caller's path, as 0001's.)
CREATE FUNCTION model_versions_of(ids bigint[]) RETURNS SETOF model_employee_versions
LANGUAGE sql STABLE SET search_path FROM CURRENT AS $$
SELECT p.employee_id,
    CASE WHEN p.n = 1 THEN date '0001-01-01' ELSE p.day END,
    coalesce(p.next_day, date '9999-12-31'),
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
            WHERE ids IS NULL OR h.id = ANY (ids)
        ) d
        WHERE d.last_of_day = 1
        WINDOW w AS (PARTITION BY d.employee_id ORDER BY d.day)
    ) c
    WHERE c.changed
    WINDOW w AS (PARTITION BY c.employee_id ORDER BY c.day)
) p
$$;

-- All of them, as a view: what the table must always equal (TestModelVersionsFollowHistory), the
-- same name as SQLite's.
CREATE VIEW model_employee_versions_derived AS SELECT * FROM model_versions_of(NULL);

INSERT INTO model_employee_versions SELECT * FROM model_versions_of(NULL);

-- Statement-level, with transition tables: one pass per statement for all the employees it
-- touched. An update that changes none of the columns the versions read (closing a version's
-- valid_to, an erasure's nulls) costs a join of the two transition tables and nothing more.
CREATE FUNCTION model_versions_follow() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT id) INTO ids FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT id) INTO ids FROM old_rows;
    ELSE
        SELECT array_agg(DISTINCT x.id) INTO ids FROM (
            SELECT o.id FROM old_rows o
            LEFT JOIN new_rows n ON n.id = o.id AND n.valid_from = o.valid_from
            WHERE n.id IS NULL
                OR n.department_id IS DISTINCT FROM o.department_id
                OR n.division_id IS DISTINCT FROM o.division_id
                OR n.location_id IS DISTINCT FROM o.location_id
                OR n.working_pattern_id IS DISTINCT FROM o.working_pattern_id
            UNION ALL
            SELECT n.id FROM new_rows n
            LEFT JOIN old_rows o ON o.id = n.id AND o.valid_from = n.valid_from
            WHERE o.id IS NULL
        ) x;
    END IF;
    IF ids IS NOT NULL THEN
        DELETE FROM model_employee_versions WHERE employee_id = ANY (ids);
        INSERT INTO model_employee_versions SELECT * FROM model_versions_of(ids);
    END IF;
    RETURN NULL;
END
$$;
CREATE FUNCTION model_versions_truncated() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    TRUNCATE model_employee_versions;
    RETURN NULL;
END
$$;
CREATE TRIGGER model_versions_ins AFTER INSERT ON employees_history REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION model_versions_follow();
CREATE TRIGGER model_versions_upd AFTER UPDATE ON employees_history REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION model_versions_follow();
CREATE TRIGGER model_versions_del AFTER DELETE ON employees_history REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION model_versions_follow();
CREATE TRIGGER model_versions_trunc AFTER TRUNCATE ON employees_history
    FOR EACH STATEMENT EXECUTE FUNCTION model_versions_truncated();

-- As in 0020 (dropped with the view they read).
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

-- model_headcount_daily on each month's last day (today, for the current month), as in 0020,
-- counted by running sums: a span counts from the month of its first day through the last
-- month whose reporting day (its last; today for the current one) it reaches, so each adds one
-- (and its FTE) at its first month and takes it away the month after its last, and a group's
-- headcount at a month is the sum of its changes up to it.
CREATE VIEW model_headcount_monthly AS
WITH spans AS MATERIALIZED (
    SELECT s.department_id, s.division_id, s.location_id, s.fte,
        date_trunc('month', s.lo)::date AS first_month,
        CASE WHEN s.hi = (date_trunc('month', s.hi) + interval '1 month' - interval '1 day')::date
                OR s.hi = (now() AT TIME ZONE 'UTC')::date
            THEN date_trunc('month', s.hi)::date
            ELSE (date_trunc('month', s.hi) - interval '1 month')::date END AS last_month
    FROM model_employed_spans s
), changes AS MATERIALIZED (
    SELECT department_id, division_id, location_id, first_month AS month, 1 AS n, fte
    FROM spans WHERE last_month >= first_month
    UNION ALL
    SELECT department_id, division_id, location_id, (last_month + interval '1 month')::date, -1, -fte
    FROM spans WHERE last_month >= first_month
), groups AS (
    SELECT department_id, division_id, location_id, min(month) AS since FROM changes
    GROUP BY department_id, division_id, location_id
), running AS (
    SELECT x.month, x.department_id, x.division_id, x.location_id,
        sum(sum(x.n)) OVER w AS headcount, sum(sum(x.fte)) OVER w AS fte
    FROM (
        SELECT month, department_id, division_id, location_id, n, fte FROM changes
        UNION ALL -- every month of every group, so that a month without changes has its row
        SELECT c.month, g.department_id, g.division_id, g.location_id, 0, 0
        FROM groups g
        JOIN model_calendar c ON c.day = c.month AND c.day > g.since AND c.day <= (now() AT TIME ZONE 'UTC')::date
    ) x
    GROUP BY x.month, x.department_id, x.division_id, x.location_id
    WINDOW w AS (PARTITION BY x.department_id, x.division_id, x.location_id ORDER BY x.month)
)
SELECT r.month, r.department_id, dp.name AS department, r.division_id, dv.name AS division,
    r.location_id, lc.name AS location, r.headcount, round(r.fte, 2) AS fte
FROM running r
LEFT JOIN departments dp ON dp.id = r.department_id
LEFT JOIN divisions dv ON dv.id = r.division_id
LEFT JOIN locations lc ON lc.id = r.location_id
WHERE r.headcount > 0 AND r.month <= (now() AT TIME ZONE 'UTC')::date;

-- Starters and leavers as in 0020 (dropped with the versions' view), model_employment read once.
CREATE VIEW model_starters_leavers_monthly AS
WITH employment AS MATERIALIZED (SELECT employee_id, start_date, end_date FROM model_employment)
SELECT date_trunc('month', ev.day)::date AS month, v.department_id, dp.name AS department,
    sum(ev.starter) AS starters, sum(ev.leaver) AS leavers
FROM (
    SELECT employee_id, start_date AS day, 1 AS starter, 0 AS leaver FROM employment
    UNION ALL
    SELECT employee_id, end_date, 0, 1 FROM employment WHERE end_date IS NOT NULL
) ev
LEFT JOIN model_employee_versions v ON v.employee_id = ev.employee_id AND v.valid_from <= ev.day AND ev.day < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id
WHERE ev.day <= (now() AT TIME ZONE 'UTC')::date
GROUP BY date_trunc('month', ev.day)::date, v.department_id, dp.name;

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
            SELECT date_trunc('month', start_date)::date AS month, 1 AS starts,
                CASE WHEN extract(day FROM start_date) = 1 THEN 1 ELSE 0 END AS starts_first, 0 AS ends, 0 AS ends_last
            FROM employment
            WHERE start_date <= (now() AT TIME ZONE 'UTC')::date AND (end_date IS NULL OR end_date >= start_date)
            UNION ALL
            SELECT date_trunc('month', end_date)::date, 0, 0, 1,
                CASE WHEN end_date = least((date_trunc('month', end_date) + interval '1 month' - interval '1 day')::date,
                    (now() AT TIME ZONE 'UTC')::date) THEN 1 ELSE 0 END
            FROM employment
            WHERE end_date >= start_date
            UNION ALL -- every month from the first start's to the current one
            SELECT c.month, 0, 0, 0, 0
            FROM model_calendar c
            WHERE c.day = c.month AND c.day <= (now() AT TIME ZONE 'UTC')::date
                AND c.month >= (SELECT date_trunc('month', min(start_date))::date FROM employment)
        ) e
        GROUP BY e.month
    ) m
    WINDOW earlier AS (ORDER BY m.month ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
) t
WHERE t.month <= (now() AT TIME ZONE 'UTC')::date
WINDOW w AS (ORDER BY t.month ROWS BETWEEN 11 PRECEDING AND CURRENT ROW);
