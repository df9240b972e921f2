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

