-- The absence models fast enough to click at 20,000 employees and ten years of events
-- (docs/models.md, docs/benchmarks.md#models): the same names, columns and answers as 0023, the
-- same as schema/postgres/0024_absence_models_refreshed.sql.
--
-- 1. model_absence_monthly is a table, refreshed after each sync by the worker (and by `hrsync
--    report` when the warehouse has changed since): sink.Store.RefreshModels writes it from
--    model_absence_monthly_derived in one transaction. The derived view follows the data at
--    every read; it counts working days by running sums over months (a span adds its months'
--    working days from its first month to its last, less the days before its first day and
--    after its last), not by cutting every span and absence to every month it overlaps.
-- 2. model_bradford starts from the month ends, so a query of one as_of (the Bradford list of a
--    day) reads the sicknesses of that window only, through model_sicknesses; and
--    model_absence_days from the calendar, so a query of one day reads that day's records.
-- 3. model_headcount_daily and model_tenure_daily (0020) read a range of days from the calendar,
--    their spans computed once (Postgres's need no change).
-- model_refreshes says when each refreshed model was last written, and from which version of
-- the warehouse. Day numbers count from 1900-01-01 (a Monday), as in 0023.

DROP VIEW model_absence_monthly;
DROP VIEW model_bradford;
DROP VIEW model_absence_days;
DROP VIEW model_absence_spans;

-- The sicknesses the absence models count: listed, not deleted, not ending before they start; an
-- open one (no end_date) runs to today (UTC). half_end only when it has ended.
CREATE VIEW model_sicknesses AS
SELECT k.employee_id, k.id, k.start_date, coalesce(k.end_date, date('now')) AS end_date,
    coalesce(k.half_start, 0) AS half_start, k.end_date IS NOT NULL AND coalesce(k.half_end, 0) AS half_end
FROM sicknesses k
WHERE k.listed AND k.deleted_at IS NULL AND k.start_date <= coalesce(k.end_date, date('now'));

-- Each working pattern's week as a mask: bit 0 Monday … bit 6 Sunday; a pattern that marks no
-- day: Monday to Friday, 31 (as for no pattern).
CREATE VIEW model_pattern_weeks AS
SELECT id, CASE WHEN w > 0 THEN w ELSE 31 END AS week
FROM (SELECT id, coalesce(mon, 0) + 2 * coalesce(tue, 0) + 4 * coalesce(wed, 0) + 8 * coalesce(thu, 0)
    + 16 * coalesce(fri, 0) + 32 * coalesce(sat, 0) + 64 * coalesce(sun, 0) AS w FROM working_patterns) x;

-- The absences the absence models count: listed, not deleted, not cancelled, of type Holiday
-- (kind holiday) or OtherLeave (kind other), not ending before they start.
CREATE VIEW model_absences AS
SELECT a.employee_id, CASE a.type WHEN 'Holiday' THEN 'holiday' ELSE 'other' END AS kind, a.id,
    a.start_date, a.end_date, coalesce(a.half_start, 0) AS half_start, coalesce(a.half_end, 0) AS half_end
FROM absences a
WHERE a.listed AND a.deleted_at IS NULL AND NOT coalesce(a.cancelled, 0)
    AND a.type IN ('Holiday', 'OtherLeave') AND a.start_date <= a.end_date;

-- As in 0023, the records read through model_absences and model_sicknesses.
CREATE VIEW model_absence_spans AS
SELECT r.employee_id, r.kind, r.id, r.start_date, r.end_date, r.half_start, r.half_end,
    max(r.start_date, s.lo) AS lo, min(r.end_date, s.hi) AS hi,
    s.department_id, s.division_id, s.location_id, s.working_pattern_id,
    coalesce(pw.week, 31) AS week
FROM (
    SELECT employee_id, kind, id, start_date, end_date, half_start, half_end FROM model_absences
    UNION ALL
    SELECT employee_id, 'sickness', id, start_date, end_date, half_start, half_end FROM model_sicknesses
) r
JOIN model_employed_spans s ON s.employee_id = r.employee_id AND s.lo <= r.end_date AND r.start_date <= s.hi
LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id;

-- As in 0023, from the calendar: a query of one day reads the records of that day (by their
-- dates' index) and the spans of their employees only, where 0023 cut every record to every
-- span first (6 s for one day at 20,000 employees). Each kind of record is a branch of its own,
-- which a day's filter reaches; CROSS JOIN keeps the calendar the outer loop, where SQLite
-- would otherwise start from the spans for a range of days (minutes for a month). Postgres
-- keeps 0023's shape, which its planner does better with.
CREATE VIEW model_absence_days AS
SELECT r.employee_id, c.day, r.kind,
    CASE WHEN (c.day = r.start_date AND r.half_start) OR (c.day = r.end_date AND r.half_end) THEN 0.5 ELSE 1 END AS days,
    s.department_id, s.division_id, s.location_id
FROM model_calendar c
CROSS JOIN model_absences r
JOIN model_employed_spans s ON s.employee_id = r.employee_id AND s.lo <= c.day AND c.day <= s.hi
LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
WHERE r.start_date <= c.day AND c.day <= r.end_date AND ((coalesce(pw.week, 31) >> (CAST(julianday(c.day) - 2415020.5 AS INTEGER) % 7)) & 1) = 1
UNION ALL
SELECT r.employee_id, c.day, 'sickness',
    CASE WHEN (c.day = r.start_date AND r.half_start) OR (c.day = r.end_date AND r.half_end) THEN 0.5 ELSE 1 END,
    s.department_id, s.division_id, s.location_id
FROM model_calendar c
CROSS JOIN model_sicknesses r
JOIN model_employed_spans s ON s.employee_id = r.employee_id AND s.lo <= c.day AND c.day <= s.hi
LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
WHERE r.start_date <= c.day AND c.day <= r.end_date AND ((coalesce(pw.week, 31) >> (CAST(julianday(c.day) - 2415020.5 AS INTEGER) % 7)) & 1) = 1;

-- 0023's model_absence_monthly, counted by running sums, in half days (integers) until the end.
-- Each employed span (kind 'due') and each absence piece adds, in half days: in its first month,
-- one to its group's count (department, kind, week) less its working days before its first day
-- (and a half day); in its last month less its working days after its last (and a half day); in
-- the month after, minus one to the count. A group's working days in a month are its count up to
-- that month times the month's working days of its week, plus the month's adjustments. An
-- absence piece within one month (nearly all) adds its working days in that month, and nothing
-- to the count. The FTE is a span's from its first month through the last month whose reporting
-- day (its last; today for the current one) it reaches.
CREATE VIEW model_absence_monthly_derived AS
WITH pieces AS MATERIALIZED (
    SELECT x.department_id, x.kind, x.week, x.fte, x.halves_first, x.halves_last,
        CAST(julianday(x.lo) - 2415020.5 AS INTEGER) AS lo, CAST(julianday(x.hi) - 2415020.5 AS INTEGER) AS hi,
        date(x.lo, 'start of month') AS m0, date(x.hi, 'start of month') AS m1,
        date(x.hi, 'start of month', '+1 month') AS m2,
        x.hi = min(date(x.hi, 'start of month', '+1 month', '-1 day'), date('now')) AS reaches_end
    FROM (
        SELECT s.department_id, 'due' AS kind, coalesce(pw.week, 31) AS week, s.fte, s.lo, s.hi,
            0 AS halves_first, 0 AS halves_last
        FROM model_employed_spans s
        LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
        UNION ALL
        SELECT p.department_id, p.kind, p.week, 0, p.lo, p.hi,
            CASE WHEN p.half_start AND p.lo = p.start_date AND ((p.week >> (CAST(julianday(p.lo) - 2415020.5 AS INTEGER) % 7)) & 1) = 1 THEN 1 ELSE 0 END,
            CASE WHEN p.half_end AND p.hi = p.end_date AND ((p.week >> (CAST(julianday(p.hi) - 2415020.5 AS INTEGER) % 7)) & 1) = 1
                AND NOT (p.start_date = p.end_date AND p.half_start) THEN 1 ELSE 0 END
        FROM model_absence_spans p
    ) x
), events AS (
    -- an absence within one month: its working days, in half days, less its halves
    SELECT department_id, kind, week, m0 AS month, 0 AS n, 0 AS fte,
        2 * ((week & 1) * ((b + 7) / 7 - (a + 6) / 7) + ((week >> 1) & 1) * ((b + 6) / 7 - (a + 5) / 7)
        + ((week >> 2) & 1) * ((b + 5) / 7 - (a + 4) / 7) + ((week >> 3) & 1) * ((b + 4) / 7 - (a + 3) / 7)
        + ((week >> 4) & 1) * ((b + 3) / 7 - (a + 2) / 7) + ((week >> 5) & 1) * ((b + 2) / 7 - (a + 1) / 7)
        + ((week >> 6) & 1) * ((b + 1) / 7 - a / 7)) - halves_first - halves_last AS adj
    FROM (SELECT p.*, p.lo AS a, p.hi AS b FROM pieces p WHERE p.kind <> 'due' AND p.m0 = p.m1) w
    UNION ALL
    -- a span, or an absence over more than one month: its first month
    SELECT department_id, kind, week, m0, 1, fte,
        -2 * ((week & 1) * ((b + 7) / 7 - (a + 6) / 7) + ((week >> 1) & 1) * ((b + 6) / 7 - (a + 5) / 7)
        + ((week >> 2) & 1) * ((b + 5) / 7 - (a + 4) / 7) + ((week >> 3) & 1) * ((b + 4) / 7 - (a + 3) / 7)
        + ((week >> 4) & 1) * ((b + 3) / 7 - (a + 2) / 7) + ((week >> 5) & 1) * ((b + 2) / 7 - (a + 1) / 7)
        + ((week >> 6) & 1) * ((b + 1) / 7 - a / 7)) - halves_first
    FROM (SELECT p.*, CAST(julianday(p.m0) - 2415020.5 AS INTEGER) AS a, p.lo - 1 AS b FROM pieces p WHERE p.kind = 'due' OR p.m0 < p.m1) w
    UNION ALL
    -- its last month
    SELECT department_id, kind, week, m1, 0, CASE WHEN reaches_end THEN 0 ELSE -fte END,
        -2 * ((week & 1) * ((b + 7) / 7 - (a + 6) / 7) + ((week >> 1) & 1) * ((b + 6) / 7 - (a + 5) / 7)
        + ((week >> 2) & 1) * ((b + 5) / 7 - (a + 4) / 7) + ((week >> 3) & 1) * ((b + 4) / 7 - (a + 3) / 7)
        + ((week >> 4) & 1) * ((b + 3) / 7 - (a + 2) / 7) + ((week >> 5) & 1) * ((b + 2) / 7 - (a + 1) / 7)
        + ((week >> 6) & 1) * ((b + 1) / 7 - a / 7)) - halves_last
    FROM (SELECT p.*, p.hi + 1 AS a, CAST(julianday(p.m2) - 2415020.5 AS INTEGER) - 1 AS b FROM pieces p WHERE p.kind = 'due' OR p.m0 < p.m1) w
    UNION ALL
    -- the month after
    SELECT department_id, kind, week, m2, -1, CASE WHEN reaches_end THEN -fte ELSE 0 END, 0
    FROM pieces WHERE kind = 'due' OR m0 < m1
), changes AS MATERIALIZED (
    SELECT department_id, kind, week, month, sum(n) AS n, sum(fte) AS fte, sum(adj) AS adj
    FROM events
    GROUP BY department_id, kind, week, month
), counted AS (
    SELECT r.month, r.department_id, r.kind, r.n, r.fte,
        r.adj + 2 * r.n * ((r.week & 1) * ((b + 7) / 7 - (a + 6) / 7) + ((r.week >> 1) & 1) * ((b + 6) / 7 - (a + 5) / 7)
        + ((r.week >> 2) & 1) * ((b + 5) / 7 - (a + 4) / 7) + ((r.week >> 3) & 1) * ((b + 4) / 7 - (a + 3) / 7)
        + ((r.week >> 4) & 1) * ((b + 3) / 7 - (a + 2) / 7) + ((r.week >> 5) & 1) * ((b + 2) / 7 - (a + 1) / 7)
        + ((r.week >> 6) & 1) * ((b + 1) / 7 - a / 7)) AS halves
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
        round(sum(CASE WHEN kind = 'due' THEN fte ELSE 0 END), 2) AS fte
    FROM counted
    GROUP BY month, department_id
    HAVING sum(CASE WHEN kind = 'due' THEN n ELSE 0 END) > 0
)
SELECT t.month, t.department_id, dp.name AS department,
    t.sick AS sick_days, t.other AS other_leave_days, t.holiday AS holiday_days,
    t.sick + t.other AS days_lost, t.due AS days_due, t.fte,
    CASE WHEN t.fte > 0 THEN round((t.sick + t.other) / t.fte, 2) END AS days_lost_per_fte,
    CASE WHEN t.due > 0 THEN round(t.sick / t.due, 4) END AS sickness_rate
FROM monthly t
LEFT JOIN departments dp ON dp.id = t.department_id;

CREATE TABLE model_absence_monthly (
    month              TEXT NOT NULL,
    department_id      INTEGER,
    department         TEXT,
    sick_days          NUMERIC NOT NULL,
    other_leave_days   NUMERIC NOT NULL,
    holiday_days       NUMERIC NOT NULL,
    days_lost          NUMERIC NOT NULL,
    days_due           INTEGER NOT NULL,
    fte                NUMERIC NOT NULL,
    days_lost_per_fte  NUMERIC,
    sickness_rate      NUMERIC
);
CREATE INDEX model_absence_monthly_month ON model_absence_monthly (month, department_id);
INSERT INTO model_absence_monthly SELECT * FROM model_absence_monthly_derived;

CREATE TABLE model_refreshes (
    model        TEXT PRIMARY KEY,
    refreshed_at TEXT NOT NULL,
    version      INTEGER NOT NULL,  -- meta.version the refresh read
    today        TEXT NOT NULL,     -- the day (UTC) it took as today
    took_ms      INTEGER NOT NULL
);
INSERT INTO model_refreshes (model, refreshed_at, version, today, took_ms)
SELECT 'model_absence_monthly', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), version, date('now'), 0 FROM meta;

-- As in 0023, from the month ends: each month's last day (today, for the current month), the
-- sicknesses of the 52 weeks (364 days) ending on it, cut to the employee's employed spans; a
-- query of one as_of reads the sicknesses once, and those of its window from then on.
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
            SELECT me.as_of, k.employee_id, k.id, coalesce(pw.week, 31) AS week, k.half_start, k.half_end,
                CAST(julianday(max(k.start_date, s.lo, date(me.as_of, '-363 days'))) - 2415020.5 AS INTEGER) AS a,
                CAST(julianday(min(k.end_date, s.hi, me.as_of)) - 2415020.5 AS INTEGER) AS b,
                CAST(julianday(k.start_date) - 2415020.5 AS INTEGER) AS s, CAST(julianday(k.end_date) - 2415020.5 AS INTEGER) AS e
            FROM (
                SELECT min(c.month_end, date('now')) AS as_of
                FROM model_calendar c
                WHERE c.day = c.month AND c.day <= date('now')
            ) me
            JOIN model_sicknesses k ON k.start_date <= me.as_of AND k.end_date >= date(me.as_of, '-363 days')
            JOIN model_employed_spans s ON s.employee_id = k.employee_id
                AND s.lo <= min(k.end_date, me.as_of) AND max(k.start_date, date(me.as_of, '-363 days')) <= s.hi
            LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
        ) x
    ) y
    GROUP BY y.as_of, y.employee_id
) b
JOIN model_employment m ON m.employee_id = b.employee_id
LEFT JOIN model_employee_versions v ON v.employee_id = b.employee_id
    AND v.valid_from <= min(b.as_of, coalesce(m.end_date, b.as_of)) AND min(b.as_of, coalesce(m.end_date, b.as_of)) < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id;

-- The daily people models (0020) read for a range of days: the spans (or employments) computed
-- once, and the calendar the outer loop (CROSS JOIN), where SQLite computed the spans again for
-- each day (a month of days: 25 s at 20,000 employees; now a few). One day reads the same.
DROP VIEW model_headcount_daily;
CREATE VIEW model_headcount_daily AS
WITH spans AS MATERIALIZED (SELECT * FROM model_employed_spans)
SELECT c.day, s.department_id, dp.name AS department, s.division_id, dv.name AS division,
    s.location_id, lc.name AS location, count(*) AS headcount,
    round(sum(s.fte), 2) AS fte
FROM model_calendar c
CROSS JOIN spans s
LEFT JOIN departments dp ON dp.id = s.department_id
LEFT JOIN divisions dv ON dv.id = s.division_id
LEFT JOIN locations lc ON lc.id = s.location_id
WHERE c.day >= s.lo AND c.day <= s.hi
GROUP BY c.day, s.department_id, dp.name, s.division_id, dv.name, s.location_id, lc.name;

DROP VIEW model_tenure_daily;
CREATE VIEW model_tenure_daily AS
WITH employment AS MATERIALIZED (SELECT start_date, end_date FROM model_employment)
SELECT t.day, CASE WHEN t.years < 1 THEN '<1y' WHEN t.years < 2 THEN '1-2y' WHEN t.years < 5 THEN '2-5y'
        WHEN t.years < 10 THEN '5-10y' ELSE '10y+' END AS band,
    count(*) AS headcount
FROM (
    SELECT c.day, c.year - CAST(substr(m.start_date, 1, 4) AS INTEGER)
        - CASE WHEN c.month_day < substr(m.start_date, 6, 5) THEN 1 ELSE 0 END AS years
    FROM model_calendar c
    CROSS JOIN employment m
    WHERE m.start_date <= c.day AND (m.end_date IS NULL OR c.day <= m.end_date) AND c.day <= date('now')
) t
GROUP BY t.day, 2;
