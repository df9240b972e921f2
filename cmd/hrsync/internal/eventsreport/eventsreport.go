// Package eventsreport prints what hrsync events shows of the joiner, mover and leaver events'
// outbox (docs/events.md): a table of events, and one event member by member.
package eventsreport

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hrsync/hrsync/sink"
)

// Table writes events as a table, one line each: its place in the feed (- until published), id,
// type, employee, when it takes effect, its state (and the run holding it) and the run that
// derived it; prefix (an account's "account X: ") and "no events" when there are none.
func Table(w io.Writer, prefix string, events []sink.Event) error {
	if len(events) == 0 {
		_, err := fmt.Fprintf(w, "%sno events\n", prefix)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tID\tTYPE\tEMPLOYEE\tEFFECTIVE\tSTATE\tRUN")
	for _, e := range events {
		seq := "-"
		if e.Seq > 0 {
			seq = fmt.Sprint(e.Seq)
		}
		state := e.State
		if e.HeldBy != "" {
			state += " by " + e.HeldBy
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", seq, e.ID, e.Type, e.EmployeeID, e.EffectiveAt.Format(time.RFC3339), state, e.RunID)
	}
	return tw.Flush()
}

// Show writes one event, member by member: those it has, and each change before and after.
func Show(w io.Writer, e sink.Event) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(name, value string) {
		if value != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", name, value)
		}
	}
	line("id", e.ID)
	line("type", e.Type)
	line("employee", fmt.Sprint(e.EmployeeID))
	line("state", e.State)
	if e.Seq > 0 {
		line("seq", fmt.Sprint(e.Seq))
	}
	line("held by", e.HeldBy)
	line("effective", e.EffectiveAt.Format(time.RFC3339))
	line("recorded", e.RecordedAt.Format(time.RFC3339))
	line("run", e.RunID)
	line("join date", e.Data.JoinDate)
	line("leaving date", e.Data.LeavingDate)
	line("reason", e.Data.Reason)
	for _, ch := range e.Data.Changes {
		line("changed", fmt.Sprintf("%s %s → %s", ch.Member, ch.Before, ch.After))
	}
	return tw.Flush()
}

// Args reads hrsync events' arguments after its flags: the verb (list when none), the id show
// takes, and the flags given after them (hrsync events release --run X), which fs sets; then
// checks them, and --state.
func Args(fs *flag.FlagSet) (verb, id string, err error) {
	args := fs.Args()
	verb = "list"
	if len(args) > 0 {
		verb, args = args[0], args[1:]
	}
	if (verb == "show" || verb == "deliveries" || verb == "replay") && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", "", fmt.Errorf("events: %w", err)
	}
	if rest := fs.Args(); len(rest) > 0 {
		return "", "", errors.New("events: unexpected arguments " + strings.Join(rest, " "))
	}
	switch verb {
	case "list", "show", "release", "publish", "deliveries", "replay":
	default:
		return "", "", errors.New("events: unknown " + verb + "; want list, show ID, release, publish, deliveries or replay")
	}
	if verb == "show" && id == "" {
		return "", "", errors.New("events show: give the event's id (hrsync events lists them)")
	}
	states, want := []string{"", sink.EventPending, sink.EventHeld, sink.EventPublished, sink.EventWithdrawn}, "pending, held, published or withdrawn"
	if verb == "deliveries" || verb == "replay" {
		states, want = []string{"", sink.DeliveryPending, sink.DeliveryDelivered, sink.DeliveryDead}, "pending, delivered or dead"
	}
	if state := fs.Lookup("state").Value.String(); !slices.Contains(states, state) {
		return "", "", errors.New("events " + verb + ": --state " + state + ": want " + want)
	}
	return verb, id, nil
}

// Deliveries writes webhook deliveries as a table, one line each: the event's place in the
// feed, id and type, the subscriber, the delivery's state and attempts, and the last failure;
// prefix (an account's "account X: ") and "no deliveries" when there are none.
func Deliveries(w io.Writer, prefix string, ds []sink.Delivery) error {
	if len(ds) == 0 {
		_, err := fmt.Fprintf(w, "%sno deliveries\n", prefix)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tEVENT\tTYPE\tSUBSCRIBER\tSTATE\tATTEMPTS\tNEXT\tLAST FAILURE")
	for _, d := range ds {
		next := "-"
		if d.State == sink.DeliveryPending {
			next = d.NextAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", d.Event.Seq, d.Event.ID, d.Event.Type, d.Subscriber, d.State,
			d.Attempts, next, d.LastError)
	}
	return tw.Flush()
}

// Released writes what hrsync events release did, or the error it ends with: one line saying
// that nothing was held (for run, when given) when that is why.
func Released(w io.Writer, prefix, run string, released, published int64, err error) error {
	if errors.Is(err, sink.ErrNoHeldEvents) {
		what := "no events are held"
		if run != "" {
			what = "run " + run + " holds no events"
		}
		return fmt.Errorf("events release: %s (hrsync events --state held lists them)", what)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%sreleased %d held events; %d published now, the rest when their time comes\n", prefix, released, published)
	return err
}
