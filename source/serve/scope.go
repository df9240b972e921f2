package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
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
	// every collection; nil: every member. A path is a member's name ("email"), or names joined
	// by dots into nested objects ("line_manager.id": member id of the object line_manager,
	// whose other members are then left out); through an array of objects a path applies to
	// each element. Members the source sent beyond the typed ones (custom_fields, dob…) are
	// matched alike. It must hold "id": clients page and fetch by id.
	Fields []string
	// Deny is a deny list of field paths, of the same form: every member but these is served.
	// Fields and Deny are exclusive.
	Deny []string
	// ReadOnly refuses the key's creates (POST /v1/employees) with 403.
	ReadOnly bool
}

// Collections are the names of the collections served, as a Scope names them: employees,
// working_patterns and every v1.Collections name, in the index's order.
func Collections() []string {
	names := []string{"employees", "working_patterns"}
	for _, c := range v1.Collections {
		names = append(names, c.Name)
	}
	return names
}

// CheckScope reports what is wrong with s, as New would.
func CheckScope(s Scope) error {
	_, err := compileScope(s, Collections())
	return err
}

// scope is a Scope as New compiled it; a key with the zero Scope has none (nil).
type scope struct {
	collections map[string]bool // nil: every collection
	fields      *projection     // nil: every member
	readOnly    bool
	// fingerprint names what the scope does to answers, canonically: "" when answers are
	// those of full access. ETags mix it in.
	fingerprint string
}

// compileScope checks s against the collections served and compiles it; nil for the zero Scope.
func compileScope(s Scope, served []string) (*scope, error) {
	if s.Collections == nil && s.Fields == nil && s.Deny == nil && !s.ReadOnly {
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
		if n, ok := p.root.sub["id"]; !ok || n.sub != nil {
			return nil, errors.New("fields: the allow list must include id (clients page and fetch records by id)")
		}
		c.fields = p
	case len(s.Deny) > 0:
		p, err := compileFields(s.Deny, true)
		if err != nil {
			return nil, fmt.Errorf("deny: %w", err)
		}
		if _, ok := p.root.sub["id"]; ok {
			return nil, errors.New("deny: id cannot be denied (clients page and fetch records by id)")
		}
		c.fields = p
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

// projected is appendItem with the fields of the request's key's scope applied to each record
// it encodes; appendItem itself when the scope keeps every field.
func projected[T any](r *http.Request, appendItem func(*T, []byte) []byte) func(*T, []byte) []byte {
	s := scopeOf(r)
	if s == nil || s.fields == nil {
		return appendItem
	}
	var scratch []byte // one record's full encoding; the answer is built one record at a time
	return func(item *T, b []byte) []byte {
		scratch = appendItem(item, scratch[:0])
		out, err := s.fields.appendProject(b, scratch)
		if err != nil {
			// The encoders write JSON objects; a failure here is a bug, answered 500 by
			// ServeHTTP's recovery, never with the record unredacted. The error names no data.
			panic(fmt.Errorf("serve: redacting a record: %w", err))
		}
		return out
	}
}

// projection keeps the members of a record a list of field paths allows (or all but those it
// denies).
type projection struct {
	deny bool
	root *fieldNode
}

// fieldNode is one member named by field paths: the whole member when sub is nil (a path ends
// there), else the members of its object (or of each object of its array) named in sub.
type fieldNode struct {
	sub map[string]*fieldNode
}

// compileFields reads field paths into a tree. A path that names a whole member takes in every
// longer path through it.
func compileFields(paths []string, deny bool) (*projection, error) {
	root := &fieldNode{sub: map[string]*fieldNode{}}
	for _, p := range paths {
		if deny {
			p = strings.ToLower(p) // lookup folds the names it reads
		}
		segs := strings.Split(p, ".")
		if slices.Contains(segs, "") {
			return nil, fmt.Errorf("field path %q has an empty segment", p)
		}
		n := root
		for i, seg := range segs {
			c, ok := n.sub[seg]
			if ok && c.sub == nil {
				break // a shorter path already names the whole member
			}
			if i == len(segs)-1 {
				n.sub[seg] = &fieldNode{} // the whole member, whatever longer paths said
				break
			}
			if !ok {
				c = &fieldNode{sub: map[string]*fieldNode{}}
				n.sub[seg] = c
			}
			n = c
		}
	}
	return &projection{deny: deny, root: root}, nil
}

// canonical is the projection's canonical text: equal projections, however their paths were
// written, have equal texts.
func (p *projection) canonical() string {
	var b strings.Builder
	if p.deny {
		b.WriteString("deny:")
	} else {
		b.WriteString("fields:")
	}
	var walk func(n *fieldNode)
	walk = func(n *fieldNode) {
		names := make([]string, 0, len(n.sub))
		for name := range n.sub {
			names = append(names, name)
		}
		slices.Sort(names)
		b.WriteByte('(')
		for _, name := range names {
			b.WriteString(strconv.Quote(name))
			if c := n.sub[name]; c.sub != nil {
				walk(c)
			}
		}
		b.WriteByte(')')
	}
	walk(p.root)
	return b.String()
}

// appendProject appends to dst the JSON object src with only the members the projection keeps:
// member order and the bytes of kept values as in src, members left out entirely (not null).
// Whitespace between members is not kept. src must be a JSON object (as the encoders write);
// dst and src must not overlap.
func (p *projection) appendProject(dst, src []byte) ([]byte, error) {
	s := scanner{b: src}
	s.ws()
	if s.peek() != '{' {
		return dst, errors.New("not a JSON object")
	}
	dst, err := p.object(dst, &s, p.root)
	if err != nil {
		return dst, err
	}
	if s.ws(); s.i != len(s.b) {
		return dst, errors.New("data after the object")
	}
	return dst, nil
}

// object projects the object at s (at its '{') by the node n.
func (p *projection) object(dst []byte, s *scanner, n *fieldNode) ([]byte, error) {
	s.i++ // '{'
	dst = append(dst, '{')
	if s.ws(); s.peek() == '}' {
		s.i++
		return append(dst, '}'), nil
	}
	first := true
	for {
		s.ws()
		ns := s.i
		if err := s.str(); err != nil {
			return dst, err
		}
		name := s.b[ns:s.i]
		if s.ws(); s.peek() != ':' {
			return dst, errors.New("member without ':'")
		}
		s.i++
		s.ws()
		child, named, err := lookup(n, name, p.deny)
		if err != nil {
			return dst, err
		}
		vs := s.i
		switch {
		case !named && p.deny, named && !p.deny && child.sub == nil:
			// kept whole
			if err := s.value(); err != nil {
				return dst, err
			}
			dst = appendMember(dst, &first, name)
			dst = append(dst, s.b[vs:s.i]...)
		case !named, child.sub == nil:
			// left out: not allowed, or denied whole
			if err := s.value(); err != nil {
				return dst, err
			}
		default:
			// named by longer paths: their members of its object(s)
			switch s.peek() {
			case '{':
				dst = appendMember(dst, &first, name)
				if dst, err = p.object(dst, s, child); err != nil {
					return dst, err
				}
			case '[':
				dst = appendMember(dst, &first, name)
				if dst, err = p.array(dst, s, child); err != nil {
					return dst, err
				}
			default:
				if err := s.value(); err != nil {
					return dst, err
				}
				// A null holds nothing to redact; another scalar has no members, so an
				// allow list of its members keeps none of it, and a deny list none of its
				// members.
				if p.deny || string(s.b[vs:s.i]) == "null" {
					dst = appendMember(dst, &first, name)
					dst = append(dst, s.b[vs:s.i]...)
				}
			}
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return append(dst, '}'), nil
		default:
			return dst, errors.New("object member not followed by ',' or '}'")
		}
	}
}

// array projects each element of the array at s (at its '[') by the node n: objects and arrays
// recursively, nulls as they are, other scalars as a member of that name would be.
func (p *projection) array(dst []byte, s *scanner, n *fieldNode) ([]byte, error) {
	s.i++ // '['
	dst = append(dst, '[')
	if s.ws(); s.peek() == ']' {
		s.i++
		return append(dst, ']'), nil
	}
	first := true
	sep := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	for {
		s.ws()
		var err error
		switch vs := s.i; s.peek() {
		case '{':
			sep()
			dst, err = p.object(dst, s, n)
		case '[':
			sep()
			dst, err = p.array(dst, s, n)
		default:
			if err = s.value(); err == nil && (p.deny || string(s.b[vs:s.i]) == "null") {
				sep()
				dst = append(dst, s.b[vs:s.i]...)
			}
		}
		if err != nil {
			return dst, err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return append(dst, ']'), nil
		default:
			return dst, errors.New("array element not followed by ',' or ']'")
		}
	}
}

func appendMember(dst []byte, first *bool, name []byte) []byte {
	if !*first {
		dst = append(dst, ',')
	}
	*first = false
	dst = append(dst, name...)
	return append(dst, ':')
}

// lookup finds the node of the member whose quoted name is raw. With fold (a deny list, whose
// paths are kept in lower case), a name matches in any case: a source that spells a member DOB
// does not get it past a deny list naming dob. An allow list matches exactly.
func lookup(n *fieldNode, raw []byte, fold bool) (*fieldNode, bool, error) {
	inner := raw[1 : len(raw)-1]
	if !slices.Contains(inner, '\\') {
		if fold {
			c, ok := n.sub[strings.ToLower(string(inner))]
			return c, ok, nil
		}
		c, ok := n.sub[string(inner)] // no allocation: the compiler looks up the bytes
		return c, ok, nil
	}
	// An escaped name ("e\u006dail") is the name it decodes to.
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return nil, false, errors.New("malformed member name")
	}
	if fold {
		name = strings.ToLower(name)
	}
	c, ok := n.sub[name]
	return c, ok, nil
}

// scanner walks JSON text the encoders wrote: it finds where values end, and validates no more
// than it needs to.
type scanner struct {
	b []byte
	i int
}

// peek is the byte at the scanner, 0 at the end.
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// str moves past the string at the scanner (at its '"').
func (s *scanner) str() error {
	if s.peek() != '"' {
		return errors.New("string expected")
	}
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++ // the escaped byte: \" does not end the string
		case '"':
			s.i++
			return nil
		}
	}
	return errors.New("unterminated string")
}

// value moves past the value at the scanner.
func (s *scanner) value() error {
	switch s.peek() {
	case '"':
		return s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if err := s.str(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return nil
			}
		}
		return errors.New("unterminated object or array")
	case 0, ',', '}', ']', ':':
		return errors.New("value expected")
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return nil
		}
		s.i++
	}
	if s.i == start {
		return errors.New("value expected")
	}
	return nil
}
