-- As in 0024, with the sickness type's name (the nested company_sicknesstype's).
CREATE VIEW model_sicknesses AS
SELECT k.employee_id, k.id, k.start_date, coalesce(k.end_date, date('now')) AS end_date,
    coalesce(k.half_start, 0) AS half_start, k.end_date IS NOT NULL AND coalesce(k.half_end, 0) AS half_end,
    CASE WHEN json_valid(k.nested) THEN json_extract(k.nested, '$.company_sicknesstype.name') END AS sickness_type
FROM sicknesses k
WHERE k.listed AND k.deleted_at IS NULL AND k.start_date <= coalesce(k.end_date, date('now'));

-- Each working pattern's week as a mask: bit 0 Monday … bit 6 Sunday; a zero-hours pattern (no
-- total_hours and no hours on any day, the hours text here: read as numbers): 0, no working day; a pattern that marks no day: Monday to
-- Friday, 31 (as for no pattern).
CREATE VIEW model_pattern_weeks AS
SELECT id, CASE WHEN zero_hours THEN 0 WHEN w > 0 THEN w ELSE 31 END AS week, zero_hours
FROM (SELECT id, coalesce(mon, 0) + 2 * coalesce(tue, 0) + 4 * coalesce(wed, 0) + 8 * coalesce(thu, 0)
    + 16 * coalesce(fri, 0) + 32 * coalesce(sat, 0) + 64 * coalesce(sun, 0) AS w,
    CAST(coalesce(total_hours, 0) AS REAL) = 0 AND CAST(coalesce(mon_hr, 0) AS REAL) + CAST(coalesce(tue_hr, 0) AS REAL)
        + CAST(coalesce(wed_hr, 0) AS REAL) + CAST(coalesce(thu_hr, 0) AS REAL) + CAST(coalesce(fri_hr, 0) AS REAL)
        + CAST(coalesce(sat_hr, 0) AS REAL) + CAST(coalesce(sun_hr, 0) AS REAL) = 0 AS zero_hours
    FROM working_patterns) x;

-- As in 0024, with the employee's calendar.
CREATE VIEW model_absence_spans AS
SELECT r.employee_id, r.kind, r.id, r.start_date, r.end_date, r.half_start, r.half_end,
    max(r.start_date, s.lo) AS lo, min(r.end_date, s.hi) AS hi,
    s.department_id, s.division_id, s.location_id, s.working_pattern_id,
    coalesce(pw.week, 31) AS week, coalesce(ec.calendar, 'none') AS calendar
FROM (
    SELECT employee_id, kind, id, start_date, end_date, half_start, half_end FROM model_absences
    UNION ALL
    SELECT employee_id, 'sickness', id, start_date, end_date, half_start, half_end FROM model_sicknesses
) r
JOIN model_employed_spans s ON s.employee_id = r.employee_id AND s.lo <= r.end_date AND r.start_date <= s.hi
LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
LEFT JOIN model_employee_calendars ec ON ec.employee_id = r.employee_id;

-- As in 0024 (the calendar the outer loop), working days only: a day of the pattern that is not
-- a day off of the employee's calendar (a zero-hours pattern has none).
CREATE VIEW model_absence_days AS
SELECT r.employee_id, c.day, r.kind,
    CASE WHEN (c.day = r.start_date AND r.half_start) OR (c.day = r.end_date AND r.half_end) THEN 0.5 ELSE 1 END AS days,
    s.department_id, s.division_id, s.location_id
FROM model_calendar c
CROSS JOIN model_absences r
JOIN model_employed_spans s ON s.employee_id = r.employee_id AND s.lo <= c.day AND c.day <= s.hi
LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
WHERE r.start_date <= c.day AND c.day <= r.end_date AND ((coalesce(pw.week, 31) >> (CAST(julianday(c.day) - 2415020.5 AS INTEGER) % 7)) & 1) = 1
    AND NOT EXISTS (SELECT 1 FROM model_days_off o WHERE o.day = c.day
        AND o.calendar = coalesce((SELECT ec.calendar FROM model_employee_calendars ec WHERE ec.employee_id = r.employee_id), 'none'))
UNION ALL
SELECT r.employee_id, c.day, 'sickness',
    CASE WHEN (c.day = r.start_date AND r.half_start) OR (c.day = r.end_date AND r.half_end) THEN 0.5 ELSE 1 END,
    s.department_id, s.division_id, s.location_id
FROM model_calendar c
CROSS JOIN model_sicknesses r
JOIN model_employed_spans s ON s.employee_id = r.employee_id AND s.lo <= c.day AND c.day <= s.hi
LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
WHERE r.start_date <= c.day AND c.day <= r.end_date AND ((coalesce(pw.week, 31) >> (CAST(julianday(c.day) - 2415020.5 AS INTEGER) % 7)) & 1) = 1
    AND NOT EXISTS (SELECT 1 FROM model_days_off o WHERE o.day = c.day
        AND o.calendar = coalesce((SELECT ec.calendar FROM model_employee_calendars ec WHERE ec.employee_id = r.employee_id), 'none'));

-- 0024's running sums, with days off: each day off of a piece's calendar within it, on a day of
-- its week, takes a working day (2 half days) away in its month (giving back a half day
-- already taken for a half_start or half_end on it). Zero-hours people's absences are kinds
-- of their own (zero_hours_…), counted on every day (week 127) and no calendar.
CREATE VIEW model_absence_monthly_derived AS
WITH pieces AS MATERIALIZED (
    SELECT x.department_id, x.kind, x.week, x.calendar, x.fte, x.halves_first, x.halves_last,
        CAST(julianday(x.lo) - 2415020.5 AS INTEGER) AS lo, CAST(julianday(x.hi) - 2415020.5 AS INTEGER) AS hi,
        date(x.lo, 'start of month') AS m0, date(x.hi, 'start of month') AS m1,
        date(x.hi, 'start of month', '+1 month') AS m2,
        x.hi = min(date(x.hi, 'start of month', '+1 month', '-1 day'), date('now')) AS reaches_end
    FROM (
        SELECT s.department_id, 'due' AS kind, coalesce(pw.week, 31) AS week, coalesce(ec.calendar, 'none') AS calendar,
            s.fte, s.lo, s.hi, 0 AS halves_first, 0 AS halves_last
        FROM model_employed_spans s
        LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
        LEFT JOIN model_employee_calendars ec ON ec.employee_id = s.employee_id
        UNION ALL
        SELECT p.department_id, p.kind, p.week, p.calendar, 0, p.lo, p.hi,
            CASE WHEN p.half_start AND p.lo = p.start_date AND ((p.week >> (CAST(julianday(p.lo) - 2415020.5 AS INTEGER) % 7)) & 1) = 1 THEN 1 ELSE 0 END,
            CASE WHEN p.half_end AND p.hi = p.end_date AND ((p.week >> (CAST(julianday(p.hi) - 2415020.5 AS INTEGER) % 7)) & 1) = 1
                AND NOT (p.start_date = p.end_date AND p.half_start) THEN 1 ELSE 0 END
        FROM (
            SELECT q.department_id, CASE WHEN q.week = 0 THEN 'zero_hours_' || q.kind ELSE q.kind END AS kind,
                CASE WHEN q.week = 0 THEN 127 ELSE q.week END AS week, CASE WHEN q.week = 0 THEN '' ELSE q.calendar END AS calendar,
                q.lo, q.hi, q.start_date, q.end_date, q.half_start, q.half_end
            FROM model_absence_spans q
        ) p
    ) x
), events AS (
    -- pieces is read once here (and once for the days off): each reference to a CTE in SQLite
    -- copies the views under it, and a statement reading this view twice would pass SQLite's
    -- bound on a statement's tables. Each piece gives events by t:
    --   0: an absence within one month: its working days, in half days, less its halves;
    --   1: a span, or an absence over more than one month: its first month (one more to the
    --      group's count, less its working days before its first day and a half day);
    --   2: its last month (less its working days after its last day and a half day);
    --   3: the month after (one less to the count).
    SELECT department_id, kind, week,
        CASE t WHEN 2 THEN m1 WHEN 3 THEN m2 ELSE m0 END AS month,
        CASE t WHEN 1 THEN 1 WHEN 3 THEN -1 ELSE 0 END AS n,
        CASE t WHEN 1 THEN fte WHEN 2 THEN CASE WHEN reaches_end THEN 0 ELSE -fte END
            WHEN 3 THEN CASE WHEN reaches_end THEN -fte ELSE 0 END ELSE 0 END AS fte,
        CASE t WHEN 3 THEN 0
            ELSE (CASE t WHEN 0 THEN 2 ELSE -2 END) * @WD[a|b|week]
                - CASE t WHEN 0 THEN halves_first + halves_last WHEN 1 THEN halves_first ELSE halves_last END
        END AS adj
    FROM (
        SELECT p.*, e.t,
            CASE e.t WHEN 0 THEN p.lo WHEN 1 THEN CAST(julianday(p.m0) - 2415020.5 AS INTEGER) ELSE p.hi + 1 END AS a,
            CASE e.t WHEN 0 THEN p.hi WHEN 1 THEN p.lo - 1 ELSE CAST(julianday(p.m2) - 2415020.5 AS INTEGER) - 1 END AS b
        FROM pieces p
        JOIN (SELECT 0 AS t UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) e
            ON (e.t = 0) = (p.kind <> 'due' AND p.m0 = p.m1)
    ) w
    UNION ALL
    -- its days off on days of its week: a working day (2 half days) less, in their month
    SELECT p.department_id, p.kind, p.week, o.month, 0, 0,
        -2 + CASE WHEN o.dn = p.lo THEN p.halves_first ELSE 0 END + CASE WHEN o.dn = p.hi THEN p.halves_last ELSE 0 END
    FROM pieces p
    JOIN model_days_off o ON o.calendar = p.calendar AND o.dn >= p.lo AND o.dn <= p.hi
    WHERE ((p.week >> o.dow) & 1) = 1
), changes AS MATERIALIZED (
    SELECT department_id, kind, week, month, sum(n) AS n, sum(fte) AS fte, sum(adj) AS adj
    FROM events
    GROUP BY department_id, kind, week, month
), counted AS (
    SELECT r.month, r.department_id, r.kind, r.n, r.fte,
        r.adj + 2 * r.n * @WD[a|b|r.week] AS halves
    FROM (
        SELECT x.month, x.department_id, x.kind, x.week,
            sum(sum(x.n)) OVER w AS n, sum(sum(x.fte)) OVER w AS fte, sum(x.adj) AS adj,
            CAST(julianday(x.month) - 2415020.5 AS INTEGER) AS a,
            CAST(julianday(x.month, '+1 month') - 2415020.5 AS INTEGER) - 1 AS b
        FROM (
            SELECT month, department_id, kind, week, n, fte, adj FROM changes
            UNION ALL -- every month of every group, so that a month without changes has its row
            SELECT c.month, g.department_id, g.kind, g.week, 0, 0, 0
            FROM (SELECT department_id, kind, week, min(month) AS since FROM changes GROUP BY department_id, kind, week) g
            JOIN model_calendar c ON c.day = c.month AND c.day > g.since AND c.day <= date('now')
        ) x
        GROUP BY x.month, x.department_id, x.kind, x.week
        WINDOW w AS (PARTITION BY x.department_id, x.kind, x.week ORDER BY x.month)
    ) r
), monthly AS (
    SELECT month, department_id,
        sum(CASE WHEN kind = 'sickness' THEN halves ELSE 0 END) / 2.0 AS sick,
        sum(CASE WHEN kind = 'other' THEN halves ELSE 0 END) / 2.0 AS other,
        sum(CASE WHEN kind = 'holiday' THEN halves ELSE 0 END) / 2.0 AS holiday,
        sum(CASE WHEN kind = 'due' THEN halves ELSE 0 END) / 2 AS due,
        round(sum(CASE WHEN kind = 'due' THEN fte ELSE 0 END), 2) AS fte,
        sum(CASE WHEN kind = 'zero_hours_sickness' THEN halves ELSE 0 END) / 2.0 AS zh_sick,
        sum(CASE WHEN kind IN ('zero_hours_holiday', 'zero_hours_other') THEN halves ELSE 0 END) / 2.0 AS zh_leave
    FROM counted
    GROUP BY month, department_id
    HAVING sum(CASE WHEN kind = 'due' THEN n ELSE 0 END) > 0
)
SELECT t.month, t.department_id, dp.name AS department,
    t.sick AS sick_days, t.other AS other_leave_days, t.holiday AS holiday_days,
    t.sick + t.other AS days_lost, t.due AS days_due, t.fte,
    CASE WHEN t.fte > 0 THEN round((t.sick + t.other) / t.fte, 2) END AS days_lost_per_fte,
    CASE WHEN t.due > 0 THEN round(t.sick / t.due, 4) END AS sickness_rate,
    t.zh_sick AS zero_hours_sick_days, t.zh_leave AS zero_hours_leave_days
FROM monthly t
LEFT JOIN departments dp ON dp.id = t.department_id;

ALTER TABLE model_absence_monthly ADD COLUMN zero_hours_sick_days NUMERIC NOT NULL DEFAULT 0;
ALTER TABLE model_absence_monthly ADD COLUMN zero_hours_leave_days NUMERIC NOT NULL DEFAULT 0;
DELETE FROM model_absence_monthly;
INSERT INTO model_absence_monthly SELECT * FROM model_absence_monthly_derived;
UPDATE model_refreshes SET refreshed_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), version = (SELECT version FROM meta),
    today = date('now'), took_ms = 0
WHERE model = 'model_absence_monthly';

-- The Bradford factor (the rules: schema/postgres/0028_models_working_days.sql, docs/models.md),
-- in 0025's shape: the month ends and their windows (model_settings' weeks) computed once, a
-- sickness cut to its employment and department periods directly.
CREATE VIEW model_bradford AS
WITH me AS MATERIALIZED (
    SELECT c.as_of, date(c.as_of, '-' || (st.bradford_window_weeks * 7 - 1) || ' days') AS ws,
        CAST(julianday(c.as_of) - 2415020.5 AS INTEGER) AS an,
        CAST(julianday(c.as_of) - 2415020.5 AS INTEGER) - (st.bradford_window_weeks * 7 - 1) AS wn
    FROM (
        SELECT min(c.month_end, date('now')) AS as_of
        FROM model_calendar c
        WHERE c.day = c.month AND c.day <= date('now')
    ) c
    CROSS JOIN model_settings st
)
SELECT b.as_of, b.employee_id, v.department_id, dp.name AS department, b.spells, b.days,
    b.spells * b.spells * b.days AS bradford,
    b.window_start, b.spells_raw, b.days_raw, b.spells_raw * b.spells_raw * b.days_raw AS bradford_raw,
    (SELECT count(*) FROM model_bradford_bands t WHERE t.threshold <= b.spells * b.spells * b.days) AS band
FROM (
    SELECT z.as_of, z.employee_id, max(z.left_on) AS left_on, min(z.ws) AS window_start,
        sum(z.starts) AS spells, sum(CASE WHEN z.counted THEN z.days ELSE 0 END) AS days,
        count(DISTINCT z.id) AS spells_raw, sum(z.days) AS days_raw
    FROM (
        SELECT y.as_of, y.ws, y.employee_id, y.id, y.left_on, y.counted, y.days,
            CASE WHEN NOT y.counted THEN 0
                WHEN y.prev IS NULL THEN 1
                WHEN y.prev >= y.a - 1 THEN 0
                WHEN @WD[y.prev + 1|y.a - 1|y.week] - @OFF[y.calendar|y.prev + 1|y.a - 1|y.week] > 0 THEN 1
                ELSE 0 END AS starts
        FROM (
            SELECT x.*, max(CASE WHEN x.counted THEN x.b END) OVER (PARTITION BY x.as_of, x.employee_id
                ORDER BY x.a, x.b, x.id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev
            FROM (
                SELECT q.*, NOT q.excluded AND q.full_days > 0 AS counted,
                    q.full_days
                    - CASE WHEN q.half_start AND q.s >= q.a AND q.s <= q.b AND ((q.week >> (q.s % 7)) & 1) = 1
                        AND NOT @ISOFF[q.calendar|q.s] THEN 0.5 ELSE 0 END
                    - CASE WHEN q.half_end AND q.e >= q.a AND q.e <= q.b AND ((q.week >> (q.e % 7)) & 1) = 1 AND NOT (q.s = q.e AND q.half_start)
                        AND NOT @ISOFF[q.calendar|q.e] THEN 0.5 ELSE 0 END AS days
                FROM (
                    SELECT p.*, @WD[p.a|p.b|p.week] - @OFF[p.calendar|p.a|p.b|p.week] AS full_days
                    FROM (
                        SELECT me.as_of, me.ws, k.employee_id, k.id, m.end_date AS left_on, coalesce(pw.week, 31) AS week,
                            coalesce((SELECT ec.calendar FROM model_employee_calendars ec WHERE ec.employee_id = k.employee_id), 'none') AS calendar,
                            k.half_start, k.half_end,
                            coalesce(lower(k.sickness_type) IN (SELECT name FROM model_bradford_excluded_types), 0) AS excluded,
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
                    ) p
                    WHERE p.a <= p.b
                ) q
            ) x
        ) y
    ) z
    GROUP BY z.as_of, z.employee_id
) b
LEFT JOIN model_employee_versions v ON v.employee_id = b.employee_id
    AND v.valid_from <= min(b.as_of, coalesce(b.left_on, b.as_of)) AND min(b.as_of, coalesce(b.left_on, b.as_of)) < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id;
