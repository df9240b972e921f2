package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/source/server"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// A KeyScope is a key serve accepts, by its name, with the account it reads and its scope: what
// the inventory and the warnings at start read of the keys, never a key itself.
type KeyScope struct {
	// Name is the key's name in serve.keys; for the keys of serve.api_keys or of the key file
	// (full access, named by position in logs), where they are: "serve.api_keys", or the
	// file's path (hrsync.key).
	Name    string
	Account string // the account whose data it reads
	Scope   server.Scope
}

// KeyScopes are the keys serve accepts under cfg, as ServeKeys takes them, without reading any
// key or key file: each of serve.keys; with one account, also serve.api_keys when set, and when
// neither lists a key, the key file's (serve.api_key_file, generated when missing): those two
// with full access.
func KeyScopes(cfg Settings) []KeyScope {
	var out []KeyScope
	for _, k := range cfg.Serve.Keys {
		account := k.Account
		if account == "" && len(cfg.Accounts) > 0 {
			account = cfg.Accounts[0].Name // checkServeKeys: only when there is one
		}
		out = append(out, KeyScope{Name: k.Name, Account: account, Scope: k.Scope()})
	}
	if len(cfg.Accounts) != 1 {
		return out
	}
	switch {
	case len(cfg.Serve.APIKeys) > 0:
		out = append(out, KeyScope{Name: "serve.api_keys", Account: cfg.Accounts[0].Name})
	case len(cfg.Serve.Keys) == 0 && cfg.Serve.APIKeyFile != "":
		out = append(out, KeyScope{Name: cfg.Serve.APIKeyFile, Account: cfg.Accounts[0].Name})
	}
	return out
}

// keyFileIgnored is the line serve logs at start when serve.api_key_file exists but its keys
// are not accepted (ServeKeys: serve.keys or serve.api_keys list the keys, or there are several
// accounts), saying how to keep its key; "" when the file's keys are accepted, the file does not
// exist, or serve.keys reads it as a key_file.
func keyFileIgnored(cfg Settings) string {
	file := cfg.Serve.APIKeyFile
	if file == "" || len(cfg.Accounts) == 1 && len(cfg.Serve.Keys) == 0 && len(cfg.Serve.APIKeys) == 0 {
		return ""
	}
	if _, err := os.Stat(file); err != nil {
		return ""
	}
	for _, k := range cfg.Serve.Keys {
		if k.KeyFile != "" && samePath(k.KeyFile, file) {
			return ""
		}
	}
	by := "serve.keys is set"
	if len(cfg.Serve.Keys) == 0 {
		by = "serve.api_keys is set"
	}
	return fmt.Sprintf("%s: the key in %s is no longer accepted (requests with it answer 401); to keep it, list it in serve.keys: - {name: admin, key_file: %s}", by, file, file)
}

// samePath reports whether two paths name one file: equal once absolute and clean, or the same
// file on disk.
func samePath(a, b string) bool {
	if aa, err := filepath.Abs(a); err == nil {
		if bb, err := filepath.Abs(b); err == nil && aa == bb {
			return true
		}
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// maxNamed is how many members a warning names before counting the rest.
const maxNamed = 5

// ScopeWarnings are the lines serve logs at start, one per key, for the keys whose deny list
// takes out a member of a class of personal data (identifying, free text, financial, health)
// while other members of that class stay readable: a key written "deny: [email]" still reads
// first_name, last_name, age and every member no declaration names (dob, personal_email…), all
// identifying, where deny_classes: [identifying] leaves out the whole class. Each line names the
// key (never its value), what its list denies, what it still reads of each such class, and the
// deny_classes that would take the class out. A member no declaration names that a deny list
// takes out counts as identifying (it is where such members are identifying: names, contacts,
// dates of birth). Employment facts and what is not personal are not warned about: denying
// some of them is a choice, not a leak. By the declarations of each key's account.
func ScopeWarnings(cfg Settings) ([]string, error) {
	decls := map[string]v1.Declarations{}
	for _, a := range cfg.Accounts {
		decls[a.Name] = a.Declarations
	}
	var out []string
	for _, k := range KeyScopes(cfg) {
		w, err := scopeWarning(k, decls[k.Account])
		if err != nil {
			return nil, fmt.Errorf("serve.keys %s: %w", k.Name, err)
		}
		if w != "" {
			out = append(out, w)
		}
	}
	return out, nil
}

// scopeWarning is ScopeWarnings' line for one key, "" when it has none.
func scopeWarning(k KeyScope, decls v1.Declarations) (string, error) {
	if len(k.Scope.Deny) == 0 {
		return "", nil
	}
	base := k.Scope
	base.Deny = nil
	before, err := server.Readable(base, decls)
	if err != nil {
		return "", err
	}
	after, err := server.Readable(k.Scope, decls)
	if err != nil {
		return "", err
	}
	served := server.Collections()
	// What each path of the list takes out, by class.
	denied := map[v1.Class][]string{}
	for _, p := range k.Scope.Deny {
		one := base
		one.Deny = []string{p}
		r, err := server.Readable(one, decls)
		if err != nil {
			return "", err
		}
		// The classes of the declared members it takes out; a path that takes out none, only
		// members no declaration names (in some collection), takes out identifying ones.
		takes := map[v1.Class]bool{}
		declared, undeclared := false, false
		for _, name := range served {
			b, ok := before[name]
			if !ok {
				continue
			}
			for _, m := range b.Members {
				if !slices.Contains(r[name].Members, m) {
					takes[m.Class] = true
					declared = true
				}
			}
			undeclared = undeclared || b.Extra.All && len(r[name].Extra.Except) > 0
		}
		if undeclared && !declared {
			takes[v1.Identifying] = true // a member no collection declares: dob, personal_email…
		}
		for c := range takes {
			if c.Erasable() {
				denied[c] = append(denied[c], p)
			}
		}
	}
	var clauses []string
	var hint []string
	for _, c := range v1.Classes {
		if len(denied[c]) == 0 {
			continue
		}
		var reads []string
		extra := false
		for _, name := range served {
			r, ok := after[name]
			if !ok {
				continue
			}
			for _, m := range r.Members {
				if m.Class == c && !slices.Contains(reads, m.Path) {
					reads = append(reads, m.Path)
				}
			}
			extra = extra || r.Extra.Reads() && r.Extra.Class == c
		}
		if len(reads) == 0 && !extra {
			continue
		}
		// The records' own members first (first_name, a configured personal_email), then
		// those nested objects carry (line_manager.first_name).
		slices.SortStableFunc(reads, func(a, b string) int {
			return strings.Count(a, ".") - strings.Count(b, ".")
		})
		what := strings.Join(reads[:min(len(reads), maxNamed)], ", ")
		if len(reads) > maxNamed {
			what += fmt.Sprintf(" (and %d more)", len(reads)-maxNamed)
		}
		switch {
		case extra && what != "":
			what += ", and the members no declaration names"
		case extra:
			what = "the members no declaration names"
		}
		clauses = append(clauses, fmt.Sprintf("denies %s but can read %s (%s)", strings.Join(denied[c], ", "), what, c))
		hint = append(hint, c.String())
	}
	if len(clauses) == 0 {
		return "", nil
	}
	for _, c := range k.Scope.DenyClasses {
		hint = append(hint, c.String())
	}
	slices.SortFunc(hint, func(a, b string) int { return classRank(a) - classRank(b) })
	return fmt.Sprintf("serve.keys: key %q %s: deny_classes: [%s]?", k.Name, strings.Join(clauses, "; "), strings.Join(slices.Compact(hint), ", ")), nil
}

// classRank is a class's place in v1.Classes, by its name.
func classRank(name string) int {
	return slices.IndexFunc(v1.Classes, func(c v1.Class) bool { return c.String() == name })
}
