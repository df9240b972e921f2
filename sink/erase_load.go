package sink

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/jmoiron/sqlx"

	v1 "github.com/hrsync/hrsync/source/v1"
)

// What a load erases as it stages (erase.go tells the whole story of erasure): the erasures in
// force, read once a load, and each staged record with what they say taken out.

// erasedSet is what the erasures in force say: the classes erased of each person (by employee
// id) and of each record (by collection and id).
type erasedSet struct {
	people  map[int64][]v1.Class
	records map[string]map[int64][]v1.Class
}

// loadErased reads the erasures in force: nil when there are none (the rule), so a load asks
// nothing more of any record.
func loadErased(ctx context.Context, q sqlx.QueryerContext) (*erasedSet, error) {
	rows, err := q.QueryContext(ctx, `SELECT kind, collection, subject_id, classes FROM erasures WHERE lifted_at IS NULL`)
	if err != nil {
		return nil, fmt.Errorf("read erasures: %w", err)
	}
	defer rows.Close()
	var set *erasedSet
	for rows.Next() {
		var kind, collection, names string
		var id int64
		if err := rows.Scan(&kind, &collection, &id, &names); err != nil {
			return nil, fmt.Errorf("read erasures: %w", err)
		}
		classes, err := parseClasses(names)
		if err != nil {
			return nil, fmt.Errorf("read erasures: %w", err)
		}
		if set == nil {
			set = &erasedSet{people: map[int64][]v1.Class{}, records: map[string]map[int64][]v1.Class{}}
		}
		if kind == ErasureEmployee {
			set.people[id] = union(set.people[id], classes)
			continue
		}
		if set.records[collection] == nil {
			set.records[collection] = map[int64][]v1.Class{}
		}
		set.records[collection][id] = union(set.records[collection][id], classes)
	}
	return set, rows.Err()
}

// union is the classes of a and b, once each.
func union(a, b []v1.Class) []v1.Class {
	out := slices.Clone(a)
	for _, c := range b {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// nested is the nested function of v1.EraseJSON for collection's records: the classes erased of
// the person a nested person object names.
func (e *erasedSet) nested(collection string) func(string, int64) []v1.Class {
	people := personFields()[collection]
	return func(field string, id int64) []v1.Class {
		if e == nil || !people[field] {
			return nil
		}
		return e.people[id]
	}
}

// personFields are, per collection, its nested fields that name a person (an employee).
var personFields = sync.OnceValue(func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, t := range tables {
		fields, _, _ := v1.Declared(t.name)
		for _, f := range fields {
			if f.Kind == v1.Nested && f.Nested != nil && f.Nested.Target == string(Employees) {
				if out[t.name] == nil {
					out[t.name] = map[string]bool{}
				}
				out[t.name][f.Name] = true
			}
		}
	}
	return out
})

// eraseStaged is the record t as a load stages it under the erasures in force: with the
// classes erased of it (as a record, or as the person it is of) and of the people its nested
// objects name taken out (decls.EraseJSON: the members the configuration classes by their
// classes), then decoded again, so that every column staged says the same. ok is false when
// nothing is erased of it: t is staged as it is.
func eraseStaged[T any](c *collection[T], e *erasedSet, decls v1.Declarations, t *T) (out T, ok bool, err error) {
	id := c.id(t)
	own := e.records[c.name][id]
	if c.table.name == string(Employees) {
		own = union(own, e.people[id])
	}
	hit := len(own) > 0
	for _, r := range c.refs {
		if r.target != string(Employees) {
			continue
		}
		rid, _ := r.id(t).(int64)
		if classes, erased := e.people[rid]; erased {
			hit = true
			if r.field == "employee" { // an event of the person: its own members too
				own = union(own, classes)
			}
		}
	}
	if !hit {
		return out, false, nil
	}
	erased, err := decls.EraseJSON(c.name, c.json(t), own, e.nested(c.name))
	if err != nil {
		return out, false, fmt.Errorf("erase %s %d: %w", c.name, id, err)
	}
	out, err = c.decode(erased)
	if err != nil {
		return out, false, fmt.Errorf("erase %s %d: decode: %w", c.name, id, err)
	}
	return out, true, nil
}
