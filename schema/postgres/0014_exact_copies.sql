-- Exact copies. Every collection declared on the wire (all but employees and working patterns)
-- gets sent: the record exactly as the source sent it, compacted (its members in its order, "",
-- null and an absent member kept apart, numbers and strings as written). Serve mode gives a
-- record back from it. The typed columns stay the analysts', in their normal forms: there "" and
-- null are both NULL, timestamps UTC, a member the source left out NULL too.
-- A row stored before this migration has no sent and is served from the typed columns as before,
-- until a sync walks it again: that sync updates each such row once (and
-- records that version in the history), as what it serves changes; the syncs after it write
-- only what changed. Histories keep sent too (history_write, 0009, copies columns by name).
ALTER TABLE departments ADD COLUMN sent json;
ALTER TABLE divisions ADD COLUMN sent json;
ALTER TABLE locations ADD COLUMN sent json;
ALTER TABLE holiday_allowances ADD COLUMN sent json;
ALTER TABLE other_leave_reasons ADD COLUMN sent json;
ALTER TABLE statutory_holiday_countries ADD COLUMN sent json;
ALTER TABLE company_training_types ADD COLUMN sent json;
ALTER TABLE absences ADD COLUMN sent json;
ALTER TABLE sicknesses ADD COLUMN sent json;
ALTER TABLE leave_requests ADD COLUMN sent json;
ALTER TABLE employee_training_courses ADD COLUMN sent json;
ALTER TABLE salaries ADD COLUMN sent json;
ALTER TABLE bonuses ADD COLUMN sent json;
ALTER TABLE benefits ADD COLUMN sent json;
ALTER TABLE absences_history ADD COLUMN sent json;
ALTER TABLE sicknesses_history ADD COLUMN sent json;
ALTER TABLE leave_requests_history ADD COLUMN sent json;
ALTER TABLE employee_training_courses_history ADD COLUMN sent json;
ALTER TABLE departments_history ADD COLUMN sent json;
ALTER TABLE divisions_history ADD COLUMN sent json;
ALTER TABLE locations_history ADD COLUMN sent json;
ALTER TABLE holiday_allowances_history ADD COLUMN sent json;
ALTER TABLE other_leave_reasons_history ADD COLUMN sent json;
ALTER TABLE statutory_holiday_countries_history ADD COLUMN sent json;
ALTER TABLE company_training_types_history ADD COLUMN sent json;
