package personal

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/server"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/retention"
)

// summaryKeys are keys of every kind of scope: denied classes, an allow list over two
// collections, a deny list of a name, and full access.
var summaryKeys = []config.KeyScope{
	{Name: "analytics", Scope: server.Scope{DenyClasses: []v1.Class{v1.Identifying, v1.FreeText, v1.Financial, v1.Health}, ReadOnly: true}},
	{Name: "directory", Scope: server.Scope{Collections: []string{"employees", "departments"}, Fields: []string{"id", "first_name", "job_title", "name"}, ReadOnly: true}},
	{Name: "no-email", Scope: server.Scope{Deny: []string{"email"}, ReadOnly: true}},
	{Name: "admin"},
}

// TestSummaryIsTheInventory: the summary's figures are the inventory's: each table and class
// of personal data of the inventory once, in its order, either on a row of its own or, for a
// history, on its table's row that says it stands for it too (History); its columns the
// inventory's rows of that class; the tables with no personal data named, and no other; its
// members the declared ones of that class; and a collection's rows name the keys that read the
// class, tables serve does not serve none.
func TestSummaryIsTheInventory(t *testing.T) {
	decls, err := v1.NewDeclarations(v1.Members{"employees": {"cost_centre": v1.Employment, "diagnosis_code": v1.Health}})
	if err != nil {
		t.Fatal(err)
	}
	six, _ := retention.ParsePeriod("6y")
	rules := retention.Rules{Leavers: map[v1.Class]retention.Period{v1.Identifying: six}}
	sum, err := Summary(rules, decls, summaryKeys)
	if err != nil {
		t.Fatal(err)
	}
	rows := sum.Rows
	for _, p := range summaryProblems(sum, sink.InventoryOf(decls)) {
		t.Error(p)
	}
	if !slices.ContainsFunc(rows, func(r SummaryRow) bool { return r.History == "employees_history" }) {
		t.Error("employees_history, of the same classes as employees, is not folded into its rows")
	}
	find := func(table string, c v1.Class) SummaryRow {
		for _, r := range rows {
			if r.Table == table && r.Class == c {
				return r
			}
		}
		t.Fatalf("no row %s %s", table, c)
		return SummaryRow{}
	}
	for _, tc := range []struct {
		table      string
		class      v1.Class
		members    int
		undeclared bool
		keys       []string // nil: not served
		retention  string
	}{
		// id, first_name, last_name, email, age; the nested people's names and emails
		{"employees", v1.Identifying, 10, true, []string{"directory", "no-email", "admin"}, "leavers: 6y after leaving"},
		{"employees", v1.Health, 1, false, []string{"no-email", "admin"}, "kept: no retention rule reaches it"},
		{"employees", v1.Employment, 27, false, []string{"analytics", "directory", "no-email", "admin"}, "kept"},
		{"sicknesses", v1.Health, 5, true, []string{"no-email", "admin"}, "kept: no retention rule reaches it"},
		{"sicknesses", v1.Employment, 9, false, []string{"analytics", "no-email", "admin"}, "kept"},
		{"salaries", v1.Financial, 0, true, []string{"no-email", "admin"}, "kept: no retention rule reaches it"},
		{"departments", v1.Identifying, 0, true, []string{"directory", "no-email", "admin"}, "kept: no retention rule reaches it"},
		{"onboarding_rows", v1.Identifying, -1, false, nil, "leavers: 6y after leaving"},
	} {
		r := find(tc.table, tc.class)
		if r.Members != tc.members || r.Undeclared != tc.undeclared || !slices.Equal(r.Keys, tc.keys) || (r.Keys == nil) != (tc.keys == nil) ||
			r.Served != (tc.keys != nil) || r.Retention != tc.retention {
			t.Errorf("%s %s: %+v\nwant members %d (undeclared %v), keys %q, retention %q", tc.table, tc.class, r, tc.members, tc.undeclared, tc.keys, tc.retention)
		}
	}
	// Members are the declarations' of the class, id among the not personal.
	for _, r := range rows {
		fields, extra, ok := decls.Declared(strings.TrimSuffix(r.Table, "_history"))
		if !ok {
			if r.Members != -1 || r.Undeclared {
				t.Errorf("%s: members %d of a table that is no collection", r.Table, r.Members)
			}
			continue
		}
		n := 0
		for _, f := range fields {
			if f.Class == r.Class {
				n++
			}
			if f.Nested != nil {
				for _, cf := range f.Nested.Fields {
					if cf.Class == r.Class {
						n++
					}
				}
			}
		}
		if r.Members != n || r.Undeclared != (extra == r.Class) {
			t.Errorf("%s %s: members %d (undeclared %v), want %d (%v)", r.Table, r.Class, r.Members, r.Undeclared, n, extra == r.Class)
		}
	}
	// A rule that reaches some of a class's columns and not others says so, with the counts.
	ninety, _ := retention.ParsePeriod("90d")
	sum, err = Summary(retention.Rules{OnboardingFiles: ninety}, v1.Declarations{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Rows {
		if r.Table == "onboarding_rows" && r.Class == v1.FreeText {
			if want := "kept: no retention rule reaches it (1 column); onboarding: 90d after the file's last change (1 column)"; r.Retention != want {
				t.Errorf("onboarding_rows free_text: %q, want %q", r.Retention, want)
			}
		}
		if r.Served && len(r.Keys) != 0 {
			t.Errorf("%s %s: keys %q, none given", r.Table, r.Class, r.Keys)
		}
	}
}

// TestWriteSummaryFormats: every format writes the rows of Summary, a folded history said in
// each, and the tables with no personal data; the CSV alone accounts for every column of personal
// data of the inventory (read back, summaryProblems finds nothing); none is written for an
// unknown format, and a key whose scope does not compile is an error naming it.
func TestWriteSummaryFormats(t *testing.T) {
	sum, err := Summary(retention.Rules{}, v1.Declarations{}, summaryKeys)
	if err != nil {
		t.Fatal(err)
	}
	rows := sum.Rows
	var b bytes.Buffer
	if err := WriteSummary(&b, "csv", retention.Rules{}, v1.Declarations{}, summaryKeys); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 1+len(rows)+len(sum.NoPersonal) || strings.Join(recs[0], ",") != "table,class,columns,members,retention,serve keys,history" {
		t.Fatalf("csv: %d rows, %v, header %q", len(recs), err, recs[0])
	}
	var back InventorySummary
	for i, rec := range recs[1:] {
		if rec[1] == "none" {
			back.NoPersonal = append(back.NoPersonal, rec[0])
			if rec[2] != "0" {
				t.Errorf("csv row %d %q: columns of a table with no personal data", i+1, rec)
			}
			continue
		}
		c, err := v1.ParseClass(rec[1])
		n, err2 := strconv.Atoi(rec[2])
		if err != nil || err2 != nil {
			t.Fatalf("csv row %d %q: %v %v", i+1, rec, err, err2)
		}
		back.Rows = append(back.Rows, SummaryRow{Table: rec[0], Class: c, Columns: n, History: rec[6]})
		if i >= len(rows) {
			t.Fatalf("csv row %d %q after the rows of personal data", i+1, rec)
		}
		r := rows[i]
		if rec[0] != r.Table || rec[1] != r.Class.String() || rec[2] != strconv.Itoa(r.Columns) || rec[6] != r.History {
			t.Errorf("csv row %d %q, want %s %s %d %s", i+1, rec, r.Table, r.Class, r.Columns, r.History)
		}
		switch {
		case !r.Served && rec[5] != "not served",
			r.Served && rec[5] != strings.Join(r.Keys, ", ") && !(len(r.Keys) == 0 && rec[5] == "none"):
			t.Errorf("csv row %d keys %q, want %q (served %v)", i+1, rec[5], r.Keys, r.Served)
		}
	}
	for _, p := range summaryProblems(back, sink.InventoryOf(v1.Declarations{})) {
		t.Errorf("read back from the csv: %s", p)
	}

	b.Reset()
	if err := WriteSummary(&b, "text", retention.Rules{}, v1.Declarations{}, summaryKeys); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 1+len(rows)+3 || !strings.HasPrefix(lines[0], "TABLE") || lines[1+len(rows)] != "" {
		t.Fatalf("text: %d lines, header %q", len(lines), lines[0])
	}
	for i, r := range rows {
		table := r.Table
		if r.History != "" {
			table += " (and its history)"
		}
		if !strings.HasPrefix(lines[1+i], table+"  ") || strings.Fields(strings.TrimPrefix(lines[1+i], table))[0] != r.Class.String() {
			t.Errorf("text line %d %q, want %s %s …", i+1, lines[1+i], table, r.Class)
		}
	}
	if !strings.HasPrefix(lines[len(lines)-2], `"(and its history)": `) {
		t.Errorf("text: no note on the folded histories: %q", lines[len(lines)-2])
	}
	if want := "No personal data in: " + strings.Join(sum.NoPersonal, ", ") + "."; lines[len(lines)-1] != want {
		t.Errorf("text ends %q, want %q", lines[len(lines)-1], want)
	}

	b.Reset()
	if err := WriteSummary(&b, "markdown", retention.Rules{}, v1.Declarations{}, summaryKeys); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2+len(rows)+4 || lines[0] != "| table | class | columns | members | retention | serve keys |" {
		t.Fatalf("markdown: %d lines, header %q", len(lines), lines[0])
	}
	if want := "| `employees` (and its history) | identifying | 7 | 10 + undeclared | kept: no retention configured | directory, no-email, admin |"; !slices.Contains(lines, want) {
		t.Errorf("markdown has no line %q", want)
	}
	if want := "No personal data in: `schema_migrations`, "; !strings.HasPrefix(lines[len(lines)-1], want) || strings.Count(lines[len(lines)-1], "`") != 2*len(sum.NoPersonal) {
		t.Errorf("markdown ends %q, want %q… naming %d tables", lines[len(lines)-1], want, len(sum.NoPersonal))
	}
	b.Reset()
	err = WriteSummary(&b, "xml", retention.Rules{}, v1.Declarations{}, summaryKeys)
	if !errors.Is(err, ErrFormat) || b.Len() != 0 {
		t.Errorf("xml: %v, wrote %d bytes", err, b.Len())
	}
	bad := []config.KeyScope{{Name: "broken", Scope: server.Scope{Fields: []string{"first_name"}}}}
	if err := WriteSummary(&b, "text", retention.Rules{}, v1.Declarations{}, bad); err == nil || !strings.Contains(err.Error(), "serve key broken") || b.Len() != 0 {
		t.Errorf("a scope that does not compile: %v, wrote %d bytes", err, b.Len())
	}
}

// summaryProblems are the ways sum fails to account for every row of items: each table and class of
// personal data on exactly one row (a history's on its table's row that names it), in the
// inventory's order, with as many columns as items has of it; every table with no personal
// data in NoPersonal, in order, and no other table there.
func summaryProblems(sum InventorySummary, items []sink.InventoryItem) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	columns := map[string]int{}
	var want, tables []string
	for _, it := range items {
		if !slices.Contains(tables, it.Table) {
			tables = append(tables, it.Table)
		}
		if it.Class == v1.NotPersonal {
			continue
		}
		k := it.Table + " " + it.Class.String()
		if columns[k] == 0 {
			want = append(want, k)
		}
		columns[k]++
	}
	var got []string
	for _, r := range sum.Rows {
		if r.Class == v1.NotPersonal {
			fail("%s: a not_personal row", r.Table)
		}
		stands := []string{r.Table}
		if r.History != "" {
			if r.History != r.Table+"_history" {
				fail("%s %s: history %q", r.Table, r.Class, r.History)
			}
			stands = append(stands, r.History)
		}
		for _, table := range stands {
			k := table + " " + r.Class.String()
			got = append(got, k)
			if r.Columns != columns[k] {
				fail("%s: %d columns, the inventory %d", k, r.Columns, columns[k])
			}
		}
	}
	slices.Sort(want)
	if slices.Sort(got); !slices.Equal(got, want) {
		fail("tables and classes of personal data %q\nwant %q", got, want)
	}
	var none []string
	for _, table := range tables {
		if !slices.ContainsFunc(items, func(it sink.InventoryItem) bool { return it.Table == table && it.Class != v1.NotPersonal }) {
			none = append(none, table)
		}
	}
	if !slices.Equal(sum.NoPersonal, none) {
		fail("no personal data in %q\nwant %q", sum.NoPersonal, none)
	}
	return problems
}

// TestSummaryCoversAndFolds: summaryProblems finds a summary that drops a table's class of
// personal data, or a history's, or names a table that holds some as holding none; and a history
// is folded only where its classes, columns and retention are its table's.
func TestSummaryCoversAndFolds(t *testing.T) {
	items := sink.InventoryOf(v1.Declarations{})
	sum, err := Summary(retention.Rules{}, v1.Declarations{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := summaryProblems(sum, items); len(p) != 0 {
		t.Fatalf("the summary itself: %q", p)
	}
	for name, broken := range map[string]func(InventorySummary) InventorySummary{
		"a class dropped": func(s InventorySummary) InventorySummary {
			i := slices.IndexFunc(s.Rows, func(r SummaryRow) bool { return r.Table == "sicknesses" && r.Class == v1.Health })
			s.Rows = slices.Delete(slices.Clone(s.Rows), i, i+1)
			return s
		},
		"a history dropped": func(s InventorySummary) InventorySummary {
			s.Rows = slices.Clone(s.Rows)
			for i := range s.Rows {
				if s.Rows[i].Table == "employees" {
					s.Rows[i].History = ""
				}
			}
			return s
		},
		"a personal table said to hold none": func(s InventorySummary) InventorySummary {
			s.Rows = slices.DeleteFunc(slices.Clone(s.Rows), func(r SummaryRow) bool { return r.Table == "erased_identities" })
			s.NoPersonal = append(slices.Clone(s.NoPersonal), "erased_identities")
			return s
		},
		"a table with none not named": func(s InventorySummary) InventorySummary {
			s.NoPersonal = slices.DeleteFunc(slices.Clone(s.NoPersonal), func(t string) bool { return t == "locks" })
			return s
		},
	} {
		if len(summaryProblems(broken(sum), items)) == 0 {
			t.Errorf("%s: summaryProblems finds nothing wrong", name)
		}
	}

	row := func(table string, c v1.Class, columns int, ret string) SummaryRow {
		return SummaryRow{Table: table, Class: c, Columns: columns, Members: -1, Retention: ret}
	}
	got := foldHistories([]SummaryRow{
		row("a", v1.NotPersonal, 3, "kept"), row("a", v1.Identifying, 2, "kept"),
		row("a_history", v1.NotPersonal, 4, "kept"), row("a_history", v1.Identifying, 2, "kept"), // the same: folded
		row("b", v1.Identifying, 2, "kept"),
		row("b_history", v1.Identifying, 2, "kept"), row("b_history", v1.Health, 1, "kept"), // a class more
		row("c", v1.Identifying, 2, "kept"),
		row("c_history", v1.Identifying, 3, "kept"), // a column more
		row("d", v1.Identifying, 2, "kept"),
		row("d_history", v1.Identifying, 2, "leavers: 6y after leaving"), // another retention
		row("e", v1.NotPersonal, 2, "kept"),
		row("e_history", v1.Identifying, 1, "kept"), // personal only in its history
		row("f", v1.NotPersonal, 2, "kept"), row("f_history", v1.NotPersonal, 3, "kept"),
	})
	var lines []string
	for _, r := range got.Rows {
		lines = append(lines, r.Table+" "+r.Class.String()+" "+strconv.Itoa(r.Columns)+" "+r.History)
	}
	want := []string{
		"a identifying 2 a_history",
		"b identifying 2 ", "b_history identifying 2 ", "b_history health 1 ",
		"c identifying 2 ", "c_history identifying 3 ",
		"d identifying 2 ", "d_history identifying 2 ",
		"e_history identifying 1 ",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("folded\n %s\nwant\n %s", strings.Join(lines, "\n "), strings.Join(want, "\n "))
	}
	if want := []string{"e", "f", "f_history"}; !slices.Equal(got.NoPersonal, want) {
		t.Errorf("no personal data in %q, want %q", got.NoPersonal, want)
	}
}
