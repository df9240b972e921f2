package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	v1 "github.com/hrsync/hrsync/source/v1"
)

// PersonalDataConfig is the personal_data section: what hrsync cannot know of the data it
// copies. See docs/personal-data.md, "Members no declaration names".
type PersonalDataConfig struct {
	// Members class members of records that no declaration names (custom fields an HR account
	// adds), by collection then member: {employees: {cost_centre: employment}}. Unclassed, such
	// a member is identifying: erased with a person's names, hidden from a key denied them.
	Members MemberClasses `yaml:"members"`
	// Purposes, LawfulBasis and Recipients are what a subject-access document says of why the
	// data is held, on what basis (UK/EU GDPR Art. 6, and Art. 9 for health) and who receives it
	// beside the replica's keys (a payroll provider, a pension scheme): sentences, as the data
	// protection officer writes them, each one line. An account's lists replace the top-level
	// ones. See docs/personal-data.md, "Subject access".
	Purposes    []string `yaml:"purposes"`
	LawfulBasis []string `yaml:"lawful_basis"`
	Recipients  []string `yaml:"recipients"`
}

// maxStatement bounds a sentence of personal_data's lists.
const maxStatement = 1000

// checkStatements validates personal_data's lists of sentences: each one line of text, not
// empty, at most maxStatement bytes; an error names the key and the item.
func (p PersonalDataConfig) checkStatements() error {
	for _, l := range []struct {
		key   string
		items []string
	}{{"purposes", p.Purposes}, {"lawful_basis", p.LawfulBasis}, {"recipients", p.Recipients}} {
		for i, s := range l.items {
			switch {
			case strings.TrimSpace(s) == "":
				return fmt.Errorf("personal_data.%s[%d]: empty; write a sentence, or leave the item out", l.key, i)
			case len(s) > maxStatement:
				return fmt.Errorf("personal_data.%s[%d]: %d bytes, more than %d", l.key, i, len(s), maxStatement)
			case !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl):
				return fmt.Errorf("personal_data.%s[%d]: want one line of text (no control characters)", l.key, i)
			}
		}
	}
	return nil
}

// clone is a deep copy of p.
func (p PersonalDataConfig) clone() PersonalDataConfig {
	return PersonalDataConfig{Members: p.Members.clone(), Purposes: slices.Clone(p.Purposes),
		LawfulBasis: slices.Clone(p.LawfulBasis), Recipients: slices.Clone(p.Recipients)}
}

// MemberClasses are personal_data.members: collection → a record's member → the name of its
// class (not_personal, employment, identifying, free_text, financial, health).
//
// In the file, an account's section is laid over the top-level one member by member (it adds
// members and reclasses those it names; UnmarshalYAML). In the environment
// (HRSYNC_PERSONAL_DATA_MEMBERS) it is a comma-separated list of collection.member=class, which
// replaces the file's, as every variable replaces its key.
type MemberClasses map[string]map[string]string

// UnmarshalYAML lays the section's members over those m holds already (an account's over the
// top-level ones), so that an account need not repeat what every account shares.
func (m *MemberClasses) UnmarshalYAML(n *yaml.Node) error {
	var in map[string]map[string]string
	if err := n.Decode(&in); err != nil {
		return err
	}
	for collection, members := range in {
		if *m == nil {
			*m = MemberClasses{}
		}
		merged := maps.Clone((*m)[collection])
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, members)
		(*m)[collection] = merged
	}
	return nil
}

// clone is a deep copy of m: an account's section is laid over a copy of the top-level one,
// never over the one every account shares.
func (m MemberClasses) clone() MemberClasses {
	if m == nil {
		return nil
	}
	out := make(MemberClasses, len(m))
	for c, ms := range m {
		out[c] = maps.Clone(ms)
	}
	return out
}

// parseMemberClasses reads HRSYNC_PERSONAL_DATA_MEMBERS: collection.member=class, comma-separated.
func parseMemberClasses(s string) (MemberClasses, error) {
	var out MemberClasses
	for i, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		path, class, ok := strings.Cut(item, "=")
		collection, member, dotted := strings.Cut(strings.TrimSpace(path), ".")
		if !ok || !dotted || collection == "" || member == "" {
			// The item is not quoted: a variable's value is never shown (it may hold a key).
			return nil, fmt.Errorf("item %d: want collection.member=class, comma-separated (employees.cost_centre=employment)", i+1)
		}
		if out == nil {
			out = MemberClasses{}
		}
		if out[collection] == nil {
			out[collection] = map[string]string{}
		}
		out[collection][member] = strings.TrimSpace(class)
	}
	return out, nil
}

// parse reads the section into the declarations the account's warehouse and replica act by; an
// error names the key (personal_data.members.employees.first_name: declared as identifying
// already …).
func (p PersonalDataConfig) parse() (v1.Declarations, error) {
	if err := p.checkStatements(); err != nil {
		return v1.Declarations{}, err
	}
	const key = "personal_data.members"
	known := v1.DeclaredCollections()
	members := v1.Members{}
	for _, collection := range slices.Sorted(maps.Keys(p.Members)) {
		if !slices.Contains(known, collection) {
			msg := fmt.Sprintf("%s: unknown collection %q", key, collection)
			if near := closest(collection, known); near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return v1.Declarations{}, fmt.Errorf("%s; known: %s", msg, strings.Join(known, ", "))
		}
		for _, member := range slices.Sorted(maps.Keys(p.Members[collection])) {
			c, err := v1.ParseClass(p.Members[collection][member])
			if err != nil {
				return v1.Declarations{}, fmt.Errorf("%s.%s.%s: %w", key, collection, member, err)
			}
			if members[collection] == nil {
				members[collection] = map[string]v1.Class{}
			}
			members[collection][member] = c
		}
	}
	d, err := v1.NewDeclarations(members)
	var me *v1.MemberError
	if errors.As(err, &me) && me.Declared.Valid() {
		return v1.Declarations{}, fmt.Errorf("%s.%s.%s: declared as %s already (declarations are code; only members no declaration names are classed here)",
			key, me.Collection, me.Member, me.Declared)
	}
	if err != nil {
		return v1.Declarations{}, fmt.Errorf("%s.%w", key, err)
	}
	return d, nil
}
