-- model_bradford of 0029 (the same names, columns, rules and answers; its rules:
-- schema/postgres/0028_models_working_days.sql, the stored table it reads:
-- schema/postgres/0029_bradford_stored_sicknesses.sql), with each working pattern's week read
-- from a materialized CTE rather than from the view model_pattern_weeks joined in. SQLite
-- flattens the subqueries of the view into one query and copies a joined view's expression into
-- each place its column is used: the week, used dozens of times a piece by the working-day
-- arithmetic and the spell test, was worked out again each time, from the pattern's hours stored
-- as text (eight casts to real). That was most of a read's time: one month end of a 20,000
-- employee firm took 4.8-6.1 s through the Go driver (1.4 s of CPU in the sqlite3 shell), and
-- takes 1.0-1.9 s with the week worked out once per pattern (0.45 s in the shell)
-- (docs/benchmarks.md).
DROP VIEW model_bradford;
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
cal AS MATERIALIZED (SELECT employee_id, calendar FROM model_employee_calendars),
-- each working pattern's week, worked out once: joined as the view model_pattern_weeks, SQLite
-- copies its expression (eight text-to-real casts of the hours) into every use of the week below,
-- dozens a piece
pwk AS MATERIALIZED (SELECT id, week FROM model_pattern_weeks)
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
            CASE WHEN NOT y.counted THEN 0
                WHEN y.fast AND y.stored_starts THEN 1
                WHEN y.fast AND y.join_lo >= y.wn THEN 0
                WHEN NOT EXISTS (
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
            SELECT q.*, CASE WHEN q.fast THEN q.stored_counted ELSE NOT q.excluded AND q.full_days > 0 END AS counted,
                CASE WHEN q.fast THEN q.stored_days ELSE q.full_days
                - CASE WHEN q.half_start AND q.s >= q.a AND q.s <= q.b AND ((q.week >> (q.s % 7)) & 1) = 1
                    AND NOT EXISTS (SELECT 1 FROM model_days_off o WHERE o.calendar = q.calendar AND o.dn = q.s) THEN 0.5 ELSE 0 END
                - CASE WHEN q.half_end AND q.e >= q.a AND q.e <= q.b AND ((q.week >> (q.e % 7)) & 1) = 1 AND NOT (q.s = q.e AND q.half_start)
                    AND NOT EXISTS (SELECT 1 FROM model_days_off o WHERE o.calendar = q.calendar AND o.dn = q.e) THEN 0.5 ELSE 0 END END AS days
                FROM (
                    SELECT p.*, CASE WHEN p.fast THEN NULL ELSE (((p.week) & 1) * ((p.b + 7) / 7 - (p.a + 6) / 7) + (((p.week) >> 1) & 1) * ((p.b + 6) / 7 - (p.a + 5) / 7)
        + (((p.week) >> 2) & 1) * ((p.b + 5) / 7 - (p.a + 4) / 7) + (((p.week) >> 3) & 1) * ((p.b + 4) / 7 - (p.a + 3) / 7)
        + (((p.week) >> 4) & 1) * ((p.b + 3) / 7 - (p.a + 2) / 7) + (((p.week) >> 5) & 1) * ((p.b + 2) / 7 - (p.a + 1) / 7)
        + (((p.week) >> 6) & 1) * ((p.b + 1) / 7 - (p.a) / 7)) - (SELECT count(*) FROM model_days_off o WHERE o.calendar = p.calendar AND o.dn >= p.a AND o.dn <= p.b AND ((p.week >> o.dow) & 1) = 1) END AS full_days
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
                            CAST(julianday(k.end_date) - 2415020.5 AS INTEGER) AS e,
                            d.id IS NOT NULL AND d.lo >= me.wn AND d.hi <= me.an AS fast,
                            d.days AS stored_days, d.counted AS stored_counted, d.starts AS stored_starts, d.join_lo
                        FROM me
                        JOIN model_sicknesses k ON k.start_date <= me.as_of AND k.end_date >= me.ws
                        JOIN model_employment m ON m.employee_id = k.employee_id
                        JOIN model_employee_versions v ON v.employee_id = k.employee_id
                            AND v.valid_from <= min(k.end_date, me.as_of, coalesce(m.end_date, me.as_of))
                            AND date(max(k.start_date, me.ws, m.start_date), '+1 day') <= v.valid_to
                        LEFT JOIN pwk pw ON pw.id = v.working_pattern_id
                        LEFT JOIN cal ec ON ec.employee_id = k.employee_id
                        LEFT JOIN model_sickness_working_days d ON d.id = k.id
                            AND d.lo = CAST(julianday(max(k.start_date, m.start_date, v.valid_from)) - 2415020.5 AS INTEGER)
                            AND (SELECT r.version = mt.version AND r.today = date('now')
                                FROM model_refreshes r, meta mt WHERE r.model = 'model_sickness_working_days')
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
