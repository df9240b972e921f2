-- As schema/postgres/0015_onboarding_requests.sql: request_hash, the hash of the create a row
-- sent (v1.NewEmployee.Hash) when the source refused it (422, rejected or skipped): the same
-- request is not sent again, a different one (the file or the onboarding settings changed) is.
ALTER TABLE onboarding_rows ADD COLUMN request_hash TEXT;
