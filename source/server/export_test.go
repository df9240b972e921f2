package server

import (
	"container/list"

	"github.com/hrsync/hrsync/source/v1"
)

// SetConstantETag makes every ETag h computes tag, whatever the answer: a tag function that
// ignores the account, the scope and the query, standing in for a collision of the MAC (or of
// the 64-bit FNV-1a of old).
func SetConstantETag(h *Handler, tag string) {
	h.tag = func(*answerKey) string { return tag }
}

// PoisonCache files every answer h's cache keeps under the key of every other account and key
// scope too, where those keys hold nothing yet: a cache whose lookup goes wrong, answering one
// request with another's answer. Only the check of a hit against its request stands between
// such a cache and a leak.
func PoisonCache(h *Handler) {
	c := h.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	scopes := map[string]bool{"": true}
	for _, k := range h.keys {
		if k.scope != nil {
			scopes[k.scope.fingerprint] = true
		}
	}
	kept := make(map[answerKey]*list.Element, len(c.items))
	for k, e := range c.items {
		kept[k] = e
	}
	for k, e := range kept {
		for _, a := range h.accounts {
			for s := range scopes {
				alias := k
				alias.acct, alias.scope = a, s
				if _, ok := c.items[alias]; !ok {
					c.items[alias] = e
				}
			}
		}
	}
}

// ScopeFingerprint is what the scope s does to answers under decls (the account's
// declarations), as ETags and the cache mix it in.
func ScopeFingerprint(s Scope, decls v1.Declarations) (string, error) {
	c, err := compileScope(s, Collections(), decls)
	if err != nil || c == nil {
		return "", err
	}
	return c.fingerprint, nil
}
