package personal

import (
	"bytes"
	"encoding/csv"
	"errors"
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
// of the inventory once, in its order, its columns the inventory's rows of that class, its
// members the declared ones of that class; and a collection's rows name the keys that read the
// class, tables serve does not serve none.
func TestSummaryIsTheInventory(t *testing.T) {
	decls, err := v1.NewDeclarations(v1.Members{"employees": {"cost_centre": v1.Employment, "diagnosis_code": v1.Health}})
	if err != nil {
		t.Fatal(err)
	}
	six, _ := retention.ParsePeriod("6y")
	rules := retention.Rules{Leavers: map[v1.Class]retention.Period{v1.Identifying: six}}
	rows, err := Summary(rules, decls, summaryKeys)
	if err != nil {
		t.Fatal(err)
	}
	items := sink.InventoryOf(decls)
	columns := map[string]int{}
	var order []string
	for _, it := range items {
		k := it.Table + " " + it.Class.String()
		if columns[k] == 0 {
			order = append(order, k)
		}
		columns[k]++
	}
	total := 0
	var got []string
	for _, r := range rows {
		k := r.Table + " " + r.Class.String()
		got = append(got, k)
		total += r.Columns
		if r.Columns != columns[k] {
			t.Errorf("%s: %d columns, the inventory %d", k, r.Columns, columns[k])
		}
	}
	if total != len(items) {
		t.Errorf("the summary counts %d columns, the inventory lists %d", total, len(items))
	}
	slices.Sort(order)
	if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, order) {
		t.Errorf("tables and classes %q\nwant %q", sorted, order)
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
		{"employees_history", v1.Identifying, 10, true, nil, "leavers: 6y after leaving"},
		{"employees", v1.Health, 1, false, []string{"no-email", "admin"}, "kept: no retention rule reaches it"},
		{"employees", v1.NotPersonal, 2, false, []string{"analytics", "directory", "no-email", "admin"}, "kept"},
		{"sicknesses", v1.Health, 5, true, []string{"no-email", "admin"}, "kept: no retention rule reaches it"},
		{"sicknesses", v1.Employment, 9, false, []string{"analytics", "no-email", "admin"}, "kept"},
		{"salaries", v1.Financial, 0, true, []string{"no-email", "admin"}, "kept: no retention rule reaches it"},
		{"departments", v1.NotPersonal, 2, false, []string{"analytics", "directory", "no-email", "admin"}, "kept"},
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
		if r.Class == v1.NotPersonal {
			n = 1
		}
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
	rows, err = Summary(retention.Rules{OnboardingFiles: ninety}, v1.Declarations{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
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

// TestWriteSummaryFormats: every format writes the rows of Summary, none is written for an
// unknown format, and a key whose scope does not compile is an error naming it.
func TestWriteSummaryFormats(t *testing.T) {
	rows, err := Summary(retention.Rules{}, v1.Declarations{}, summaryKeys)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, "csv", retention.Rules{}, v1.Declarations{}, summaryKeys); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 1+len(rows) || strings.Join(recs[0], ",") != "table,class,columns,members,retention,serve keys" {
		t.Fatalf("csv: %d rows, %v, header %q", len(recs), err, recs[0])
	}
	for i, r := range rows {
		rec := recs[1+i]
		if rec[0] != r.Table || rec[1] != r.Class.String() || rec[2] != strconv.Itoa(r.Columns) {
			t.Errorf("csv row %d %q, want %s %s %d", i+1, rec, r.Table, r.Class, r.Columns)
		}
		switch {
		case !r.Served && rec[5] != "not served",
			r.Served && rec[5] != strings.Join(r.Keys, ", ") && !(len(r.Keys) == 0 && rec[5] == "none"):
			t.Errorf("csv row %d keys %q, want %q (served %v)", i+1, rec[5], r.Keys, r.Served)
		}
	}
	b.Reset()
	if err := WriteSummary(&b, "markdown", retention.Rules{}, v1.Declarations{}, summaryKeys); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2+len(rows) || lines[0] != "| table | class | columns | members | retention | serve keys |" {
		t.Fatalf("markdown: %d lines, header %q", len(lines), lines[0])
	}
	if want := "| `employees` | identifying | 7 | 10 + undeclared | kept: no retention configured | directory, no-email, admin |"; !slices.Contains(lines, want) {
		t.Errorf("markdown has no line %q", want)
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
