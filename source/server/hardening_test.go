package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
)

// edgeHandler is a handler over an empty SQLite warehouse with the test key, logging JSON to
// the buffer returned and paced by a clock the test moves.
func edgeHandler(t *testing.T, opts server.Options) (h *server.Handler, log *sinktest.Buffer, later func(time.Duration)) {
	t.Helper()
	store := sinktest.Store(t, "sqlite", sink.Options{Now: func() time.Time { return fixedNow }})
	log = &sinktest.Buffer{}
	var mu sync.Mutex
	now := fixedNow
	opts.Logger = slog.New(slog.NewJSONHandler(log, nil))
	opts.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	if opts.APIKeys == nil && opts.Keys == nil {
		opts.APIKeys = []string{testKey}
	}
	h, err := server.NewHandler(store, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h, log, func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
}

// serveAs answers one request from peer (ip:port) with key, and the header pairs.
func serveAs(h http.Handler, method, target, peer, key string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = peer
	if key != "" {
		r.Header.Set("X-API-KEY", key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestAccessLogBoundsClientStrings: 20 requests without a key on 60 KB paths (and a 4 KB
// method) grow the log by a few KB, not the 1.2 MB they did: each path is logged cut to its
// first 256 bytes, saying so with its full length.
func TestAccessLogBoundsClientStrings(t *testing.T) {
	t.Parallel()
	h, log, _ := edgeHandler(t, server.Options{})
	long := "/v1/" + strings.Repeat("é", 30<<10) // 60 KB, cut at a character's start
	for i := range 20 {
		serveAs(h, "GET", long, "192.0.2.1:1234", "", "X-Request-Id", "r"+string(rune('a'+i)))
	}
	if n := log.Len(); n > 20*1024 {
		t.Fatalf("20 requests on 60 KB paths logged %d bytes", n)
	}
	var line struct {
		Path      string `json:"path"`
		PathCut   bool   `json:"path_cut"`
		PathBytes int    `json:"path_bytes"`
	}
	first, _, _ := strings.Cut(log.String(), "\n")
	if err := json.Unmarshal([]byte(first), &line); err != nil {
		t.Fatal(err)
	}
	if len(line.Path) > 256 || !strings.HasPrefix(long, line.Path) || !line.PathCut || line.PathBytes != len(long) {
		t.Errorf("logged path %d bytes, cut %v, full %d (want ≤256, true, %d)", len(line.Path), line.PathCut, line.PathBytes, len(long))
	}

	before := log.Len()
	serveAs(h, strings.Repeat("X", 4096), "/v1/employees", "192.0.2.2:1234", "")
	if n := log.Len() - before; n > 1024 {
		t.Errorf("a 4 KB method logged %d bytes", n)
	}
}

// TestFailedAuthThrottled: a client's wrong keys are answered 401 up to a small burst, then 429
// with Retry-After (JSON) until the clock grants another; a right key from that client is never
// refused; another client has its own allowance; behind a trusted proxy, the client is the hop
// the proxy added, whatever a client puts to the left of it.
func TestFailedAuthThrottled(t *testing.T) {
	t.Parallel()
	h, _, later := edgeHandler(t, server.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	const client = "198.51.100.7:5555"
	for i := range server.AuthFailureBurst {
		if w := serveAs(h, "GET", "/v1/employees", client, "wrong-key"); w.Code != 401 {
			t.Fatalf("failure %d: %d, want 401", i+1, w.Code)
		}
	}
	w := serveAs(h, "GET", "/v1/employees", client, "wrong-key")
	if w.Code != 429 || w.Header().Get("Retry-After") != "1" || !json.Valid(w.Body.Bytes()) {
		t.Fatalf("past the burst: %d Retry-After %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if w := serveAs(h, "GET", "/v1/employees", client, ""); w.Code != 429 {
		t.Errorf("no key past the burst: %d", w.Code)
	}
	if w := serveAs(h, "GET", "/v1/employees", client, testKey); w.Code != 200 {
		t.Errorf("the right key from a throttled client: %d", w.Code)
	}
	if w := serveAs(h, "GET", "/v1/employees", "198.51.100.8:5555", "wrong-key"); w.Code != 401 {
		t.Errorf("another client: %d", w.Code)
	}
	later(time.Second)
	if w := serveAs(h, "GET", "/v1/employees", client, "wrong-key"); w.Code != 401 {
		t.Errorf("a second later: %d, want 401", w.Code)
	}
	if w := serveAs(h, "GET", "/v1/employees", client, "wrong-key"); w.Code != 429 {
		t.Errorf("then: %d, want 429", w.Code)
	}

	// Behind the proxy: a spoofed leftmost X-Forwarded-For or Forwarded changes nothing.
	for i := range server.AuthFailureBurst {
		spoof := netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}).String()
		hdr := []string{"X-Forwarded-For", spoof + ", 192.0.2.50"}
		if i%2 == 1 {
			hdr = []string{"Forwarded", "for=" + spoof + ", for=192.0.2.50;proto=https"}
		}
		if w := serveAs(h, "GET", "/v1/employees", "10.1.2.3:443", "wrong-key", hdr...); w.Code != 401 {
			t.Fatalf("proxied failure %d: %d", i+1, w.Code)
		}
	}
	if w := serveAs(h, "GET", "/v1/employees", "10.9.9.9:443", "wrong-key", "X-Forwarded-For", "203.0.113.99, 192.0.2.50"); w.Code != 429 {
		t.Errorf("proxied client past its burst with a new spoofed address: %d", w.Code)
	}
	if w := serveAs(h, "GET", "/v1/employees", "10.1.2.3:443", "wrong-key", "X-Forwarded-For", "192.0.2.50, 192.0.2.51"); w.Code != 401 {
		t.Errorf("another client behind the proxy: %d", w.Code)
	}
}

// TestContentEncodingRefused: a create whose body has a Content-Encoding the replica does not
// decode is 415 with Accept-Encoding: identity, and creates nothing; identity is no coding.
func TestContentEncodingRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{})
	body, ct := hire("gz@example.com")
	for _, ce := range []string{"gzip", "br", "identity, gzip", "x-custom"} {
		resp, b := f.do(t, "POST", "/v1/employees", strings.NewReader(body), "Content-Type", ct, "Content-Encoding", ce)
		assertStatus(t, resp, b, 415)
		if resp.Header.Get("Accept-Encoding") != "identity" || !json.Valid(b) {
			t.Errorf("%s: Accept-Encoding %q, body %s", ce, resp.Header.Get("Accept-Encoding"), b)
		}
	}
	if n := employeesNamed(t, f.store, "gz@example.com"); n != 0 {
		t.Fatalf("a refused body created %d", n)
	}
	resp, b := f.do(t, "POST", "/v1/employees", strings.NewReader(body), "Content-Type", ct, "Content-Encoding", "identity")
	assertStatus(t, resp, b, 201)
}

// failingBody is a request body whose connection fails as a socket's does: its error names
// both ends.
type failingBody struct{}

func (failingBody) Read([]byte) (int, error) {
	return 0, &net.OpError{Op: "read", Net: "tcp",
		Source: &net.TCPAddr{IP: net.ParseIP("10.20.30.40"), Port: 8080},
		Addr:   &net.TCPAddr{IP: net.ParseIP("203.0.113.9"), Port: 51234}, Err: os.ErrDeadlineExceeded}
}

// TestBodyReadErrorNamesNoAddress: a create whose body cannot be read (a read timeout) is 400
// without the socket addresses the read error names (it used to be the body's message).
func TestBodyReadErrorNamesNoAddress(t *testing.T) {
	t.Parallel()
	h, log, _ := edgeHandler(t, server.Options{})
	for _, ct := range []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		r := httptest.NewRequest("POST", "/v1/employees", failingBody{})
		r.Header.Set("X-API-KEY", testKey)
		r.Header.Set("Content-Type", ct)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 400 || !json.Valid(w.Body.Bytes()) {
			t.Errorf("%s: %d %s", ct, w.Code, w.Body)
		}
		for _, addr := range []string{"10.20.30.40", "203.0.113.9", "8080", "51234"} {
			if strings.Contains(w.Body.String(), addr) {
				t.Errorf("%s: the answer names %s: %s", ct, addr, w.Body)
			}
		}
	}
	if !strings.Contains(log.String(), "203.0.113.9") {
		t.Error("the log lost the read error")
	}

	// Through a server: a body that stops short meets the read deadline, whose error named
	// "read tcp <listener>-><client>: i/o timeout" in the answer.
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "POST /v1/employees HTTP/1.1\r\nHost: x\r\nX-API-KEY: "+testKey+
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	if resp.StatusCode != 400 || strings.Contains(string(b), "127.0.0.1") || strings.Contains(string(b), port) {
		t.Errorf("a body cut short: %d %s", resp.StatusCode, b)
	}
}

// TestKeyStrength: keys under 128 bits are refused, wherever serve takes them, with an error
// that names the key by name or position, never by value, and says how to make one.
func TestKeyStrength(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		key string
		ok  bool
	}{
		{"short", false},
		{"secret", false},
		{strings.Repeat("a", 64), false},
		{strings.Repeat("abc123", 12), false},
		{strings.Repeat("0123456789abcdef", 4), false},
		{"0123456789abcdef0123", false},                       // 20 characters
		{"q3Zk8LmP0xTn5Rw2Yb7Hv", false},                      // 21 base64 characters
		{"q3Zk8LmP0xTn5Rw2Yb7HvA", true},                      // 22: 131 bits
		{"4f9a0c7e2b1d8e6f3a5c9b0d7e2f1a4c", true},            // 32 hex digits: 128 bits
		{"4f9a0c7e2b1d8e6f3a5c9b0d7e2f1a4", false},            // 31
		{"4f9a0c7e2b1d8e6f3a5c9b0d7e2faaaa", false},           // a run counts three times
		{"hrsync-4f9a0c7e2b1d8e6f3a5c9b0d7e2f1a4c8b3e", true}, // the generated key's form
		{testKey, true},
	} {
		err := server.CheckKeyStrength(tt.key)
		if (err == nil) != tt.ok {
			t.Errorf("%q (%d bits): %v, want ok %v", tt.key, server.KeyBits(tt.key), err, tt.ok)
		}
		if err != nil && (!errors.Is(err, server.ErrWeakKey) || strings.Contains(err.Error(), tt.key) || !strings.Contains(err.Error(), "openssl rand -hex 32")) {
			t.Errorf("%q: error %q", tt.key, err)
		}
	}

	store := sinktest.Store(t, "sqlite", sink.Options{})
	for _, tt := range []struct {
		opts server.Options
		want string
	}{
		{server.Options{APIKeys: []string{testKey, "short"}}, `key "key 2": key too weak`},
		{server.Options{Keys: []server.Key{{Name: "dash", Key: strings.Repeat("a", 40)}}}, `key "dash": key too weak`},
	} {
		_, err := server.NewHandler(store, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "short\"") || strings.Contains(err.Error(), "aaaa") {
			t.Errorf("%+v: %v, want %q", tt.opts.Keys, err, tt.want)
		}
	}
	// A key given by its SHA-256 cannot be judged.
	if _, err := server.NewHandler(store, server.Options{Keys: []server.Key{{Name: "h", SHA256: strings.Repeat("ab", 32)}}}); err != nil {
		t.Errorf("sha256 key: %v", err)
	}
}

// TestIdempotencyKeyReorderedKeys: unnamed keys' Idempotency-Keys are kept by the key, not by
// its position: after serve.api_keys is reordered (a new handler over the same warehouse), the
// other key sending the same Idempotency-Key is not replayed the first key's answer, which the
// first key still gets.
func TestIdempotencyKeyReorderedKeys(t *testing.T) {
	t.Parallel()
	const k1, k2 = "first-key-4f9a0c7e2b1d8e6f3a5c9b", "second-key-8b3e1a4c7d2f9e0a6c5b"
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			store := sinktest.Store(t, backend, sink.Options{Now: func() time.Time { return fixedNow }})
			before := fixtureOver(t, store, store, server.Options{APIKeys: []string{k1, k2}})
			after := fixtureOver(t, store, store, server.Options{APIKeys: []string{k2, k1}})
			body, ct := hire("order@example.com")
			post := func(f *fixture, key string) (*http.Response, []byte) {
				t.Helper()
				return send(t, "POST", f.srv.URL+"/v1/employees", key, strings.NewReader(body), "Content-Type", ct, "Idempotency-Key", "order-1")
			}
			first, b1 := post(before, k1)
			assertStatus(t, first, b1, 201)

			other, b := post(after, k2) // "key 1" now, as k1 was
			if other.Header.Get("Idempotent-Replayed") != "" || bytes.Equal(b, b1) {
				t.Fatalf("the other key got the first key's answer replayed: %d %s", other.StatusCode, b)
			}
			assertStatus(t, other, b, 400) // its own create: the email is taken
			again, b2 := post(after, k1)
			assertStatus(t, again, b2, 201)
			if again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(b2, b1) {
				t.Errorf("the first key's retry: %q %s", again.Header.Get("Idempotent-Replayed"), b2)
			}
		})
	}
}
