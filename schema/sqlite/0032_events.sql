-- As schema/postgres/0032_events.sql: joiner, mover and leaver events (docs/events.md).
CREATE TABLE event_baseline (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    taken_at TEXT NOT NULL,
    run_id   TEXT
) STRICT;
CREATE TABLE event_state (
    employee_id        INTEGER PRIMARY KEY,
    present            INTEGER NOT NULL CHECK (present IN (0, 1)),
    status             TEXT,
    join_date          TEXT,
    leaving_date       TEXT,
    department_id      INTEGER,
    division_id        INTEGER,
    location_id        INTEGER,
    line_manager_id    INTEGER,
    job_title          TEXT,
    working_pattern_id INTEGER,
    left_at            TEXT
) STRICT;
CREATE TABLE events (
    id           TEXT PRIMARY KEY CHECK (id <> ''),
    seq          INTEGER UNIQUE,
    employee_id  INTEGER NOT NULL,
    type         TEXT NOT NULL CHECK (type IN ('joiner.scheduled', 'joiner.effective', 'joiner.cancelled',
        'mover', 'leaver.scheduled', 'leaver.effective', 'leaver.rescheduled', 'leaver.cancelled', 'rehire')),
    effective_at TEXT NOT NULL,
    recorded_at  TEXT NOT NULL,
    run_id       TEXT,
    state        TEXT NOT NULL CHECK (state IN ('pending', 'held', 'published', 'withdrawn')),
    held_by      TEXT,
    data         TEXT NOT NULL,
    CHECK ((state = 'published') = (seq IS NOT NULL))
) STRICT;
CREATE INDEX events_due ON events (effective_at) WHERE state = 'pending';
CREATE INDEX events_employee ON events (employee_id);

-- Webhook subscribers and their deliveries, as in schema/postgres/0032_events.sql.
CREATE TABLE event_subscribers (
    name      TEXT PRIMARY KEY CHECK (name <> ''),
    after_seq INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE TABLE event_deliveries (
    subscriber   TEXT NOT NULL REFERENCES event_subscribers (name) ON DELETE CASCADE,
    event_id     TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    employee_id  INTEGER NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    queued_at    TEXT NOT NULL,
    next_at      TEXT NOT NULL,
    last_status  INTEGER,
    last_error   TEXT,
    done_at      TEXT,
    PRIMARY KEY (subscriber, event_id)
) STRICT;
CREATE INDEX event_deliveries_due ON event_deliveries (subscriber, next_at) WHERE state = 'pending';
CREATE INDEX event_deliveries_order ON event_deliveries (subscriber, employee_id, seq) WHERE state = 'pending';
CREATE INDEX event_deliveries_employee ON event_deliveries (employee_id);
