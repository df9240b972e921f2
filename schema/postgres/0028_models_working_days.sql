-- Working days as payroll counts them, and the Bradford factor as HR applies it (issue 36,
-- docs/models.md "Absence models" and "Working days"): the same names, columns and answers as
-- schema/sqlite/0028_models_working_days.sql. Only the absence models change; the people models
-- (model_employment, model_employed_spans, model_employee_versions) are read as they are.
--
-- 1. Settings the models read, written by sink.Store.ApplyModelSettings from the configuration's
--    models section before each refresh (a sync's end, `hrsync report`), so that every SQL client
--    gets the same answers: model_settings (the default holiday calendar, the Bradford window),
--    model_closure_days, model_bradford_bands, model_bradford_excluded_types.
-- 2. Public holidays: model_holidays (calendar, day, name), written by the same function from
--    github.com/rickar/cal/v2 (sink/holidays.go) for model_calendar's years; model_days_off, a
--    calendar's days off (its holidays and the closure days; calendar 'none': the closure days
--    only), with the day's number (days since 1900-01-01, a Monday), month and weekday
--    (0 Monday … 6 Sunday), what the models join.
-- 3. model_employee_calendars: each employee's calendar: none for people who do not receive
--    statutory holidays (false or unknown); else their statutory holiday country's (extra's
--    statutory_holiday_country, by name, or its id in statutory_holiday_countries) through
--    model_holiday_countries; else the default. A holiday or closure day is not a working day.
-- 4. A zero-hours pattern (no total_hours and no hours on any day) has no working day: its week is
--    0 (model_pattern_weeks). Its people have no days due, and their absences are counted apart
--    (zero_hours_sick_days, zero_hours_leave_days: calendar days) in model_absence_monthly.
-- 5. model_bradford: spells and days on working days only; sicknesses separated only by days that
--    are not working days are one spell; the window (model_settings) and excluded sickness types
--    (model_bradford_excluded_types) as set; the band of the score; the raw score beside it.

DROP VIEW model_absence_monthly_derived;
DROP VIEW model_bradford;
DROP VIEW model_absence_days;
DROP VIEW model_absence_spans;
DROP VIEW model_pattern_weeks;
DROP VIEW model_sicknesses;

-- One row: the default calendar (models.holiday_calendar), the Bradford window in weeks
-- (models.bradford.window_weeks), and the fingerprint of what ApplyModelSettings last wrote
-- (settings and holidays: it writes again only when that changes).
CREATE TABLE model_settings (
    id                    integer PRIMARY KEY CHECK (id = 1),
    holiday_calendar      text NOT NULL,
    bradford_window_weeks integer NOT NULL CHECK (bradford_window_weeks > 0),
    fingerprint           text NOT NULL
);
INSERT INTO model_settings (id, holiday_calendar, bradford_window_weeks, fingerprint) VALUES (1, 'england-and-wales', 52, '');

-- models.closure_days: days the company is closed, a working day for nobody.
CREATE TABLE model_closure_days (day date PRIMARY KEY);

-- models.bradford.bands: a score is in band n when it is at least the n-th threshold (band 0
-- below the first).
CREATE TABLE model_bradford_bands (
    band      integer PRIMARY KEY,
    threshold numeric NOT NULL
);
INSERT INTO model_bradford_bands (band, threshold) VALUES (1, 51), (2, 201), (3, 401), (4, 601);

-- models.bradford.exclude_sickness_types, in lower case: sicknesses of these types are left out
-- of the Bradford factor (not of the absence figures).
CREATE TABLE model_bradford_excluded_types (name text PRIMARY KEY);

-- Each calendar's public holidays (observed days), from the library.
CREATE TABLE model_holidays (
    calendar text NOT NULL,
    day      date NOT NULL,
    name     text NOT NULL,
    PRIMARY KEY (calendar, day)
);

-- Each calendar's days off: its holidays and the closure days ('none': the closure days only).
CREATE TABLE model_days_off (
    calendar text NOT NULL,
    day      date NOT NULL,
    dn       integer NOT NULL,  -- day - 1900-01-01
    month    date NOT NULL,     -- the first of its month
    dow      integer NOT NULL,  -- 0 Monday … 6 Sunday
    PRIMARY KEY (calendar, day)
);
CREATE UNIQUE INDEX model_days_off_dn ON model_days_off (calendar, dn);
CREATE INDEX model_days_off_month ON model_days_off (calendar, month, dn);

-- Statutory holiday countries' names (lower case, trimmed) and their calendars; NULL: the
-- default calendar (the United Kingdom as a whole names no one calendar).
CREATE TABLE model_holiday_countries (
    name     text PRIMARY KEY,
    calendar text
);
INSERT INTO model_holiday_countries (name, calendar) VALUES
    ('england', 'england-and-wales'), ('wales', 'england-and-wales'),
    ('england and wales', 'england-and-wales'), ('england & wales', 'england-and-wales'),
    ('scotland', 'scotland'), ('northern ireland', 'northern-ireland'),
    ('ireland', 'ireland'), ('republic of ireland', 'ireland'),
    ('poland', 'poland'), ('polska', 'poland'),
    ('united kingdom', NULL), ('uk', NULL), ('great britain', NULL);

-- Each employee's calendar, and where it came from: 'no statutory holidays' (calendar none),
-- 'country', 'default' (no country sent, or the United Kingdom), 'unknown country' (a name not
-- in model_holiday_countries: the default).
CREATE VIEW model_employee_calendars AS
SELECT x.employee_id, x.holiday_country,
    CASE WHEN NOT x.receives THEN 'none' ELSE coalesce(hc.calendar, st.holiday_calendar) END AS calendar,
    CASE WHEN NOT x.receives THEN 'no statutory holidays'
        WHEN x.holiday_country IS NULL THEN 'default'
        WHEN hc.name IS NULL THEN 'unknown country'
        WHEN hc.calendar IS NULL THEN 'default'
        ELSE 'country' END AS calendar_from
FROM (
    SELECT e.id AS employee_id, coalesce(e.receives_statutory_holidays, false) AS receives,
        coalesce(y.sent_name, c.name) AS holiday_country
    FROM employees e
    CROSS JOIN LATERAL (
        SELECT CASE json_typeof(e.extra -> 'statutory_holiday_country')
                WHEN 'object' THEN e.extra -> 'statutory_holiday_country' ->> 'name'
                WHEN 'string' THEN e.extra ->> 'statutory_holiday_country' END AS sent_name,
            CASE WHEN json_typeof(e.extra -> 'statutory_holiday_country') = 'object'
                AND (e.extra -> 'statutory_holiday_country' ->> 'id') ~ '^[0-9]{1,18}$'
                THEN (e.extra -> 'statutory_holiday_country' ->> 'id')::bigint END AS sent_id
    ) y
    LEFT JOIN statutory_holiday_countries c ON c.id = y.sent_id
) x
CROSS JOIN model_settings st
LEFT JOIN model_holiday_countries hc ON hc.name = lower(trim(x.holiday_country));

-- As in 0024, with the sickness type's name (the nested company_sicknesstype's).
CREATE VIEW model_sicknesses AS
SELECT k.employee_id, k.id, k.start_date, coalesce(k.end_date, (now() AT TIME ZONE 'UTC')::date) AS end_date,
    coalesce(k.half_start, false) AS half_start, k.end_date IS NOT NULL AND coalesce(k.half_end, false) AS half_end,
    k.nested -> 'company_sicknesstype' ->> 'name' AS sickness_type
FROM sicknesses k
WHERE k.listed AND k.deleted_at IS NULL AND k.start_date <= coalesce(k.end_date, (now() AT TIME ZONE 'UTC')::date);

-- Each working pattern's week as a mask: bit 0 Monday … bit 6 Sunday; a zero-hours pattern (no
-- total_hours and no hours on any day): 0, no working day; a pattern that marks no day: Monday to
-- Friday, 31 (as for no pattern).
CREATE VIEW model_pattern_weeks AS
SELECT id, CASE WHEN zero_hours THEN 0 WHEN w > 0 THEN w ELSE 31 END AS week, zero_hours
FROM (SELECT id, coalesce(mon::int, 0) + 2 * coalesce(tue::int, 0) + 4 * coalesce(wed::int, 0) + 8 * coalesce(thu::int, 0)
    + 16 * coalesce(fri::int, 0) + 32 * coalesce(sat::int, 0) + 64 * coalesce(sun::int, 0) AS w,
    coalesce(total_hours, 0) = 0 AND coalesce(mon_hr, 0) + coalesce(tue_hr, 0) + coalesce(wed_hr, 0) + coalesce(thu_hr, 0)
        + coalesce(fri_hr, 0) + coalesce(sat_hr, 0) + coalesce(sun_hr, 0) = 0 AS zero_hours
    FROM working_patterns) x;

-- As in 0024, with the employee's calendar.
CREATE VIEW model_absence_spans AS
SELECT r.employee_id, r.kind, r.id, r.start_date, r.end_date, r.half_start, r.half_end,
    greatest(r.start_date, s.lo) AS lo, least(r.end_date, s.hi) AS hi,
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

-- As in 0024, working days only: a day of the pattern that is not a day off of the employee's
-- calendar (a zero-hours pattern has none).
CREATE VIEW model_absence_days AS
SELECT p.employee_id, c.day, p.kind,
    CASE WHEN (c.day = p.start_date AND p.half_start) OR (c.day = p.end_date AND p.half_end) THEN 0.5 ELSE 1 END AS days,
    p.department_id, p.division_id, p.location_id
FROM model_absence_spans p
JOIN model_calendar c ON c.day >= p.lo AND c.day <= p.hi
WHERE ((p.week >> ((c.day - date '1900-01-01') % 7)) & 1) = 1
    AND NOT EXISTS (SELECT 1 FROM model_days_off o WHERE o.calendar = p.calendar AND o.day = c.day);

-- 0024's running sums, with days off: a group (department, kind, week, and now calendar) counts
-- in each month its count times the month's working days less its calendar's days off on them;
-- a piece's first and last months give back the days off outside it, and an absence within one
-- month (no count) takes its own days off away. A half day on a day off is given back. Zero-hours
-- people's absences are kinds of their own (zero_hours_…), counted on every day (week 127) and
-- no calendar.
CREATE VIEW model_absence_monthly_derived AS
WITH pieces AS MATERIALIZED (
    SELECT x.department_id, x.kind, x.week, x.calendar, x.fte, x.halves_first, x.halves_last,
        x.lo - date '1900-01-01' AS lo, x.hi - date '1900-01-01' AS hi,
        date_trunc('month', x.lo::timestamp)::date AS m0, date_trunc('month', x.hi::timestamp)::date AS m1,
        (date_trunc('month', x.hi::timestamp) + interval '1 month')::date AS m2,
        x.hi = least((date_trunc('month', x.hi::timestamp) + interval '1 month' - interval '1 day')::date,
            (now() AT TIME ZONE 'UTC')::date) AS reaches_end
    FROM (
        SELECT s.department_id, 'due' AS kind, coalesce(pw.week, 31) AS week, coalesce(ec.calendar, 'none') AS calendar,
            s.fte, s.lo, s.hi, 0 AS halves_first, 0 AS halves_last
        FROM model_employed_spans s
        LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
        LEFT JOIN model_employee_calendars ec ON ec.employee_id = s.employee_id
        UNION ALL
        SELECT p.department_id, p.kind, p.week, p.calendar, 0, p.lo, p.hi,
            CASE WHEN p.half_start AND p.lo = p.start_date AND ((p.week >> ((p.lo - date '1900-01-01') % 7)) & 1) = 1 THEN 1 ELSE 0 END,
            CASE WHEN p.half_end AND p.hi = p.end_date AND ((p.week >> ((p.hi - date '1900-01-01') % 7)) & 1) = 1
                AND NOT (p.start_date = p.end_date AND p.half_start) THEN 1 ELSE 0 END
        FROM (
            SELECT q.department_id, CASE WHEN q.week = 0 THEN 'zero_hours_' || q.kind ELSE q.kind END AS kind,
                CASE WHEN q.week = 0 THEN 127 ELSE q.week END AS week, CASE WHEN q.week = 0 THEN '' ELSE q.calendar END AS calendar,
                q.lo, q.hi, q.start_date, q.end_date, q.half_start, q.half_end
            FROM model_absence_spans q
        ) p
    ) x
), events AS (
    -- an absence within one month: its working days, in half days, less its halves
    SELECT department_id, kind, week, calendar, m0 AS month, 0 AS n, 0 AS fte,
        2 * (((week) & 1) * ((b + 7) / 7 - (a + 6) / 7) + (((week) >> 1) & 1) * ((b + 6) / 7 - (a + 5) / 7)
        + (((week) >> 2) & 1) * ((b + 5) / 7 - (a + 4) / 7) + (((week) >> 3) & 1) * ((b + 4) / 7 - (a + 3) / 7)
        + (((week) >> 4) & 1) * ((b + 3) / 7 - (a + 2) / 7) + (((week) >> 5) & 1) * ((b + 2) / 7 - (a + 1) / 7)
        + (((week) >> 6) & 1) * ((b + 1) / 7 - (a) / 7)) - halves_first - halves_last AS adj
    FROM (SELECT p.*, p.lo AS a, p.hi AS b FROM pieces p WHERE p.kind <> 'due' AND p.m0 = p.m1) w
    UNION ALL
    -- a span, or an absence over more than one month: its first month
    SELECT department_id, kind, week, calendar, m0, 1, fte,
        -2 * (((week) & 1) * ((b + 7) / 7 - (a + 6) / 7) + (((week) >> 1) & 1) * ((b + 6) / 7 - (a + 5) / 7)
        + (((week) >> 2) & 1) * ((b + 5) / 7 - (a + 4) / 7) + (((week) >> 3) & 1) * ((b + 4) / 7 - (a + 3) / 7)
        + (((week) >> 4) & 1) * ((b + 3) / 7 - (a + 2) / 7) + (((week) >> 5) & 1) * ((b + 2) / 7 - (a + 1) / 7)
        + (((week) >> 6) & 1) * ((b + 1) / 7 - (a) / 7)) - halves_first
    FROM (SELECT p.*, p.m0 - date '1900-01-01' AS a, p.lo - 1 AS b FROM pieces p WHERE p.kind = 'due' OR p.m0 < p.m1) w
    UNION ALL
    -- its last month
    SELECT department_id, kind, week, calendar, m1, 0, CASE WHEN reaches_end THEN 0 ELSE -fte END,
        -2 * (((week) & 1) * ((b + 7) / 7 - (a + 6) / 7) + (((week) >> 1) & 1) * ((b + 6) / 7 - (a + 5) / 7)
        + (((week) >> 2) & 1) * ((b + 5) / 7 - (a + 4) / 7) + (((week) >> 3) & 1) * ((b + 4) / 7 - (a + 3) / 7)
        + (((week) >> 4) & 1) * ((b + 3) / 7 - (a + 2) / 7) + (((week) >> 5) & 1) * ((b + 2) / 7 - (a + 1) / 7)
        + (((week) >> 6) & 1) * ((b + 1) / 7 - (a) / 7)) - halves_last
    FROM (SELECT p.*, p.hi + 1 AS a, p.m2 - date '1900-01-01' - 1 AS b FROM pieces p WHERE p.kind = 'due' OR p.m0 < p.m1) w
    UNION ALL
    -- the month after
    SELECT department_id, kind, week, calendar, m2, -1, CASE WHEN reaches_end THEN -fte ELSE 0 END, 0
    FROM pieces WHERE kind = 'due' OR m0 < m1
    UNION ALL
    -- days off (on days of the piece's week). An absence within one month: each of its days
    -- off is a working day (2 half days) less, giving back a half day taken for a half_start
    -- or half_end on it.
    SELECT p.department_id, p.kind, p.week, p.calendar, o.month, 0, 0,
        -2 + CASE WHEN o.dn = p.lo THEN p.halves_first ELSE 0 END + CASE WHEN o.dn = p.hi THEN p.halves_last ELSE 0 END
    FROM pieces p
    JOIN model_days_off o ON o.calendar = p.calendar AND o.month = p.m0 AND o.dn >= p.lo AND o.dn <= p.hi
    WHERE p.kind <> 'due' AND p.m0 = p.m1 AND ((p.week >> o.dow) & 1) = 1
    UNION ALL
    -- A span or a longer absence counts its months' days off with its group's count (counted,
    -- below); here its first month gives back the days off before its first day (and the half
    -- day taken for a half_start on a day off) …
    SELECT p.department_id, p.kind, p.week, p.calendar, o.month, 0, 0,
        CASE WHEN o.dn < p.lo THEN 2 ELSE p.halves_first END
    FROM pieces p
    JOIN model_days_off o ON o.calendar = p.calendar AND o.month = p.m0 AND o.dn <= p.lo
    WHERE (p.kind = 'due' OR p.m0 < p.m1) AND ((p.week >> o.dow) & 1) = 1
    UNION ALL
    -- … and its last month those after its last day (and a half_end's half day on a day off).
    SELECT p.department_id, p.kind, p.week, p.calendar, o.month, 0, 0,
        CASE WHEN o.dn > p.hi THEN 2 ELSE p.halves_last END
    FROM pieces p
    JOIN model_days_off o ON o.calendar = p.calendar AND o.month = p.m1 AND o.dn >= p.hi
    WHERE (p.kind = 'due' OR p.m0 < p.m1) AND ((p.week >> o.dow) & 1) = 1
), changes AS MATERIALIZED (
    SELECT department_id, kind, week, calendar, month, sum(n) AS n, sum(fte) AS fte, sum(adj) AS adj
    FROM events
    GROUP BY department_id, kind, week, calendar, month
), counted AS (
    -- a group's working days in a month: its count times the month's days of its week less the
    -- month's days off of its calendar on them, plus the month's adjustments
    SELECT r.month, r.department_id, r.kind, r.n, r.fte,
        r.adj + 2 * r.n * ((((r.week) & 1) * ((b + 7) / 7 - (a + 6) / 7) + (((r.week) >> 1) & 1) * ((b + 6) / 7 - (a + 5) / 7)
        + (((r.week) >> 2) & 1) * ((b + 5) / 7 - (a + 4) / 7) + (((r.week) >> 3) & 1) * ((b + 4) / 7 - (a + 3) / 7)
        + (((r.week) >> 4) & 1) * ((b + 3) / 7 - (a + 2) / 7) + (((r.week) >> 5) & 1) * ((b + 2) / 7 - (a + 1) / 7)
        + (((r.week) >> 6) & 1) * ((b + 1) / 7 - (a) / 7))
            - CASE WHEN r.n = 0 THEN 0 ELSE (SELECT count(*) FROM model_days_off o
                WHERE o.calendar = r.calendar AND o.month = r.month AND ((r.week >> o.dow) & 1) = 1) END) AS halves
    FROM (
        SELECT x.month, x.department_id, x.kind, x.week, x.calendar,
            sum(sum(x.n)) OVER w AS n, sum(sum(x.fte)) OVER w AS fte, sum(x.adj) AS adj,
            x.month - date '1900-01-01' AS a, (x.month + interval '1 month')::date - date '1900-01-01' - 1 AS b
        FROM (
            SELECT month, department_id, kind, week, calendar, n, fte, adj FROM changes
            UNION ALL -- every month of every group, so that a month without changes has its row
            SELECT c.month, g.department_id, g.kind, g.week, g.calendar, 0, 0, 0
            FROM (SELECT department_id, kind, week, calendar, min(month) AS since FROM changes GROUP BY department_id, kind, week, calendar) g
            JOIN model_calendar c ON c.day = c.month AND c.day > g.since AND c.day <= (now() AT TIME ZONE 'UTC')::date
        ) x
        GROUP BY x.month, x.department_id, x.kind, x.week, x.calendar
        WINDOW w AS (PARTITION BY x.department_id, x.kind, x.week, x.calendar ORDER BY x.month)
    ) r
), monthly AS (
    SELECT month, department_id,
        sum(CASE WHEN kind = 'sickness' THEN halves ELSE 0 END) / 2.0 AS sick,
        sum(CASE WHEN kind = 'other' THEN halves ELSE 0 END) / 2.0 AS other,
        sum(CASE WHEN kind = 'holiday' THEN halves ELSE 0 END) / 2.0 AS holiday,
        (sum(CASE WHEN kind = 'due' THEN halves ELSE 0 END) / 2)::bigint AS due,
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

ALTER TABLE model_absence_monthly ADD COLUMN zero_hours_sick_days numeric NOT NULL DEFAULT 0;
ALTER TABLE model_absence_monthly ADD COLUMN zero_hours_leave_days numeric NOT NULL DEFAULT 0;
DELETE FROM model_absence_monthly;
INSERT INTO model_absence_monthly SELECT * FROM model_absence_monthly_derived;
UPDATE model_refreshes SET refreshed_at = now(), version = (SELECT version FROM meta),
    today = (now() AT TIME ZONE 'UTC')::date, took_ms = 0
WHERE model = 'model_absence_monthly';

-- The Bradford factor of each employee with a sickness in the window (model_settings'
-- bradford_window_weeks, ending on each month's last day; today for the current month) while
-- employed, as 0024's shape reads it (from the month ends):
--   days: the working days of their sicknesses in the window (the pattern's days that are not
--     days off of their calendar; half days as in model_absence_days), excluded types left out;
--   spells: runs of those sicknesses with a working day in the window, a run broken only by a
--     working day without sickness between them (a sickness wholly on days that are not working
--     days is no spell; Friday and the Monday after are one); the days between two sicknesses
--     are read by the later one's pattern and calendar, and a sickness that ended more than 31
--     days before another's start joins it to nothing (a month without a working day);
--   bradford = spells² × days; band: how many of model_bradford_bands' thresholds it reaches;
--   spells_raw, days_raw, bradford_raw: every sickness record in the window a spell (those of
--     no working day and of excluded types included), days_raw their working days, all types.
CREATE VIEW model_bradford AS
SELECT b.as_of, b.employee_id, v.department_id, dp.name AS department, b.spells, b.days,
    b.spells * b.spells * b.days AS bradford,
    b.window_start, b.spells_raw, b.days_raw, b.spells_raw * b.spells_raw * b.days_raw AS bradford_raw,
    (SELECT count(*) FROM model_bradford_bands t WHERE t.threshold <= b.spells * b.spells * b.days) AS band
FROM (
    SELECT z.as_of, z.employee_id, min(z.ws) AS window_start,
        sum(z.starts) AS spells, sum(CASE WHEN z.counted THEN z.days ELSE 0 END) AS days,
        count(DISTINCT z.id) AS spells_raw, sum(z.days) AS days_raw
    FROM (
        -- a piece starts a spell when it counts and nothing before it joins it: an earlier part
        -- of its own sickness with a working day in the window, or an earlier sickness (not of
        -- an excluded type) with a working day in the window and no working day between its
        -- end and this piece's start; working days by this piece's pattern and calendar
        SELECT y.as_of, y.ws, y.employee_id, y.id, y.counted, y.days,
            CASE WHEN y.counted AND NOT EXISTS (
                SELECT 1 FROM (
                    SELECT greatest(k2.start_date - date '1900-01-01', y.wn, y.ms) AS a2,
                        CASE WHEN k2.id = y.id THEN y.a - 1 ELSE least(k2.end_date - date '1900-01-01', y.an) END AS b2
                    FROM model_sicknesses k2
                    WHERE k2.employee_id = y.employee_id AND k2.end_date >= y.ws AND k2.start_date <= y.sd
                        AND (k2.id = y.id OR k2.end_date >= y.sd - 31)
                        AND (k2.id = y.id OR k2.start_date < y.sd OR (k2.start_date = y.sd AND k2.id < y.id))
                        AND (k2.id = y.id OR NOT EXISTS (SELECT 1 FROM model_bradford_excluded_types)
                            OR NOT coalesce(lower(k2.sickness_type) IN (SELECT name FROM model_bradford_excluded_types), false))
                ) g
                WHERE g.a2 <= g.b2 AND (((y.week) & 1) * ((g.b2 + 7) / 7 - (g.a2 + 6) / 7) + (((y.week) >> 1) & 1) * ((g.b2 + 6) / 7 - (g.a2 + 5) / 7)
        + (((y.week) >> 2) & 1) * ((g.b2 + 5) / 7 - (g.a2 + 4) / 7) + (((y.week) >> 3) & 1) * ((g.b2 + 4) / 7 - (g.a2 + 3) / 7)
        + (((y.week) >> 4) & 1) * ((g.b2 + 3) / 7 - (g.a2 + 2) / 7) + (((y.week) >> 5) & 1) * ((g.b2 + 2) / 7 - (g.a2 + 1) / 7)
        + (((y.week) >> 6) & 1) * ((g.b2 + 1) / 7 - (g.a2) / 7)) - (SELECT count(*) FROM model_days_off o WHERE o.calendar = y.calendar AND o.dn >= g.a2 AND o.dn <= g.b2 AND ((y.week >> o.dow) & 1) = 1) > 0
                    AND (g.b2 >= y.a - 1 OR (((y.week) & 1) * ((y.a - 1 + 7) / 7 - (g.b2 + 1 + 6) / 7) + (((y.week) >> 1) & 1) * ((y.a - 1 + 6) / 7 - (g.b2 + 1 + 5) / 7)
        + (((y.week) >> 2) & 1) * ((y.a - 1 + 5) / 7 - (g.b2 + 1 + 4) / 7) + (((y.week) >> 3) & 1) * ((y.a - 1 + 4) / 7 - (g.b2 + 1 + 3) / 7)
        + (((y.week) >> 4) & 1) * ((y.a - 1 + 3) / 7 - (g.b2 + 1 + 2) / 7) + (((y.week) >> 5) & 1) * ((y.a - 1 + 2) / 7 - (g.b2 + 1 + 1) / 7)
        + (((y.week) >> 6) & 1) * ((y.a - 1 + 1) / 7 - (g.b2 + 1) / 7)) - (SELECT count(*) FROM model_days_off o WHERE o.calendar = y.calendar AND o.dn >= g.b2 + 1 AND o.dn <= y.a - 1 AND ((y.week >> o.dow) & 1) = 1) = 0)
            ) THEN 1 ELSE 0 END AS starts
        FROM (
            SELECT q.*, NOT q.excluded AND q.full_days > 0 AS counted,
                q.full_days
                - CASE WHEN q.half_start AND q.s >= q.a AND q.s <= q.b AND ((q.week >> (q.s % 7)) & 1) = 1
                    AND NOT EXISTS (SELECT 1 FROM model_days_off o WHERE o.calendar = q.calendar AND o.dn = q.s) THEN 0.5 ELSE 0 END
                - CASE WHEN q.half_end AND q.e >= q.a AND q.e <= q.b AND ((q.week >> (q.e % 7)) & 1) = 1 AND NOT (q.s = q.e AND q.half_start)
                    AND NOT EXISTS (SELECT 1 FROM model_days_off o WHERE o.calendar = q.calendar AND o.dn = q.e) THEN 0.5 ELSE 0 END AS days
                FROM (
                    SELECT p.*, (((p.week) & 1) * ((p.b + 7) / 7 - (p.a + 6) / 7) + (((p.week) >> 1) & 1) * ((p.b + 6) / 7 - (p.a + 5) / 7)
        + (((p.week) >> 2) & 1) * ((p.b + 5) / 7 - (p.a + 4) / 7) + (((p.week) >> 3) & 1) * ((p.b + 4) / 7 - (p.a + 3) / 7)
        + (((p.week) >> 4) & 1) * ((p.b + 3) / 7 - (p.a + 2) / 7) + (((p.week) >> 5) & 1) * ((p.b + 2) / 7 - (p.a + 1) / 7)
        + (((p.week) >> 6) & 1) * ((p.b + 1) / 7 - (p.a) / 7)) - (SELECT count(*) FROM model_days_off o WHERE o.calendar = p.calendar AND o.dn >= p.a AND o.dn <= p.b AND ((p.week >> o.dow) & 1) = 1) AS full_days
                    FROM (
                        SELECT me.as_of, me.ws, me.as_of - date '1900-01-01' AS an, me.ws - date '1900-01-01' AS wn,
                            em.start_date - date '1900-01-01' AS ms, k.start_date AS sd, k.employee_id, k.id, coalesce(pw.week, 31) AS week,
                            coalesce(ec.calendar, 'none') AS calendar, k.half_start, k.half_end,
                            EXISTS (SELECT 1 FROM model_bradford_excluded_types)
                                AND coalesce(lower(k.sickness_type) IN (SELECT name FROM model_bradford_excluded_types), false) AS excluded,
                            greatest(k.start_date, s.lo, me.ws) - date '1900-01-01' AS a,
                            least(k.end_date, s.hi, me.as_of) - date '1900-01-01' AS b,
                            k.start_date - date '1900-01-01' AS s, k.end_date - date '1900-01-01' AS e
                        FROM (
                            SELECT m.as_of, m.as_of - (st.bradford_window_weeks * 7 - 1) AS ws
                            FROM (
                                SELECT least(c.month_end, (now() AT TIME ZONE 'UTC')::date) AS as_of
                                FROM model_calendar c
                                WHERE c.day = c.month AND c.day <= (now() AT TIME ZONE 'UTC')::date
                            ) m
                            CROSS JOIN model_settings st
                        ) me
                        JOIN model_sicknesses k ON k.start_date <= me.as_of AND k.end_date >= me.ws
                        JOIN model_employed_spans s ON s.employee_id = k.employee_id
                            AND s.lo <= least(k.end_date, me.as_of) AND greatest(k.start_date, me.ws) <= s.hi
                        JOIN model_employment em ON em.employee_id = k.employee_id
                        LEFT JOIN model_pattern_weeks pw ON pw.id = s.working_pattern_id
                        LEFT JOIN model_employee_calendars ec ON ec.employee_id = k.employee_id
                    ) p
                ) q
            ) y
    ) z
    GROUP BY z.as_of, z.employee_id
) b
JOIN model_employment m ON m.employee_id = b.employee_id
LEFT JOIN model_employee_versions v ON v.employee_id = b.employee_id
    AND v.valid_from <= least(b.as_of, coalesce(m.end_date, b.as_of)) AND least(b.as_of, coalesce(m.end_date, b.as_of)) < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id;
