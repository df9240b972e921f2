package server

import (
	"bytes"
	"container/list"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"
)

// answerHeaders are the headers of a 200 a route sets besides ETag and Content-Type; a cached
// answer keeps them.
var answerHeaders = []string{"Total", "Per-Page", "Link"}

// answer is one encoded 200: what a miss wrote, kept to be written again.
type answer struct {
	key     answerKey // what it is: account, scope, route, parameters, version and coding
	etag    string    // the ETag sent: the tag, "-gzip" for a gzip body
	coding  string    // the body's content-coding: "" or "gzip" (a small body is identity)
	headers [3]string
	body    []byte
}

func (a *answer) size() int64 {
	k := &a.key
	n := int64(len(a.body)+len(a.etag)+len(k.scope)+len(k.route)+len(k.coll)+len(k.base)+len(k.coding)) + 200
	for _, h := range a.headers {
		n += int64(len(h))
	}
	return n
}

// flightWait bounds how long a request waits for another one encoding the same answer before it
// encodes its own.
const flightWait = 2 * time.Second

// answerCache keeps encoded answers, least recently used first out, in at most max bytes (an
// answer over an eighth of max is not kept), each found by what it is (answerKey), never by its
// ETag. An account's answers of a version older than the
// newest seen are dropped when the newer one is seen: they can never be asked for again.
type answerCache struct {
	max int64

	mu      sync.Mutex
	bytes   int64
	lru     *list.List // of *answer, most recent first
	items   map[answerKey]*list.Element
	newest  map[*account]int64
	flights map[answerKey]chan struct{}
	stats   map[*account]*CacheStats // per account: hits, misses, bytes kept
}

func newAnswerCache(maxBytes int64) *answerCache {
	return &answerCache{
		max:     maxBytes,
		lru:     list.New(),
		items:   map[answerKey]*list.Element{},
		newest:  map[*account]int64{},
		flights: map[answerKey]chan struct{}{},
		stats:   map[*account]*CacheStats{},
	}
}

// seen notes that a's store is at version v, dropping a's answers of older versions.
func (c *answerCache) seen(a *account, v int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.newest[a]; ok && old >= v {
		return
	}
	c.newest[a] = v
	for e := c.lru.Front(); e != nil; {
		next := e.Next()
		if ans := e.Value.(*answer); ans.key.acct == a && ans.key.version < v {
			c.remove(e)
		}
		e = next
	}
}

// get returns the answer of k, or the identity answer of k when k asks for a coding not kept.
func (c *answerCache) get(k answerKey) (ans, identity *answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*answer), nil
	}
	if k.coding != "" {
		k.coding = ""
		if e, ok := c.items[k]; ok {
			c.lru.MoveToFront(e)
			return nil, e.Value.(*answer)
		}
	}
	return nil, nil
}

// put keeps ans unless it is too large or of a version already superseded.
func (c *answerCache) put(ans *answer) {
	n := ans.size()
	if n > c.max/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.newest[ans.key.acct] > ans.key.version {
		return
	}
	if e, ok := c.items[ans.key]; ok {
		c.remove(e)
	}
	for c.bytes+n > c.max {
		c.remove(c.lru.Back())
	}
	c.items[ans.key] = c.lru.PushFront(ans)
	c.bytes += n
	c.statsOf(ans.key.acct).Bytes += n
}

func (c *answerCache) remove(e *list.Element) {
	ans := c.lru.Remove(e).(*answer)
	delete(c.items, ans.key)
	c.bytes -= ans.size()
	c.statsOf(ans.key.acct).Bytes -= ans.size()
}

// statsOf is a's counters; c.mu is held.
func (c *answerCache) statsOf(a *account) *CacheStats {
	st := c.stats[a]
	if st == nil {
		st = &CacheStats{}
		c.stats[a] = st
	}
	return st
}

// count adds a hit or a miss to a's counters.
func (c *answerCache) count(a *account, hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hit {
		c.statsOf(a).Hits++
	} else {
		c.statsOf(a).Misses++
	}
}

// Bytes is what the kept answers take, by size's estimate.
func (c *answerCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// join makes the caller the one request encoding k (lead true; it must call leave), or returns
// the channel closed when the one already encoding it is done.
func (c *answerCache) join(k answerKey) (lead bool, done chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.flights[k]; ok {
		return false, ch
	}
	ch := make(chan struct{})
	c.flights[k] = ch
	return true, ch
}

func (c *answerCache) leave(k answerKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.flights[k]; ok {
		close(ch)
		delete(c.flights, k)
	}
}

// wait waits for done, at most flightWait or until ctx ends.
func wait(ctx context.Context, done chan struct{}) {
	t := time.NewTimer(flightWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// tagged is one GET answered under its ETag: begin reads the store's version (one cheap read)
// when the cache is on or the client sent If-None-Match, and answers a 304 or a kept answer
// without the route's query; otherwise the route fetches and encodes as it always has and hands
// the identity body to write, which compresses it as negotiated and keeps it when the version it
// was read at is the one begin read.
type tagged struct {
	a *account
	r *http.Request
	// key is the answer asked for: the route's parse of the request, the account, the key's
	// scope, the negotiated coding, and once known the version.
	key   answerKey
	known bool   // key.version and tag were read by begin
	tag   string // the ETag of key's identity representation
	lead  bool   // this request encodes key; end lets the others waiting for it go
}

// begin starts a GET of the answer k names (its route, collection, id, page and base: what the
// route parsed of the request; begin adds the account, the key's scope, the coding and the
// version): done true when it has answered (a 304, a kept answer, or an error); otherwise the
// route fetches, calls t.write, and defers t.end.
func (a *account) begin(w http.ResponseWriter, r *http.Request, k answerKey) (*tagged, bool) {
	k.acct, k.coding = a, negotiate(r.Header.Get("Accept-Encoding"))
	if s := scopeOf(r); s != nil {
		k.scope = s.fingerprint
	}
	t := &tagged{a: a, r: r, key: k}
	c := a.h.cache
	inm := r.Header.Get("If-None-Match")
	if c == nil && inm == "" {
		return t, false
	}
	v, err := a.store.Version(r.Context())
	if err != nil {
		a.internal(w, r, "read version", err)
		return nil, true
	}
	t.known, t.key.version = true, v
	t.tag = a.h.tag(&t.key)
	// The tag matched is the MAC of this request's own account, scope, route, parameters and
	// version: a tag made for any other answer is not it.
	if m := etagMatch(inm, t.tag); m != "" && !anyTag(inm) {
		w.Header().Set("ETag", m)
		cacheHeaders(w.Header())
		w.WriteHeader(http.StatusNotModified)
		return nil, true
	}
	if c == nil {
		return t, false
	}
	c.seen(a, v)
	if t.cached(w) {
		return nil, true
	}
	lead, done := c.join(t.key)
	if !lead {
		wait(r.Context(), done)
		if t.cached(w) {
			return nil, true
		}
		return t, false
	}
	t.lead = true
	c.count(a, false)
	return t, false
}

// cached writes the kept answer of t.key, made from the kept identity answer when only that is
// kept; false when neither is, or when what was found is not t.key's answer.
func (t *tagged) cached(w http.ResponseWriter) bool {
	c := t.a.h.cache
	ans, identity := c.get(t.key)
	if ans == nil && identity == nil {
		return false
	}
	if ans == nil {
		if !t.owns(identity) {
			return false
		}
		ans = encode(identity, t.key.coding)
		c.put(ans)
	}
	if !t.owns(ans) {
		return false
	}
	c.count(t.a, true)
	writeAnswer(w, t.r, ans)
	return true
}

// owns reports whether a kept answer is the one this request asks for: of its account, its
// key's scope, its route and parameters, the version begin read, and (coding aside, for an
// identity answer to be compressed) its coding. The cache finds answers by exactly that, so
// this holds unless the cache itself is wrong; checked all the same before a byte is written,
// so that nothing (a lookup gone wrong, a tag that collides) serves one key another's answer.
func (t *tagged) owns(ans *answer) bool {
	want := t.key
	if ans.key.coding == "" {
		want.coding = ""
	}
	if ans.key == want {
		return true
	}
	t.a.h.log.ErrorContext(t.r.Context(), "answer cache: a kept answer found for another request; not served",
		"account", t.a.name, "route", t.key.route, "collection", t.key.coll)
	return false
}

func (t *tagged) end() {
	if t.lead {
		t.a.h.cache.leave(t.key)
	}
}

// write answers the identity body the route encoded at version, with the headers the route set
// (answerHeaders), in the negotiated coding, and keeps it when the cache is on and version is
// the one begin read (a version read since moved is served, not kept). body is not retained.
func (t *tagged) write(w http.ResponseWriter, version int64, body []byte) {
	k := t.key
	k.coding = ""
	tag := t.tag
	if !t.known || version != t.key.version {
		k.version = version
		tag = t.a.h.tag(&k)
	}
	identity := &answer{key: k, etag: tag, body: body}
	for i, h := range answerHeaders {
		identity.headers[i] = w.Header().Get(h)
	}
	c := t.a.h.cache
	keep := c != nil && t.known && version == t.key.version
	if keep {
		identity.body = bytes.Clone(body)
	}
	ans := encode(identity, t.key.coding)
	if keep {
		c.put(identity)
		if ans.key != identity.key {
			c.put(ans)
		}
	}
	writeAnswer(w, t.r, ans)
}

// encode is identity's answer in coding: identity itself for "" or a body under
// MinCompressBytes (kept under the coding's key all the same).
func encode(identity *answer, coding string) *answer {
	if coding == "" {
		return identity
	}
	ans := *identity
	ans.key.coding = coding
	if len(identity.body) >= MinCompressBytes {
		ans.coding, ans.etag, ans.body = coding, codedTag(identity.etag, coding), gzipBody(identity.body)
	}
	return &ans
}

// writeAnswer writes a 200 of ans, or, to If-None-Match: *, a 304: the representation exists
// (begin leaves * to here, after the route found it, so an unknown record is still a 404).
func writeAnswer(w http.ResponseWriter, r *http.Request, ans *answer) {
	hdr := w.Header()
	if anyTag(r.Header.Get("If-None-Match")) {
		hdr.Set("ETag", ans.etag)
		cacheHeaders(hdr)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	for i, h := range answerHeaders {
		if v := ans.headers[i]; v != "" {
			hdr.Set(h, v)
		}
	}
	hdr.Set("ETag", ans.etag)
	cacheHeaders(hdr)
	if ans.coding != "" {
		hdr.Set("Content-Encoding", ans.coding)
	}
	writeJSON(w, http.StatusOK, ans.body)
}

// CacheStats are the answer cache's counters: answers served from it, answers encoded by a
// route under it, and the bytes it keeps.
type CacheStats struct{ Hits, Misses, Bytes int64 }

// CacheStats reads the answer cache's counters, all accounts together (zero when it is off).
func (h *Handler) CacheStats() CacheStats {
	var all CacheStats
	for _, st := range h.CacheStatsByAccount() {
		all.Hits, all.Misses, all.Bytes = all.Hits+st.Hits, all.Misses+st.Misses, all.Bytes+st.Bytes
	}
	return all
}

// CacheStatsByAccount reads the answer cache's counters of each account served, by its name
// (nil when the cache is off).
func (h *Handler) CacheStatsByAccount() map[string]CacheStats {
	if h.cache == nil {
		return nil
	}
	c := h.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]CacheStats, len(h.accounts))
	for _, a := range h.accounts {
		out[a.name] = *c.statsOf(a)
	}
	return out
}

// anyTag reports whether If-None-Match is *: a 304 whenever the representation exists.
func anyTag(inm string) bool {
	for t := range strings.SplitSeq(inm, ",") {
		if strings.TrimSpace(t) == "*" {
			return true
		}
	}
	return false
}
