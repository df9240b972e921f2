package v1

import (
	"fmt"
	"strings"
	"sync"
)

// Erasure (UK/EU GDPR Art. 17) takes the members of some classes (Class.Erasable) out of a
// record's JSON, by its collection's declarations (Declared), and keeps everything else as it
// was: the members in their order, the bytes of each kept member. The record's typed form is
// then rebuilt by decoding what is left (Employee.UnmarshalJSON, WorkingPattern.UnmarshalJSON,
// Collection.Decode), so that every form a warehouse keeps of it (typed fields, Extra, the
// nested objects' forms, Sent) says the same.

// EraseJSON erases classes from raw, one record of collection as JSON (an object):
//
//   - the record's own members whose class is in own go: a declared member by its class (the
//     join_date twin of company_join_date by that one's), a member no declaration names by the
//     collection's extra class (Collection.ExtraClass), whole, whatever it holds, and so is one
//     named as a declared member in another case (DIAGNOSIS_CODE) by that member's class too;
//   - in each declared nested object (a person, a named reference) that stays, the members it
//     carries whose class is in own or in nested(field, id) (the classes erased of the record
//     it points at, by its id; nested may be nil) go, and so do its undeclared members when
//     Identifying (what is taken of them) is among those classes. Its id stays.
//
// The record's id always stays. Whitespace between the record's members is dropped where a
// member goes; nothing is ever added, so the result is never longer than raw, and erasing it
// again changes nothing. raw need not hold every member (a warehouse's nested column, the
// nested objects alone keyed by field, is erased the same way). An error is JSON that is not
// one object, or a collection nothing declares.
//
// It is the zero Declarations' EraseJSON: members classed by configuration are erased by their
// classes with Declarations.EraseJSON.
func EraseJSON(collection string, raw []byte, own []Class, nested func(field string, id int64) []Class) ([]byte, error) {
	return Declarations{}.EraseJSON(collection, raw, own, nested)
}

// classSet is a set of classes, one bit each.
type classSet uint8

func classSetOf(cs []Class) classSet {
	var s classSet
	for _, c := range cs {
		if c.Valid() {
			s |= 1 << c
		}
	}
	return s
}

func (s classSet) has(c Class) bool { return s&(1<<c) != 0 }

// erasureDecl is what erasing a collection's records needs of its declarations.
type erasureDecl struct {
	fields map[string]Field
	extra  Class
	// folded are the classes of the fields by their names in lower case: a member whose name
	// is a field's in another case (DIAGNOSIS_CODE) is not that field to the decoder, but serve
	// leaves it out as that field (a deny list folds the names it reads), so erasure takes it by
	// either class (newErasureDecl).
	folded map[string]classSet
}

// newErasureDecl is the erasure declaration of fields (by name) and the extra class.
func newErasureDecl(fields map[string]Field, extra Class) erasureDecl {
	d := erasureDecl{fields: fields, extra: extra, folded: make(map[string]classSet, len(fields))}
	for name, f := range fields {
		d.folded[strings.ToLower(name)] |= classSetOf([]Class{f.Class})
	}
	return d
}

// erasureDecls are the erasure declarations of every collection Declared knows, by name.
var erasureDecls = sync.OnceValue(func() map[string]erasureDecl {
	names := DeclaredCollections()
	out := make(map[string]erasureDecl, len(names))
	for _, name := range names {
		fields, extra, _ := Declared(name)
		byName := make(map[string]Field, len(fields)+1)
		for _, f := range fields {
			byName[f.Name] = f
		}
		// Real records were seen with join_date where the docs say company_join_date: the same
		// member, of the same class.
		if f, ok := byName["company_join_date"]; ok {
			if _, twin := byName["join_date"]; !twin {
				f.Name = "join_date"
				byName["join_date"] = f
			}
		}
		out[name] = newErasureDecl(byName, extra)
	}
	return out
})

// rawMember is a member of an object as it is written: its key's contents (between the quotes,
// escapes and all), its name (unescaped) and its value's bytes.
type rawMember struct {
	key  []byte
	name string
	val  []byte
}

// rawMembers reads the members of the JSON object data, in order, duplicates included.
func rawMembers(data []byte) ([]rawMember, error) {
	s := scanner{data: data}
	var out []rawMember
	err := s.whole('{', errNotObject, func(i int) (int, error) {
		return s.container(i, 1, '}', func(key []byte, escaped bool, val []byte) error {
			name, err := unquote(key, escaped)
			if err != nil {
				return err
			}
			out = append(out, rawMember{key: key, name: name, val: val})
			return nil
		})
	})
	return out, err
}

// writeObject writes the members ms as an object, without whitespace.
func writeObject(b []byte, ms []rawMember) []byte {
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.key...)
		b = append(b, '"', ':')
		b = append(b, m.val...)
	}
	return append(b, '}')
}

func (d erasureDecl) erase(raw []byte, own classSet, nested func(string, int64) []Class) ([]byte, error) {
	ms, err := rawMembers(raw)
	if err != nil {
		return nil, fmt.Errorf("erase: %w", err)
	}
	kept := ms[:0:0]
	changed := false
	for _, m := range ms {
		f, declared := d.fields[m.name]
		switch {
		case m.name == "id":
		case !declared:
			// Undeclared by its exact name; a declared member's name in another case is taken
			// by that member's class too.
			if own.has(d.extra) || own&d.folded[strings.ToLower(m.name)] != 0 {
				changed = true
				continue
			}
		case own.has(f.Class):
			changed = true
			continue
		case f.Kind == Nested && isObject(m.val):
			val, ch, err := eraseNested(m.name, m.val, f.Nested, own, nested)
			if err != nil {
				return nil, err
			}
			m.val, changed = val, changed || ch
		}
		kept = append(kept, m)
	}
	if !changed {
		return raw, nil
	}
	return writeObject(make([]byte, 0, len(raw)), kept), nil
}

// eraseNested erases the nested object val of field: the members it carries of the classes own
// and nested(field, its id), and its undeclared ones when Identifying is among them.
func eraseNested(field string, val []byte, n *Nesting, own classSet, nested func(string, int64) []Class) ([]byte, bool, error) {
	ms, err := rawMembers(val)
	if err != nil {
		return nil, false, fmt.Errorf("erase %s: %w", field, err)
	}
	classes := own
	if nested != nil {
		var id int64
		for _, m := range ms { // the last of duplicates, as encoding/json reads it
			if m.name == "id" {
				id, _ = decodeID(field+".id", m.val)
			}
		}
		classes |= classSetOf(nested(field, id))
	}
	if classes == 0 {
		return val, false, nil
	}
	kept := ms[:0:0]
	for _, m := range ms {
		if m.name != "id" && classes.has(carriedClass(n, m.name)) {
			continue
		}
		kept = append(kept, m)
	}
	if len(kept) == len(ms) {
		return val, false, nil
	}
	return writeObject(make([]byte, 0, len(val)), kept), true, nil
}

// carriedClass is the class of a nested object's member: the declared one, or Identifying.
func carriedClass(n *Nesting, name string) Class {
	if n != nil {
		for _, f := range n.Fields {
			if f.Name == name {
				return f.Class
			}
		}
	}
	return Identifying
}

// isObject reports whether a member's value (as the scanner hands it out: no whitespace
// around it) is an object.
func isObject(val []byte) bool { return len(val) > 0 && val[0] == '{' }
