package sink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// Employees as the source sends them, with a division and a location as objects (one carrying a
// field beyond id and name), as a name, as null and as "".
var upgradeEmployees = []string{
	`{"id":1,"first_name":"Ana","department":{"id":5,"name":"R&D"},"division":{"id":801,"name":"UK & Ireland"},"location":{"id":701,"name":"London","code":"LDN"},"middle_name":"M","custom_fields":{"b":1,"a":[true,null]}}`,
	`{"id":2,"first_name":"Bo","division":null,"location":"Manchester","dob":"1990-01-01"}`,
	`{"id":3,"first_name":"Cy","division":{"id":802,"name":"Central Europe"},"location":{"id":701,"name":"London","code":"LDN"}}`,
	`{"id":4,"first_name":"Di","division":"","location":{"id":706,"name":"Remote"}}`,
}

// oldForm is how a build before 0008 stored an employee: division and location were not
// modelled, so they sat in extra (keys sorted, compact) and not in nested.
func oldForm(t *testing.T, raw string) (e v1.Employee, extra, nested []byte) {
	t.Helper()
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		t.Fatal(err)
	}
	members, err := e.Extra.Members()
	if err != nil {
		t.Fatal(err)
	}
	if members == nil {
		members = map[string]json.RawMessage{}
	}
	for _, k := range []string{"division", "location"} {
		if v, ok := all[k]; ok {
			members[k] = v
		}
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k) + ":")
		if err := json.Compact(&b, members[k]); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteByte('}')
	old := e
	old.Division, old.Location = nil, nil
	return e, b.Bytes(), old.NestedRaw()
}

// TestUpgradeMovesDivisionAndLocation: a warehouse an earlier build filled (division and location
// in employees.extra) is migrated to foreign keys, unlisted rows of divisions and locations, and
// the nested forms; the next walk of the same employees then writes nothing, and each is served
// back exactly.
func TestUpgradeMovesDivisionAndLocation(t *testing.T) {
	t.Parallel()
	for _, d := range []schema.Dialect{schema.Postgres, schema.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, target, opts := oldWarehouse(t, d, 7)
			defer db.Close()

			var es []v1.Employee
			ins := `INSERT INTO employees (id, first_name, department_id, extra, nested) VALUES (?, ?, ?, ?, ?)`
			if d == schema.Postgres {
				ins = `INSERT INTO employees (id, first_name, department_id, extra, nested) VALUES ($1, $2, $3, $4, $5)`
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO departments (id, name) VALUES (5, 'R&D')`); err != nil {
				t.Fatal(err)
			}
			for _, raw := range upgradeEmployees {
				e, extra, nested := oldForm(t, raw)
				es = append(es, e)
				var dept, nestedArg any
				if e.Department != nil {
					dept = e.Department.ID
				}
				if nested != nil {
					nestedArg = string(nested)
				}
				if _, err := db.ExecContext(ctx, ins, e.ID, e.FirstName, dept, string(extra), nestedArg); err != nil {
					t.Fatal(err)
				}
			}
			// A row whose extra was hand-edited into an array is left as it is.
			if _, err := db.ExecContext(ctx, `INSERT INTO employees (id, first_name, extra, listed) VALUES (99, 'Hand', '[1]', false)`); err != nil {
				t.Fatal(err)
			}
			s := upgraded(t, db, d, target, opts)

			rows, err := sinktest.DB(s).QueryContext(ctx, `SELECT id, coalesce(division_id, 0), coalesce(location_id, 0), coalesce(CAST(extra AS text), '') FROM employees ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var id, div, loc int64
				var extra string
				if err := rows.Scan(&id, &div, &loc, &extra); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%d:%d:%d:%s", id, div, loc, extra))
			}
			rows.Close()
			want := []string{
				`1:801:701:{"custom_fields":{"b":1,"a":[true,null]},"middle_name":"M"}`,
				`2:0:0:{"division":null,"dob":"1990-01-01","location":"Manchester"}`,
				`3:802:701:`,
				`4:0:706:{"division":""}`,
				`99:0:0:[1]`,
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("employees after the upgrade\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			var refs string
			err = sinktest.DB(s).QueryRowContext(ctx, `SELECT
    (SELECT string_agg(id || '=' || name || '/' || CAST(listed AS text), ',' ORDER BY id) FROM divisions) || ' ' ||
    (SELECT string_agg(id || '=' || name || coalesce(CAST(extra AS text), ''), ',' ORDER BY id) FROM locations WHERE NOT listed)`).Scan(&refs)
			if d == schema.SQLite {
				err = sinktest.DB(s).QueryRowContext(ctx, `SELECT
    (SELECT group_concat(id || '=' || name || '/' || CASE WHEN listed THEN 'true' ELSE 'false' END, ',') FROM (SELECT * FROM divisions ORDER BY id)) || ' ' ||
    (SELECT group_concat(id || '=' || name || coalesce(extra, ''), ',') FROM (SELECT * FROM locations WHERE NOT listed ORDER BY id))`).Scan(&refs)
			}
			if want := `801=UK & Ireland/false,802=Central Europe/false 701=London{"code":"LDN"},706=Remote`; err != nil || refs != want {
				t.Errorf("divisions and locations\n got %s (%v)\nwant %s", refs, err, want)
			}
			var historyDiv int64
			if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT division_id FROM employees_history WHERE id = 1 AND valid_to IS NULL`).Scan(&historyDiv); err != nil || historyDiv != 801 {
				t.Errorf("employee 1's current version: division %d (%v), want 801", historyDiv, err)
			}

			// The columns 0008 filled are what a walk writes: a walk of the same records, without
			// their sent forms (which 0014 adds), changes nothing.
			typed := slices.Clone(es)
			for i := range typed {
				typed[i].Sent = nil
			}
			v0, _ := s.Version(ctx)
			res := sinktest.WalkEmployees(t, s, typed, 10, sink.MergeOptions{Complete: true})
			if res.Unchanged != int64(len(es)) || res.Inserted+res.Updated+res.Deleted != 0 {
				t.Errorf("the first walk after the upgrade %+v, want every employee unchanged", res)
			}
			if v, _ := s.Version(ctx); v != v0 {
				t.Errorf("the first walk after the upgrade moved the version %d → %d", v0, v)
			}
			byID := served(t, s)
			for _, e := range typed {
				if want := string(e.AppendJSON(nil)); byID[e.ID] != want {
					t.Errorf("employee %d\n got %s\nwant %s", e.ID, byID[e.ID], want)
				}
			}
			// A walk of the records as sent writes each sent form once (0014), then nothing.
			if res := sinktest.WalkEmployees(t, s, es, 10, sink.MergeOptions{Complete: true}); res.Updated != int64(len(es)) {
				t.Errorf("the walk with the sent forms %+v, want every employee updated once", res)
			}
			byID = served(t, s)
			for i, e := range es {
				if byID[e.ID] != upgradeEmployees[i] {
					t.Errorf("employee %d\n got %s\nwant as sent %s", e.ID, byID[e.ID], upgradeEmployees[i])
				}
			}
			if res := sinktest.WalkEmployees(t, s, es, 10, sink.MergeOptions{Complete: true}); res.Unchanged != int64(len(es)) {
				t.Errorf("the walk after it %+v, want every employee unchanged", res)
			}
		})
	}
}

// TestEmployeeDivisionAndLocation: an employee's division and location objects are foreign keys;
// an id no walk listed leaves an unlisted row, a listed one keeps its own fields; a location
// given by name stays in extra; each employee is served back exactly and a second walk writes
// nothing.
func TestEmployeeDivisionAndLocation(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		sinktest.WalkRecords(t, s, v1.Divisions, sinktest.Records(t, v1.Divisions, `{"id":801,"name":"UK and Ireland","region":"EMEA"}`), sink.MergeOptions{Complete: true})
		var es []v1.Employee
		for _, raw := range upgradeEmployees {
			var e v1.Employee
			if err := json.Unmarshal([]byte(raw), &e); err != nil {
				t.Fatal(err)
			}
			es = append(es, e)
		}
		if res := sinktest.WalkEmployees(t, s, es, 3, sink.MergeOptions{Complete: true}); res.Inserted != 4 {
			t.Fatalf("walk %+v, want 4 inserted", res)
		}
		var fks string
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT CAST(count(division_id) AS text) || '/' || CAST(count(location_id) AS text) FROM employees`).Scan(&fks); err != nil || fks != "2/3" {
			t.Errorf("employees with a division / a location: %s (%v), want 2/3", fks, err)
		}
		var name string
		var listed bool
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT name, listed FROM divisions WHERE id = 801`).Scan(&name, &listed); err != nil || name != "UK and Ireland" || !listed {
			t.Errorf("division 801 %q listed %v (%v): the walk's row, listed", name, listed, err)
		}
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT name, listed FROM divisions WHERE id = 802`).Scan(&name, &listed); err != nil || name != "Central Europe" || listed {
			t.Errorf("division 802 %q listed %v (%v): the reference's row, unlisted", name, listed, err)
		}
		got := served(t, s)
		for _, e := range es {
			if want := string(e.AppendJSON(nil)); got[e.ID] != want {
				t.Errorf("employee %d\n got %s\nwant %s", e.ID, got[e.ID], want)
			}
		}
		if !strings.Contains(got[2], `"location":"Manchester"`) || !strings.Contains(got[1], `"division":{"id":801,"name":"UK & Ireland"}`) {
			t.Errorf("employees 1 and 2 as served: %s %s", got[1], got[2])
		}
		v0, _ := s.Version(ctx)
		if res := sinktest.WalkEmployees(t, s, es, 3, sink.MergeOptions{Complete: true}); res.Unchanged != 4 {
			t.Errorf("second walk %+v, want 4 unchanged", res)
		}
		if v, _ := s.Version(ctx); v != v0 {
			t.Errorf("an unchanged walk moved the version %d → %d", v0, v)
		}
	})
}
