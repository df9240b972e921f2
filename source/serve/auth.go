package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
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
