package personal

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/hrsync/hrsync/sync/retention"
)

// PrintRetention writes what a retention run did (or, a dry run, would do) under rules: per
// rule, its period, how many it took and the rows per table, each line after prefix.
func PrintRetention(w io.Writer, prefix string, rules retention.Rules, res retention.Result) {
	verb, files := "erased", "deleted"
	if res.DryRun {
		verb, files = "would erase", "would delete"
		fmt.Fprintf(w, "%sdry run: nothing is changed\n", prefix)
	}
	for _, rr := range res.Rules {
		line := fmt.Sprintf("%s%s (%s): %s %s", prefix, rr.Rule, rules.Says(rr.Rule), verb, counted(rr.Subjects, rr.What))
		if rr.Rule == retention.RuleOnboardingFiles {
			line += fmt.Sprintf("; %s %s", files, counted(rr.Files, "files"))
		}
		fmt.Fprintln(w, line)
		tables := make([]string, 0, len(rr.Rows))
		for t := range rr.Rows {
			tables = append(tables, t)
		}
		slices.Sort(tables)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range tables {
			fmt.Fprintf(tw, "%s  %s\t%d\n", prefix, t, rr.Rows[t])
		}
		_ = tw.Flush()
	}
	if !res.DryRun {
		fmt.Fprintf(w, "%sthe run is in erasure_log (action retention)\n", prefix)
	}
}

// singular are the names of what retention takes, one of each.
var singular = map[string]string{"people": "person", "sicknesses": "sickness", "onboarding rows": "onboarding row", "files": "file", "columns": "column"}

// counted is n of what (a plural), in the singular for one: "1 person", "2 people".
func counted(n int, what string) string {
	if one, ok := singular[what]; ok && n == 1 {
		what = one
	}
	return fmt.Sprintf("%d %s", n, what)
}
