-- As schema/postgres/0010_reference_history.sql: the history of the reference data, kept by row
-- triggers as in 0009 (valid_from and valid_to are TEXT timestamps with milliseconds; a second
-- write of a row in the same millisecond replaces that millisecond's version). Row triggers name
-- every column: a column added to one of these tables must be added to its history and to these
-- triggers (TestDeclarationsMatchMigrations holds the tables together).

CREATE TABLE departments_history (
    id         INTEGER NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to   TEXT,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL,
    origin     TEXT NOT NULL,
    deleted_at TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX departments_history_period ON departments_history (valid_from, valid_to);
CREATE TRIGGER departments_history_ins AFTER INSERT ON departments BEGIN
    DELETE FROM departments_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO departments_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER departments_history_upd AFTER UPDATE ON departments BEGIN
    UPDATE departments_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM departments_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO departments_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER departments_history_del AFTER DELETE ON departments BEGIN
    UPDATE departments_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM departments_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO departments_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, name, extra, listed, origin, deleted_at FROM departments;

CREATE TABLE divisions_history (
    id         INTEGER NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to   TEXT,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL,
    origin     TEXT NOT NULL,
    deleted_at TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX divisions_history_period ON divisions_history (valid_from, valid_to);
CREATE TRIGGER divisions_history_ins AFTER INSERT ON divisions BEGIN
    DELETE FROM divisions_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO divisions_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER divisions_history_upd AFTER UPDATE ON divisions BEGIN
    UPDATE divisions_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM divisions_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO divisions_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER divisions_history_del AFTER DELETE ON divisions BEGIN
    UPDATE divisions_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM divisions_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO divisions_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, name, extra, listed, origin, deleted_at FROM divisions;

CREATE TABLE locations_history (
    id         INTEGER NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to   TEXT,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL,
    origin     TEXT NOT NULL,
    deleted_at TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX locations_history_period ON locations_history (valid_from, valid_to);
CREATE TRIGGER locations_history_ins AFTER INSERT ON locations BEGIN
    DELETE FROM locations_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO locations_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER locations_history_upd AFTER UPDATE ON locations BEGIN
    UPDATE locations_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM locations_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO locations_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER locations_history_del AFTER DELETE ON locations BEGIN
    UPDATE locations_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM locations_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO locations_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, name, extra, listed, origin, deleted_at FROM locations;

CREATE TABLE holiday_allowances_history (
    id         INTEGER NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to   TEXT,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL,
    origin     TEXT NOT NULL,
    deleted_at TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX holiday_allowances_history_period ON holiday_allowances_history (valid_from, valid_to);
CREATE TRIGGER holiday_allowances_history_ins AFTER INSERT ON holiday_allowances BEGIN
    DELETE FROM holiday_allowances_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO holiday_allowances_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER holiday_allowances_history_upd AFTER UPDATE ON holiday_allowances BEGIN
    UPDATE holiday_allowances_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM holiday_allowances_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO holiday_allowances_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER holiday_allowances_history_del AFTER DELETE ON holiday_allowances BEGIN
    UPDATE holiday_allowances_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM holiday_allowances_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO holiday_allowances_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, name, extra, listed, origin, deleted_at FROM holiday_allowances;

CREATE TABLE other_leave_reasons_history (
    id         INTEGER NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to   TEXT,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL,
    origin     TEXT NOT NULL,
    deleted_at TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX other_leave_reasons_history_period ON other_leave_reasons_history (valid_from, valid_to);
CREATE TRIGGER other_leave_reasons_history_ins AFTER INSERT ON other_leave_reasons BEGIN
    DELETE FROM other_leave_reasons_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO other_leave_reasons_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER other_leave_reasons_history_upd AFTER UPDATE ON other_leave_reasons BEGIN
    UPDATE other_leave_reasons_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM other_leave_reasons_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO other_leave_reasons_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER other_leave_reasons_history_del AFTER DELETE ON other_leave_reasons BEGIN
    UPDATE other_leave_reasons_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM other_leave_reasons_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO other_leave_reasons_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, name, extra, listed, origin, deleted_at FROM other_leave_reasons;

CREATE TABLE statutory_holiday_countries_history (
    id         INTEGER NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to   TEXT,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL,
    origin     TEXT NOT NULL,
    deleted_at TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX statutory_holiday_countries_history_period ON statutory_holiday_countries_history (valid_from, valid_to);
CREATE TRIGGER statutory_holiday_countries_history_ins AFTER INSERT ON statutory_holiday_countries BEGIN
    DELETE FROM statutory_holiday_countries_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO statutory_holiday_countries_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER statutory_holiday_countries_history_upd AFTER UPDATE ON statutory_holiday_countries BEGIN
    UPDATE statutory_holiday_countries_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM statutory_holiday_countries_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO statutory_holiday_countries_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER statutory_holiday_countries_history_del AFTER DELETE ON statutory_holiday_countries BEGIN
    UPDATE statutory_holiday_countries_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM statutory_holiday_countries_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO statutory_holiday_countries_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, name, extra, listed, origin, deleted_at FROM statutory_holiday_countries;

CREATE TABLE company_training_types_history (
    id         INTEGER NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to   TEXT,
    name       TEXT,
    extra      TEXT,
    listed     INTEGER NOT NULL,
    origin     TEXT NOT NULL,
    deleted_at TEXT,
    PRIMARY KEY (id, valid_from)
) STRICT;
CREATE INDEX company_training_types_history_period ON company_training_types_history (valid_from, valid_to);
CREATE TRIGGER company_training_types_history_ins AFTER INSERT ON company_training_types BEGIN
    DELETE FROM company_training_types_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO company_training_types_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER company_training_types_history_upd AFTER UPDATE ON company_training_types BEGIN
    UPDATE company_training_types_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM company_training_types_history WHERE id = NEW.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    INSERT INTO company_training_types_history (valid_from, id, name, extra, listed, origin, deleted_at)
    VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id, NEW.name, NEW.extra, NEW.listed, NEW.origin, NEW.deleted_at);
END;
CREATE TRIGGER company_training_types_history_del AFTER DELETE ON company_training_types BEGIN
    UPDATE company_training_types_history SET valid_to = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id = OLD.id AND valid_to IS NULL AND valid_from < strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
    DELETE FROM company_training_types_history WHERE id = OLD.id AND valid_from = strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
END;
INSERT INTO company_training_types_history (valid_from, id, name, extra, listed, origin, deleted_at)
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), id, name, extra, listed, origin, deleted_at FROM company_training_types;
