package sink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/v1"
)

// TestEmployeesReadsMany: Employees gives what Employee gives, for each listed id of a list
// (repeated ids once, unknown and unlisted ones absent), in one statement for any length.
func TestEmployeesReadsMany(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		// 1,200 listed employees by a load, and 42, put as synced, whose line manager 900 is kept
		// as a row but not listed.
		const first, n = 1001, 1200
		es := make([]v1.Employee, n)
		for i := range es {
			id := int64(first + i)
			es[i] = v1.Employee{ID: id, FirstName: "F", LastName: fmt.Sprint(id), Email: fmt.Sprintf("e%d@example.com", id), Status: "active"}
		}
		l, err := s.BeginLoad(ctx, sink.Employees)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.AddEmployees(ctx, es); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Merge(ctx, sink.MergeOptions{Complete: true}); err != nil {
			t.Fatal(err)
		}
		var e42 v1.Employee
		if err := json.Unmarshal([]byte(synced), &e42); err != nil {
			t.Fatal(err)
		}
		if err := s.PutEmployee(ctx, e42); err != nil {
			t.Fatal(err)
		}

		all := []int64{42, 900, 7}
		for i := range n {
			all = append(all, int64(first+n-1-i)) // newest first: the order given is not the order read
		}
		tests := []struct {
			name string
			ids  []int64
			want []int64
		}{
			{"none", nil, nil},
			{"repeated and unknown", []int64{1005, 42, 1005, 999999}, []int64{42, 1005}},
			{"unlisted", []int64{900}, nil},
			{"1,203 given, in another order", all, append([]int64{42}, ids(es)...)},
		}
		for _, tt := range tests {
			got, err := s.Employees(ctx, tt.ids)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("%s: %d employees, want %d", tt.name, len(got), len(tt.want))
			}
			for i, id := range tt.want {
				e, ok := got[id]
				if !ok {
					t.Errorf("%s: %d missing", tt.name, id)
					continue
				}
				if i%97 != 0 && id != 42 {
					continue // each record compared with Employee's for a sample
				}
				one, _, err := s.Employee(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := string(e.AppendJSON(nil)), string(one.AppendJSON(nil)); g != w {
					t.Errorf("%s: employee %d\n got %s\nwant %s (Employee)", tt.name, id, g, w)
				}
			}
		}
	})
}
