package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

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

// add names the path segs beneath n: a path that names a whole member takes in every longer
// path through it.
func (n *fieldNode) add(segs []string) {
	for i, seg := range segs {
		c, ok := n.sub[seg]
		if ok && c.sub == nil {
			return // a shorter path already names the whole member
		}
		if i == len(segs)-1 {
			n.sub[seg] = &fieldNode{} // the whole member, whatever longer paths said
			return
		}
		if !ok {
			c = &fieldNode{sub: map[string]*fieldNode{}}
			n.sub[seg] = c
		}
		n = c
	}
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
		p.root.add(segs)
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
