-- Absence models (docs/models.md): sickness, holiday and other leave by working day, by department
-- and month, and the Bradford factor, the same columns and answers as schema/sqlite/0023_absence_models.sql.
-- They build on 0020's model_employed_spans: absence is counted on the days someone was employed,
-- up to today (UTC), in the department they were in that day, on the days their working pattern
-- then marks as worked. Working days are counted by arithmetic over a date range (how many
-- Mondays… Sundays it holds), not a row per day, except in model_absence_days, which is a row per
-- day. Day numbers count from 1900-01-01, a Monday: a day's number modulo 7 is 0 on Mondays.

-- Each absence (Holiday → holiday, OtherLeave → other; not cancelled) and sickness (an open one
-- runs to today) the source lists, cut to the employee's employed spans (model_employed_spans): a
-- row per record and span it overlaps, lo through hi, with the span's department, division,
-- location and working pattern, and the pattern's week as a mask (bit 0 Monday … bit 6 Sunday;
-- no pattern, or one that marks no day: Monday to Friday, 31). Leave requests are not read: the
-- source lists the same leave among the absences, under other ids.
CREATE VIEW model_absence_spans AS
SELECT r.employee_id, r.kind, r.id, r.start_date, r.end_date, r.half_start, r.half_end,
    greatest(r.start_date, s.lo) AS lo, least(r.end_date, s.hi) AS hi,
    s.department_id, s.division_id, s.location_id, s.working_pattern_id,
    coalesce(pw.week, 31) AS week
FROM (
    SELECT a.employee_id, CASE a.type WHEN 'Holiday' THEN 'holiday' ELSE 'other' END AS kind, a.id,
        a.start_date, a.end_date, coalesce(a.half_start, false) AS half_start, coalesce(a.half_end, false) AS half_end
    FROM absences a
    WHERE a.listed AND a.deleted_at IS NULL AND NOT coalesce(a.cancelled, false)
        AND a.type IN ('Holiday', 'OtherLeave') AND a.start_date <= a.end_date
    UNION ALL
    SELECT k.employee_id, 'sickness', k.id, k.start_date, coalesce(k.end_date, (now() AT TIME ZONE 'UTC')::date),
        coalesce(k.half_start, false), k.end_date IS NOT NULL AND coalesce(k.half_end, false)
    FROM sicknesses k
    WHERE k.listed AND k.deleted_at IS NULL AND k.start_date <= coalesce(k.end_date, (now() AT TIME ZONE 'UTC')::date)
) r
JOIN model_employed_spans s ON s.employee_id = r.employee_id AND s.lo <= r.end_date AND r.start_date <= s.hi
LEFT JOIN (
    SELECT id, CASE WHEN w > 0 THEN w ELSE 31 END AS week
    FROM (SELECT id, coalesce(mon::int, 0) + 2 * coalesce(tue::int, 0) + 4 * coalesce(wed::int, 0) + 8 * coalesce(thu::int, 0)
        + 16 * coalesce(fri::int, 0) + 32 * coalesce(sat::int, 0) + 64 * coalesce(sun::int, 0) AS w FROM working_patterns) x
) pw ON pw.id = s.working_pattern_id;

-- A row per absence record and working day of it while employed, up to today: 1, or 0.5 on its
-- first day when half_start, on its last when half_end (a one-day record with both: 0.5).
CREATE VIEW model_absence_days AS
SELECT p.employee_id, c.day, p.kind,
    CASE WHEN (c.day = p.start_date AND p.half_start) OR (c.day = p.end_date AND p.half_end) THEN 0.5 ELSE 1 END AS days,
    p.department_id, p.division_id, p.location_id
FROM model_absence_spans p
JOIN model_calendar c ON c.day >= p.lo AND c.day <= p.hi
WHERE ((p.week >> ((c.day - date '1900-01-01') % 7)) & 1) = 1;

-- By month and department (the one people were in on each day): the working days lost to
-- sickness and other leave, holiday days, the working days the department's people were employed
-- and due to work (days_due), and the department's FTE on the month's last day (today, for the
-- current month): each employed span and absence cut to each month it overlaps, its working days
-- counted by arithmetic.
CREATE VIEW model_absence_monthly AS
-- the spans computed once each (the planner cannot count their rows ahead, and would read them
-- again and again in a nested loop)
WITH spans AS MATERIALIZED (SELECT * FROM model_employed_spans),
absence AS MATERIALIZED (SELECT * FROM model_absence_spans)
SELECT t.month, t.department_id, dp.name AS department,
    sum(t.sick) AS sick_days, sum(t.other) AS other_leave_days, sum(t.holiday) AS holiday_days,
    sum(t.sick) + sum(t.other) AS days_lost,
    sum(t.due) AS days_due,
    round(sum(t.fte), 2) AS fte,
    CASE WHEN round(sum(t.fte), 2) > 0 THEN round((sum(t.sick) + sum(t.other)) / round(sum(t.fte), 2), 2) END AS days_lost_per_fte,
    CASE WHEN sum(t.due) > 0 THEN round(sum(t.sick) / sum(t.due), 4) END AS sickness_rate
FROM (
    SELECT x.month, x.department_id, 0.0 AS sick, 0.0 AS other, 0.0 AS holiday,
        ((x.week & 1) * ((x.b + 7) / 7 - (x.a + 6) / 7)
        + ((x.week >> 1) & 1) * ((x.b + 6) / 7 - (x.a + 5) / 7)
        + ((x.week >> 2) & 1) * ((x.b + 5) / 7 - (x.a + 4) / 7)
        + ((x.week >> 3) & 1) * ((x.b + 4) / 7 - (x.a + 3) / 7)
        + ((x.week >> 4) & 1) * ((x.b + 3) / 7 - (x.a + 2) / 7)
        + ((x.week >> 5) & 1) * ((x.b + 2) / 7 - (x.a + 1) / 7)
        + ((x.week >> 6) & 1) * ((x.b + 1) / 7 - x.a / 7)) AS due,
        x.fte
    FROM (
        SELECT mo.month, mo.department_id, mo.week,
            (greatest(mo.lo, mo.month) - date '1900-01-01') AS a, (least(mo.hi, mo.month_end) - date '1900-01-01') AS b,
            CASE WHEN mo.hi >= least(mo.month_end, (now() AT TIME ZONE 'UTC')::date) THEN mo.fte ELSE 0 END AS fte
        FROM (
            -- each span's months: the calendar's first days as the numbers 0, 1, … (a short
            -- index range per span), the span's first month moved on by each
            SELECT s.department_id, s.lo, s.hi, s.fte, coalesce(pw.week, 31) AS week,
                (date_trunc('month', s.lo) + (k.day - date '1990-01-01') * interval '1 month')::date AS month, (date_trunc('month', s.lo) + ((k.day - date '1990-01-01') + 1) * interval '1 month' - interval '1 day')::date AS month_end
            FROM spans s
            JOIN model_calendar k ON k.day >= date '1990-01-01' AND k.day < date '1990-01-01' + ((extract(year FROM s.hi) - extract(year FROM s.lo)) * 12 + extract(month FROM s.hi) - extract(month FROM s.lo) + 1)::integer
            LEFT JOIN (
                SELECT id, CASE WHEN w > 0 THEN w ELSE 31 END AS week
                FROM (SELECT id, coalesce(mon::int, 0) + 2 * coalesce(tue::int, 0) + 4 * coalesce(wed::int, 0) + 8 * coalesce(thu::int, 0)
        + 16 * coalesce(fri::int, 0) + 32 * coalesce(sat::int, 0) + 64 * coalesce(sun::int, 0) AS w FROM working_patterns) x
            ) pw ON pw.id = s.working_pattern_id
        ) mo
    ) x
    UNION ALL
    SELECT y.month, y.department_id,
        CASE WHEN y.kind = 'sickness' THEN y.days ELSE 0 END,
        CASE WHEN y.kind = 'other' THEN y.days ELSE 0 END,
        CASE WHEN y.kind = 'holiday' THEN y.days ELSE 0 END,
        0, 0
    FROM (
        SELECT x.month, x.department_id, x.kind,
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
            SELECT p.month, p.department_id, p.kind, p.week, p.half_start, p.half_end,
                (greatest(p.lo, p.month) - date '1900-01-01') AS a, (least(p.hi, p.month_end) - date '1900-01-01') AS b, (p.start_date - date '1900-01-01') AS s, (p.end_date - date '1900-01-01') AS e
            FROM (
                SELECT p.*, (date_trunc('month', p.lo) + (k.day - date '1990-01-01') * interval '1 month')::date AS month, (date_trunc('month', p.lo) + ((k.day - date '1990-01-01') + 1) * interval '1 month' - interval '1 day')::date AS month_end
                FROM absence p
                JOIN model_calendar k ON k.day >= date '1990-01-01' AND k.day < date '1990-01-01' + ((extract(year FROM p.hi) - extract(year FROM p.lo)) * 12 + extract(month FROM p.hi) - extract(month FROM p.lo) + 1)::integer
            ) p
        ) x
    ) y
) t
LEFT JOIN departments dp ON dp.id = t.department_id
GROUP BY t.month, t.department_id, dp.name;

-- The Bradford factor of each employee with a sickness in the 52 weeks (364 days) ending on each
-- month's last day (today, for the current month): spells (the sicknesses overlapping them) times
-- spells times days (their working days of sickness within them), in the department they were in
-- on that day, or on their last day if they had left.
CREATE VIEW model_bradford AS
SELECT b.as_of, b.employee_id, v.department_id, dp.name AS department, b.spells, b.days,
    b.spells * b.spells * b.days AS bradford
FROM (
    SELECT y.as_of, y.employee_id, count(DISTINCT y.id) AS spells, sum(y.days) AS days
    FROM (
        SELECT x.as_of, x.employee_id, x.id,
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
            SELECT c.as_of, c.employee_id, c.id, c.week, c.half_start, c.half_end,
                (greatest(c.lo, c.as_of - 363) - date '1900-01-01') AS a, (least(c.hi, c.as_of) - date '1900-01-01') AS b, (c.start_date - date '1900-01-01') AS s, (c.end_date - date '1900-01-01') AS e
            FROM (
                -- the month ends (today, for the current month) from the sickness's first
                -- month to 363 days past its last day: the calendar's days as numbers, as above
                SELECT p.*, least((date_trunc('month', p.lo) + ((k.day - date '1990-01-01') + 1) * interval '1 month' - interval '1 day')::date, (now() AT TIME ZONE 'UTC')::date) AS as_of
                FROM model_absence_spans p
                JOIN model_calendar k ON k.day >= date '1990-01-01' AND k.day < date '1990-01-01' + ((extract(year FROM least(p.hi + 363, (now() AT TIME ZONE 'UTC')::date)) - extract(year FROM p.lo)) * 12 + extract(month FROM least(p.hi + 363, (now() AT TIME ZONE 'UTC')::date)) - extract(month FROM p.lo) + 1)::integer
                WHERE p.kind = 'sickness'
            ) c
            WHERE c.as_of <= c.hi + 363
        ) x
    ) y
    GROUP BY y.as_of, y.employee_id
) b
JOIN model_employment m ON m.employee_id = b.employee_id
LEFT JOIN model_employee_versions v ON v.employee_id = b.employee_id
    AND v.valid_from <= least(b.as_of, coalesce(m.end_date, b.as_of)) AND least(b.as_of, coalesce(m.end_date, b.as_of)) < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id;
