package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/source/server"
	v1 "github.com/hrsync/hrsync/source/v1"
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
		if err := server.CheckKeyStrength(k); err != nil {
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
			if err := server.CheckKey(server.Key{Key: k.Key, SHA256: k.SHA256}); err != nil {
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
	served := server.Collections()
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
	if k.DenyClasses != nil && len(k.DenyClasses) == 0 {
		return errors.New("deny_classes lists none (leave it out to deny none)")
	}
	for _, name := range k.DenyClasses {
		if _, err := v1.ParseClass(name); err != nil {
			return fmt.Errorf("deny_classes: %w", err)
		}
	}
	if k.writes() && k.Collections != nil && !slices.Contains(k.Collections, "employees") {
		return errors.New("writes is true but collections leaves out employees: it may create employees but not read them (add employees, or set writes: false)")
	}
	return server.CheckScope(k.Scope())
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

// ServeKeys are the keys clients may use, each with the account it reads: serve.keys (a key
// from its key_file when it has one); with one account, also serve.api_keys, and when neither
// lists a key, those of serve.api_key_file (see apiKeys), returned apart as plain (serve's
// Options.APIKeys: named by position, kept apart by their hash). Keys are never logged; each is
// checked by serve.CheckKey, the error naming the key, never its value. It logs a warning per
// key whose deny list leaves readable other members of a class it denies one of
// (ScopeWarnings), and one when the key file exists but its keys are not accepted (serve.keys or
// serve.api_keys list the keys): the file's key then answers 401, unless serve.keys lists it
// as a key_file.
func ServeKeys(cfg Settings, log *slog.Logger) (keys []server.Key, plain []string, err error) {
	for _, k := range cfg.Serve.Keys {
		key := k.Key
		if k.KeyFile != "" {
			if key, err = readKeyFile(k.KeyFile); err != nil {
				return nil, nil, fmt.Errorf("serve: key %s: key_file: %w", k.Name, err)
			}
		}
		account := k.Account
		if account == "" {
			account = cfg.Accounts[0].Name // checkServeKeys: only when there is one
		}
		sk := server.Key{Name: k.Name, Key: key, SHA256: k.SHA256, Account: account, Scope: k.Scope()}
		if err := server.CheckKey(sk); err != nil {
			where := "key"
			if k.KeyFile != "" {
				where = "key_file " + k.KeyFile
			}
			return nil, nil, fmt.Errorf("serve: serve.keys %s: %s: %w", k.Name, where, err)
		}
		keys = append(keys, sk)
	}
	warnings, err := ScopeWarnings(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	if line := keyFileIgnored(cfg); line != "" {
		log.Warn(line, "key_file", cfg.Serve.APIKeyFile)
	}
	if len(cfg.Accounts) > 1 {
		if len(keys) == 0 {
			return nil, nil, errors.New("serve: no key: with several accounts, list serve.keys, each with the account it reads")
		}
		return keys, nil, nil
	}
	if len(keys) > 0 && len(cfg.Serve.APIKeys) == 0 {
		return keys, nil, nil
	}
	if plain, err = APIKeys(cfg.Serve, log); err != nil {
		return nil, nil, err
	}
	where := "serve.api_keys"
	if len(cfg.Serve.APIKeys) == 0 {
		where = "serve.api_key_file " + cfg.Serve.APIKeyFile
	}
	for i, k := range plain {
		if err := server.CheckKeyStrength(k); err != nil {
			return nil, nil, fmt.Errorf("serve: %s: key %d: %w", where, i+1, err)
		}
	}
	return keys, plain, nil
}

// APIKeys returns the keys clients may use: serve.api_keys when set; otherwise the keys in
// serve.api_key_file, one a line; and when that file does not exist either, a new random key
// written to it (mode 0600), so the replica is never open without a key. Keys are never logged.
func APIKeys(sc ServeConfig, log *slog.Logger) ([]string, error) {
	if len(sc.APIKeys) > 0 {
		return sc.APIKeys, nil
	}
	if sc.APIKeyFile == "" {
		return nil, errors.New("serve: no API key: set serve.api_keys (HRSYNC_SERVE_API_KEYS) or serve.api_key_file")
	}
	data, err := os.ReadFile(sc.APIKeyFile)
	if errors.Is(err, os.ErrNotExist) {
		key := NewAPIKey("hrsync-")
		f, err := os.OpenFile(sc.APIKeyFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("serve: no API key configured, and cannot create %s: %w", sc.APIKeyFile, err)
		}
		_, werr := f.WriteString(key + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("serve: write %s: %w", sc.APIKeyFile, werr)
		}
		log.Warn("no API key configured: generated one; clients send it as X-API-KEY", "key_file", sc.APIKeyFile)
		return []string{key}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("serve: read API key file: %w", err)
	}
	var keys []string
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			keys = append(keys, line)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("serve: API key file %s holds no key", sc.APIKeyFile)
	}
	if fi, err := os.Stat(sc.APIKeyFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("API key file is readable by other users", "key_file", sc.APIKeyFile, "mode", fi.Mode().Perm().String())
	}
	return keys, nil
}

// NewAPIKey is a fresh random key: prefix and 160 random bits in hex.
func NewAPIKey(prefix string) string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail on supported platforms
	return prefix + hex.EncodeToString(b[:])
}
