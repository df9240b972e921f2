-- request_hash: the hash of the create a ledger row sent (v1.NewEmployee.Hash) when the source
-- refused it (422: the row rejected or skipped). The same request is not sent again; a different
-- one, because the file's bytes or the onboarding settings that shape it (the join date layout)
-- changed, is. Rows from before this migration have none: they are sent again once.
ALTER TABLE onboarding_rows ADD COLUMN request_hash text;
