package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompression: gzip is sent when asked for and the body is at least MinCompressBytes, it
// decodes to exactly the identity body, its ETag is the identity one with -gzip, Content-Length
// is the encoded length, HEAD says the same, Vary names Accept-Encoding, and a 304 answers the
// tag of either coding; with the cache off and on, on both backends.
func TestCompression(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		for _, cacheBytes := range []int64{0, 1 << 20} {
			t.Run(fmt.Sprintf("%s/cache=%d", backend, cacheBytes), func(t *testing.T) {
				f := newFixture(t, backend, server.Options{CacheBytes: cacheBytes})
				f.putN(t, 30)
				// The fixture's employees are served as put, four members each: 15 make a KiB.
				for _, c := range []struct {
					path string
					gzip bool // the body is large enough
				}{{"/v1/employees", true}, {"/v1/employees?per_page=15&page=2", true}, {"/v1/employees/7", false}, {"/v1", true}} {
					plain, body := f.do(t, "GET", c.path, nil)
					assertStatus(t, plain, body, 200)
					tag := plain.Header.Get("ETag")
					if ce := plain.Header.Get("Content-Encoding"); ce != "" {
						t.Errorf("%s: no Accept-Encoding got Content-Encoding %q", c.path, ce)
					}
					if cl := plain.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
						t.Errorf("%s: Content-Length %s for %d bytes", c.path, cl, len(body))
					}
					if c.gzip != (len(body) >= server.MinCompressBytes) {
						t.Fatalf("%s: fixture: %d bytes, gzip expected %v", c.path, len(body), c.gzip)
					}
					for _, ae := range []string{"gzip", "gzip, deflate, br", "br;q=1, gzip;q=0.5", "identity;q=0.5, *"} {
						resp, zb := f.do(t, "GET", c.path, nil, "Accept-Encoding", ae)
						assertStatus(t, resp, zb, 200)
						head, hb := f.do(t, "HEAD", c.path, nil, "Accept-Encoding", ae)
						assertStatus(t, head, hb, 200)
						for _, r := range []*http.Response{plain, resp, head} {
							if v := r.Header.Values("Vary"); !slices.Contains(v, "Accept-Encoding") || !slices.Contains(v, "X-API-KEY") {
								t.Errorf("%s %s: Vary %q", r.Request.Method, c.path, v)
							}
						}
						for _, h := range []string{"Content-Encoding", "Content-Length", "ETag", "Total", "Link", "Content-Type"} {
							if resp.Header.Get(h) != head.Header.Get(h) {
								t.Errorf("%s (%s): HEAD %s %q, GET %q", c.path, ae, h, head.Header.Get(h), resp.Header.Get(h))
							}
						}
						if len(hb) != 0 {
							t.Errorf("%s: HEAD has a body", c.path)
						}
						if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(zb)) {
							t.Errorf("%s (%s): Content-Length %s for %d bytes", c.path, ae, cl, len(zb))
						}
						if !c.gzip {
							if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(zb, body) || resp.Header.Get("ETag") != tag {
								t.Errorf("%s (%s): a small body was not sent as it is: %q %q", c.path, ae, resp.Header.Get("Content-Encoding"), resp.Header.Get("ETag"))
							}
							continue
						}
						if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" {
							t.Fatalf("%s (%s): Content-Encoding %q", c.path, ae, ce)
						}
						if got := gunzip(t, zb); !bytes.Equal(got, body) {
							t.Errorf("%s (%s): gzip body decodes to\n%s\nwant\n%s", c.path, ae, got, body)
						}
						if len(zb) >= len(body) {
							t.Errorf("%s: gzip %d bytes, identity %d", c.path, len(zb), len(body))
						}
						gzTag := strings.TrimSuffix(tag, `"`) + `-gzip"`
						if got := resp.Header.Get("ETag"); got != gzTag {
							t.Errorf("%s: gzip ETag %s, want %s", c.path, got, gzTag)
						}
						// Either tag revalidates, whatever the coding asked for now; the 304 names
						// the tag the client holds.
						for _, held := range []string{tag, gzTag, "W/" + gzTag} {
							for _, now := range []string{"", "gzip"} {
								nm, nb := f.do(t, "GET", c.path, nil, "If-None-Match", held, "Accept-Encoding", now)
								assertStatus(t, nm, nb, 304)
								if got := nm.Header.Get("ETag"); got != strings.TrimPrefix(held, "W/") {
									t.Errorf("%s: 304 for %s says ETag %s", c.path, held, got)
								}
								if v := nm.Header.Values("Vary"); !slices.Contains(v, "Accept-Encoding") {
									t.Errorf("%s: 304 Vary %q", c.path, v)
								}
							}
						}
					}
					// identity refused and gzip not offered: identity anyway.
					resp, b := f.do(t, "GET", c.path, nil, "Accept-Encoding", "identity;q=0, br")
					assertStatus(t, resp, b, 200)
					if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, body) {
						t.Errorf("%s: identity;q=0, br got %q", c.path, resp.Header.Get("Content-Encoding"))
					}
				}
			})
		}
	}
}

// answerOf is what a client sees of an answer: status, headers but the request id and date, body.
func answerOf(resp *http.Response, body []byte) string {
	h := resp.Header.Clone()
	h.Del("X-Request-Id")
	h.Del("Date")
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", resp.StatusCode)
	_ = h.Write(&b)
	b.Write(body)
	return b.String()
}

// TestAnswerCacheHitIsTheMiss: a kept answer is, byte for byte, the answer the handler gives
// without a cache, in each coding and for each route; and a change to the store (a put, a
// create) is seen at once: no answer of the old version is served.
func TestAnswerCacheHitIsTheMiss(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, server.Options{CacheBytes: 8 << 20})
			f.putN(t, 30)
			h, err := server.NewHandler(f.store, server.Options{APIKeys: []string{"another-key-9f2c4e7a1b3d5f60a8e2", testKey}})
			if err != nil {
				t.Fatal(err)
			}
			uncached := httptest.NewServer(h)
			defer uncached.Close()
			paths := []string{"/v1/employees", "/v1/employees?page=2&per_page=4", "/v1/employees/7", "/v1", "/v1/working_patterns", "/v1/departments"}
			check := func(t *testing.T, round string) {
				for _, path := range paths {
					for _, ae := range []string{"", "gzip", "identity"} {
						for _, method := range []string{"GET", "HEAD"} {
							var got []string
							for range 3 { // a miss, then hits
								resp, b := f.do(t, method, path, nil, "Accept-Encoding", ae)
								got = append(got, strings.ReplaceAll(answerOf(resp, b), f.srv.URL, "http://replica"))
							}
							for i, g := range got[1:] {
								if g != got[0] {
									t.Errorf("%s: %s %s (%q), hit %d:\n%s\nthe miss:\n%s", round, method, path, ae, i+1, g, got[0])
								}
							}
							// The ETag names the absolute URL, so it differs on another server:
							// the rest is the same as without a cache.
							resp, b := send(t, method, uncached.URL+path, testKey, nil, "Accept-Encoding", ae)
							resp.Header.Del("ETag")
							want := strings.ReplaceAll(answerOf(resp, b), uncached.URL, "http://replica")
							resp, b = f.do(t, method, path, nil, "Accept-Encoding", ae)
							resp.Header.Del("ETag")
							if g := strings.ReplaceAll(answerOf(resp, b), f.srv.URL, "http://replica"); g != want {
								t.Errorf("%s: %s %s (%q):\n%s\nwithout a cache:\n%s", round, method, path, ae, g, want)
							}
						}
					}
				}
			}
			check(t, "first")
			st := f.srv.Config.Handler.(*server.Handler).CacheStats()
			if st.Hits == 0 || st.Misses == 0 || st.Bytes == 0 {
				t.Fatalf("the cache was not used: %+v", st)
			}
			f.put(t, `{"id":7,"first_name":"Renamed","last_name":"L","email":"e7@example.com"}`)
			resp, b := f.do(t, "GET", "/v1/employees/7", nil, "Accept-Encoding", "gzip")
			if resp.Header.Get("Content-Encoding") == "gzip" {
				b = gunzip(t, b)
			}
			if !strings.Contains(string(b), "Renamed") {
				t.Errorf("after a put: %s", b)
			}
			check(t, "after a put")
			if _, err := f.store.CreateEmployee(context.Background(), v1.NewEmployee{FirstName: "New", LastName: "Hire", Email: "new@example.com", JoinDate: "2026-01-15"}); err != nil {
				t.Fatal(err)
			}
			resp, _ = f.do(t, "GET", "/v1/employees?page=2&per_page=4", nil)
			if got := resp.Header.Get("Total"); got != "31" {
				t.Errorf("after a create: Total %s, want 31", got)
			}
			check(t, "after a create")
		})
	}
}

// slowStore is a real store whose list of employees takes a while, so concurrent requests
// overlap.
type slowStore struct {
	*sink.Store
	lists atomic.Int64
}

func (s *slowStore) ListEmployees(ctx context.Context, p v1.Page) (v1.List[v1.Employee], error) {
	s.lists.Add(1)
	time.Sleep(200 * time.Millisecond)
	return s.Store.ListEmployees(ctx, p)
}

// TestAnswerCacheHerd: identical concurrent misses are fetched and encoded once; every one gets
// the answer.
func TestAnswerCacheHerd(t *testing.T) {
	// Not in parallel: its 16 requests must overlap in the slow store's 200 ms.
	f := newFixture(t, "sqlite", server.Options{})
	f.putN(t, 30)
	store := &slowStore{Store: f.store}
	h, err := server.NewHandler(store, server.Options{APIKeys: []string{testKey}, CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	bodies := make([][]byte, 16)
	for i := range bodies {
		wg.Go(func() {
			_, bodies[i] = send(t, "GET", srv.URL+"/v1/employees?per_page=25", testKey, nil, "Accept-Encoding", "gzip")
		})
	}
	wg.Wait()
	if n := store.lists.Load(); n != 1 {
		t.Errorf("%d fetches of one answer by 16 concurrent requests, want 1", n)
	}
	if st := h.CacheStats(); st.Misses != 1 || st.Hits != 15 {
		t.Errorf("%+v, want 1 miss and 15 hits", st)
	}
	for i, b := range bodies {
		if !bytes.Equal(b, bodies[0]) || len(b) == 0 {
			t.Errorf("request %d: a different answer", i)
		}
	}
}

// TestAnswerCacheBoundOverHTTP: however many pages are asked for, the cache keeps no more than
// its bound.
func TestAnswerCacheBoundOverHTTP(t *testing.T) {
	t.Parallel()
	const bound = 24 << 10
	f := newFixture(t, "sqlite", server.Options{CacheBytes: bound})
	f.putN(t, 60)
	h := f.srv.Config.Handler.(*server.Handler)
	for page := 1; page <= 30; page++ {
		for _, ae := range []string{"", "gzip"} {
			resp, b := f.do(t, "GET", fmt.Sprintf("/v1/employees?per_page=%d", page), nil, "Accept-Encoding", ae)
			assertStatus(t, resp, b, 200)
			if got := h.CacheStats().Bytes; got > bound || got == 0 {
				t.Fatalf("per_page=%d: %d bytes kept, bound %d", page, got, bound)
			}
		}
	}
}

// TestIfNoneMatchAny: If-None-Match: * is a 304 for what exists (a list, a record, the index)
// and leaves an unknown record a 404, with the cache on or off.
func TestIfNoneMatchAny(t *testing.T) {
	t.Parallel()
	for _, cacheBytes := range []int64{0, 1 << 20} {
		f := newFixture(t, "sqlite", server.Options{CacheBytes: cacheBytes})
		f.put(t, goldenEmployees...)
		for _, tt := range []struct {
			path string
			want int
		}{{"/v1/employees", 304}, {"/v1/employees/42", 304}, {"/v1", 304}, {"/v1/employees/77777", 404}, {"/v1/employees/77777", 404}} {
			resp, b := f.do(t, "GET", tt.path, nil, "If-None-Match", "*")
			if resp.StatusCode != tt.want {
				t.Errorf("cache %d: %s with If-None-Match *: %d, want %d: %s", cacheBytes, tt.path, resp.StatusCode, tt.want, b)
			}
		}
	}
}
