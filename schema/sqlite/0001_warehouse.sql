-- The warehouse model in SQLite: the same tables, columns and meaning as the Postgres schema
-- (see schema/postgres/0001_warehouse.sql). Dates are TEXT YYYY-MM-DD, timestamps TEXT
-- YYYY-MM-DDTHH:MM:SSZ (UTC), decimals TEXT as the source wrote them, JSON as TEXT, booleans 0/1.

CREATE TABLE meta (
    id                       INTEGER PRIMARY KEY CHECK (id = 1),
    version                  INTEGER NOT NULL DEFAULT 1,
    employees_total          INTEGER NOT NULL DEFAULT 0,
    working_patterns_total   INTEGER NOT NULL DEFAULT 0,
    departments_total        INTEGER NOT NULL DEFAULT 0,
    holiday_allowances_total INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO meta (id) VALUES (1);

CREATE TABLE working_patterns (
    id          INTEGER PRIMARY KEY,
    name        TEXT,
    is_default  INTEGER CHECK (is_default IN (0, 1)),
    total_hours TEXT,
    mon INTEGER, tue INTEGER, wed INTEGER, thu INTEGER, fri INTEGER, sat INTEGER, sun INTEGER,
    mon_hr TEXT, tue_hr TEXT, wed_hr TEXT, thu_hr TEXT, fri_hr TEXT, sat_hr TEXT, sun_hr TEXT,
    created_at  TEXT,
    updated_at  TEXT,
    extra       TEXT,
    listed      INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin      TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at  TEXT,
    synced_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;

CREATE TABLE holiday_allowances (
    id         INTEGER PRIMARY KEY,
    name       TEXT,
    extra      TEXT,
    origin     TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at TEXT,
    synced_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;

CREATE TABLE departments (
    id         INTEGER PRIMARY KEY,
    name       TEXT,
    extra      TEXT,
    origin     TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at TEXT,
    synced_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;

CREATE TABLE employees (
    id                          INTEGER PRIMARY KEY,
    account_id                  INTEGER,
    first_name                  TEXT,
    last_name                   TEXT,
    email                       TEXT,
    job_title                   TEXT,
    status                      TEXT,
    company_join_date           TEXT,
    job_start_date              TEXT,
    length_of_service_in_months INTEGER,
    age                         TEXT,
    full_or_part_time           TEXT,
    notice_period               TEXT,
    working_pattern_id          INTEGER REFERENCES working_patterns (id) DEFERRABLE INITIALLY DEFERRED,
    holiday_allowance_id        INTEGER REFERENCES holiday_allowances (id) DEFERRABLE INITIALLY DEFERRED,
    department_id               INTEGER REFERENCES departments (id) DEFERRABLE INITIALLY DEFERRED,
    line_manager_id             INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    holiday_approver_id         INTEGER REFERENCES employees (id) DEFERRABLE INITIALLY DEFERRED,
    receives_statutory_holidays INTEGER CHECK (receives_statutory_holidays IN (0, 1)),
    hr                          INTEGER CHECK (hr IN (0, 1)),
    created_at                  TEXT,
    updated_at                  TEXT,
    extra                       TEXT,
    nested                      TEXT,
    listed                      INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1)),
    origin                      TEXT NOT NULL DEFAULT 'source' CHECK (origin IN ('source', 'local', 'seed')),
    deleted_at                  TEXT,
    synced_at                   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
) STRICT;
CREATE INDEX employees_visible_id ON employees (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX employees_visible_email ON employees (lower(email)) WHERE listed AND deleted_at IS NULL;
CREATE INDEX employees_working_pattern_id ON employees (working_pattern_id);
CREATE INDEX employees_holiday_allowance_id ON employees (holiday_allowance_id);
CREATE INDEX employees_department_id ON employees (department_id);
CREATE INDEX employees_line_manager_id ON employees (line_manager_id);
CREATE INDEX employees_holiday_approver_id ON employees (holiday_approver_id);

-- SQLite has only row-level triggers; inside one transaction their cost is a page already in cache.
CREATE TRIGGER employees_ins AFTER INSERT ON employees BEGIN
    UPDATE meta SET version = version + 1,
        employees_total = employees_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER employees_upd AFTER UPDATE ON employees BEGIN
    UPDATE meta SET version = version + 1,
        employees_total = employees_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER employees_del AFTER DELETE ON employees BEGIN
    UPDATE meta SET version = version + 1,
        employees_total = employees_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER working_patterns_ins AFTER INSERT ON working_patterns BEGIN
    UPDATE meta SET version = version + 1,
        working_patterns_total = working_patterns_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER working_patterns_upd AFTER UPDATE ON working_patterns BEGIN
    UPDATE meta SET version = version + 1,
        working_patterns_total = working_patterns_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER working_patterns_del AFTER DELETE ON working_patterns BEGIN
    UPDATE meta SET version = version + 1,
        working_patterns_total = working_patterns_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER departments_ins AFTER INSERT ON departments BEGIN
    UPDATE meta SET version = version + 1, departments_total = departments_total + (NEW.deleted_at IS NULL);
END;
CREATE TRIGGER departments_upd AFTER UPDATE ON departments BEGIN
    UPDATE meta SET version = version + 1,
        departments_total = departments_total + (NEW.deleted_at IS NULL) - (OLD.deleted_at IS NULL);
END;
CREATE TRIGGER departments_del AFTER DELETE ON departments BEGIN
    UPDATE meta SET version = version + 1, departments_total = departments_total - (OLD.deleted_at IS NULL);
END;
CREATE TRIGGER holiday_allowances_ins AFTER INSERT ON holiday_allowances BEGIN
    UPDATE meta SET version = version + 1, holiday_allowances_total = holiday_allowances_total + (NEW.deleted_at IS NULL);
END;
CREATE TRIGGER holiday_allowances_upd AFTER UPDATE ON holiday_allowances BEGIN
    UPDATE meta SET version = version + 1,
        holiday_allowances_total = holiday_allowances_total + (NEW.deleted_at IS NULL) - (OLD.deleted_at IS NULL);
END;
CREATE TRIGGER holiday_allowances_del AFTER DELETE ON holiday_allowances BEGIN
    UPDATE meta SET version = version + 1, holiday_allowances_total = holiday_allowances_total - (OLD.deleted_at IS NULL);
END;

INSERT INTO working_patterns (id, name, is_default, total_hours, mon, tue, wed, thu, fri, sat, sun,
    mon_hr, tue_hr, wed_hr, thu_hr, fri_hr, sat_hr, sun_hr, created_at, updated_at, origin)
VALUES (1, 'Standard', 1, '37.5', 1, 1, 1, 1, 1, 0, 0,
    '7.5', '7.5', '7.5', '7.5', '7.5', '0.0', '0.0',
    strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), 'seed');
INSERT INTO holiday_allowances (id, name, origin) VALUES (1, 'Standard', 'seed');
