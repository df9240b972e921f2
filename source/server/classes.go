package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/source/v1"
)

// A key may be denied whole classes of personal data (Scope.DenyClasses): each collection's
// declared members of those classes are left out at every depth the declarations reach (the
// record's members, those its nested objects carry), and so are the members no declaration
// names when their class (v1.Collection.ExtraClass: identifying unless declared otherwise) is
// denied. The declarations are the account's (Account.Declarations): a member its configuration
// classes is a declared member of its class. Where members no declaration names are denied, the
// answer keeps only what the declarations allow (an allow list of exact names, so nothing
// unknown slips through, at any depth); where they are not, it leaves out what they deny (a
// deny list whose lookup folds names: a member named as a denied one in another case is left
// out too, as v1.Declarations.EraseJSON erases it by that one's class).

// compileClasses compiles the denial of classes into a projection per served collection that
// has anything to leave out, by decls, and the fingerprint of what they do to answers.
func compileClasses(denied []v1.Class, served []string, decls v1.Declarations) (map[string]*projection, string, error) {
	deny := map[v1.Class]bool{}
	for _, c := range denied {
		if !c.Valid() {
			return nil, "", errors.New("deny_classes: not a class of personal data")
		}
		deny[c] = true
	}
	out := map[string]*projection{}
	var texts []string
	for _, name := range served {
		fields, extra, ok := decls.Declared(name)
		if !ok {
			continue
		}
		p := classProjection(fields, deny[extra], deny)
		if p == nil {
			continue
		}
		out[name] = p
		texts = append(texts, name+"="+p.canonical())
	}
	names := make([]string, 0, len(deny))
	for c := range deny {
		names = append(names, c.String())
	}
	slices.Sort(names)
	// The projections, not only the classes, are in the fingerprint: a build that declares a
	// member's class otherwise, or a configuration that classes a member otherwise, never
	// shares a tag with this one.
	sum := sha256.Sum256([]byte(strings.Join(texts, "\x00")))
	return out, "classes:" + strings.Join(names, ",") + ":" + hex.EncodeToString(sum[:8]), nil
}

// classProjection is the projection that leaves out the members of fields whose classes deny
// holds, and every member no declaration names when undeclared; nil when it leaves out nothing.
func classProjection(fields []v1.Field, undeclared bool, deny map[v1.Class]bool) *projection {
	var paths []string
	for _, f := range fields {
		switch {
		case undeclared && deny[f.Class]:
		case undeclared && f.Kind == v1.Nested:
			paths = append(paths, f.Name+".id")
			for _, cf := range f.Nested.Fields {
				if !deny[cf.Class] {
					paths = append(paths, f.Name+"."+cf.Name)
				}
			}
		case undeclared:
			paths = append(paths, f.Name)
		case deny[f.Class]:
			paths = append(paths, f.Name)
		case f.Kind == v1.Nested:
			for _, cf := range f.Nested.Fields {
				if deny[cf.Class] {
					paths = append(paths, f.Name+"."+cf.Name)
				}
			}
		}
	}
	if !undeclared && len(paths) == 0 {
		return nil
	}
	if undeclared {
		paths = append(paths, "id")
	}
	root := &fieldNode{sub: map[string]*fieldNode{}}
	for _, path := range withTwins(paths) {
		if !undeclared {
			path = strings.ToLower(path) // a deny list's lookup folds the names it reads
		}
		root.add(strings.Split(path, "."))
	}
	return &projection{deny: !undeclared, root: root, anywhere: map[string]bool{}}
}
