-- SQLite's model_bradford, the same columns and answers as 0024's, in less time for one as_of
-- (docs/benchmarks.md#models): 0024's view referred to the window's bounds as expressions of
-- the calendar row (min(month_end, date('now')) and its date 363 days before), which SQLite
-- evaluated again for every sickness and span it looked at, cut the sicknesses to
-- model_employed_spans (which also works out each span's FTE, unused here) and then joined
-- model_employment again for the department. Here:
-- - the month ends and their windows are a MATERIALIZED CTE, each bound (and its day number)
--   computed once; a query of one as_of still reaches the calendar (WHERE pushed down);
-- - a sickness is cut to its employee's employment (model_employment) and department periods
--   (model_employee_versions) directly, the spans' bounds written out: a piece is the days
--   from the latest of the sickness's start, the employment's start, the period's start and
--   the window's, to the earliest of their ends; it counts when it has any;
-- - the leaving day rides along (left_on) for the department of a leaver's last day.
-- Postgres keeps 0024's view: its planner runs it in 0.8 s (0025 there is empty).

DROP VIEW model_bradford;

CREATE VIEW model_bradford AS
WITH me AS MATERIALIZED (
    SELECT as_of, date(as_of, '-363 days') AS ws,
        CAST(julianday(as_of) - 2415020.5 AS INTEGER) AS an,
        CAST(julianday(as_of, '-363 days') - 2415020.5 AS INTEGER) AS wn
    FROM (
        SELECT min(c.month_end, date('now')) AS as_of
        FROM model_calendar c
        WHERE c.day = c.month AND c.day <= date('now')
    ) c
)
SELECT b.as_of, b.employee_id, v.department_id, dp.name AS department, b.spells, b.days,
    b.spells * b.spells * b.days AS bradford
FROM (
    SELECT y.as_of, y.employee_id, max(y.left_on) AS left_on, count(DISTINCT y.id) AS spells, sum(y.days) AS days
    FROM (
        SELECT x.as_of, x.employee_id, x.id, x.left_on,
            (((x.week & 1) * ((x.b + 7) / 7 - (x.a + 6) / 7)
        + ((x.week >> 1) & 1) * ((x.b + 6) / 7 - (x.a + 5) / 7)
        + ((x.week >> 2) & 1) * ((x.b + 5) / 7 - (x.a + 4) / 7)
        + ((x.week >> 3) & 1) * ((x.b + 4) / 7 - (x.a + 3) / 7)
        + ((x.week >> 4) & 1) * ((x.b + 3) / 7 - (x.a + 2) / 7)
        + ((x.week >> 5) & 1) * ((x.b + 2) / 7 - (x.a + 1) / 7)
        + ((x.week >> 6) & 1) * ((x.b + 1) / 7 - x.a / 7))
            - CASE WHEN x.half_start AND x.s >= x.a AND x.s <= x.b AND ((x.week >> (x.s % 7)) & 1) = 1 THEN 0.5 ELSE 0 END
            - CASE WHEN x.half_end AND x.e >= x.a AND x.e <= x.b AND ((x.week >> (x.e % 7)) & 1) = 1 AND NOT (x.s = x.e AND x.half_start) THEN 0.5 ELSE 0 END) AS days
        FROM (
            SELECT me.as_of, k.employee_id, k.id, m.end_date AS left_on, coalesce(pw.week, 31) AS week,
                k.half_start, k.half_end,
                max(CAST(julianday(max(k.start_date, m.start_date, v.valid_from)) - 2415020.5 AS INTEGER), me.wn) AS a,
                min(CAST(julianday(min(k.end_date, coalesce(m.end_date, k.end_date), date(v.valid_to, '-1 day'))) - 2415020.5 AS INTEGER), me.an) AS b,
                CAST(julianday(k.start_date) - 2415020.5 AS INTEGER) AS s,
                CAST(julianday(k.end_date) - 2415020.5 AS INTEGER) AS e
            FROM me
            JOIN model_sicknesses k ON k.start_date <= me.as_of AND k.end_date >= me.ws
            JOIN model_employment m ON m.employee_id = k.employee_id
            JOIN model_employee_versions v ON v.employee_id = k.employee_id
                AND v.valid_from <= min(k.end_date, me.as_of, coalesce(m.end_date, me.as_of))
                AND date(max(k.start_date, me.ws, m.start_date), '+1 day') <= v.valid_to
            LEFT JOIN model_pattern_weeks pw ON pw.id = v.working_pattern_id
        ) x
        WHERE x.a <= x.b
    ) y
    GROUP BY y.as_of, y.employee_id
) b
LEFT JOIN model_employee_versions v ON v.employee_id = b.employee_id
    AND v.valid_from <= min(b.as_of, coalesce(b.left_on, b.as_of)) AND min(b.as_of, coalesce(b.left_on, b.as_of)) < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id;
