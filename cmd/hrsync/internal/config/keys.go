package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/source/serve"
)

// checkServeKeys validates serve.keys: each named, once; its key, its key file or its SHA-256,
// one of them; its account one of the configuration's (it may be left out when there is one);
// its scope (collections served, field paths, writes). With several accounts, serve.api_keys
// cannot say whose data a key reads: serve.keys must. Errors name the key, never its value.
func (s Settings) checkServeKeys() error {
	names := Names(s.Accounts)
	if len(s.Accounts) > 1 && len(s.Serve.APIKeys) > 0 {
		return errors.New("config: serve.api_keys cannot say which account a key reads; with several accounts, list serve.keys, each with its account")
	}
	for i, k := range s.Serve.APIKeys {
		if err := serve.CheckKeyStrength(k); err != nil {
			return fmt.Errorf("config: serve.api_keys: key %d: %w", i+1, err)
		}
	}
	seen := map[string]bool{}
	for i, k := range s.Serve.Keys {
		switch {
		case strings.TrimSpace(k.Name) == "":
			return fmt.Errorf("config: serve.keys[%d] has no name (the name logs and metrics show)", i)
		case seen[k.Name]:
			return fmt.Errorf("config: serve.keys: two keys named %q", k.Name)
		case countSet(k.Key, k.KeyFile, k.SHA256) != 1:
			return fmt.Errorf("config: serve.keys %s: set key or key_file, or sha256 (exactly one of them)", k.Name)
		case k.Account == "" && len(s.Accounts) > 1:
			return fmt.Errorf("config: serve.keys %s: name its account (one of %s)", k.Name, strings.Join(names, ", "))
		case k.Account != "" && !slices.Contains(names, k.Account):
			msg := fmt.Sprintf("config: serve.keys %s: no account %q", k.Name, k.Account)
			if near := closest(k.Account, names); near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return errors.New(msg + "; configured: " + strings.Join(names, ", "))
		}
		// A key_file's key is read, and checked the same way, when serve starts (serveKeys).
		if k.KeyFile == "" {
			if err := serve.CheckKey(serve.Key{Key: k.Key, SHA256: k.SHA256}); err != nil {
				if k.SHA256 != "" {
					return fmt.Errorf("config: serve.keys %s: sha256 is not 64 hex digits (make it with: printf %%s \"$KEY\" | sha256sum)", k.Name)
				}
				return fmt.Errorf("config: serve.keys %s: key: %w", k.Name, err)
			}
		}
		if err := checkScope(k); err != nil {
			return fmt.Errorf("config: serve.keys %s: %w", k.Name, err)
		}
		seen[k.Name] = true
	}
	return nil
}

// checkScope validates a key's scope: its collections served (naming the closest to a wrong
// one), its fields or deny (field paths), and writes with employees among its collections.
func checkScope(k ServeKey) error {
	served := serve.Collections()
	if k.Collections != nil && len(k.Collections) == 0 {
		return errors.New("collections lists none (leave it out for all)")
	}
	for _, name := range k.Collections {
		if !slices.Contains(served, name) {
			msg := fmt.Sprintf("collections: no collection %q", name)
			if near := closest(name, served); near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return errors.New(msg + "; served: " + strings.Join(served, ", "))
		}
	}
	if k.Fields != nil && k.Deny != nil {
		return errors.New("set fields (the fields it may see) or deny (those it may not), not both")
	}
	if k.writes() && k.Collections != nil && !slices.Contains(k.Collections, "employees") {
		return errors.New("writes is true but collections leaves out employees: it may create employees but not read them (add employees, or set writes: false)")
	}
	return serve.CheckScope(k.Scope())
}

// countSet counts the values that are not empty.
func countSet(values ...string) int {
	n := 0
	for _, v := range values {
		if v != "" {
			n++
		}
	}
	return n
}

// errTLSHalf is the configuration error of a certificate without its key, or a key without its
// certificate.
var errTLSHalf = errors.New("config: serve.tls_cert and serve.tls_key go together: set both, or neither")
