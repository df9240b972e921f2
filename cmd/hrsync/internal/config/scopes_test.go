package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestScopeWarnings: a key whose deny list takes out a member of a class of personal data while
// it reads others of that class gets one line, naming what it denies, what it still reads
// (the records' own members first) and the deny_classes that would take the class out; a key
// that denies the class, an allow list, or a deny list of employment facts gets none.
func TestScopeWarnings(t *testing.T) {
	tests := []struct {
		name, key, members string
		want               string // "" for no line
	}{
		{"deny email", "deny: [email]", "",
			`serve.keys: key "k" denies email but can read first_name, last_name, age, line_manager.first_name, line_manager.last_name (and 6 more), and the members no declaration names (identifying): deny_classes: [identifying]?`},
		{"deny email, members configured", "deny: [email]", "employees: {personal_email: identifying, mobile: identifying}",
			`serve.keys: key "k" denies email but can read first_name, last_name, age, mobile, personal_email (and 8 more), and the members no declaration names (identifying): deny_classes: [identifying]?`},
		{"deny the configured members", "deny: [personal_email, mobile, email]", "employees: {personal_email: identifying, mobile: identifying}",
			`serve.keys: key "k" denies personal_email, mobile, email but can read first_name, last_name, age,`},
		{"deny a member no declaration names", "deny: [dob]", "",
			`serve.keys: key "k" denies dob but can read first_name, last_name, email, age, line_manager.first_name (and 11 more), and the members no declaration names (identifying): deny_classes: [identifying]?`},
		{"deny a health member and classes", "{deny: [reason], deny_classes: [identifying, financial]}", "",
			`serve.keys: key "k" denies reason but can read company_sicknesstype, review_notes, fit_note_required, company_sicknesstype.name, and the members no declaration names (health): deny_classes: [identifying, financial, health]?`},
		{"deny the class and a member", "{deny: [email], deny_classes: [identifying]}", "", ""},
		{"deny the class", "{deny_classes: [identifying]}", "", ""},
		{"deny employment facts", "deny: [department, job_title]", "", ""},
		{"an allow list", "fields: [id, first_name]", "", ""},
		{"deny what is not personal", "{deny: [name], collections: [departments], writes: false}", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := tt.key
			if !strings.HasPrefix(scope, "{") {
				scope = "{" + scope + "}"
			}
			entry := "{name: k, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, " + strings.Trim(scope, "{}") + "}"
			text := "serve:\n  keys:\n    - " + entry + "\n"
			if tt.members != "" {
				text += "personal_data: {members: {" + tt.members + "}}\n"
			}
			cfg, err := Load(sinktest.ConfigFile(t, text), nil)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := ScopeWarnings(cfg)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want == "" && len(lines) != 0:
				t.Errorf("lines %q, want none", lines)
			case tt.want != "" && (len(lines) != 1 || !strings.HasPrefix(lines[0], tt.want)):
				t.Errorf("lines %q\nwant one starting %q", lines, tt.want)
			}
			for _, l := range lines {
				if strings.Contains(l, "secret-value") || strings.Contains(l, "\n") {
					t.Errorf("line %q holds the key or a newline", l)
				}
			}
		})
	}
}

// TestKeyScopes: the keys serve accepts, by name, with their accounts and scopes, as ServeKeys
// takes them: the key file's only with one account and no other key listed.
func TestKeyScopes(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"the key file", "serve: {api_key_file: /run/hrsync.key}\n", []string{"/run/hrsync.key"}},
		{"serve.api_keys", "serve: {api_keys: [secret-value-4f9a0c7e2b1d8e6f3a5c9b0d]}\n", []string{"serve.api_keys"}},
		{"serve.keys", "serve:\n  keys:\n    - {name: a, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny: [dob]}\n", []string{"a"}},
		{"serve.keys and serve.api_keys", "serve:\n  api_keys: [secret-value-4f9a0c7e2b1d8e6f3a5c9b0e]\n  keys:\n    - {name: a, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d}\n", []string{"a", "serve.api_keys"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(sinktest.ConfigFile(t, tt.text), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, k := range KeyScopes(cfg) {
				names = append(names, k.Name)
				if k.Account != cfg.Accounts[0].Name {
					t.Errorf("%s: account %q", k.Name, k.Account)
				}
				if k.Name == "a" && tt.name == "serve.keys" && !slices.Equal(k.Scope.Deny, []string{"dob"}) {
					t.Errorf("a: scope %+v", k.Scope)
				}
				if k.Name != "a" && (k.Scope.Deny != nil || k.Scope.Fields != nil || k.Scope.DenyClasses != nil || k.Scope.Collections != nil || k.Scope.ReadOnly) {
					t.Errorf("%s: scope %+v, want full access", k.Name, k.Scope)
				}
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("keys %q, want %q", names, tt.want)
			}
		})
	}
	cfg, err := Load(sinktest.ConfigFile(t, "serve:\n  keys:\n    - {name: a, account: beta, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny_classes: [health]}\naccounts:\n  - {name: alpha}\n  - {name: beta}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ks := KeyScopes(cfg); len(ks) != 1 || ks[0].Name != "a" || ks[0].Account != "beta" || !slices.Equal(ks[0].Scope.DenyClasses, []v1.Class{v1.Health}) {
		t.Errorf("several accounts: %+v", ks)
	}
}

// TestKeyFileIgnored: the line that says the key file's key is no longer accepted comes only
// when the file exists, is not read as a key_file of serve.keys, and other keys are listed.
func TestKeyFileIgnored(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hrsync.key")
	if err := os.WriteFile(file, []byte("hrsync-4f9a0c7e2b1d8e6f3a5c9b0d4f9a0c7e\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "{name: a, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d}"
	tests := []struct{ name, text, want string }{
		{"serve.keys set", "serve:\n  api_key_file: " + file + "\n  keys:\n    - " + key + "\n",
			"serve.keys is set: the key in " + file + " is no longer accepted (requests with it answer 401); to keep it, list it in serve.keys: - {name: admin, key_file: " + file + "}"},
		{"serve.api_keys set", "serve:\n  api_key_file: " + file + "\n  api_keys: [secret-value-4f9a0c7e2b1d8e6f3a5c9b0e]\n", "serve.api_keys is set: the key in " + file + " is no longer accepted"},
		{"the file's keys accepted", "serve: {api_key_file: " + file + "}\n", ""},
		{"listed as a key_file", "serve:\n  api_key_file: " + file + "\n  keys:\n    - " + key + "\n    - {name: admin, key_file: " + file + "}\n", ""},
		{"no such file", "serve:\n  api_key_file: " + file + ".missing\n  keys:\n    - " + key + "\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(sinktest.ConfigFile(t, tt.text), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := keyFileIgnored(cfg)
			if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
				t.Errorf("line %q, want %q", got, tt.want)
			}
		})
	}
}
