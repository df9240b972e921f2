package v1

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The members of records that no declaration names are Identifying (Collection.ExtraClass)
// unless an operator says otherwise: a custom field an HR account adds (employees'
// cost_centre) may be a fact of employment, or nothing personal at all. Declarations are the
// code's declarations with such members classed by configuration declared beside them, as
// fields of any JSON (Opaque) of their class: erasure (EraseJSON) and serve's class projections
// then act on them as on any declared member, with no case of their own. There is no global
// state: a Declarations value is passed to what acts on classes, and the zero value, which
// Declared and EraseJSON are, is the code's declarations alone.

// Members are classes given to members of records no declaration names: by collection (its
// name as served: employees, absences…), by the name of a record's own member (not one of a
// nested object's).
type Members map[string]map[string]Class

// Declarations are the collections' declarations (Declared) with Members declared beside them.
// The zero value is the code's declarations alone. Safe for concurrent use; never changed once
// made.
type Declarations struct {
	members Members
	// erase are the erasure declarations of every collection with the members in; nil for the
	// zero value (erasureDecls).
	erase map[string]erasureDecl
}

// DeclaredCollections are the names of the collections Declared knows: employees,
// working_patterns and every Collections name, in that order.
func DeclaredCollections() []string {
	names := []string{"employees", "working_patterns"}
	for _, c := range Collections {
		names = append(names, c.Name)
	}
	return names
}

// A MemberError is a member NewDeclarations refuses to class.
type MemberError struct {
	Collection, Member string
	// Declared is the class the member is declared with already (0 when it is refused for
	// another reason: no such collection, no class, no name).
	Declared Class
	msg      string
}

func (e *MemberError) Error() string { return e.msg }

// NewDeclarations declares members beside the code's declarations. It refuses a collection
// Declared does not know, a member with no name or no valid class, and a member that is
// declared already (its id, a declared field or its twin, in any case: declarations are code,
// and a configuration that classed them otherwise would say two things of one member), and two
// members whose names differ only in case classed apart (serve's deny lists fold names, so
// each would be served and hidden by the other's class too). No members: the zero value.
func NewDeclarations(members Members) (Declarations, error) {
	if len(members) == 0 {
		return Declarations{}, nil
	}
	base := erasureDecls()
	d := Declarations{members: Members{}, erase: make(map[string]erasureDecl, len(base))}
	for name, ed := range base {
		d.erase[name] = ed
	}
	for _, collection := range slices.Sorted(maps.Keys(members)) {
		ed, ok := base[collection]
		if !ok {
			return Declarations{}, &MemberError{Collection: collection, msg: fmt.Sprintf("no collection %q", collection)}
		}
		fields := maps.Clone(ed.fields)
		folded := map[string]string{} // a configured member's name in lower case → its name
		for _, member := range slices.Sorted(maps.Keys(members[collection])) {
			class := members[collection][member]
			bad := func(declared Class, format string, args ...any) error {
				return &MemberError{Collection: collection, Member: member, Declared: declared, msg: fmt.Sprintf(format, args...)}
			}
			switch {
			case strings.TrimSpace(member) == "":
				return Declarations{}, bad(0, "%s: a member with no name", collection)
			case !class.Valid():
				return Declarations{}, bad(0, "%s.%s: no class of personal data", collection, member)
			case strings.EqualFold(member, "id"):
				return Declarations{}, bad(NotPersonal, "%s.%s: every record's id is declared already (not personal)", collection, member)
			}
			for name, f := range ed.fields {
				if strings.EqualFold(name, member) {
					return Declarations{}, bad(f.Class, "%s.%s: declared as %s already (declarations are code; configure only members no declaration names)", collection, member, f.Class)
				}
			}
			if other, ok := folded[strings.ToLower(member)]; ok && members[collection][other] != class {
				return Declarations{}, bad(0, "%s.%s: classed %s, and %s.%s %s: one member in two cases, classed apart (class both alike, or one)",
					collection, member, class, collection, other, members[collection][other])
			}
			folded[strings.ToLower(member)] = member
			fields[member] = Field{Name: member, Kind: Opaque, Class: class}
			if d.members[collection] == nil {
				d.members[collection] = map[string]Class{}
			}
			d.members[collection][member] = class
		}
		d.erase[collection] = newErasureDecl(fields, ed.extra)
	}
	return d, nil
}

// Members are the members classed beside the declarations, by collection then name: a copy.
func (d Declarations) Members() Members {
	out := make(Members, len(d.members))
	for c, ms := range d.members {
		out[c] = maps.Clone(ms)
	}
	return out
}

// Configured are the members of collection classed beside its declaration, in name order.
func (d Declarations) Configured(collection string) []Field {
	ms := d.members[collection]
	out := make([]Field, 0, len(ms))
	for _, name := range slices.Sorted(maps.Keys(ms)) {
		out = append(out, Field{Name: name, Kind: Opaque, Class: ms[name]})
	}
	return out
}

// Declared is Declared with the members of collection classed beside its declaration appended
// to its fields (Configured): fields of any JSON, of their class.
func (d Declarations) Declared(collection string) (fields []Field, extra Class, ok bool) {
	fields, extra, ok = Declared(collection)
	if !ok || len(d.members[collection]) == 0 {
		return fields, extra, ok
	}
	return append(slices.Clip(fields), d.Configured(collection)...), extra, true
}

// EraseJSON is EraseJSON with the members classed beside the declarations erased by their
// classes, not by the collection's extra class.
func (d Declarations) EraseJSON(collection string, raw []byte, own []Class, nested func(field string, id int64) []Class) ([]byte, error) {
	decls := d.erase
	if decls == nil {
		decls = erasureDecls()
	}
	ed, ok := decls[collection]
	if !ok {
		return nil, fmt.Errorf("erase: no declared collection %q", collection)
	}
	return ed.erase(raw, classSetOf(own), nested)
}
