package server_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
)

// TestCORS: with cors_origins, an allowed origin's preflight is answered without a key and its
// answers (errors and 304s included) expose the paging headers; another origin gets neither;
// every answer varies on Origin. Without cors_origins, no Access-Control-* header is sent and a
// preflight is a request like any other (401 without a key).
func TestCORS(t *testing.T) {
	t.Parallel()
	const dash = "https://dash.example.com"
	f := newFixture(t, "sqlite", server.Options{CORSOrigins: []string{dash, "http://localhost:3000"}})
	f.put(t, goldenEmployees...)
	off := newFixture(t, "sqlite", server.Options{})
	any := newFixture(t, "sqlite", server.Options{CORSOrigins: []string{"*"}})
	first, _ := f.do(t, "GET", "/v1/employees", nil)
	tag := first.Header.Get("ETag")

	preflight := []string{"X-API-KEY", "", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "x-api-key"}
	tests := []struct {
		name       string
		f          *fixture
		method     string
		path       string
		header     []string
		status     int
		allowed    string // the Access-Control-Allow-Origin expected; "" none
		exposed    bool
		varyOrigin bool
	}{
		{"preflight allowed", f, "OPTIONS", "/v1/employees", append([]string{"Origin", dash}, preflight...), 204, dash, false, true},
		{"preflight other origin", f, "OPTIONS", "/v1/employees", append([]string{"Origin", "https://evil.example"}, preflight...), 403, "", false, true},
		{"preflight, CORS off", off, "OPTIONS", "/v1/employees", append([]string{"Origin", dash}, preflight...), 401, "", false, false},
		{"preflight, any origin", any, "OPTIONS", "/v1/employees", append([]string{"Origin", "https://x.example"}, preflight...), 204, "*", false, true},
		{"GET allowed", f, "GET", "/v1/employees", []string{"Origin", dash}, 200, dash, true, true},
		{"GET second origin", f, "GET", "/v1/employees", []string{"Origin", "http://localhost:3000"}, 200, "http://localhost:3000", true, true},
		{"GET other origin", f, "GET", "/v1/employees", []string{"Origin", "https://dash.example.com.evil"}, 200, "", false, true},
		{"GET no origin", f, "GET", "/v1/employees", nil, 200, "", false, true},
		{"401 allowed", f, "GET", "/v1/employees", []string{"Origin", dash, "X-API-KEY", ""}, 401, dash, true, true},
		{"404 allowed", f, "GET", "/v1/nothing", []string{"Origin", dash}, 404, dash, true, true},
		{"304 allowed", f, "GET", "/v1/employees", []string{"Origin", dash, "If-None-Match", tag}, 304, dash, true, true},
		{"GET, CORS off", off, "GET", "/v1/employees", []string{"Origin", dash}, 200, "", false, false},
		{"GET any", any, "GET", "/v1/employees", []string{"Origin", "null"}, 200, "*", true, true},
		{"OPTIONS without request method", f, "OPTIONS", "/v1/employees", []string{"Origin", dash}, 405, dash, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := tt.f.do(t, tt.method, tt.path, nil, tt.header...)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			h := resp.Header
			if got := h.Get("Access-Control-Allow-Origin"); got != tt.allowed {
				t.Errorf("Allow-Origin %q, want %q", got, tt.allowed)
			}
			exposed := h.Get("Access-Control-Expose-Headers")
			if tt.exposed {
				for _, name := range []string{"Link", "Total", "Per-Page", "ETag", "X-Request-Id"} {
					if !strings.Contains(exposed, name) {
						t.Errorf("Expose-Headers %q lacks %s", exposed, name)
					}
				}
			} else if exposed != "" {
				t.Errorf("Expose-Headers %q sent", exposed)
			}
			if got := vary(h, "Origin"); got != tt.varyOrigin {
				t.Errorf("Vary %q: Origin %v, want %v", h.Values("Vary"), got, tt.varyOrigin)
			}
			if tt.f == off {
				for k := range h {
					if strings.HasPrefix(k, "Access-Control-") {
						t.Errorf("CORS off sent %s", k)
					}
				}
			}
			if tt.status == 204 {
				if m := h.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "GET") || !strings.Contains(m, "POST") {
					t.Errorf("Allow-Methods %q", m)
				}
				if ah := strings.ToLower(h.Get("Access-Control-Allow-Headers")); !strings.Contains(ah, "x-api-key") || !strings.Contains(ah, "idempotency-key") {
					t.Errorf("Allow-Headers %q", ah)
				}
				if h.Get("Access-Control-Max-Age") == "" {
					t.Error("no Max-Age")
				}
			}
		})
	}
}

// vary reports whether the Vary header names name.
func vary(h http.Header, name string) bool {
	for _, v := range h.Values("Vary") {
		for _, part := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), name) {
				return true
			}
		}
	}
	return false
}

func TestCORSOriginsConfig(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"https://dash.example.com", "https://dash.example.com", true},
		{"HTTPS://Dash.Example.com:443", "https://dash.example.com", true},
		{"http://localhost:3000/", "http://localhost:3000", true},
		{"http://[::1]:80", "http://[::1]", true},
		{"dash.example.com", "", false},
		{"https://dash.example.com/app", "", false},
		{"ftp://x.example", "", false},
		{"https://user@x.example", "", false},
		{"https://x.example?q=1", "", false},
		{"https://x example", "", false},
	} {
		got, err := server.NormalizeOrigin(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	store := sinktest.Store(t, "sqlite", sink.Options{})
	if _, err := server.NewHandler(store, server.Options{APIKeys: []string{testKey}, CORSOrigins: []string{"dash.example.com"}}); err == nil || !strings.Contains(err.Error(), "scheme://host") {
		t.Errorf("bad origin: %v", err)
	}
	if _, err := server.NewHandler(store, server.Options{APIKeys: []string{testKey}, AllowedHosts: []string{"x/y"}}); err == nil {
		t.Error("bad allowed host accepted")
	}
}

// TestLinksBehindProxies: the scheme and host of Link (and Location) come from the public URL;
// else from a trusted proxy's Forwarded or X-Forwarded-*; else from the Host header only when it
// is an allowed host; else from the address the request arrived at. A client's own Host or
// forwarding headers never reach a link.
func TestLinksBehindProxies(t *testing.T) {
	t.Parallel()
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	other := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	pub, _ := url.Parse("https://hr.example.com/api")
	tests := []struct {
		name   string
		opts   server.Options
		header []string
		want   string // Link's first URL's scheme://host, "LOCAL" for the server's own address
	}{
		{"default: the local address", server.Options{}, nil, "LOCAL"},
		{"spoofed Host ignored", server.Options{}, []string{"Host", "evil.example"}, "LOCAL"},
		{"spoofed forwarding ignored", server.Options{}, []string{"X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"}, "LOCAL"},
		{"untrusted peer's forwarding ignored", server.Options{TrustedProxies: other}, []string{"X-Forwarded-Host", "evil.example", "Forwarded", "host=evil.example;proto=https"}, "LOCAL"},
		{"allowed Host", server.Options{AllowedHosts: []string{"replica.internal"}}, []string{"Host", "Replica.Internal:8080"}, "http://Replica.Internal:8080"},
		{"allowed Host, port must match", server.Options{AllowedHosts: []string{"replica.internal:9000"}}, []string{"Host", "replica.internal:8080"}, "LOCAL"},
		{"not an allowed Host", server.Options{AllowedHosts: []string{"replica.internal"}}, []string{"Host", "evil.example"}, "LOCAL"},
		{"trusted X-Forwarded", server.Options{TrustedProxies: loopback}, []string{"X-Forwarded-Host", "evil.example, hr.example.com", "X-Forwarded-Proto", "http, https"}, "https://hr.example.com"},
		{"trusted Forwarded wins", server.Options{TrustedProxies: loopback}, []string{"Forwarded", `for=1.2.3.4;host=evil.example, for=5.6.7.8;proto=https;host="hr.example.com:8443"`, "X-Forwarded-Host", "other.example"}, "https://hr.example.com:8443"},
		{"trusted proto only", server.Options{TrustedProxies: loopback}, []string{"X-Forwarded-Proto", "https"}, "https://LOCALHOST"},
		{"trusted, invalid host ignored", server.Options{TrustedProxies: loopback}, []string{"X-Forwarded-Host", "evil.example/path", "X-Forwarded-Proto", "javascript"}, "LOCAL"},
		{"trusted, host not allowed", server.Options{TrustedProxies: loopback, AllowedHosts: []string{"hr.example.com"}}, []string{"X-Forwarded-Host", "evil.example"}, "LOCAL"},
		{"trusted, host allowed", server.Options{TrustedProxies: loopback, AllowedHosts: []string{"hr.example.com"}}, []string{"X-Forwarded-Host", "hr.example.com"}, "http://hr.example.com"},
		{"public URL wins", server.Options{PublicURL: pub, TrustedProxies: loopback}, []string{"X-Forwarded-Host", "evil.example", "Host", "evil.example"}, "https://hr.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "sqlite", tt.opts)
			f.put(t, goldenEmployees...)
			local := strings.TrimPrefix(f.srv.URL, "http://")
			want := strings.ReplaceAll(strings.ReplaceAll(tt.want, "LOCALHOST", local), "LOCAL", f.srv.URL)
			resp, body := f.doHost(t, "GET", "/v1/employees?per_page=1", tt.header...)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			link := resp.Header.Get("Link")
			if !strings.HasPrefix(link, "<"+want+"/") {
				t.Errorf("Link %q, want it on %s", link, want)
			}
			if strings.Contains(link, "evil") {
				t.Errorf("Link %q holds a client's host", link)
			}
			resp, _ = f.doHost(t, "POST", "/v1/employees", append([]string{"Content-Type", "application/x-www-form-urlencoded"}, tt.header...)...)
			if resp.StatusCode != 201 {
				t.Fatalf("create: status %d", resp.StatusCode)
			}
			if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, want+"/") {
				t.Errorf("Location %q, want it on %s", loc, want)
			}
		})
	}
}

var hostCreates atomic.Int64

// doHost is do with a Host header of the caller's choice among the pairs.
func (f *fixture) doHost(t *testing.T, method, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	var body *strings.Reader
	if method == "POST" {
		body = strings.NewReader(url.Values{"employee[first_name]": {"Al"}, "employee[last_name]": {"Bo"},
			"employee[email]": {fmt.Sprintf("al%d@example.com", hostCreates.Add(1))}, "employee[join_date]": {"2026-01-02"}}.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", testKey)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp, nil
}

// TestForwarded: the hop read is the rightmost whose client is not a trusted proxy (the one the
// outermost trusted proxy added); what a client sets to its left, spoofed, is never read.
func TestForwarded(t *testing.T) {
	t.Parallel()
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	for _, tt := range []struct {
		name                string
		hdr                 http.Header
		client, proto, host string
	}{
		{"one hop", http.Header{"Forwarded": {`for=192.0.2.1;proto=https;host=a.example`}}, "192.0.2.1", "https", "a.example"},
		{"quoted, ports", http.Header{"Forwarded": {`For="[2001:db8::1]:4711";Proto=HTTPS;Host="a.example:8443"`}}, "2001:db8::1", "https", "a.example:8443"},
		{"spoofed leftmost", http.Header{"Forwarded": {`for=203.0.113.66;proto=http;host=evil.example, for=192.0.2.1;proto=https;host=a.example`}}, "192.0.2.1", "https", "a.example"},
		{"spoofed on its own line", http.Header{"Forwarded": {`for=203.0.113.66;host=evil.example`, `for=192.0.2.1;host=a.example`}}, "192.0.2.1", "", "a.example"},
		{"trusted hops skipped", http.Header{"Forwarded": {`for=203.0.113.66;host=evil.example, for=192.0.2.1;proto=https;host=a.example, for=10.0.0.5;proto=http;host=inner.internal, for="[2001:db8:ffff::9]";host=inner2.internal`}}, "192.0.2.1", "https", "a.example"},
		{"every hop trusted", http.Header{"Forwarded": {`for=10.0.0.7;host=a.example, for=10.0.0.5;host=b.example`}}, "10.0.0.7", "", "a.example"},
		{"obfuscated client", http.Header{"Forwarded": {`for=192.0.2.9;host=evil.example, for=_hidden;host=a.example, for=10.0.0.5`}}, "_hidden", "", "a.example"},
		{"no for", http.Header{"Forwarded": {`host=a.example, host=b.example`}}, "", "", "b.example"},
		{"comma in a quoted host", http.Header{"Forwarded": {`for=192.0.2.1;host="a.example,b"`}}, "192.0.2.1", "", ""},
		{"bad values", http.Header{"Forwarded": {`host=[::1]:80;proto=gopher`}}, "", "", "[::1]:80"},
		{"unbracketed v6 host", http.Header{"Forwarded": {`host=::1`}}, "", "", ""},
		{"Forwarded wins", http.Header{"Forwarded": {`for=192.0.2.1`}, "X-Forwarded-Host": {"x.example"}}, "192.0.2.1", "", ""},
		{"xff one hop", http.Header{"X-Forwarded-For": {"192.0.2.1"}, "X-Forwarded-Proto": {"https"}, "X-Forwarded-Host": {"a.example"}}, "192.0.2.1", "https", "a.example"},
		{"xff spoofed leftmost", http.Header{"X-Forwarded-For": {"203.0.113.66, 192.0.2.1"}, "X-Forwarded-Proto": {"http, https"}, "X-Forwarded-Host": {"evil.example, a.example"}}, "192.0.2.1", "https", "a.example"},
		{"xff spoofed line", http.Header{"X-Forwarded-For": {"203.0.113.66", "192.0.2.1"}, "X-Forwarded-Host": {"evil.example", "a.example"}}, "192.0.2.1", "", "a.example"},
		{"xff trusted hops skipped", http.Header{"X-Forwarded-For": {"203.0.113.66, 192.0.2.1, 10.0.0.5"}, "X-Forwarded-Proto": {"http, https, http"}, "X-Forwarded-Host": {"evil.example, a.example, inner.internal"}}, "192.0.2.1", "https", "a.example"},
		{"xff proto set once by the proxy", http.Header{"X-Forwarded-For": {"203.0.113.66, 192.0.2.1, 10.0.0.5"}, "X-Forwarded-Proto": {"https"}, "X-Forwarded-Host": {"evil.example, a.example"}}, "192.0.2.1", "https", "a.example"},
		{"xff without for", http.Header{"X-Forwarded-Proto": {"https, http"}, "X-Forwarded-Host": {" b.example , c.example"}}, "", "http", "c.example"},
		{"xff user in host", http.Header{"X-Forwarded-Host": {"user@b.example"}}, "", "", ""},
		{"xff bad port", http.Header{"X-Forwarded-Host": {"b.example:99999x"}}, "", "", ""},
		{"xff empty port", http.Header{"X-Forwarded-Host": {"b.example:"}}, "", "", ""},
		{"xff long label", http.Header{"X-Forwarded-Host": {strings.Repeat("a", 64) + ".example"}}, "", "", ""},
		{"none", http.Header{}, "", "", ""},
	} {
		client, proto, host := server.Forwarded(tt.hdr, trusted)
		if client != tt.client || proto != tt.proto || host != tt.host {
			t.Errorf("%s: Forwarded(%v) = %q %q %q, want %q %q %q", tt.name, tt.hdr, client, proto, host, tt.client, tt.proto, tt.host)
		}
	}
}

// FuzzForwarded: whatever a proxy (or a client) sends, what comes out is empty or a plain
// scheme and a host that parses back as exactly the host of a URL.
func FuzzForwarded(f *testing.F) {
	f.Add(`proto=https;host="a.example:8443"`, "https", "b.example")
	f.Add(`for=1.2.3.4, host=x`, "http,https", "[::1]:80")
	f.Fuzz(func(t *testing.T, fwd, xproto, xhost string) {
		for _, h := range []http.Header{{"Forwarded": {fwd}}, {"X-Forwarded-Proto": {xproto}, "X-Forwarded-Host": {xhost}}} {
			_, proto, host := server.Forwarded(h, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
			if proto != "" && proto != "http" && proto != "https" {
				t.Fatalf("proto %q", proto)
			}
			if host == "" {
				continue
			}
			u, err := url.Parse("http://" + host + "/v1")
			if err != nil || u.Host != host || u.User != nil || u.Path != "/v1" {
				t.Fatalf("host %q does not make a clean URL: %v %+v", host, err, u)
			}
		}
	})
}
