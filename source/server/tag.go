package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/hrsync/hrsync/source/v1"
)

// MinETagSecretBytes is the shortest Options.ETagSecret taken: 128 bits at the least.
const MinETagSecretBytes = 32

// etagBytes is how much of the MAC a tag carries: 128 bits.
const etagBytes = 16

// The routes an answer is of (answerKey.route).
const (
	routeList  = "list"
	routeOne   = "one"
	routeIndex = "index"
)

// answerKey is what an answer is: everything its bytes differ by, each as the handler parsed it,
// nothing as the client wrote it. Two requests with equal keys get the same answer; the cache
// finds answers by it, and an ETag is a MAC of it (coding aside: see codedTag). A query's
// unknown parameters, their order, their spelling (percent-encoded or not) change none of it.
type answerKey struct {
	acct  *account
	scope string // the key's scope fingerprint: "" for full access
	route string // routeList, routeOne or routeIndex
	coll  string // the collection ("" for the index)
	id    int64  // routeOne: the record's id
	// routeList: the page read, whether per_page was sent (links repeat it then) and the
	// absolute URL the links are built on.
	page    v1.Page
	perPage bool
	base    string
	version int64
	coding  string // "" or "gzip", as negotiated
}

// listQuery is a list request's query as ParsePage reads it: all of the query that changes an
// answer.
type listQuery struct {
	page    v1.Page
	perPage bool // per_page was sent: links repeat it
}

// parseListQuery reads the query of a list request; its error is a 400's message.
func parseListQuery(q url.Values) (listQuery, error) {
	p, err := v1.ParsePage(q)
	if err != nil {
		return listQuery{}, err
	}
	_, sent := q["per_page"]
	return listQuery{page: p, perPage: sent}, nil
}

// linkQuery is the query Link's URLs keep (FormatLink sets page): per_page as read, when sent.
// A client's other parameters, and its spelling of these, are not echoed into a header.
func (lq listQuery) linkQuery() url.Values {
	if !lq.perPage {
		return nil
	}
	return url.Values{"per_page": {strconv.FormatInt(lq.page.Size, 10)}}
}

// processETagSecret is the ETag secret of a Handler not given one: random, once per process,
// so tags hold across handlers of one process and never across processes.
var processETagSecret = sync.OnceValue(func() []byte {
	b := make([]byte, MinETagSecretBytes)
	_, _ = rand.Read(b)
	return b
})

// tagger computes ETags: HMAC-SHA256, under the handler's secret, of the build (Options.ETagSalt)
// and an answer's key, cut to 128 bits.
type tagger struct {
	salt string
	macs sync.Pool // of *macState
}

// macState is an HMAC-SHA256 under the secret and a buffer for what it reads.
type macState struct {
	mac hash.Hash
	buf []byte
	sum [sha256.Size]byte
}

func newTagger(secret []byte, salt string) *tagger {
	secret = append([]byte(nil), secret...)
	t := &tagger{salt: salt}
	t.macs.New = func() any { return &macState{mac: hmac.New(sha256.New, secret), buf: make([]byte, 0, 256)} }
	return t
}

// tag is the strong ETag of k's identity representation (k.coding is not in it: codedTag adds
// the coding).
func (t *tagger) tag(k *answerKey) string {
	m := t.macs.Get().(*macState)
	m.buf = k.appendCanonical(appendField(m.buf[:0], t.salt))
	m.mac.Reset()
	m.mac.Write(m.buf)
	s := m.mac.Sum(m.sum[:0])
	var out [2 + 2*etagBytes]byte
	out[0], out[len(out)-1] = '"', '"'
	hex.Encode(out[1:], s[:etagBytes])
	t.macs.Put(m)
	return string(out[:])
}

// appendCanonical appends k, coding aside, in a form no two keys share: every field in a fixed
// order, strings length-prefixed.
func (k *answerKey) appendCanonical(b []byte) []byte {
	name := ""
	if k.acct != nil {
		name = k.acct.name
	}
	b = appendField(b, name)
	b = appendField(b, k.scope)
	b = appendField(b, k.route)
	b = appendField(b, k.coll)
	b = binary.BigEndian.AppendUint64(b, uint64(k.id))
	b = binary.BigEndian.AppendUint64(b, uint64(k.page.Number))
	b = binary.BigEndian.AppendUint64(b, uint64(k.page.Size))
	if k.perPage {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = appendField(b, k.base)
	return binary.BigEndian.AppendUint64(b, uint64(k.version))
}

func appendField(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// CacheControl is what every answer with an ETag says of caching, as the real service does:
// a cache may keep it for this client only (private) and must ask again before reusing it,
// which a 304 then answers cheaply.
const CacheControl = "max-age=0, private, must-revalidate"

// cacheHeaders marks an answer of a key's data: CacheControl, and Vary on the key, since
// another key may read another account's data at the same URL.
func cacheHeaders(h http.Header) {
	h.Set("Cache-Control", CacheControl)
	h.Add("Vary", "X-API-KEY")
	h.Add("Vary", "Accept-Encoding")
}

// etagMatch applies If-None-Match's weak comparison (RFC 9110 13.1.2) to the tag of each
// coding of one answer (codedTag): a client revalidates the tag it got, whichever coding it got.
// It returns the tag matched, "" for none (tag itself for *).
func etagMatch(header, tag string) string {
	if header == "" {
		return ""
	}
	gz := codedTag(tag, "gzip")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		switch t {
		case "*", tag:
			return tag
		case gz:
			return gz
		}
	}
	return ""
}
