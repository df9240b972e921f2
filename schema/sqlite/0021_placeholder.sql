-- A placeholder for migration 0021 (the absence models, on another branch), so that 0022 applies
-- here: drop this file when merging with that branch.
SELECT 1;
