-- As schema/postgres/0017_employee_leaving_date.sql.
ALTER TABLE employees ADD COLUMN leaving_date TEXT;
ALTER TABLE employees_history ADD COLUMN leaving_date TEXT;
