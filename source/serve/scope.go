package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
	// anywhere are the member names the list names at every depth (**.name, and a deny
	// list's bare names): allowed whole, or denied, in every object the projection reads. A
	// deny list's are in lower case.
	anywhere map[string]bool
}

// fieldNode is one member named by field paths: the whole member when sub is nil (a path ends
// there), else the members of its object (or of each object of its array) named in sub.
type fieldNode struct {
	sub map[string]*fieldNode
}

// unnamed is the node of a member no path names, which a deny list with names at every depth
// reads through for them.
var unnamed = &fieldNode{sub: map[string]*fieldNode{}}

// anyDepth is the prefix of a path that names a member at every depth: **.email.
const anyDepth = "**"

// compileFields reads field paths into a tree and a set of names at every depth. In a deny
// list a bare name ("email") is named at every depth, as **.email is; in an allow list it is the
// record's member only. A path that names a whole member takes in every longer path through
// it, and a name at every depth every path through a member of that name.
func compileFields(paths []string, deny bool) (*projection, error) {
	p := &projection{deny: deny, root: &fieldNode{sub: map[string]*fieldNode{}}, anywhere: map[string]bool{}}
	for _, path := range withTwins(paths) {
		segs := strings.Split(path, ".")
		if slices.Contains(segs, "") {
			return nil, fmt.Errorf("field path %q has an empty segment", path)
		}
		if deny {
			for i := range segs {
				segs[i] = strings.ToLower(segs[i]) // lookup folds the names it reads
			}
		}
		switch {
		case segs[0] == anyDepth:
			if len(segs) != 2 || strings.Contains(segs[1], "*") {
				return nil, fmt.Errorf("field path %q: ** must be followed by one member name (**.email)", path)
			}
			p.anywhere[segs[1]] = true
			continue
		case slices.ContainsFunc(segs, func(seg string) bool { return strings.Contains(seg, "*") }):
			return nil, fmt.Errorf("field path %q: * is no wildcard; a member at every depth is **.name (**.email)", path)
		case deny && len(segs) == 1:
			p.anywhere[segs[0]] = true
			continue
		}
		n := p.root
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
	// A name at every depth decides for every member of that name: paths through one say
	// nothing more, and the canonical text does not keep them. In a deny list, a member whose
	// paths all went so is read through as one no path names.
	var prune func(n *fieldNode)
	prune = func(n *fieldNode) {
		for name, c := range n.sub {
			if p.anywhere[name] {
				delete(n.sub, name)
			} else if c.sub != nil {
				if prune(c); deny && len(c.sub) == 0 {
					delete(n.sub, name)
				}
			}
		}
	}
	prune(p.root)
	return p, nil
}

// memberTwins are members the source sends under two names: the interface document's
// company_join_date is join_date in some accounts (the replica serves each record as sent). A
// path naming one names the other too, so a deny list never lets the other spelling through.
var memberTwins = map[string]string{"company_join_date": "join_date", "join_date": "company_join_date"}

// withTwins is paths and, for each path with a segment that has a twin, the path with the twin
// in its place.
func withTwins(paths []string) []string {
	out := paths
	for _, path := range paths {
		segs := strings.Split(path, ".")
		for i, seg := range segs {
			if twin, ok := memberTwins[strings.ToLower(seg)]; ok {
				if len(out) == len(paths) {
					out = slices.Clone(paths)
				}
				t := slices.Clone(segs)
				t[i] = twin
				out = append(out, strings.Join(t, "."))
			}
		}
	}
	return out
}

// canonical is the projection's canonical text: equal projections, however their paths were
// written, have equal texts. It names the names at every depth (after **), even none, so no
// text of a list compiled before they existed (when a deny list's bare name was the record's
// member only) equals one of now.
func (p *projection) canonical() string {
	var b strings.Builder
	if p.deny {
		b.WriteString("deny:")
	} else {
		b.WriteString("fields:")
	}
	b.WriteString(anyDepth)
	b.WriteByte('(')
	for _, name := range slices.Sorted(maps.Keys(p.anywhere)) {
		b.WriteString(strconv.Quote(name))
	}
	b.WriteByte(')')
	var walk func(n *fieldNode)
	walk = func(n *fieldNode) {
		b.WriteByte('(')
		for _, name := range slices.Sorted(maps.Keys(n.sub)) {
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
		child, keep, err := p.member(n, name)
		if err != nil {
			return dst, err
		}
		vs := s.i
		switch keep {
		case keepWhole:
			if err := s.value(); err != nil {
				return dst, err
			}
			dst = appendMember(dst, &first, name)
			dst = append(dst, s.b[vs:s.i]...)
		case leaveOut:
			if err := s.value(); err != nil {
				return dst, err
			}
		default:
			// named by longer paths (or, in a deny list, read for names at every depth):
			// their members of its object(s)
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

// What a projection does with a member.
const (
	keepWhole   = iota // its value as it is
	leaveOut           // not served
	readThrough        // its value's objects projected by the member's node
)

// member says what the projection does with the member whose quoted name is raw, in an object
// read by the node n, and the node to read its value by. In a deny list, denied at every depth
// or by a path that ends there: left out; named by longer paths: read through; else read
// through for the names at every depth when there are some (kept whole when not). In an allow
// list, allowed at every depth or by a path that ends there: kept whole; named by longer paths:
// read through; else left out.
func (p *projection) member(n *fieldNode, raw []byte) (*fieldNode, int, error) {
	name, err := p.name(raw)
	if err != nil {
		return nil, leaveOut, err
	}
	child, named := n.sub[string(name)] // no allocation: the compiler looks up the bytes
	switch {
	case p.deny && p.anywhere[string(name)], p.deny && named && child.sub == nil:
		return nil, leaveOut, nil
	case p.deny && named:
		return child, readThrough, nil
	case p.deny && len(p.anywhere) > 0:
		return unnamed, readThrough, nil
	case p.deny:
		return nil, keepWhole, nil
	case p.anywhere[string(name)], named && child.sub == nil:
		return nil, keepWhole, nil
	case named:
		return child, readThrough, nil
	}
	return nil, leaveOut, nil
}

// name is the member name quoted in raw as the projection's paths hold it. An escaped name
// ("e\u006dail") is the name it decodes to. In a deny list (whose paths are kept in lower case)
// it is in lower case, so a name matches in any case: a source that spells a member DOB does
// not get it past a deny list naming dob. An allow list matches exactly.
func (p *projection) name(raw []byte) ([]byte, error) {
	inner := raw[1 : len(raw)-1]
	if slices.Contains(inner, '\\') {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, errors.New("malformed member name")
		}
		inner = []byte(name)
	}
	if p.deny && !lowerASCII(inner) {
		return []byte(strings.ToLower(string(inner))), nil
	}
	return inner, nil
}

// lowerASCII reports whether b is ASCII without upper-case letters: its own lower case.
func lowerASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
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
