package server

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/source/v1"
)

// Scope is what a key may read and do; its zero value is full access.
type Scope struct {
	// Collections are the collections the key may read, by the names they are served under
	// (employees, working_patterns, and every v1.Collections name); nil: all of them. Another
	// collection, its list or one record, answers 403, and the index (GET /v1) lists only these.
	Collections []string
	// Fields is an allow list of field paths: only these members of each record are served, in
	// every collection; nil: every member. A path is a member's name ("email", a top-level
	// member), or names joined by dots into nested objects ("line_manager.id": member id of the
	// object line_manager, whose other members are then left out); through an array of objects
	// a path applies to each element. "**.name" keeps the member name at every depth, in every
	// object the list keeps members of (the record, and the nested objects other paths reach).
	// Members the source sent beyond the typed ones (custom_fields, dob…) are matched alike.
	// It must keep "id": clients page and fetch by id.
	Fields []string
	// Deny is a deny list of field paths: every member but these is served. A bare name
	// ("email") and "**.email" deny the member at every depth: the record's, its nested
	// objects', its arrays' objects' and those of the members the source sent beyond the typed
	// ones; a dotted path ("line_manager.email") denies that path only. Names match in any
	// case. "id" cannot be denied. Fields and Deny are exclusive.
	Deny []string
	// DenyClasses are classes of personal data the key may not see (v1.Class: health,
	// financial, identifying…): their members are left out of every collection's records at
	// every depth, those no declaration names with them when their class is denied (see
	// classes.go). It applies before Fields or Deny, which may take out more. The record's id
	// is always served.
	DenyClasses []v1.Class
	// ReadOnly refuses the key's creates (POST /v1/employees) with 403.
	ReadOnly bool
}

// Collections are the names of the collections served, as a Scope names them: employees,
// working_patterns and every v1.Collections name, in the index's order.
func Collections() []string { return v1.DeclaredCollections() }

// CheckScope reports what is wrong with s, as New would.
func CheckScope(s Scope) error {
	_, err := compileScope(s, Collections(), v1.Declarations{})
	return err
}

// scope is a Scope as New compiled it; a key with the zero Scope has none (nil).
type scope struct {
	collections map[string]bool // nil: every collection
	fields      *projection     // nil: every member
	// classes are the projections of the classes the key is denied, by collection; a
	// collection without one has nothing of them.
	classes  map[string]*projection
	readOnly bool
	// fingerprint names what the scope does to answers, canonically: "" when answers are
	// those of full access. ETags mix it in.
	fingerprint string
}

// compileScope checks s against the collections served and compiles it, the classes it denies by
// decls (the account's declarations); nil for the zero Scope.
func compileScope(s Scope, served []string, decls v1.Declarations) (*scope, error) {
	if s.Collections == nil && s.Fields == nil && s.Deny == nil && len(s.DenyClasses) == 0 && !s.ReadOnly {
		return nil, nil
	}
	c := &scope{readOnly: s.ReadOnly}
	var parts []string
	if s.Collections != nil {
		if len(s.Collections) == 0 {
			return nil, errors.New("collections lists none (leave it out for all)")
		}
		c.collections = make(map[string]bool, len(s.Collections))
		for _, name := range s.Collections {
			if !slices.Contains(served, name) {
				return nil, fmt.Errorf("collections: no collection %q (served: %s)", name, strings.Join(served, ", "))
			}
			c.collections[name] = true
		}
		if !s.ReadOnly && !c.collections["employees"] {
			return nil, errors.New("the key may create employees but not read them: add employees to its collections or make it read-only")
		}
		if len(c.collections) == len(served) {
			c.collections = nil // every collection: the same answers as full access
		} else {
			names := make([]string, 0, len(c.collections))
			for name := range c.collections {
				names = append(names, name)
			}
			slices.Sort(names)
			parts = append(parts, "collections:"+strings.Join(names, ","))
		}
	}
	switch {
	case s.Fields != nil && s.Deny != nil:
		return nil, errors.New("fields (an allow list) and deny (a deny list) are exclusive: set one")
	case s.Fields != nil:
		p, err := compileFields(s.Fields, false)
		if err != nil {
			return nil, fmt.Errorf("fields: %w", err)
		}
		if n, ok := p.root.sub["id"]; !p.anywhere["id"] && (!ok || n.sub != nil) {
			return nil, errors.New("fields: the allow list must include id (clients page and fetch records by id)")
		}
		c.fields = p
	case len(s.Deny) > 0:
		p, err := compileFields(s.Deny, true)
		if err != nil {
			return nil, fmt.Errorf("deny: %w", err)
		}
		if _, ok := p.root.sub["id"]; ok || p.anywhere["id"] {
			return nil, errors.New("deny: id cannot be denied (clients page and fetch records by id)")
		}
		c.fields = p
	}
	if len(s.DenyClasses) > 0 {
		classes, fp, err := compileClasses(s.DenyClasses, served, decls)
		if err != nil {
			return nil, err
		}
		c.classes = classes
		parts = append(parts, fp)
	}
	if c.fields != nil {
		parts = append(parts, c.fields.canonical())
	}
	c.fingerprint = strings.Join(parts, "\x00")
	return c, nil
}

// scopeOf is the scope of the request's key; nil when it has none.
func scopeOf(r *http.Request) *scope {
	if k := keyOf(r); k != nil {
		return k.scope
	}
	return nil
}

// mayRead reports whether the scope lets its key read the collection.
func (s *scope) mayRead(collection string) bool {
	return s == nil || s.collections == nil || s.collections[collection]
}

// readable reports whether the request's key may read the collection, answering 403 when not.
func readable(w http.ResponseWriter, r *http.Request, collection string) bool {
	if scopeOf(r).mayRead(collection) {
		return true
	}
	WriteError(w, http.StatusForbidden, "this key may not read "+collection)
	return false
}

// projected is appendItem with the request's key's scope applied to each record of the
// collection it encodes (the classes it is denied, then its fields); appendItem itself when the
// scope keeps every member.
func projected[T any](r *http.Request, collection string, appendItem func(*T, []byte) []byte) func(*T, []byte) []byte {
	return projectedBy(scopeOf(r), collection, appendItem)
}

// projectedBy is appendItem with scope s applied (projected).
func projectedBy[T any](s *scope, collection string, appendItem func(*T, []byte) []byte) func(*T, []byte) []byte {
	if s == nil || (s.fields == nil && s.classes[collection] == nil) {
		return appendItem
	}
	classes := s.classes[collection]
	// One record's full encoding, and its classes' projection: the answer is built one record
	// at a time.
	var scratch, kept []byte
	return func(item *T, b []byte) []byte {
		scratch = appendItem(item, scratch[:0])
		src, err := scratch, error(nil)
		if classes != nil {
			if s.fields == nil {
				return mustProject(classes.appendProject(b, scratch))
			}
			kept, err = classes.appendProject(kept[:0], scratch)
			mustProject(nil, err)
			src = kept
		}
		return mustProject(s.fields.appendProject(b, src))
	}
}

// mustProject is a projection's output; its failure is a bug (the encoders write JSON objects),
// answered 500 by ServeHTTP's recovery, never with the record unredacted. The error names no
// data.
func mustProject(out []byte, err error) []byte {
	if err != nil {
		panic(fmt.Errorf("serve: redacting a record: %w", err))
	}
	return out
}
