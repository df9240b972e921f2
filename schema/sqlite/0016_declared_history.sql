-- As schema/postgres/0016_declared_history.sql: history triggers are no longer written here.
-- sink makes them from the declarations (sink/collections.go, historied; sink/history.go) in the
-- transaction of the last migration, and again whenever a build declares them otherwise,
-- naming every column of the table's declaration. A column added to a table is added to its
-- history in the same migration, and nothing else.
--
-- Employees' history keeps nested, as every other history keeps its table's columns; the current
-- versions get their row's (each is a copy of its row), older ones have none.
ALTER TABLE employees_history ADD COLUMN nested TEXT;
UPDATE employees_history SET nested = (SELECT e.nested FROM employees e WHERE e.id = employees_history.id)
WHERE valid_to IS NULL;
