// Package events runs the worker's side of the joiner, mover and leaver events
// (docs/events.md): a load of employees derives them into the warehouse's outbox in its own
// transaction (sink), and the job here publishes those whose time has come — a leaving at the
// local midnight after the last day, a joining on the first day — from the worker's schedule,
// so that they go out on time across restarts (they are rows, not timers).
package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/hrsync/hrsync/sync/runner"
)

// JobName is the job's name in logs and in the task label of the job metrics.
const JobName = "events"

// Every is how often the job looks for events that have come due: an event is published
// within this long of its time.
const Every = time.Minute

// Store is what the job needs of the warehouse.
type Store interface {
	// PublishDue publishes the pending events whose time has come and says how many.
	PublishDue(ctx context.Context) (int64, error)
	// HeldEvents counts the events the mass-leaver brake holds.
	HeldEvents(ctx context.Context) (int64, []string, error)
}

// Job publishes the events that have come due, at start and every minute, and tells published
// (when not nil) when it did. It takes no lock: a publication and a load's serialize on the
// warehouse's writes, and one publishes what the other did not.
func Job(store Store, m *Metrics, log *slog.Logger, published func()) runner.Job {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return runner.Job{Name: JobName, Trigger: runner.Every(Every), Run: func(ctx context.Context) error {
		n, err := store.PublishDue(ctx)
		if err != nil {
			log.Error("events: publish the events that have come due", "err", err)
			return err
		}
		if n > 0 {
			log.Info("events published as they came due", "published", n)
			if published != nil {
				published()
			}
		}
		held, _, err := store.HeldEvents(ctx)
		if err != nil {
			log.Error("events: count the held events", "err", err)
			return err
		}
		m.held(held)
		return nil
	}}
}
