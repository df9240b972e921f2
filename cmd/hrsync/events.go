package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/eventsreport"
	"github.com/hrsync/hrsync/sink"
)

// eventsCommand is hrsync events: the joiner, mover and leaver events' outbox (docs/events.md).
//
//	hrsync events [list]     the newest events, every state (--state, --employee, --run, --limit)
//	hrsync events show ID    one event, whole
//	hrsync events release    let go the leaver events the mass-leaver brake holds (--run: one run's)
//	hrsync events publish    publish the events whose time has come (the worker does it on its schedule)
//	hrsync events deliveries [ID]  the webhook deliveries (--subscriber, --state pending, delivered or dead)
//	hrsync events replay [ID]      queue deliveries again: the dead ones (--subscriber, --state, an event's id)
type eventsCommand struct {
	verb     string
	id       string
	state    string
	employee int64
	runID    string
	sub      string
	limit    int
	account  string
	err      error
}

func (c *eventsCommand) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.state, "state", "", "list the events in this state only: pending, held, published or withdrawn;\n"+
		"deliveries: pending, delivered or dead (replay: default dead)")
	fs.Int64Var(&c.employee, "employee", 0, "list one employee's events only")
	fs.StringVar(&c.runID, "run", "", "the sync run (its run_id) whose events to list, or to release")
	fs.StringVar(&c.sub, "subscriber", "", "the webhook subscriber whose deliveries to list or replay")
	fs.IntVar(&c.limit, "limit", 50, "list at most this many, the newest")
	fs.StringVar(&c.account, "account", "", "the account whose events (needed when the configuration has several)")
}

// parsed reads the verb, and the flags after it (hrsync events release --run X).
func (c *eventsCommand) parsed(fs *flag.FlagSet) {
	if c.verb, c.id, c.err = eventsreport.Args(fs); c.err != nil {
		c.err = &usageError{c.err.Error()}
	}
}

func (c *eventsCommand) run(ctx context.Context, cfg config.Settings, stdout, stderr io.Writer) error {
	if c.err != nil {
		return c.err
	}
	a, err := oneAccount(cfg, c.account, "events", "whose events")
	if err != nil {
		return err
	}
	store, err := account.OpenExisting(ctx, a, a.Logger(cfg.Logger(stderr)))
	if err != nil {
		return err
	}
	defer store.Close()
	switch c.verb {
	case "release":
		released, published, err := store.ReleaseEvents(ctx, c.runID)
		return a.Wrap(eventsreport.Released(stdout, a.LinePrefix(), c.runID, released, published, err))
	case "deliveries":
		ds, err := store.ListDeliveries(ctx, sink.DeliveryFilter{Subscriber: c.sub, State: c.state, EventID: c.id, Limit: c.limit})
		if err != nil {
			return a.Wrap(err)
		}
		return eventsreport.Deliveries(stdout, a.LinePrefix(), ds)
	case "replay":
		state := c.state // the dead ones, unless an event is named: it is sent again, delivered or not
		if state == "" && c.id == "" {
			state = sink.DeliveryDead
		}
		n, err := store.ReplayDeliveries(ctx, sink.DeliveryFilter{Subscriber: c.sub, State: state, EventID: c.id})
		if err != nil {
			return a.Wrap(err)
		}
		fmt.Fprintf(stdout, "%squeued %d deliveries again; the worker sends them at its next pass\n", a.LinePrefix(), n)
		return nil
	case "publish":
		n, err := store.PublishDue(ctx)
		if err != nil {
			return a.Wrap(err)
		}
		fmt.Fprintf(stdout, "%spublished %d events\n", a.LinePrefix(), n)
		return nil
	}
	f := sink.EventFilter{State: c.state, EmployeeID: c.employee, RunID: c.runID, ID: c.id, Limit: c.limit}
	events, err := store.ListEvents(ctx, f)
	if err != nil {
		return a.Wrap(err)
	}
	if c.verb == "show" {
		if len(events) == 0 {
			return a.Wrap(fmt.Errorf("events show: no event %s", c.id))
		}
		return eventsreport.Show(stdout, events[0])
	}
	return eventsreport.Table(stdout, a.LinePrefix(), events)
}
