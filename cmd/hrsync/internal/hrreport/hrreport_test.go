package hrreport_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/hrreport"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

var generated = time.Date(2025, 6, 16, 9, 30, 0, 0, time.UTC)

// pages renders the people account's report (sinktest.People, with the absence models or
// their stand-ins) from a warehouse of backend: empty first, then without names, then with.
func pages(t *testing.T, backend string) (empty, ids, names string) {
	t.Helper()
	s := sinktest.Store(t, backend, sink.Options{})
	asOf, _ := time.Parse(time.DateOnly, sinktest.PeopleAsOf)
	render := func(withNames bool) string {
		t.Helper()
		r, err := s.PeopleReport(context.Background(), sink.PeopleReportOptions{AsOf: asOf, Months: 24, BradfordTop: 20, Names: withNames})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := hrreport.Render(&b, r, hrreport.Options{Generated: generated, Version: "test", Names: withNames}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	empty = render(false)
	sinktest.People(t, s)
	sinktest.AbsenceContract(t, s)
	return empty, render(false), render(true)
}

// external is whatever in a page would make a browser fetch something: an address, a src or
// href attribute, a CSS url() or @import, a script, a link or an import map.
var external = regexp.MustCompile(`(?i)https?:|//[a-z0-9.-]+\.[a-z]{2,}|\bsrc\s*=|\bhref\s*=|url\s*\(|@import|<script|<link|<iframe|<object|<embed|<img|srcset`)

// TestReportPages: the page of a warehouse is the same on both backends; it refers to nothing
// outside itself; its lists of people show ids and departments, names only when asked for and
// never an erased person's; an empty warehouse's page says there is no data yet.
func TestReportPages(t *testing.T) {
	var got [][3]string
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			e, i, n := pages(t, backend)
			got = append(got, [3]string{e, i, n})
		})
	}
	if len(got) != len(sinktest.Backends) || t.Failed() {
		t.FailNow()
	}
	for k := range got[0] {
		if got[0][k] != got[1][k] {
			t.Errorf("page %d differs between the backends:\n%s\n----\n%s", k, got[0][k], got[1][k])
		}
	}
	empty, ids, names := got[0][0], got[0][1], got[0][2]
	for what, page := range map[string]string{"empty": empty, "ids": ids, "names": names} {
		if m := external.FindAllString(page, -1); m != nil {
			t.Errorf("%s page refers outside itself: %q", what, m)
		}
	}
	if !strings.Contains(empty, `id="no-data"`) || strings.Contains(empty, "<svg") {
		t.Errorf("empty warehouse: no 'no data yet' section, or charts:\n%s", empty)
	}
	for _, want := range []string{`id="chart-headcount"`, `id="chart-headcount-departments"`, `id="chart-fte"`, `id="chart-movements"`, `id="chart-turnover"`, `id="chart-absence"`,
		`<td>106</td>`, `<td class="text"><bdi>Support</bdi></td>`, "Barbara Liskov"} {
		if !strings.Contains(names, want) {
			t.Errorf("the page with names lacks %s", want)
		}
		if want != "Barbara Liskov" && !strings.Contains(ids, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for _, name := range []string{"Liskov", "Barbara", "Turing", "Lovelace", "Erased", "Person"} {
		if strings.Contains(ids, name) {
			t.Errorf("the page without names names %s", name)
		}
	}
	for _, name := range []string{"Erased", "Person"} { // 104's identifying data is erased
		if strings.Contains(names, name) {
			t.Errorf("the page with names names the erased %s", name)
		}
	}
}

// TestReportWithoutAbsenceModels: a warehouse without the absence models (before migration
// 0023) gets the rest of the report and says so.
func TestReportWithoutAbsenceModels(t *testing.T) {
	r := sink.PeopleReport{AsOf: "2025-06-15", Months: []string{"2025-05-01", "2025-06-01"}, Employees: 1,
		Headcount: []sink.DepartmentMonth{{Month: "2025-06-01", Department: "Sales", Headcount: 1, FTE: 1}}}
	var b bytes.Buffer
	if err := hrreport.Render(&b, r, hrreport.Options{Generated: generated}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `id="absence-unavailable"`) || !strings.Contains(b.String(), `id="chart-headcount"`) {
		t.Errorf("want the headcount and absence models not available:\n%s", b.String())
	}
	if got := hrreport.Summary(r); got != "as of 2025-06-15, 2 months; absence models not available in this warehouse" {
		t.Errorf("summary %q", got)
	}
}

// TestReportWriteFile: the file is written whole, private (0600) whatever the umask, and
// replaces one already there; no temporary file is left beside it.
func TestReportWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := sink.PeopleReport{AsOf: "2025-06-15", Months: []string{"2025-06-01"}}
	if err := hrreport.WriteFile(path, r, hrreport.Options{Generated: generated}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || !bytes.Contains(b, []byte("No data yet")) {
		t.Errorf("file:\n%s", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left in the folder: %v", entries)
	}
}

// TestReportDepartmentScales: the total has a chart of its own; the departments' headcount and
// FTE charts draw the six largest departments and the other four as one grey dashed series,
// scaled to the largest series they draw, not to the total (which flattened them).
//
// Worked: ten departments of 10 people (FTE 9): the total is 100 (a scale to 100); the other
// four together are 40 people (scale 40) and FTE 36 (scale 40, ticks of 10).
func TestReportDepartmentScales(t *testing.T) {
	r := sink.PeopleReport{AsOf: "2025-06-15", Months: []string{"2025-05-01", "2025-06-01"}, Employees: 100}
	for i := range 10 {
		for _, m := range r.Months {
			r.Headcount = append(r.Headcount, sink.DepartmentMonth{Month: m, Department: fmt.Sprintf("Dept %02d", i),
				Headcount: 10, FTE: 9})
		}
	}
	var b bytes.Buffer
	if err := hrreport.Render(&b, r, hrreport.Options{Generated: generated}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	charts := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<figure id="chart-([a-z-]+)">(.*?)</figure>`).FindAllStringSubmatch(page, -1) {
		charts[m[1]] = m[2]
	}
	// The top of the y axis: the last grid label (they run from 0 up).
	top := func(chart string) string {
		labels := regexp.MustCompile(`<text class="axis-y"[^>]*>([^<]+)</text>`).FindAllStringSubmatch(charts[chart], -1)
		if len(labels) == 0 {
			t.Fatalf("chart %s: no y axis labels", chart)
		}
		return labels[len(labels)-1][1]
	}
	for chart, want := range map[string]string{"headcount": "100", "headcount-departments": "40", "fte": "40"} {
		if got := top(chart); got != want {
			t.Errorf("chart %s's scale tops at %s, want %s", chart, got, want)
		}
	}
	if strings.Contains(charts["headcount"], "Dept 00") || strings.Count(charts["headcount"], "<polyline") != 1 {
		t.Errorf("the total's chart should draw the total only:\n%s", charts["headcount"])
	}
	for _, chart := range []string{"headcount-departments", "fte"} {
		if n := strings.Count(charts[chart], "<polyline"); n != 7 {
			t.Errorf("chart %s: %d lines, want 7", chart, n)
		}
		// Dept 00..05 solid, the other four one dashed grey line, in the legend too.
		if n := strings.Count(charts[chart], `stroke="#8a8a8a" stroke-width="2" stroke-dasharray="6 4"`); n != 1 {
			t.Errorf("chart %s: %d dashed grey lines, want 1", chart, n)
		}
		if !strings.Contains(charts[chart], `stroke-dasharray="6 4"/></svg><bdi>Other departments (4)</bdi>`) {
			t.Errorf("chart %s: no legend for the other departments:\n%s", chart, charts[chart])
		}
		for i := range 10 {
			if got, want := strings.Contains(charts[chart], fmt.Sprintf("<bdi>Dept %02d</bdi>", i)), i < 6; got != want {
				t.Errorf("chart %s names Dept %02d: %v, want %v", chart, i, got, want)
			}
		}
	}
	if n := strings.Count(page, `<tr><td class="text"><bdi>Dept `); n != 10 {
		t.Errorf("the table lists %d departments, want 10", n)
	}
}
