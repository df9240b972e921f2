package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/source/v1"
)

// A Member is a member of a collection's records, by its path and class (Readable).
type Member struct {
	// Path is the member's name, or for a member a nested object carries, the reference's name
	// and the member's joined by a dot (line_manager.email). A nested reference's own path
	// (line_manager) stands for the reference itself: its id, of the reference's class.
	Path  string
	Class v1.Class
}

// Reading is what a key reads of one collection's records (Readable).
type Reading struct {
	// Members are the declared members the key reads (the code's declarations and the
	// members the configuration classes, v1.Declarations), in the declaration's order, each
	// nested reference before the members it carries. The record's id, always served, is
	// not among them.
	Members []Member
	// Extra is what the key reads of the members no declaration names (dob, personal_email…:
	// whatever else the source sends), at any depth.
	Extra ExtraReading
}

// ExtraReading is what a key reads of the members of a collection's records no declaration
// names. Their names are not known before the source sends them, so it says which rule applies:
// the key reads all of them but those Except names, or (when All is false) only those Only
// names.
type ExtraReading struct {
	// Class is their class (v1.Collection.ExtraClass): identifying unless declared otherwise.
	Class v1.Class
	// All is true when the key reads every member no declaration names, but those in Except.
	All bool
	// Except are the paths of members no declaration names that the key's deny list leaves
	// out (as the list names them, in lower case: any case matches); only when All.
	Except []string
	// Only are the paths of members no declaration names that the key's allow list keeps (as
	// it names them, exactly), when All is false: none when it reads no such member. A nested
	// reference's path and ".*" (line_manager.*) stands for those its object carries, where
	// the list keeps the object whole.
	Only []string
}

// Reads reports whether the key reads any member no declaration names.
func (x ExtraReading) Reads() bool { return x.All || len(x.Only) > 0 }

// Classes are the classes of personal data (and not_personal) the key reads of the
// collection's records, in v1.Classes order: the classes of the members it reads, and the
// class of the members no declaration names when it reads any of them. The record's id (not
// personal) is not counted: a key reading only ids reads no class.
func (r Reading) Classes() []v1.Class {
	seen := map[v1.Class]bool{}
	for _, m := range r.Members {
		seen[m.Class] = true
	}
	if r.Extra.Reads() {
		seen[r.Extra.Class] = true
	}
	var out []v1.Class
	for _, c := range v1.Classes {
		if seen[c] {
			out = append(out, c)
		}
	}
	return out
}

// Readable answers what a key with the scope s reads, by the account's declarations decls
// (server.Account.Declarations): for every collection the key may read (by the names they are
// served under), which declared members of its records it reads, with their classes, and what
// it reads of the members no declaration names. A collection the key may not read is absent.
// It is what serve does to a record: s is compiled as New compiles it (an invalid scope is
// New's error) and its projections applied to a record made of every declared member, so what
// it says follows deny lists, allow lists, names at every depth (**.email), nested paths
// (line_manager.email), member twins and denied classes exactly as answers do. The zero Scope
// reads every member of every collection.
func Readable(s Scope, decls v1.Declarations) (map[string]Reading, error) {
	served := Collections()
	c, err := compileScope(s, served, decls)
	if err != nil {
		return nil, err
	}
	out := map[string]Reading{}
	for _, name := range served {
		if !c.mayRead(name) {
			continue
		}
		fields, extra, ok := decls.Declared(name)
		if !ok {
			return nil, fmt.Errorf("readable: no declaration of %q", name)
		}
		r, err := c.reading(name, fields, extra, candidatePaths(s))
		if err != nil {
			return nil, fmt.Errorf("readable: %s: %w", name, err)
		}
		out[name] = r
	}
	return out, nil
}

// undeclaredProbe is the name of a member no declaration (nor any configuration, as names the
// source sends never hold NUL) names: whether a projection keeps it says whether the key reads
// such members.
const undeclaredProbe = "\x00undeclared"

// probeNode is one object of the record Readable projects: its members in order, each a leaf
// (nil) or an object.
type probeNode struct {
	names []string
	sub   map[string]*probeNode
}

func newProbeNode() *probeNode { return &probeNode{sub: map[string]*probeNode{}} }

// leaf adds a member holding a scalar, unless the node has it already.
func (n *probeNode) leaf(name string) {
	if _, ok := n.sub[name]; !ok {
		n.names = append(n.names, name)
		n.sub[name] = nil
	}
}

// object adds a member holding an object (with an id and a probe), unless the node has it
// already; the object's node, nil when the member is a scalar.
func (n *probeNode) object(name string) *probeNode {
	c, ok := n.sub[name]
	if !ok {
		c = newProbeNode()
		c.leaf("id")
		c.leaf(undeclaredProbe)
		n.names = append(n.names, name)
		n.sub[name] = c
	}
	return c
}

// appendJSON writes the node as a JSON object, every scalar 0.
func (n *probeNode) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, name := range n.names {
		if i > 0 {
			b = append(b, ',')
		}
		q, _ := json.Marshal(name) // a string: no error
		b = append(b, q...)
		b = append(b, ':')
		if c := n.sub[name]; c != nil {
			b = c.appendJSON(b)
		} else {
			b = append(b, '0')
		}
	}
	return append(b, '}')
}

// candidatePaths are the paths s's allow or deny list names (a name at every depth as the
// record's member of that name), as the list matches them: a deny list's in lower case.
func candidatePaths(s Scope) []string {
	list := s.Fields
	if list == nil {
		list = s.Deny
	}
	var out []string
	for _, p := range withTwins(list) {
		p = strings.TrimPrefix(p, anyDepth+".")
		if s.Fields == nil {
			p = strings.ToLower(p)
		}
		if !slices.Contains(out, p) && !strings.Contains(p, "*") {
			out = append(out, p)
		}
	}
	return out
}

// reading is Readable's answer for one collection, whose declaration is fields and extra, and
// candidates the paths the key's list names, which may name members no declaration names.
func (c *scope) reading(collection string, fields []v1.Field, extra v1.Class, candidates []string) (Reading, error) {
	root := newProbeNode()
	root.leaf("id")
	root.leaf(undeclaredProbe)
	declared := map[string]bool{}
	for _, f := range fields {
		declared[f.Name] = true
		if f.Kind != v1.Nested {
			root.leaf(f.Name)
			continue
		}
		n := root.object(f.Name)
		for _, cf := range f.Nested.Fields {
			declared[f.Name+"."+cf.Name] = true
			n.leaf(cf.Name)
		}
	}
	var undeclared []string // the candidates that name members no declaration names
	for _, p := range candidates {
		segs := strings.Split(p, ".")
		if slices.Contains(segs, "") || declared[p] || p == "id" || strings.HasSuffix(p, ".id") && declared[strings.TrimSuffix(p, ".id")] {
			continue
		}
		n := root
		for _, seg := range segs[:len(segs)-1] {
			if n = n.object(seg); n == nil {
				break // a path through a scalar names nothing the record holds
			}
		}
		if n != nil {
			n.leaf(segs[len(segs)-1])
			undeclared = append(undeclared, p)
		}
	}
	got, err := c.project(collection, root.appendJSON(nil))
	if err != nil {
		return Reading{}, err
	}
	var rec map[string]any
	if err := json.Unmarshal(got, &rec); err != nil {
		return Reading{}, fmt.Errorf("reading the projected record: %w", err)
	}
	r := Reading{Extra: ExtraReading{Class: extra}}
	for _, f := range fields {
		if f.Kind != v1.Nested {
			if has(rec, f.Name) {
				r.Members = append(r.Members, Member{Path: f.Name, Class: f.Class})
			}
			continue
		}
		if has(rec, f.Name+".id") {
			r.Members = append(r.Members, Member{Path: f.Name, Class: f.Class})
		}
		for _, cf := range f.Nested.Fields {
			if p := f.Name + "." + cf.Name; has(rec, p) {
				r.Members = append(r.Members, Member{Path: p, Class: cf.Class})
			}
		}
	}
	r.Extra.All = has(rec, undeclaredProbe)
	if !r.Extra.All {
		// An allow list that keeps a nested object whole keeps what it carries undeclared.
		for _, f := range fields {
			if f.Kind == v1.Nested && has(rec, f.Name+"."+undeclaredProbe) {
				r.Extra.Only = append(r.Extra.Only, f.Name+".*")
			}
		}
	}
	for _, p := range undeclared {
		switch kept := has(rec, p); {
		case r.Extra.All && !kept:
			r.Extra.Except = append(r.Extra.Except, p)
		case !r.Extra.All && kept:
			r.Extra.Only = append(r.Extra.Only, p)
		}
	}
	return r, nil
}

// project is the record src, a JSON object of the collection, as the key is served it: the
// projection of the classes it is denied, then of its fields (as projected does).
func (c *scope) project(collection string, src []byte) ([]byte, error) {
	if c == nil {
		return src, nil
	}
	if p := c.classes[collection]; p != nil {
		var err error
		if src, err = p.appendProject(nil, src); err != nil {
			return nil, err
		}
	}
	if c.fields != nil {
		return c.fields.appendProject(nil, src)
	}
	return src, nil
}

// has reports whether the decoded object rec holds the dotted path.
func has(rec map[string]any, path string) bool {
	var v any = rec
	for seg := range strings.SplitSeq(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = obj[seg]; !ok {
			return false
		}
	}
	return true
}
