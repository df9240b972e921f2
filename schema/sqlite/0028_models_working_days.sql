-- Working days as payroll counts them, and the Bradford factor as HR applies it (issue 36,
-- docs/models.md "Absence models" and "Working days"): the same names, columns and answers as
-- schema/postgres/0028_models_working_days.sql. Only the absence models change; the people models
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
    id                    INTEGER PRIMARY KEY CHECK (id = 1),
    holiday_calendar      TEXT NOT NULL,
    bradford_window_weeks INTEGER NOT NULL CHECK (bradford_window_weeks > 0),
    fingerprint           TEXT NOT NULL
);
INSERT INTO model_settings (id, holiday_calendar, bradford_window_weeks, fingerprint) VALUES (1, 'england-and-wales', 52, '');

-- models.closure_days: days the company is closed, a working day for nobody.
CREATE TABLE model_closure_days (day TEXT PRIMARY KEY);

-- models.bradford.bands: a score is in band n when it is at least the n-th threshold (band 0
-- below the first).
CREATE TABLE model_bradford_bands (
    band      INTEGER PRIMARY KEY,
    threshold NUMERIC NOT NULL
);
INSERT INTO model_bradford_bands (band, threshold) VALUES (1, 51), (2, 201), (3, 401), (4, 601);

-- models.bradford.exclude_sickness_types, in lower case: sicknesses of these types are left out
-- of the Bradford factor (not of the absence figures).
CREATE TABLE model_bradford_excluded_types (name TEXT PRIMARY KEY);

-- Each calendar's public holidays (observed days), from the library.
CREATE TABLE model_holidays (
    calendar TEXT NOT NULL,
    day      TEXT NOT NULL,
    name     TEXT NOT NULL,
    PRIMARY KEY (calendar, day)
);

-- Each calendar's days off: its holidays and the closure days ('none': the closure days only).
CREATE TABLE model_days_off (
    calendar TEXT NOT NULL,
    day      TEXT NOT NULL,
    dn       INTEGER NOT NULL,  -- day - 1900-01-01
    month    TEXT NOT NULL,     -- the first of its month
    dow      INTEGER NOT NULL,  -- 0 Monday … 6 Sunday
    PRIMARY KEY (calendar, day)
);
CREATE UNIQUE INDEX model_days_off_dn ON model_days_off (calendar, dn);
CREATE INDEX model_days_off_month ON model_days_off (calendar, month, dn);

-- Statutory holiday countries' names (lower case, trimmed) and their calendars; NULL: the
-- default calendar (the United Kingdom as a whole names no one calendar).
CREATE TABLE model_holiday_countries (
    name     TEXT PRIMARY KEY,
    calendar TEXT
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
SELECT e.id AS employee_id, coalesce(CASE json_type(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country')
        WHEN 'object' THEN json_extract(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country.name')
        WHEN 'text' THEN json_extract(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country') END, c.name) AS holiday_country,
    CASE WHEN NOT coalesce(e.receives_statutory_holidays, 0) THEN 'none' ELSE coalesce(hc.calendar, st.holiday_calendar) END AS calendar,
    CASE WHEN NOT coalesce(e.receives_statutory_holidays, 0) THEN 'no statutory holidays'
        WHEN coalesce(CASE json_type(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country')
        WHEN 'object' THEN json_extract(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country.name')
        WHEN 'text' THEN json_extract(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country') END, c.name) IS NULL THEN 'default'
        WHEN hc.name IS NULL THEN 'unknown country'
        WHEN hc.calendar IS NULL THEN 'default'
        ELSE 'country' END AS calendar_from
FROM employees e
CROSS JOIN model_settings st
LEFT JOIN statutory_holiday_countries c ON json_type(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country.id') = 'integer'
    AND c.id = json_extract(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country.id')
LEFT JOIN model_holiday_countries hc ON hc.name = lower(trim(coalesce(CASE json_type(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country')
        WHEN 'object' THEN json_extract(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country.name')
        WHEN 'text' THEN json_extract(CASE WHEN json_valid(e.extra) THEN e.extra END, '$.statutory_holiday_country') END, c.name)));

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

-- 0024's running sums, with days off (the rules: schema/postgres/0028_models_working_days.sql): a
-- group (department, kind, week, and now calendar) counts in each month its count times the
-- month's working days less its calendar's days off on them; a piece's first and last months
-- give back the days off outside it, and an absence within one month (no count) takes its own
-- days off away. Zero-hours people's absences are kinds of their own (zero_hours_…), counted on
-- every day (week 127) and no calendar.
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
    SELECT department_id, kind, week, calendar,
        CASE t WHEN 2 THEN m1 WHEN 3 THEN m2 ELSE m0 END AS month,
        CASE t WHEN 1 THEN 1 WHEN 3 THEN -1 ELSE 0 END AS n,
        CASE t WHEN 1 THEN fte WHEN 2 THEN CASE WHEN reaches_end THEN 0 ELSE -fte END
            WHEN 3 THEN CASE WHEN reaches_end THEN -fte ELSE 0 END ELSE 0 END AS fte,
        CASE t WHEN 3 THEN 0
            ELSE (CASE t WHEN 0 THEN 2 ELSE -2 END) * (((week) & 1) * ((b + 7) / 7 - (a + 6) / 7) + (((week) >> 1) & 1) * ((b + 6) / 7 - (a + 5) / 7)
        + (((week) >> 2) & 1) * ((b + 5) / 7 - (a + 4) / 7) + (((week) >> 3) & 1) * ((b + 4) / 7 - (a + 3) / 7)
        + (((week) >> 4) & 1) * ((b + 3) / 7 - (a + 2) / 7) + (((week) >> 5) & 1) * ((b + 2) / 7 - (a + 1) / 7)
        + (((week) >> 6) & 1) * ((b + 1) / 7 - (a) / 7))
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
    -- days off in a piece's first and last months (on days of its week): an absence within one
    -- month takes each of its days off away (2 half days, giving back a half day taken for a
    -- half_start or half_end on it); a span or a longer absence counts its months' days off
    -- with its group's count (counted, below), and its first and last months give back the
    -- days off before its first day and after its last (and a half day taken on a day off)
    SELECT p.department_id, p.kind, p.week, p.calendar, o.month, 0, 0,
        CASE WHEN p.kind <> 'due' AND p.m0 = p.m1 THEN
            CASE WHEN o.dn >= p.lo AND o.dn <= p.hi THEN
                -2 + CASE WHEN o.dn = p.lo THEN p.halves_first ELSE 0 END + CASE WHEN o.dn = p.hi THEN p.halves_last ELSE 0 END
            ELSE 0 END
        ELSE CASE WHEN o.month = p.m0 AND o.dn < p.lo THEN 2 WHEN o.month = p.m0 AND o.dn = p.lo THEN p.halves_first ELSE 0 END
            + CASE WHEN o.month = p.m1 AND o.dn > p.hi THEN 2 WHEN o.month = p.m1 AND o.dn = p.hi THEN p.halves_last ELSE 0 END
        END
    FROM pieces p
    JOIN model_days_off o ON o.calendar = p.calendar AND o.month IN (p.m0, p.m1)
    WHERE ((p.week >> o.dow) & 1) = 1
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
            CAST(julianday(x.month) - 2415020.5 AS INTEGER) AS a,
            CAST(julianday(x.month, '+1 month') - 2415020.5 AS INTEGER) - 1 AS b
        FROM (
            SELECT month, department_id, kind, week, calendar, n, fte, adj FROM changes
            UNION ALL -- every month of every group, so that a month without changes has its row
            SELECT c.month, g.department_id, g.kind, g.week, g.calendar, 0, 0, 0
            FROM (SELECT department_id, kind, week, calendar, min(month) AS since FROM changes GROUP BY department_id, kind, week, calendar) g
            JOIN model_calendar c ON c.day = c.month AND c.day > g.since AND c.day <= date('now')
        ) x
        GROUP BY x.month, x.department_id, x.kind, x.week, x.calendar
        WINDOW w AS (PARTITION BY x.department_id, x.kind, x.week, x.calendar ORDER BY x.month)
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
),
-- each employee's calendar, worked out once (the view reads their extra as JSON)
cal AS MATERIALIZED (SELECT employee_id, calendar FROM model_employee_calendars)
SELECT b.as_of, b.employee_id, v.department_id, dp.name AS department, b.spells, b.days,
    b.spells * b.spells * b.days AS bradford,
    b.window_start, b.spells_raw, b.days_raw, b.spells_raw * b.spells_raw * b.days_raw AS bradford_raw,
    (SELECT count(*) FROM model_bradford_bands t WHERE t.threshold <= b.spells * b.spells * b.days) AS band
FROM (
    SELECT z.as_of, z.employee_id, max(z.left_on) AS left_on, min(z.ws) AS window_start,
        sum(z.starts) AS spells, sum(CASE WHEN z.counted THEN z.days ELSE 0 END) AS days,
        count(DISTINCT z.id) AS spells_raw, sum(z.days) AS days_raw
    FROM (
        -- a piece starts a spell when it counts and nothing before it joins it (the rule:
        -- schema/postgres/0028_models_working_days.sql); a correlated test of the employee's
        -- sicknesses, where a window function would keep a query of one as_of from reaching
        -- the month ends' CTE (every month end computed: minutes)
        SELECT y.as_of, y.ws, y.employee_id, y.id, y.left_on, y.counted, y.days,
            CASE WHEN y.counted AND NOT EXISTS (
                SELECT 1 FROM (
                    SELECT max(CAST(julianday(k2.start_date) - 2415020.5 AS INTEGER), y.wn, y.ms) AS a2,
                        CASE WHEN k2.id = y.id THEN y.a - 1 ELSE min(CAST(julianday(k2.end_date) - 2415020.5 AS INTEGER), y.an) END AS b2
                    FROM model_sicknesses k2
                    WHERE k2.employee_id = y.employee_id AND k2.end_date >= y.ws AND k2.start_date <= y.sd
                        AND (k2.id = y.id OR k2.end_date >= date(y.sd, '-31 days'))
                        AND (k2.id = y.id OR k2.start_date < y.sd OR (k2.start_date = y.sd AND k2.id < y.id))
                        AND (k2.id = y.id OR NOT EXISTS (SELECT 1 FROM model_bradford_excluded_types)
                            OR NOT coalesce(lower(k2.sickness_type) IN (SELECT name FROM model_bradford_excluded_types), 0))
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
                        SELECT me.as_of, me.ws, me.an, me.wn, CAST(julianday(m.start_date) - 2415020.5 AS INTEGER) AS ms,
                            k.start_date AS sd, k.employee_id, k.id, m.end_date AS left_on, coalesce(pw.week, 31) AS week,
                            coalesce(ec.calendar, 'none') AS calendar,
                            k.half_start, k.half_end,
                            EXISTS (SELECT 1 FROM model_bradford_excluded_types)
                                AND coalesce(lower(k.sickness_type) IN (SELECT name FROM model_bradford_excluded_types), 0) AS excluded,
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
                        LEFT JOIN cal ec ON ec.employee_id = k.employee_id
                    ) p
                    WHERE p.a <= p.b
                ) q
            ) y
    ) z
    GROUP BY z.as_of, z.employee_id
) b
LEFT JOIN model_employee_versions v ON v.employee_id = b.employee_id
    AND v.valid_from <= min(b.as_of, coalesce(b.left_on, b.as_of)) AND min(b.as_of, coalesce(b.left_on, b.as_of)) < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id;
