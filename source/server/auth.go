package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
)

// key is one configured key: its SHA-256, the account it reads and its scope (nil: full
// access).
type key struct {
	name string
	// id is the identity its Idempotency-Keys are kept under: its configured name, or for a key
	// of Options.APIKeys (named by position, which a reordering changes) one derived from its
	// SHA-256.
	id      string
	sum     [sha256.Size]byte
	account *account
	scope   *scope
}

// keyContext is the context key of the request's authenticated key.
type keyContext struct{}

// keyOf is the key a request was authenticated with (ServeHTTP puts it in the context the
// routes see).
func keyOf(r *http.Request) *key {
	k, _ := r.Context().Value(keyContext{}).(*key)
	return k
}

// Challenge is the WWW-Authenticate header of a 401: the key goes in the X-API-KEY header.
const Challenge = `APIKey realm="hrsync", header="X-API-KEY"`

// authenticate finds the configured key presented, or nil: it compares the key's SHA-256 with
// every configured key's in constant time, with no early exit, so the time taken tells nothing
// of which key (or account) matched.
func (h *Handler) authenticate(presented string) *key {
	if presented == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(presented))
	match := 0 // the matching key's index + 1; keys are distinct, so at most one matches
	for i := range h.keys {
		eq := subtle.ConstantTimeCompare(sum[:], h.keys[i].sum[:])
		match = subtle.ConstantTimeSelect(eq, i+1, match)
	}
	if match == 0 {
		return nil
	}
	return &h.keys[match-1]
}

// compileKeys builds the keys of Options.Keys and Options.APIKeys: each named once, strong
// enough (CheckKey), reading a declared account (byName, or the one account served), with a
// valid scope, and no two the same key.
func (h *Handler) compileKeys(byName map[string]*account) error {
	keys := slices.Clone(h.opts.Keys)
	named := len(keys) // keys[named:] are APIKeys, named by position
	for i, k := range h.opts.APIKeys {
		keys = append(keys, Key{Name: fmt.Sprintf("key %d", i+1), Key: k})
	}
	if len(keys) == 0 {
		return errors.New("new handler: no API keys configured")
	}
	names := make(map[string]bool, len(keys))
	for i, k := range keys {
		if k.Name == "" {
			return fmt.Errorf("new handler: key %d has no name", i+1)
		}
		if names[k.Name] {
			return fmt.Errorf("new handler: key %q named twice", k.Name)
		}
		names[k.Name] = true
		if err := CheckKey(k); err != nil {
			return fmt.Errorf("new handler: key %q: %w", k.Name, err)
		}
		var a *account
		switch {
		case k.Account == "" && len(h.accounts) == 1:
			a = h.accounts[0]
		case k.Account == "":
			return fmt.Errorf("new handler: key %q names no account (several are served)", k.Name)
		default:
			a = byName[k.Account]
		}
		if a == nil {
			return fmt.Errorf("new handler: key %q reads account %q, which is not declared", k.Name, k.Account)
		}
		var sum [sha256.Size]byte
		if k.SHA256 != "" {
			_, _ = hex.Decode(sum[:], []byte(k.SHA256)) // CheckKey: 64 hex digits
		} else {
			sum = sha256.Sum256([]byte(k.Key))
		}
		sc, err := compileScope(k.Scope, h.collections, a.decls)
		if err != nil {
			return fmt.Errorf("new handler: key %q: %w", k.Name, err)
		}
		for _, o := range h.keys {
			if o.sum == sum {
				return fmt.Errorf("new handler: keys %q and %q are the same key", o.name, k.Name)
			}
		}
		h.keys = append(h.keys, key{name: k.Name, id: keyIdentity(i < named, k.Name, sum), sum: sum, account: a, scope: sc})
	}
	return nil
}
