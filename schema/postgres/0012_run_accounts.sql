-- The ledger says which account each run synced: the name of the account in hrsync's
-- configuration (accounts[].name, or source.account for a configuration of one account). Rows
-- written before this migration have none.
ALTER TABLE sync_runs ADD COLUMN account text CHECK (account <> '');
