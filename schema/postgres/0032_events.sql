-- Joiner, mover and leaver events (docs/events.md). A complete, published load of employees
-- derives them in its own transaction: event_state holds each person as the last events told
-- it, events is the outbox. An event is published (given its place, seq, in the feed) when it
-- is due and not held; one dated ahead (a leaving that takes effect at local midnight) waits
-- pending until then. event_baseline records the load that took the first state, which emits
-- nothing: the people already there did not join then.
CREATE TABLE event_baseline (
    id       integer PRIMARY KEY CHECK (id = 1),
    taken_at timestamptz NOT NULL,
    run_id   text
);
CREATE TABLE event_state (
    employee_id        bigint PRIMARY KEY,
    present            boolean NOT NULL,
    status             text,
    join_date          date,
    leaving_date       date,
    department_id      bigint,
    division_id        bigint,
    location_id        bigint,
    line_manager_id    bigint,
    job_title          text,
    working_pattern_id bigint,
    left_at            timestamptz
);
CREATE TABLE events (
    id           text PRIMARY KEY CHECK (id <> ''),
    seq          bigint UNIQUE,
    employee_id  bigint NOT NULL,
    type         text NOT NULL CHECK (type IN ('joiner.scheduled', 'joiner.effective', 'joiner.cancelled',
        'mover', 'leaver.scheduled', 'leaver.effective', 'leaver.rescheduled', 'leaver.cancelled', 'rehire')),
    effective_at timestamptz NOT NULL,
    recorded_at  timestamptz NOT NULL,
    run_id       text,
    state        text NOT NULL CHECK (state IN ('pending', 'held', 'published', 'withdrawn')),
    held_by      text,
    data         text NOT NULL,
    CHECK ((state = 'published') = (seq IS NOT NULL))
);
CREATE INDEX events_due ON events (effective_at) WHERE state = 'pending';
CREATE INDEX events_employee ON events (employee_id);

-- Webhook subscribers (events.webhooks) and their deliveries: each subscriber's cursor in the
-- feed (after_seq: the events queued for it), and a row per event queued for it, which the
-- worker delivers in order per employee, retrying until delivered or past the retry period
-- (dead). Deleting an event (an erasure) deletes its deliveries.
CREATE TABLE event_subscribers (
    name      text PRIMARY KEY CHECK (name <> ''),
    after_seq bigint NOT NULL DEFAULT 0
);
CREATE TABLE event_deliveries (
    subscriber   text NOT NULL REFERENCES event_subscribers (name) ON DELETE CASCADE,
    event_id     text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    seq          bigint NOT NULL,
    employee_id  bigint NOT NULL,
    state        text NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts     integer NOT NULL DEFAULT 0,
    queued_at    timestamptz NOT NULL,
    next_at      timestamptz NOT NULL,
    last_status  integer,
    last_error   text,
    done_at      timestamptz,
    PRIMARY KEY (subscriber, event_id)
);
CREATE INDEX event_deliveries_due ON event_deliveries (subscriber, next_at) WHERE state = 'pending';
CREATE INDEX event_deliveries_order ON event_deliveries (subscriber, employee_id, seq) WHERE state = 'pending';
CREATE INDEX event_deliveries_employee ON event_deliveries (employee_id);
