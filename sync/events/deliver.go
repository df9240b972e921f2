package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/events/webhook"
	"github.com/hrsync/hrsync/sync/runner"
)

// Webhooks (docs/events.md#webhooks): the worker queues each published event for every
// subscriber of events.webhooks and POSTs it, signed as the Standard Webhooks specification
// says (package webhook), at least once: a delivery is recorded as done only after the
// receiver's 2xx, so a worker killed between the two sends it again, with the same
// webhook-id, which the receiver deduplicates by. An employee's events go in order: one is not
// sent while an earlier one of theirs is still pending for that subscriber. A failed attempt is
// tried again after an exponential backoff (events.retry_backoff, 5 s, doubling to an hour,
// jittered; longer when the receiver's Retry-After asks), until the retry period has passed
// since it was queued: then it is dead (hrsync events deliveries --state dead lists the dead
// letters; hrsync events replay queues them again).

// DeliverJobName is the delivery job's name in logs and in the task label of the job metrics.
const DeliverJobName = "webhooks"

// DeliverEvery is how often the delivery job looks for work: a pass when this process has
// published events since the last, when a retry the last pass left has come due, or when the
// last pass is DeliverIdleFor old; otherwise nothing is opened (see Deliverer).
const DeliverEvery = 5 * time.Second

// DeliverIdleFor is the longest the delivery job goes without a pass: what other processes
// publish or queue (a sync or hrsync events release or replay run by hand, another worker on the
// same warehouse) goes out within it, and the delivery metrics are at most this old.
const DeliverIdleFor = time.Minute

// Defaults of DeliverOptions.
const (
	DefaultRetryFor     = 72 * time.Hour
	DefaultRetryBackoff = 5 * time.Second
	DefaultTimeout      = 10 * time.Second
	DefaultConcurrency  = 4
	// dueBatch is how many deliveries per attempt at once a pass reads at a time.
	dueBatch = 25
	// passFor bounds one pass: it stops taking new deliveries after this long, so that the
	// job's run ends and the runner's metrics and stop are timely.
	passFor = 30 * time.Second
)

// A Subscriber is one of events.webhooks.
type Subscriber struct {
	Name, URL, Secret string
	// Payload is the body of an event for this subscriber: the event as its scope lets it read
	// it, the employee (nil: no longer listed) included (source/server.EventScope.Event).
	Payload func(e v1.Event, emp *v1.Employee) ([]byte, error)
}

// DeliverStore is what delivery needs of the warehouse.
type DeliverStore interface {
	QueueDeliveries(ctx context.Context, subscribers []string) (int64, error)
	DueDeliveries(ctx context.Context, subscriber string, limit int) ([]sink.Delivery, error)
	RecordAttempt(ctx context.Context, subscriber, eventID string, a sink.Attempt) error
	DeliveryStats(ctx context.Context) ([]sink.DeliveryStats, error)
	Employees(ctx context.Context, ids []int64) (map[int64]v1.Employee, error)
}

// DeliverOptions configure delivery.
type DeliverOptions struct {
	Subscribers []Subscriber
	// RetryFor is how long after it was queued a delivery is retried before it is dead
	// (default DefaultRetryFor); Timeout bounds one attempt (default DefaultTimeout);
	// Concurrency is how many attempts go at once (default DefaultConcurrency).
	RetryFor, Timeout time.Duration
	Concurrency       int
	// Client sends the requests (default: a client with Timeout, no redirects followed).
	Client  *http.Client
	Metrics *Metrics
	Logger  *slog.Logger
	// Now is the clock (default time.Now). RetryBackoff is the wait after a first failed
	// attempt (default DefaultRetryBackoff), doubled after each next one, jittered by half, at
	// most an hour.
	Now          func() time.Time
	RetryBackoff time.Duration
	// Every is how often a Deliverer's job looks for work (default DeliverEvery).
	Every time.Duration
}

func (o DeliverOptions) withDefaults() DeliverOptions {
	if o.RetryFor <= 0 {
		o.RetryFor = DefaultRetryFor
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: o.Timeout,
			// A receiver's redirect is not followed: the signed request goes where it was configured.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Every <= 0 {
		o.Every = DeliverEvery
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	return o
}

// backoffFor is the wait after failed attempt n: cenkalti/backoff's exponential backoff from
// initial, doubling, jittered by half, at most an hour.
func backoffFor(initial time.Duration, attempt int) time.Duration {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.Multiplier, b.RandomizationFactor = initial, 2, 0.5
	b.MaxInterval, b.MaxElapsedTime = time.Hour, 0
	b.Reset()
	d := b.NextBackOff()
	for range min(attempt, 30) - 1 {
		d = b.NextBackOff()
	}
	return d
}

// A Deliverer is an account's delivery job in a worker. It keeps, between passes, what the last
// one left: when its soonest retry is due, and whether this process has published events since
// (Published). A firing with none of that, within DeliverIdleFor of the last pass, is idle: it
// opens no warehouse (a worker of a hundred accounts with webhooks spent half a core opening
// them every 5 s to find nothing).
type Deliverer struct {
	opts DeliverOptions

	mu        sync.Mutex
	passed    time.Time // when the last pass ended (zero: none yet, or it failed)
	next      time.Time // when the soonest delivery it left pending is due (zero: none)
	published bool      // this process published events since the last pass began
}

// NewDeliverer is the delivery job's state for one account's subscribers.
func NewDeliverer(opts DeliverOptions) *Deliverer {
	return &Deliverer{opts: opts.withDefaults()}
}

// Published tells the deliverer this process has published events (a load, the events job):
// the next firing passes.
func (d *Deliverer) Published() {
	d.mu.Lock()
	d.published = true
	d.mu.Unlock()
}

// Job delivers the events to the subscribers on store, a pass at start, then at the firings
// (every DeliverOptions.Every) that have work (Idle). It takes no lock: two workers' passes may send the
// same delivery, which is at least once, as promised. A worker builds it once for its trigger
// and Idle (store nil) and once a run on the run's warehouse; they share the deliverer.
func (d *Deliverer) Job(store DeliverStore) runner.Job {
	return runner.Job{Name: DeliverJobName, Trigger: runner.Every(d.opts.Every), Idle: d.idle, Run: func(ctx context.Context) error {
		d.mu.Lock()
		d.published = false
		d.mu.Unlock()
		_, next, err := deliver(ctx, store, d.opts)
		d.mu.Lock()
		defer d.mu.Unlock()
		if err != nil {
			d.passed = time.Time{} // the next firing tries again
			return err
		}
		d.passed, d.next = d.opts.Now(), next
		return nil
	}}
}

// idle says a firing would find nothing this process knows of, within DeliverIdleFor of the
// last pass.
func (d *Deliverer) idle() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.opts.Now()
	switch {
	case d.passed.IsZero() || d.published:
		return false
	case !d.next.IsZero() && !now.Before(d.next):
		return false
	}
	return now.Sub(d.passed) < DeliverIdleFor
}

// Deliver runs one pass: it queues what was published since the last, then sends what is due,
// subscriber by subscriber, until nothing is due or the pass has run passFor. It returns how
// many attempts it made.
func Deliver(ctx context.Context, store DeliverStore, opts DeliverOptions) (int, error) {
	n, _, err := deliver(ctx, store, opts.withDefaults())
	return n, err
}

// deliver is Deliver, opts with their defaults; it also returns when the soonest delivery left
// pending is due (zero: none; now or earlier: the pass stopped with deliveries due).
func deliver(ctx context.Context, store DeliverStore, opts DeliverOptions) (attempts int, next time.Time, err error) {
	names := make([]string, len(opts.Subscribers))
	for i, s := range opts.Subscribers {
		names[i] = s.Name
	}
	if len(names) == 0 {
		return 0, time.Time{}, nil
	}
	if _, err := store.QueueDeliveries(ctx, names); err != nil {
		opts.Logger.Error("webhooks: queue the events published", "err", err)
		return 0, time.Time{}, err
	}
	start := opts.Now()
	defer func() {
		stats, serr := store.DeliveryStats(ctx)
		if serr != nil {
			next = opts.Now() // not known: the next firing passes
			return
		}
		opts.Metrics.stats(opts.Now(), stats)
		for _, st := range stats {
			if !st.NextAt.IsZero() && slices.Contains(names, st.Subscriber) && (next.IsZero() || st.NextAt.Before(next)) {
				next = st.NextAt
			}
		}
	}()
	for _, sub := range opts.Subscribers {
		for opts.Now().Sub(start) < passFor {
			// A batch of due deliveries, no two of one employee's (DueDeliveries), sent
			// Concurrency at a time.
			due, err := store.DueDeliveries(ctx, sub.Name, dueBatch*opts.Concurrency)
			if err != nil {
				opts.Logger.Error("webhooks: read the deliveries due", "subscriber", sub.Name, "err", err)
				return attempts, next, err
			}
			if len(due) == 0 {
				break
			}
			// The batch's employees, read at once: each payload carries its employee's record
			// as it stands (absent: no longer listed).
			ids := make([]int64, len(due))
			for i, d := range due {
				ids[i] = d.Event.EmployeeID
			}
			emps, err := store.Employees(ctx, ids)
			if err != nil {
				opts.Logger.Error("webhooks: read the employees of the deliveries due", "subscriber", sub.Name, "err", err)
				return attempts, next, err
			}
			var wg sync.WaitGroup
			errs := make([]error, len(due))
			work := make(chan int)
			for range min(opts.Concurrency, len(due)) {
				wg.Go(func() {
					for i := range work {
						var emp *v1.Employee
						if e, ok := emps[due[i].Event.EmployeeID]; ok {
							emp = &e
						}
						errs[i] = attempt(ctx, store, opts, sub, due[i], emp)
					}
				})
			}
			for i := range due {
				work <- i
			}
			close(work)
			wg.Wait()
			attempts += len(due)
			if err := errors.Join(errs...); err != nil {
				return attempts, next, err
			}
			if err := ctx.Err(); err != nil {
				return attempts, next, err
			}
		}
	}
	return attempts, next, nil
}

// attempt sends one delivery, with its employee's record emp (nil: no longer listed), and
// records what it came to. Only a failure to record is returned: the receiver's failures are the
// delivery's, recorded.
func attempt(ctx context.Context, store DeliverStore, opts DeliverOptions, sub Subscriber, d sink.Delivery, emp *v1.Employee) error {
	log := opts.Logger.With("subscriber", sub.Name, "event_id", d.Event.ID, "type", d.Event.Type)
	body, err := sub.Payload(d.Event.Wire(), emp)
	if err != nil {
		return fmt.Errorf("webhooks: event %s: %w", d.Event.ID, err)
	}
	now := opts.Now()
	actx, cancel := context.WithTimeout(ctx, opts.Timeout)
	outcome, retryAfter, status, sendErr := webhook.Send(actx, opts.Client, sub.URL, sub.Secret, d.Event.ID, now, body)
	cancel()
	if ctx.Err() != nil {
		return ctx.Err() // stopping: the attempt is not the receiver's failure; it is sent again
	}
	a := sink.Attempt{Status: status}
	switch {
	case outcome == webhook.Delivered:
		a.Delivered = true
		opts.Metrics.delivered(sub.Name, now.Sub(d.Event.EffectiveAt))
	default:
		a.Error = fmt.Sprintf("status %d", status)
		if sendErr != nil {
			a.Error = sendErr.Error()
		}
		if outcome == webhook.Rejected {
			a.Error = "rejected: " + a.Error
		}
		wait := max(backoffFor(opts.RetryBackoff, d.Attempts+1), retryAfter)
		a.NextAt = now.Add(wait)
		if a.NextAt.Sub(d.QueuedAt) > opts.RetryFor {
			a.Dead = true
			log.Warn("webhooks: delivery dead: its retries ran out", "attempts", d.Attempts+1, "last", a.Error)
			opts.Metrics.dead(sub.Name)
		} else {
			log.Info("webhooks: delivery failed; retrying", "attempt", d.Attempts+1, "wait", wait.Round(time.Second), "last", a.Error)
			opts.Metrics.failed(sub.Name)
		}
	}
	if err := store.RecordAttempt(ctx, sub.Name, d.Event.ID, a); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	return nil
}
