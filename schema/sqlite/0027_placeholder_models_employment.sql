-- A placeholder for the employment models' migration 0027 (branch fix/employment,
-- 0027_models_employment.sql), written at the same time as 0028: version 27 must exist for 0028
-- to run on this branch. Delete this file when merging that branch's 0027.
SELECT 1;
