-- The Bradford list of one day fast again (issue 36: 2 s per model at 20,000 employees; 0028 took
-- it to 2.2–3.1 s here), the same names, columns and answers as 0028 and as
-- schema/sqlite/0029_bradford_stored_sicknesses.sql.
--
-- model_sickness_working_days keeps, per piece of a sickness (the sickness cut to one employed
-- span, as model_bradford cuts it), what model_bradford worked out at every read: its working
-- days, whether it counts, and whether it starts a spell once sicknesses separated only by days
-- that are not working days are merged. sink.Store.RefreshModels writes it with
-- model_absence_monthly (the refresh after each sync, `hrsync report`), and records it in
-- model_refreshes as 'model_sickness_working_days'. model_bradford reads a piece's row only
-- while the whole table is fresh (its refresh's meta.version and today are the warehouse's
-- now: any write since, a settings change, or a new day makes it stale), and only where the
-- row's answer is the window's: the piece lies wholly in the window, and it starts a spell, or
-- an earlier sickness that joins it begins in the window. Every other piece (a window's edges,
-- data loaded since the refresh) is worked out as 0028 did, so the view follows the data at
-- every read as before.
--
-- The rules, with the window left out (from the employment's start to today):
--   lo, hi: the piece's first and last day (day numbers, days since 1900-01-01), the sickness
--     cut to the span (model_employed_spans);
--   days: its working days (the pattern's days that are not days off of the person's calendar),
--     less a half day for a half_start or half_end on a working day, as 0028's model_bradford;
--   counted: of a type not excluded, with a working day;
--   starts: counted, and no earlier sickness joins it (0028's rule);
--   join_lo: when it does not start a spell, the latest first day (cut to the employment) of the
--     sicknesses that join it: in a window from that day on, one still does.
CREATE TABLE model_sickness_working_days (
    employee_id bigint NOT NULL,
    id          bigint NOT NULL,   -- the sickness
    lo          integer NOT NULL,
    hi          integer NOT NULL,
    days        numeric NOT NULL,
    counted     boolean NOT NULL,
    starts      boolean NOT NULL,
    join_lo     integer,
    PRIMARY KEY (id, lo)
);

-- Whether an earlier sickness joins a piece (0028's rule, for the pieces the table does not
-- answer): the piece of sickness p_id (employee p_emp, started on p_sd) starting on day p_a, in
-- the window [p_wn, p_an] (day numbers; p_ws: p_wn's date), p_ms the employment's first day; an
-- earlier part of its own sickness with a working day in the window, or an earlier sickness not
-- of an excluded type with a working day in the window and no working day between its end and
-- p_a, working days by the piece's week p_wk and calendar p_cal. A function, called only where
-- the table does not answer: the same test inline was costed for every piece, and the plan's
-- estimate crossed jit_above_cost (Postgres then compiled it for over a second at every read).
-- SET search_path FROM CURRENT pins it to this schema, as 0021's functions.
CREATE FUNCTION model_spell_joined(p_cal text, p_wk integer, p_emp bigint, p_id bigint, p_sd date, p_a integer,
    p_ms integer, p_wn integer, p_ws date, p_an integer) RETURNS boolean
LANGUAGE plpgsql STABLE SET search_path FROM CURRENT AS $fn$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM (
            SELECT greatest(k2.start_date - date '1900-01-01', p_wn, p_ms) AS a2,
                CASE WHEN k2.id = p_id THEN p_a - 1 ELSE least(k2.end_date - date '1900-01-01', p_an) END AS b2
            FROM model_sicknesses k2
            WHERE k2.employee_id = p_emp AND k2.end_date >= p_ws AND k2.start_date <= p_sd
                AND (k2.id = p_id OR k2.end_date >= p_sd - 31)
                AND (k2.id = p_id OR k2.start_date < p_sd OR (k2.start_date = p_sd AND k2.id < p_id))
                AND (k2.id = p_id OR NOT EXISTS (SELECT 1 FROM model_bradford_excluded_types)
                    OR NOT coalesce(lower(k2.sickness_type) IN (SELECT name FROM model_bradford_excluded_types), false))
        ) g
        WHERE g.a2 <= g.b2 AND ((((p_wk) & 1) * ((g.b2 + 7) / 7 - (g.a2 + 6) / 7) + (((p_wk) >> 1) & 1) * ((g.b2 + 6) / 7 - (g.a2 + 5) / 7)
        + (((p_wk) >> 2) & 1) * ((g.b2 + 5) / 7 - (g.a2 + 4) / 7) + (((p_wk) >> 3) & 1) * ((g.b2 + 4) / 7 - (g.a2 + 3) / 7)
        + (((p_wk) >> 4) & 1) * ((g.b2 + 3) / 7 - (g.a2 + 2) / 7) + (((p_wk) >> 5) & 1) * ((g.b2 + 2) / 7 - (g.a2 + 1) / 7)
        + (((p_wk) >> 6) & 1) * ((g.b2 + 1) / 7 - (g.a2) / 7))
            - (SELECT count(*) FROM model_days_off o WHERE o.calendar = p_cal AND o.dn >= g.a2 AND o.dn <= g.b2 AND ((p_wk >> o.dow) & 1) = 1)) > 0
            AND (g.b2 >= p_a - 1 OR ((((p_wk) & 1) * ((p_a - 1 + 7) / 7 - (g.b2 + 1 + 6) / 7) + (((p_wk) >> 1) & 1) * ((p_a - 1 + 6) / 7 - (g.b2 + 1 + 5) / 7)
        + (((p_wk) >> 2) & 1) * ((p_a - 1 + 5) / 7 - (g.b2 + 1 + 4) / 7) + (((p_wk) >> 3) & 1) * ((p_a - 1 + 4) / 7 - (g.b2 + 1 + 3) / 7)
        + (((p_wk) >> 4) & 1) * ((p_a - 1 + 3) / 7 - (g.b2 + 1 + 2) / 7) + (((p_wk) >> 5) & 1) * ((p_a - 1 + 2) / 7 - (g.b2 + 1 + 1) / 7)
        + (((p_wk) >> 6) & 1) * ((p_a - 1 + 1) / 7 - (g.b2 + 1) / 7))
            - (SELECT count(*) FROM model_days_off o WHERE o.calendar = p_cal AND o.dn >= g.b2 + 1 AND o.dn <= p_a - 1 AND ((p_wk >> o.dow) & 1) = 1)) = 0));
END
$fn$;

-- 0028's model_bradford (its rules there), reading model_sickness_working_days where it answers.
DROP VIEW model_bradford;
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
        SELECT y.as_of, y.ws, y.employee_id, y.id, y.counted, y.days,
            CASE WHEN NOT y.counted THEN 0
                WHEN y.fast AND y.stored_starts THEN 1
                WHEN y.fast AND y.join_lo >= y.wn THEN 0
                WHEN model_spell_joined(y.calendar, y.week, y.employee_id, y.id, y.sd, y.a,
                    y.ms, y.wn, y.ws, y.an) THEN 0
                ELSE 1 END AS starts
        FROM (
            SELECT x.*, CASE WHEN x.fast THEN x.stored_counted ELSE NOT x.excluded AND x.days > 0 END AS counted
            FROM (
                -- a piece's days worked out once (OFFSET 0: not copied into each use)
                SELECT p.*, dd.days
                FROM (
                    SELECT me.as_of, me.ws, me.as_of - date '1900-01-01' AS an, me.ws - date '1900-01-01' AS wn,
                        em.start_date - date '1900-01-01' AS ms, k.start_date AS sd, k.employee_id, k.id,
                        coalesce(pw.week, 31) AS week, coalesce(ec.calendar, 'none') AS calendar, k.half_start, k.half_end,
                        EXISTS (SELECT 1 FROM model_bradford_excluded_types)
                            AND coalesce(lower(k.sickness_type) IN (SELECT name FROM model_bradford_excluded_types), false) AS excluded,
                        greatest(k.start_date, s.lo, me.ws) - date '1900-01-01' AS a,
                        least(k.end_date, s.hi, me.as_of) - date '1900-01-01' AS b,
                        k.start_date - date '1900-01-01' AS s, k.end_date - date '1900-01-01' AS e,
                        d.id IS NOT NULL AND d.lo >= me.ws - date '1900-01-01' AND d.hi <= me.as_of - date '1900-01-01' AS fast,
                        d.days AS stored_days, d.counted AS stored_counted, d.starts AS stored_starts, d.join_lo
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
                    LEFT JOIN model_sickness_working_days d ON d.id = k.id
                        AND d.lo = greatest(k.start_date, s.lo) - date '1900-01-01'
                        AND (SELECT r.version = mt.version AND r.today = (now() AT TIME ZONE 'UTC')::date
                            FROM model_refreshes r CROSS JOIN meta mt WHERE r.model = 'model_sickness_working_days')
                ) p
                CROSS JOIN LATERAL (
                    SELECT CASE WHEN p.fast THEN p.stored_days
                        ELSE (((p.week) & 1) * ((p.b + 7) / 7 - (p.a + 6) / 7) + (((p.week) >> 1) & 1) * ((p.b + 6) / 7 - (p.a + 5) / 7)
        + (((p.week) >> 2) & 1) * ((p.b + 5) / 7 - (p.a + 4) / 7) + (((p.week) >> 3) & 1) * ((p.b + 4) / 7 - (p.a + 3) / 7)
        + (((p.week) >> 4) & 1) * ((p.b + 3) / 7 - (p.a + 2) / 7) + (((p.week) >> 5) & 1) * ((p.b + 2) / 7 - (p.a + 1) / 7)
        + (((p.week) >> 6) & 1) * ((p.b + 1) / 7 - (p.a) / 7))
                        - (SELECT count(*) FROM model_days_off o WHERE o.calendar = p.calendar AND o.dn >= p.a AND o.dn <= p.b AND ((p.week >> o.dow) & 1) = 1)
                        - CASE WHEN p.half_start AND p.s >= p.a AND p.s <= p.b AND ((p.week >> (p.s % 7)) & 1) = 1
                            AND NOT EXISTS (SELECT 1 FROM model_days_off o WHERE o.calendar = p.calendar AND o.dn = p.s) THEN 0.5 ELSE 0 END
                        - CASE WHEN p.half_end AND p.e >= p.a AND p.e <= p.b AND ((p.week >> (p.e % 7)) & 1) = 1 AND NOT (p.s = p.e AND p.half_start)
                            AND NOT EXISTS (SELECT 1 FROM model_days_off o WHERE o.calendar = p.calendar AND o.dn = p.e) THEN 0.5 ELSE 0 END
                        END AS days
                    OFFSET 0
                ) dd
            ) x
        ) y
    ) z
    GROUP BY z.as_of, z.employee_id
) b
JOIN model_employment m ON m.employee_id = b.employee_id
LEFT JOIN model_employee_versions v ON v.employee_id = b.employee_id
    AND v.valid_from <= least(b.as_of, coalesce(m.end_date, b.as_of)) AND least(b.as_of, coalesce(m.end_date, b.as_of)) < v.valid_to
LEFT JOIN departments dp ON dp.id = v.department_id;
