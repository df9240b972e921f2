package personal

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// ParseErasable reads a comma-separated list of erasable classes (hrsync erase --classes): nil,
// every erasable class, when it is empty. A name that is not an erasable class is an error
// naming the erasable ones.
func ParseErasable(list string) ([]v1.Class, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []v1.Class
	for _, name := range strings.Split(list, ",") {
		c, err := v1.ParseClass(name)
		if err != nil || !c.Erasable() {
			return nil, fmt.Errorf("--classes %q: %q is not an erasable class (want %s)", list, strings.TrimSpace(name), erasableNames())
		}
		out = append(out, c)
	}
	return out, nil
}

// erasableNames are the erasable classes' names, for messages.
func erasableNames() string {
	var names []string
	for _, c := range v1.Classes {
		if c.Erasable() {
			names = append(names, c.String())
		}
	}
	return strings.Join(names, ", ")
}

// PrintErased says what erasing employee did: the erasures it recorded, the classes (nil: every
// erasable one) and the rows changed per table, each line after prefix; never a value.
func PrintErased(w io.Writer, prefix string, employee int64, classes []v1.Class, res sink.ErasureResult) error {
	ids := make([]string, len(res.IDs))
	for i, id := range res.IDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	if classes == nil {
		classes = slices.DeleteFunc(slices.Clone(v1.Classes), func(c v1.Class) bool { return !c.Erasable() })
	}
	fmt.Fprintf(w, "%serased employee %d (erasure %s; %s); rows changed:\n", prefix, employee, strings.Join(ids, ","), classList(classes))
	return PrintRows(w, prefix, res.Rows)
}

// PrintRows prints the rows changed per table, one table a line, in the order of their names.
func PrintRows(w io.Writer, prefix string, rows map[string]int64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	tables := make([]string, 0, len(rows))
	for t := range rows {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	for _, t := range tables {
		fmt.Fprintf(tw, "%s  %s\t%d\n", prefix, t, rows[t])
	}
	return tw.Flush()
}

// PrintLifted says that erasure e was lifted, and what that means.
func PrintLifted(w io.Writer, prefix string, e sink.Erasure) {
	fmt.Fprintf(w, "%slifted erasure %d (%s; %s): the next sync brings the source's current values back; "+
		"what the history held stays erased\n", prefix, e.ID, e.Subject(), classList(e.Classes))
}

// PrintErasures lists the erasures (sink.Store.Erasures): what, whom, why and whether they still
// hold.
func PrintErasures(w io.Writer, prefix string, list []sink.Erasure) error {
	if len(list) == 0 {
		fmt.Fprintf(w, "%sno erasures\n", prefix)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, prefix+"ID\tSUBJECT\tCLASSES\tCAUSE\tERASED\tLIFTED\tREASON")
	for _, e := range list {
		lifted := "-"
		reason := e.Reason
		if e.LiftedAt != "" {
			lifted = e.LiftedAt
			reason += " (lifted: " + e.LiftReason + ")"
		}
		fmt.Fprintf(tw, "%s%d\t%s\t%s\t%s\t%s\t%s\t%s\n", prefix, e.ID, e.Subject(), classList(e.Classes), e.Cause, e.ErasedAt, lifted, config.OneLine(reason))
	}
	return tw.Flush()
}

func classList(classes []v1.Class) string {
	names := make([]string, len(classes))
	for i, c := range classes {
		names[i] = c.String()
	}
	return strings.Join(names, ",")
}
