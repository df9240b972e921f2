package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// attackSecret is the ETag secret of the attack tests' handlers and their references, so that a
// reference answers the very tags the cached handler does.
var attackSecret = []byte("attack-test-etag-secret-of-32-bytes!")

// attackAccount is one account of the attack tests: its employees carry its marker in their
// names and emails, and personal members (dob, ni_number, a manager's dob) a scope may deny.
type attackAccount struct {
	name, marker string
	store        *sink.Store
}

// attackKey is one key of the attack tests and what must never reach it.
type attackKey struct {
	name, key, account string
	scope              server.Scope
	// never are texts no answer to the key may hold: denied members, another account's marker.
	never []string
}

func attackEmployee(marker string, i int) string {
	return fmt.Sprintf(`{"id":%d,"first_name":"%s%d","last_name":"%s","email":"e%d@%s.example.com","job_title":"Engineer",`+
		`"dob":"19%02d-02-03","ni_number":"QQ%06dC",`+
		`"line_manager":{"id":%d,"name":"Boss %s","email":"boss@%s.example.com","dob":"1970-01-%02d"},`+
		`"department":{"id":5,"name":"Dept %s"}}`,
		i, marker, i, marker, i, strings.ToLower(marker), 50+i%40, i, 1000+i%3, marker, strings.ToLower(marker), 1+i%28, marker)
}

// attackAccounts opens two accounts' stores with employees and departments of their own.
func attackAccounts(t *testing.T) []*attackAccount {
	t.Helper()
	var out []*attackAccount
	for _, a := range []*attackAccount{{name: "acme", marker: "Acmeish"}, {name: "bolt", marker: "Boltish"}} {
		a.store = sinktest.Store(t, "sqlite", sink.Options{Now: func() time.Time { return fixedNow }})
		f := &fixture{store: a.store}
		for i := 1; i <= 12; i++ {
			var e v1.Employee
			if err := json.Unmarshal([]byte(attackEmployee(a.marker, i)), &e); err != nil {
				t.Fatal(err)
			}
			if err := a.store.PutEmployee(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
		f.walk(t, v1.Departments, fmt.Sprintf(`{"id":5,"name":"Dept %s"}`, a.marker), fmt.Sprintf(`{"id":6,"name":"Ops %s"}`, a.marker))
		out = append(out, a)
	}
	return out
}

// attackKeys: acme's full key (the one that warms the cache), a directory allow list without
// dob, a deny list, a key of departments only, and bolt's full key.
func attackKeys() []attackKey {
	personal := []string{`"dob"`, "QQ", `"ni_number"`, "1970-01-", "-02-03"}
	return []attackKey{
		{name: "acme-full", key: "acme-full-key-0123456789abcdef", account: "acme", never: []string{"Boltish", "boltish"}},
		{name: "acme-directory", key: "acme-directory-key-0123456789ab", account: "acme",
			scope: server.Scope{Collections: []string{"employees", "departments"}, Fields: []string{"id", "first_name", "last_name", "email", "job_title", "name"}, ReadOnly: true},
			never: append([]string{"Boltish", "boltish", "line_manager", "Boss"}, personal...)},
		{name: "acme-deny", key: "acme-deny-key-0123456789abcdef", account: "acme",
			scope: server.Scope{Deny: []string{"dob", "ni_number", "line_manager.dob"}},
			never: append([]string{"Boltish", "boltish"}, personal...)},
		{name: "acme-departments", key: "acme-departments-key-0123456789", account: "acme",
			scope: server.Scope{Collections: []string{"departments"}, ReadOnly: true},
			never: append([]string{"Boltish", "boltish", "first_name", "Engineer", "@acmeish"}, personal...)},
		{name: "bolt-full", key: "bolt-full-key-0123456789abcdef", account: "bolt", never: []string{"Acmeish", "acmeish"}},
	}
}

// attackHandler serves the accounts to the keys; cacheBytes 0 makes the reference.
func attackHandler(t *testing.T, accts []*attackAccount, keys []attackKey, cacheBytes int64, log *slog.Logger) *server.Handler {
	t.Helper()
	opts := server.Options{ETagSalt: "build-1", ETagSecret: attackSecret, CacheBytes: cacheBytes, Logger: log}
	for _, a := range accts {
		opts.Accounts = append(opts.Accounts, server.Account{Name: a.name, Store: a.store})
	}
	for _, k := range keys {
		opts.Keys = append(opts.Keys, server.Key{Name: k.name, Key: k.key, Account: k.account, Scope: k.scope})
	}
	h, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// attackAnswer is what a request got, its body decoded.
type attackAnswer struct {
	status              int
	etag, link, total   string
	contentType, coding string
	body                string
}

// attackGet sends GET path?rawQuery to h as the client wrote it: the query's bytes are not
// re-encoded.
func attackGet(t *testing.T, h http.Handler, key, path, rawQuery string, header ...string) attackAnswer {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://replica.example"+path, nil)
	req.URL.RawQuery = rawQuery
	req.RequestURI = ""
	req.Header.Set("X-API-KEY", key)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	body := w.Body.Bytes()
	if w.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s?%q: gzip: %v", path, rawQuery, err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s?%q: gzip: %v", path, rawQuery, err)
		}
	}
	hdr := w.Header()
	return attackAnswer{status: w.Code, etag: hdr.Get("ETag"), link: hdr.Get("Link"), total: hdr.Get("Total"),
		contentType: hdr.Get("Content-Type"), coding: hdr.Get("Content-Encoding"), body: string(body)}
}

// canary is in every value the attack's queries carry beyond paging: the access log must never
// hold it.
const canary = "CANARYq7"

// attackQueries are the queries tried on a path after victim, the privileged key's own: that
// query itself, plus suffixes, reordered, repeated, percent-encoded, padded, and random bytes.
func attackQueries(rng *rand.Rand, victim string) []string {
	qs := []string{
		victim,
		victim + "&x=" + canary,
		victim + "&" + canary,
		victim + "&&",
		victim + "&" + victim,
		victim + "&page=1",
		victim + ";" + canary,
		"x=" + canary + "&" + victim,
		strings.ReplaceAll(victim, "page", "pa%67e"),
		strings.ReplaceAll(victim, "per_page", "%70er%5Fpage"),
		strings.ReplaceAll(victim, "=", "=0"),
		victim + "&pad=" + canary + strings.Repeat("A", 1900),
		victim + "&pad=" + canary + strings.Repeat("B", 2100),
		victim + "&per_page=500",
		"per_page=500",
		"",
	}
	if a, b, ok := strings.Cut(victim, "&"); ok {
		qs = append(qs, b+"&"+a)
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz_0123456789=&;%+-.~ ?#/\\\"'\x00\xff"
	for range 6 {
		n := 1 + rng.IntN(40)
		b := []byte(victim + "&" + canary)
		for range n {
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		qs = append(qs, string(b))
	}
	return qs
}

// attackPaths are the routes tried, each with the privileged key's queries.
var attackPaths = []struct {
	path    string
	queries []string
}{
	{"/v1/employees", []string{"", "page=2&per_page=5", "per_page=100"}},
	{"/v1/employees/3", []string{""}},
	{"/v1/departments", []string{"", "per_page=1&page=2"}},
	{"/v1/departments/5", []string{""}},
	{"/v1", []string{""}},
}

// TestCachedAnswersKeepScopesAndAccounts is the attack on the answer cache, as a property: the
// privileged key of one account warms the cache with every page (both codings), then every key
// (other scopes, the other account) sends that key's exact queries, with suffixes, reordered,
// repeated, percent-encoded, padded and random, in both codings and with the warming key's
// ETag in If-None-Match. Every answer must be what a handler without a cache answers that key
// (status, ETag, Link, Total, body), hold no member its scope denies and no other account's
// record; no 304 may answer a tag made for another key's answer; and the access log never
// holds a query's values. It runs with the real ETags, with ETags that all collide (a MAC, or
// the 64-bit FNV-1a of old, colliding), and with those and a cache whose lookup goes wrong
// (PoisonCache): only the check of a hit against its request stands then.
func TestCachedAnswersKeepScopesAndAccounts(t *testing.T) {
	t.Parallel()
	accts := attackAccounts(t)
	keys := attackKeys()
	for _, variant := range []string{"mac", "colliding-tags", "colliding-tags+poisoned-cache"} {
		t.Run(variant, func(t *testing.T) {
			var logs bytes.Buffer
			h := attackHandler(t, accts, keys, 16<<20, slog.New(slog.NewTextHandler(&logs, nil)))
			ref := attackHandler(t, accts, keys, 0, nil)
			if variant != "mac" {
				server.SetConstantETag(h, `"collide"`)
				server.SetConstantETag(ref, `"collide"`)
			}
			rng := rand.New(rand.NewPCG(22, 1))
			warm := keys[0]
			served, leaks := 0, 0
			for _, p := range attackPaths {
				for _, victim := range p.queries {
					var victimTags []string
					for _, ae := range []string{"", "gzip"} {
						got := attackGet(t, h, warm.key, p.path, victim, "Accept-Encoding", ae)
						if got.status != http.StatusOK || !strings.Contains(got.body, "Acmeish") && p.path != "/v1" {
							t.Fatalf("warming %s?%s: %d %.200s", p.path, victim, got.status, got.body)
						}
						victimTags = append(victimTags, got.etag)
					}
					if variant == "colliding-tags+poisoned-cache" {
						server.PoisonCache(h)
					}
					for _, k := range keys {
						for _, q := range attackQueries(rng, victim) {
							for _, hdr := range [][]string{
								{"Accept-Encoding", ""}, {"Accept-Encoding", "gzip"},
								{"Accept-Encoding", "gzip", "If-None-Match", strings.Join(victimTags, ", ")},
							} {
								got := attackGet(t, h, k.key, p.path, q, hdr...)
								want := attackGet(t, ref, k.key, p.path, q, hdr...)
								served++
								for _, s := range k.never {
									if strings.Contains(got.body, s) {
										leaks++
										t.Errorf("%s: %s %s?%q (%v): the answer holds %q: %.300s", variant, k.name, p.path, q, hdr, s, got.body)
									}
								}
								if len(hdr) > 2 && got.status == http.StatusNotModified && k.name != warm.name && variant == "mac" {
									t.Errorf("%s %s?%q: 304 to another key's tag", k.name, p.path, q)
								}
								if got != want {
									t.Errorf("%s: %s %s?%q (%v):\n got %d %s %q %q %.300s\nwant %d %s %q %q %.300s", variant, k.name, p.path, q, hdr,
										got.status, got.etag, got.link, got.total, got.body, want.status, want.etag, want.link, want.total, want.body)
								}
							}
						}
					}
				}
			}
			if strings.Contains(logs.String(), canary) {
				t.Errorf("the access log holds a query's value")
			}
			if st := h.CacheStats(); st.Hits == 0 {
				t.Errorf("no answer came from the cache (%+v): the attack never met it", st)
			}
			t.Logf("%d answers checked, %d leaks; cache %+v", served, leaks, h.CacheStats())
		})
	}
}

// TestETagIgnoresWhatChangesNothing: queries that read the same page (unknown parameters, their
// order, percent-encoding, a per_page cut to 100) share one ETag and one kept answer, and links
// carry the parameters as read, not as written; what changes the answer changes the tag.
func TestETagIgnoresWhatChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{CacheBytes: 1 << 20})
	f.putN(t, 250)
	same := [][]string{
		{"page=2&per_page=5", "per_page=5&page=2", "page=2&per_page=5&utm_source=x", "pa%67e=2&per_page=5", "page=2&per_page=05&&", "x=1&page=2&y&per_page=5"},
		{"per_page=100&page=2", "per_page=500&page=2", "page=2&per_page=100000"},
		{"", "page=1", "utm=1", "page=01"},
	}
	var tags []string
	for _, group := range same {
		var tag, link string
		for i, q := range group {
			resp, body := f.do(t, "GET", "/v1/employees?"+q, nil)
			assertStatus(t, resp, body, 200)
			if i == 0 {
				tag, link = resp.Header.Get("ETag"), resp.Header.Get("Link")
				if len(tag) != 2+32 {
					t.Errorf("ETag %s: want 128 bits in hex, quoted", tag)
				}
				tags = append(tags, tag)
				continue
			}
			if got := resp.Header.Get("ETag"); got != tag {
				t.Errorf("?%s: ETag %s, ?%s's is %s", q, got, group[0], tag)
			}
			if got := resp.Header.Get("Link"); got != link {
				t.Errorf("?%s: Link %s, ?%s's is %s", q, got, group[0], link)
			}
		}
	}
	for i := range tags {
		for j := range i {
			if tags[i] == tags[j] {
				t.Errorf("groups %d and %d share ETag %s", j, i, tags[i])
			}
		}
	}
	resp, _ := f.do(t, "GET", "/v1/employees?per_page=500&page=2", nil)
	if link := resp.Header.Get("Link"); strings.Contains(link, "per_page=500") || !strings.Contains(link, "per_page=100") { // not "500": the port may hold it
		t.Errorf("Link %s: want per_page as read (100)", link)
	}
}

// TestETagSecret: handlers with one secret agree on tags (replicas behind one address), with
// another they do not, one without a secret has a random one per process, and a secret under
// 128 bits is refused.
func TestETagSecret(t *testing.T) {
	t.Parallel()
	store := sinktest.Store(t, "sqlite", sink.Options{Now: func() time.Time { return fixedNow }})
	(&fixture{store: store}).putN(t, 3)
	tagOf := func(secret []byte, salt string) string {
		t.Helper()
		h, err := server.NewHandler(store, server.Options{APIKeys: []string{testKey}, ETagSecret: secret, ETagSalt: salt})
		if err != nil {
			t.Fatal(err)
		}
		got := attackGet(t, h, testKey, "/v1/employees", "")
		if got.status != 200 || len(got.etag) != 34 {
			t.Fatalf("%d, ETag %q", got.status, got.etag)
		}
		return got.etag
	}
	one, other := bytes.Repeat([]byte{'a'}, 32), bytes.Repeat([]byte{'b'}, 32)
	// Each call is a handler of its own: two replicas.
	if first, second := tagOf(one, "v1"), tagOf(one, "v1"); first != second {
		t.Error("one secret, two tags")
	}
	if tagOf(one, "v1") == tagOf(other, "v1") {
		t.Error("two secrets, one tag")
	}
	if tagOf(one, "v1") == tagOf(one, "v2") {
		t.Error("two builds, one tag")
	}
	if first, second := tagOf(nil, "v1"), tagOf(nil, "v1"); first != second {
		t.Error("without a secret, two handlers of one process disagree")
	}
	if tagOf(nil, "v1") == tagOf(one, "v1") {
		t.Error("the process's random secret is the configured one")
	}
	_, err := server.NewHandler(store, server.Options{APIKeys: []string{testKey}, ETagSecret: bytes.Repeat([]byte{'s'}, 31)})
	if err == nil || strings.Contains(err.Error(), "sss") {
		t.Errorf("a 31-byte secret: %v", err)
	}
}
