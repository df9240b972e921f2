package walk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/sourcetest"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/walk"
)

// TestReplicaServesRecordsExactly: every record of every collection the wire declares is served
// back, in lists and one by one, as the source sent it, member for member as decoded JSON: ""
// stays "", null stays null, a member the source left out stays out (a leave request has no
// approved_by), numbers and strings keep their forms ("3.5" and 3.5, 1 and "1"), timestamps
// their offsets. Employees and working patterns too, altered as the real service sends them
// (varyEmployee, varyPattern): join_date for company_join_date, "77" for 77, offsets on
// timestamps, "" for dates, nested objects and members inside them, seed fields left out, members
// the seed does not name. A second sync of the unchanged account writes nothing and no history
// version.
func TestReplicaServesRecordsExactly(t *testing.T) {
	t.Parallel()
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 40, Seed: 23, AbsenceYears: 1})
	for name, raws := range acct.Collections {
		coll := v1.CollectionNamed(name)
		if coll == nil {
			t.Fatalf("the account holds %s, which the wire does not declare", name)
		}
		raws = slices.Clone(raws)
		for i := range raws {
			raws[i] = vary(t, coll, raws[i], i)
		}
		acct.Collections[name] = raws
	}
	acct.Employees = slices.Clone(acct.Employees)
	for i := range acct.Employees {
		acct.Employees[i] = varyEmployee(t, acct.Employees[i], i)
	}
	acct.WorkingPatterns = slices.Clone(acct.WorkingPatterns)
	for i := range acct.WorkingPatterns {
		acct.WorkingPatterns[i] = varyPattern(t, acct.WorkingPatterns[i], i)
	}
	sent := maps.Clone(acct.Collections)
	sent["employees"], sent["working_patterns"] = acct.Employees, acct.WorkingPatterns
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			up, store, c := newSync(t, backend, 0, acct.Options())
			ctx := context.Background()
			rs, err := walk.New(c, store, walk.Options{Concurrency: 2}).Run(ctx, walk.Known)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.Status != sink.RunOK {
					t.Fatalf("%s: %s (%v)", r.Resource, r.Status, r.Err)
				}
			}
			h, err := server.NewHandler(store, server.Options{APIKeys: []string{"k-7f3a9c2e5b1d8f4a6c0e9b2d"}})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			names := make([]string, 0, len(sent))
			for name := range sent {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				raws := sent[name]
				listed := listAll(t, srv.URL, name)
				if len(listed) != len(raws) {
					t.Errorf("%s: served %d records, the source sent %d", name, len(listed), len(raws))
				}
				bad := 0
				for _, raw := range raws {
					want := decoded(t, raw)
					id := recordID(t, want)
					served := map[string]json.RawMessage{"in the list": listed[id]}
					if name != "working_patterns" { // the interface has no route to one working pattern
						served["alone"] = getOne(t, srv.URL, name, id)
					}
					for how, got := range served {
						if got == nil {
							continue // not listed: counted above
						}
						if diff := membersDiffer(want, decoded(t, got)); diff != "" && bad < 5 {
							bad++
							t.Errorf("%s %d, served %s: %s\n served %s\n source %s", name, id, how, diff, got, raw)
						}
					}
				}
			}

			// The same, through the store's typed reads the sync's own tests use.
			assertReplica(t, up, store, true)

			// Unchanged: no write, no version of any row in any history.
			versions := historyVersions(t, store)
			syncAgainWritesNothing(t, c, store)
			if after := historyVersions(t, store); !reflect.DeepEqual(after, versions) {
				t.Errorf("an unchanged account wrote history versions: %v, then %v", versions, after)
			}
		})
	}
}

// vary gives some records the forms a real account also sends and the generator does not
// write everywhere: a declared member left out, a declared member "", decimals as JSON numbers
// and integers as strings, and an undeclared member null.
func vary(t *testing.T, coll *v1.Collection, raw json.RawMessage, i int) json.RawMessage {
	t.Helper()
	ms := orderedMembers(t, raw)
	f := coll.Fields[i%len(coll.Fields)]
	switch i % 5 {
	case 1: // a declared member absent
		ms = slices.DeleteFunc(ms, func(m member) bool { return m.key == f.Name })
	case 2: // a declared member ""
		set(&ms, f.Name, `""`)
	case 3: // numbers in their other forms
		for j, m := range ms {
			k := coll.Index(m.key)
			if k < 0 {
				continue
			}
			switch coll.Fields[k].Kind {
			case v1.Decimal:
				var s string
				if json.Unmarshal(m.val, &s) == nil && s != "" {
					ms[j].val = json.RawMessage(s) // "3.5" → 3.5
				}
			case v1.Int:
				if len(m.val) > 0 && m.val[0] != '"' && string(m.val) != "null" {
					ms[j].val = json.RawMessage(strconv.Quote(string(m.val))) // 1 → "1"
				}
			}
		}
	case 4: // an undeclared member null, and one ""
		ms = append(ms, member{"x_none", json.RawMessage(`null`)}, member{"x_empty", json.RawMessage(`""`)})
	}
	return encodeMembers(ms)
}

// varyEmployee alters an employee as the real service sends them, one way per record in turn.
func varyEmployee(t *testing.T, raw json.RawMessage, i int) json.RawMessage {
	t.Helper()
	ms := orderedMembers(t, raw)
	rename := func(from, to string) {
		for j := range ms {
			if ms[j].key == from {
				ms[j].key = to
			}
		}
	}
	quote := func(key string) { // 77 → "77"
		for j, m := range ms {
			if m.key == key && len(m.val) > 0 && m.val[0] != '"' && string(m.val) != "null" {
				ms[j].val = json.RawMessage(strconv.Quote(string(m.val)))
			}
		}
	}
	offset := func(key, zone string) { // "…Z" → "…+02:00", another instant in the same form
		for j, m := range ms {
			var ts string
			if m.key == key && json.Unmarshal(m.val, &ts) == nil && strings.HasSuffix(ts, "Z") {
				ms[j].val = json.RawMessage(strconv.Quote(strings.TrimSuffix(ts, "Z") + zone))
			}
		}
	}
	switch i % 6 {
	case 1: // join_date for company_join_date, in slashes; ids and integers as strings
		for j, m := range ms {
			var d string
			if m.key == "company_join_date" && json.Unmarshal(m.val, &d) == nil {
				ms[j].val = json.RawMessage(strconv.Quote(strings.ReplaceAll(d, "-", "/")))
			}
		}
		rename("company_join_date", "join_date")
		quote("account_id")
		quote("length_of_service_in_months")
		quote("id")
	case 2: // timestamps with offsets
		offset("created_at", "+02:00")
		offset("updated_at", "-05:30")
	case 3: // "" for a date and nested objects, and inside a nested object
		set(&ms, "job_start_date", `""`)
		set(&ms, "department", `""`)
		set(&ms, "holiday_approver", `""`)
		set(&ms, "line_manager", `""`)
		for j, m := range ms {
			if m.key == "holiday_allowance" && len(m.val) > 0 && m.val[0] == '{' {
				inner := orderedMembers(t, m.val)
				set(&inner, "name", `""`)
				ms[j].val = encodeMembers(inner)
			}
		}
	case 4: // seed fields left out, members the seed does not name
		ms = slices.DeleteFunc(ms, func(m member) bool {
			return m.key == "hr" || m.key == "age" || m.key == "job_title" || m.key == "receives_statutory_holidays"
		})
		ms = append(ms, member{"x_none", json.RawMessage(`null`)}, member{"x_empty", json.RawMessage(`""`)},
			member{"x_number", json.RawMessage(`1.50`)})
	case 5: // "" for text members
		set(&ms, "job_title", `""`)
		set(&ms, "status", `""`)
		set(&ms, "notice_period", `""`)
	}
	return encodeMembers(ms)
}

// varyPattern alters a working pattern as the real service sends them.
func varyPattern(t *testing.T, raw json.RawMessage, i int) json.RawMessage {
	t.Helper()
	ms := orderedMembers(t, raw)
	switch i % 3 {
	case 1: // "" for hours, booleans and decimals in their other forms
		for j, m := range ms {
			switch {
			case strings.HasSuffix(m.key, "_hr") && j%2 == 0:
				ms[j].val = json.RawMessage(`""`)
			case string(m.val) == "true" || string(m.val) == "false":
				ms[j].val = json.RawMessage(strconv.Quote(string(m.val)))
			case m.key == "total_hours" && len(m.val) > 1 && m.val[0] == '"' && string(m.val) != `""`:
				ms[j].val = m.val[1 : len(m.val)-1]
			}
		}
	case 2: // members left out, members the seed does not name, an offset
		ms = slices.DeleteFunc(ms, func(m member) bool { return m.key == "sat" || m.key == "sun_hr" })
		ms = append(ms, member{"account_id", json.RawMessage(`"77"`)}, member{"colour", json.RawMessage(`""`)})
		set(&ms, "updated_at", `"2024-03-01T10:00:00+01:00"`)
	}
	return encodeMembers(ms)
}

type member struct {
	key string
	val json.RawMessage
}

// orderedMembers reads an object's members in their order.
func orderedMembers(t *testing.T, raw json.RawMessage) []member {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, member{tok.(string), v})
	}
	return ms
}

func set(ms *[]member, key, val string) {
	for j := range *ms {
		if (*ms)[j].key == key {
			(*ms)[j].val = json.RawMessage(val)
			return
		}
	}
	*ms = append(*ms, member{key, json.RawMessage(val)})
}

func encodeMembers(ms []member) json.RawMessage {
	b := []byte{'{'}
	for j, m := range ms {
		if j > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(m.key)
		b = append(append(append(b, k...), ':'), m.val...)
	}
	return append(b, '}')
}

// decoded is a record as decoded JSON: members by name (an absent member is no key, null a
// nil value), numbers as their text (json.Number), strings as strings.
func decoded(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		t.Fatalf("not a JSON object (%v): %s", err, raw)
	}
	return m
}

func recordID(t *testing.T, m map[string]any) int64 {
	t.Helper()
	var text string
	switch v := m["id"].(type) {
	case json.Number:
		text = v.String()
	case string:
		text = v
	}
	id, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		t.Fatalf("a record without an id: %v", m)
	}
	return id
}

// membersDiffer names the members whose values differ, or which one side lacks; "" when none.
func membersDiffer(want, got map[string]any) string {
	var diffs []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: sent %s, not served", k, show(w)))
		case !reflect.DeepEqual(w, g):
			diffs = append(diffs, fmt.Sprintf("%s: sent %s, served %s", k, show(w), show(g)))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: not sent, served %s", k, show(g)))
		}
	}
	sort.Strings(diffs)
	return fmt.Sprint(diffs)[1 : len(fmt.Sprint(diffs))-1]
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// listAll reads every page of a collection from serve mode, following Link, records by id.
func listAll(t *testing.T, base, name string) map[int64]json.RawMessage {
	t.Helper()
	out := map[int64]json.RawMessage{}
	for next := base + "/v1/" + name + "?per_page=100"; next != ""; {
		resp, body := getKeyed(t, next)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", next, resp.StatusCode, body)
		}
		raws, err := v1.Envelope(name, body)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range raws {
			id := recordID(t, decoded(t, raw))
			if _, dup := out[id]; dup {
				t.Errorf("%s: id %d served twice", name, id)
			}
			out[id] = raw
		}
		next = ""
		if links, err := v1.ParseLink(resp.Header.Get("Link")); err == nil {
			next = links["next"]
		}
	}
	return out
}

// getOne reads one record from serve mode.
func getOne(t *testing.T, base, name string, id int64) json.RawMessage {
	t.Helper()
	resp, body := getKeyed(t, fmt.Sprintf("%s/v1/%s/%d", base, name, id))
	raws, err := v1.Envelope(name, body)
	if resp.StatusCode != http.StatusOK || err != nil || len(raws) != 1 {
		t.Fatalf("GET %s %d: %d %s", name, id, resp.StatusCode, body)
	}
	return raws[0]
}

func getKeyed(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", "k-7f3a9c2e5b1d8f4a6c0e9b2d")
	return sourcetest.Do(t, nil, req)
}

// historyVersions counts the versions in every history table.
func historyVersions(t *testing.T, store *sink.Store) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, r := range walk.Known {
		var n int64
		err := sinktest.DB(store).QueryRowContext(context.Background(), `SELECT count(*) FROM `+string(r)+`_history`).Scan(&n)
		if err != nil {
			continue // a collection without a history (the financial ones)
		}
		out[string(r)] = n
	}
	return out
}
