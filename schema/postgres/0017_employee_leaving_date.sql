-- A leaver's leaving date, where the account records it (UPSTREAM.md: an undocumented member,
-- leaving_date), a column of its own: retention counts a leaver's periods from it and headcount
-- on a past date needs it, so it is an employment fact, not a member of extra. Rows synced before
-- keep it in extra until the next sync writes them.
ALTER TABLE employees ADD COLUMN leaving_date date;
ALTER TABLE employees_history ADD COLUMN leaving_date date;
