-- History triggers are no longer written here: sink makes them from the declarations
-- (sink/collections.go, historied; sink/history.go) in the transaction of the last migration,
-- and again whenever a build declares them otherwise. On Postgres each is a statement trigger of
-- history_write (0009), which copies a table's columns by name from the catalog, so a column
-- added to a table and its history in a migration needs nothing else.
--
-- Employees get history_write too, in place of employees_history_write (0002), which named
-- every column: their history now keeps nested (the nested objects' forms as the source sent
-- them) as every other history keeps its table's columns, and a hard delete by hand closes the
-- current version as it does in the other histories. The current versions get their row's
-- nested (each is a copy of its row: every write of a row writes a version); older ones have none.
ALTER TABLE employees_history ADD COLUMN nested json;
UPDATE employees_history h SET nested = e.nested FROM employees e WHERE e.id = h.id AND h.valid_to IS NULL;
DROP TRIGGER employees_history_ins ON employees;
DROP TRIGGER employees_history_upd ON employees;
DROP FUNCTION employees_history_write();
