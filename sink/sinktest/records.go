package sinktest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// Employee is a source-style employee, decoded as a sync decodes one: department dept ("Dept
// <dept>"), a line manager unless manager is 0, the job title, a working pattern, a holiday
// allowance and an unmodelled field.
func Employee(id, dept, manager int64, title string) v1.Employee {
	raw := fmt.Sprintf(`{"id":%d,"account_id":"7","first_name":"F%d","last_name":"Lé%d","email":"e%d@example.com","job_title":%q,"status":"Current employee","join_date":"2020/01/%02d","working_pattern":{"id":9,"name":"Four day","total_hours":"30.0","default":false},"holiday_allowance":{"id":3,"name":"Senior"},"department":{"id":%d,"name":"Dept %d"},"created_at":"2020-01-01T09:00:00+01:00","updated_at":"2026-01-01T00:00:00Z","middle_name":"M%d"`,
		id, id, id, id, title, id%28+1, dept, dept, id)
	if manager > 0 {
		raw += fmt.Sprintf(`,"line_manager":{"id":%d,"name":"Boss %d"}`, manager, manager)
	}
	raw += "}"
	var e v1.Employee
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		panic(err)
	}
	return e
}

// Engineers are employees 1 to n, each an Engineer of department 1 with no line manager
// (Employee), built from their fields (no sent form), so that a change a test makes to a field
// is what a load stores: the staff of the events tests and benchmarks.
func Engineers(n int) []v1.Employee {
	es := make([]v1.Employee, n)
	for i := range es {
		es[i] = Employee(int64(i+1), 1, 0, "Engineer")
		es[i].Sent = nil
	}
	return es
}

// WalkEmployees stages employees in pages of size and merges them, as a sync's walk does.
func WalkEmployees(t testing.TB, s *sink.Store, es []v1.Employee, size int, opts sink.MergeOptions) sink.MergeResult {
	t.Helper()
	ctx := context.Background()
	l, err := s.BeginLoad(ctx, sink.Employees)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for start := 0; start < len(es); start += size {
		if err := l.AddEmployees(ctx, es[start:min(start+size, len(es))]); err != nil {
			t.Fatal(err)
		}
	}
	res, err := l.Merge(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Records reads records of the collection c from their JSON, as the source sends them.
func Records(t testing.TB, c *v1.Collection, bodies ...string) []v1.Record {
	t.Helper()
	rs := make([]v1.Record, len(bodies))
	for i, b := range bodies {
		r, err := c.Decode([]byte(b))
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		rs[i] = r
	}
	return rs
}

// WalkRecords stages and merges one walk of the records rs of the collection c, as a sync of it
// does, with opts.
func WalkRecords(t testing.TB, s *sink.Store, c *v1.Collection, rs []v1.Record, opts sink.MergeOptions) sink.MergeResult {
	t.Helper()
	ctx := context.Background()
	l, err := s.BeginLoad(ctx, sink.Resource(c.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AddRecords(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Distinct(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := l.Merge(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
