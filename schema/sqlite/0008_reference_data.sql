-- As schema/postgres/0008_reference_data.sql: departments and holiday allowances get listed, and
-- the rows references left in them start unlisted; meta counts their listed rows.
DROP TRIGGER departments_ins;
DROP TRIGGER departments_upd;
DROP TRIGGER departments_del;
DROP TRIGGER holiday_allowances_ins;
DROP TRIGGER holiday_allowances_upd;
DROP TRIGGER holiday_allowances_del;

ALTER TABLE departments ADD COLUMN listed INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1));
ALTER TABLE holiday_allowances ADD COLUMN listed INTEGER NOT NULL DEFAULT 1 CHECK (listed IN (0, 1));
UPDATE departments SET listed = 0 WHERE origin = 'source';
UPDATE holiday_allowances SET listed = 0 WHERE origin = 'source';
UPDATE meta SET version = version + 1,
    departments_total = (SELECT count(*) FROM departments WHERE listed AND deleted_at IS NULL),
    holiday_allowances_total = (SELECT count(*) FROM holiday_allowances WHERE listed AND deleted_at IS NULL);

CREATE INDEX departments_visible_id ON departments (id) WHERE listed AND deleted_at IS NULL;
CREATE INDEX holiday_allowances_visible_id ON holiday_allowances (id) WHERE listed AND deleted_at IS NULL;
CREATE TRIGGER departments_ins AFTER INSERT ON departments BEGIN
    UPDATE meta SET version = version + 1, departments_total = departments_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER departments_upd AFTER UPDATE ON departments BEGIN
    UPDATE meta SET version = version + 1,
        departments_total = departments_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER departments_del AFTER DELETE ON departments BEGIN
    UPDATE meta SET version = version + 1, departments_total = departments_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER holiday_allowances_ins AFTER INSERT ON holiday_allowances BEGIN
    UPDATE meta SET version = version + 1, holiday_allowances_total = holiday_allowances_total + (NEW.listed AND NEW.deleted_at IS NULL);
END;
CREATE TRIGGER holiday_allowances_upd AFTER UPDATE ON holiday_allowances BEGIN
    UPDATE meta SET version = version + 1,
        holiday_allowances_total = holiday_allowances_total + (NEW.listed AND NEW.deleted_at IS NULL) - (OLD.listed AND OLD.deleted_at IS NULL);
END;
CREATE TRIGGER holiday_allowances_del AFTER DELETE ON holiday_allowances BEGIN
    UPDATE meta SET version = version + 1, holiday_allowances_total = holiday_allowances_total - (OLD.listed AND OLD.deleted_at IS NULL);
END;
