package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/hrsync/hrsync/source/v1"
)

// redirectWorld is a set of origins served by two local servers, one plain and one TLS: a
// client built by client() reaches any host name at either, so tests can name other hosts,
// subdomains and schemes of one host. Real 127.0.0.1 addresses are dialled as they are. Every
// request is recorded with the origin it was sent to and the API key it carried.
type redirectWorld struct {
	t            *testing.T
	plain, tlsrv *httptest.Server
	// source is the origin that redirects: requests to it are answered by redirect.
	source   string
	redirect func(w http.ResponseWriter, r *http.Request)

	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	origin, method, path, key string
}

func newRedirectWorld(t *testing.T) *redirectWorld {
	w := &redirectWorld{t: t}
	h := http.HandlerFunc(w.serve)
	w.plain = httptest.NewServer(h)
	w.tlsrv = httptest.NewTLSServer(h)
	t.Cleanup(w.plain.Close)
	t.Cleanup(w.tlsrv.Close)
	return w
}

func (w *redirectWorld) serve(rw http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	o := origin(&url.URL{Scheme: scheme, Host: r.Host})
	w.mu.Lock()
	w.seen = append(w.seen, seenRequest{origin: o, method: r.Method, path: r.URL.Path, key: r.Header.Get("X-API-KEY")})
	src, redirect := w.source, w.redirect
	w.mu.Unlock()
	if o == src && !strings.HasPrefix(r.URL.Path, "/moved/") {
		redirect(rw, r)
		return
	}
	// Anywhere else (or the source's own new place) answers as the source would, so a client
	// that followed the redirect would succeed with its key sent there.
	rw.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodPost {
		rw.WriteHeader(http.StatusCreated)
		_, _ = rw.Write([]byte(createdAnswer))
		return
	}
	_, _ = rw.Write([]byte(`{"employees":[]}`))
}

// client reaches every host name at the world's servers.
func (w *redirectWorld) client() *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(w.tlsrv.Certificate())
	var d net.Dialer
	direct := func(addr string) bool { h, _, _ := net.SplitHostPort(addr); return h == "127.0.0.1" }
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if direct(addr) {
				return d.DialContext(ctx, network, addr)
			}
			return d.DialContext(ctx, network, w.plain.Listener.Addr().String())
		},
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			td := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: host}}
			return td.DialContext(ctx, network, w.tlsrv.Listener.Addr().String())
		},
	}}
}

// keysSentOutside are the requests that carried the key to an origin other than the source.
func (w *redirectWorld) keysSentOutside(key string) []seenRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []seenRequest
	for _, s := range w.seen {
		if s.origin != w.source && s.key == key {
			out = append(out, s)
		}
	}
	return out
}

func (w *redirectWorld) requests() []seenRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]seenRequest(nil), w.seen...)
}

// A redirect from the source to any other origin (another port, another host, a subdomain, the
// same host over http) is refused before anything is sent there: list pages and creates alike,
// for every redirect status. The error names the target's origin and nothing else of it.
func TestRedirectToAnotherOriginIsRefused(t *testing.T) {
	t.Parallel()
	plainPort := func(w *redirectWorld) string { return w.plain.Listener.Addr().(*net.TCPAddr).AddrPort().String() }
	tests := []struct {
		name   string
		base   func(w *redirectWorld) string // the source's base URL
		target func(w *redirectWorld) string // the redirect's target origin
		reason string
	}{
		{"another port",
			func(w *redirectWorld) string { return "http://" + plainPort(w) },
			func(w *redirectWorld) string {
				other := httptest.NewServer(http.HandlerFunc(w.serve))
				t.Cleanup(other.Close)
				return other.URL
			},
			RedirectOtherOrigin},
		{"another host",
			func(*redirectWorld) string { return "http://hr.example.com" },
			func(*redirectWorld) string { return "http://attacker.example.net" },
			RedirectOtherOrigin},
		{"a subdomain", // Go's client would even send Authorization there; X-API-KEY anywhere
			func(*redirectWorld) string { return "http://hr.example.com" },
			func(*redirectWorld) string { return "http://files.hr.example.com" },
			RedirectOtherOrigin},
		{"the same host on another port",
			func(*redirectWorld) string { return "http://hr.example.com" },
			func(*redirectWorld) string { return "http://hr.example.com:8080" },
			RedirectOtherOrigin},
		{"https to http on the same host",
			func(*redirectWorld) string { return "https://hr.example.com" },
			func(*redirectWorld) string { return "http://hr.example.com" },
			RedirectDowngrade},
		{"https to another host",
			func(*redirectWorld) string { return "https://hr.example.com" },
			func(*redirectWorld) string { return "https://www.example.com" },
			RedirectOtherOrigin},
		{"user info on the same origin",
			func(*redirectWorld) string { return "http://hr.example.com" },
			func(*redirectWorld) string { return "http://someone:pw@hr.example.com" },
			RedirectUserInfo},
	}
	calls := []struct {
		name   string
		status int
		call   func(c *Client) error
	}{
		{"list page 302", http.StatusFound, func(c *Client) error {
			_, _, err := c.ListEmployees(context.Background(), 1)
			return err
		}},
		{"list page 301", http.StatusMovedPermanently, func(c *Client) error {
			_, _, err := c.ListRecords(context.Background(), v1.Collections[0], 2, nil)
			return err
		}},
		{"create 307", http.StatusTemporaryRedirect, func(c *Client) error {
			_, err := c.CreateEmployee(context.Background(), v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com"})
			return err
		}},
		{"create 308", http.StatusPermanentRedirect, func(c *Client) error {
			_, err := c.CreateEmployee(context.Background(), v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com"})
			return err
		}},
		{"create 303", http.StatusSeeOther, func(c *Client) error {
			_, err := c.CreateEmployee(context.Background(), v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com"})
			return err
		}},
	}
	for _, tt := range tests {
		for _, cl := range calls {
			t.Run(tt.name+"/"+cl.name, func(t *testing.T) {
				w := newRedirectWorld(t)
				base, target := tt.base(w), tt.target(w)
				bu, _ := url.Parse(base)
				w.source = origin(bu)
				w.redirect = func(rw http.ResponseWriter, r *http.Request) {
					http.Redirect(rw, r, target+"/steal"+r.URL.Path+"?token=leak-"+r.URL.RawQuery, cl.status)
				}
				c, err := New(base, clientTestKey, Options{HTTPClient: w.client(), MaxAttempts: 3})
				if err != nil {
					t.Fatal(err)
				}
				err = cl.call(c)
				if sent := w.keysSentOutside(clientTestKey); len(sent) > 0 {
					t.Fatalf("the key was sent outside the source: %+v", sent)
				}
				var re *RedirectError
				if !errors.As(err, &re) {
					t.Fatalf("err = %v, want a *RedirectError; requests %+v", err, w.requests())
				}
				tu, _ := url.Parse(target)
				if re.Reason != tt.reason || re.To != origin(tu) || re.From != w.source || re.Status != cl.status {
					t.Errorf("error %+v, want reason %q, to %s, from %s, status %d", *re, tt.reason, origin(tu), w.source, cl.status)
				}
				msg := err.Error()
				for _, leak := range []string{clientTestKey, "leak", "steal", "token", "pw@", "someone"} {
					if strings.Contains(msg, leak) {
						t.Errorf("the message holds %q: %s", leak, msg)
					}
				}
				if !strings.Contains(msg, re.To) {
					t.Errorf("the message does not name the origin %s: %s", re.To, msg)
				}
				// Refused, not retried: the source was asked once.
				if n := len(w.requests()); n != 1 {
					t.Errorf("%d requests, want 1 (the refused redirect is not retried): %+v", n, w.requests())
				}
			})
		}
	}
}

// A redirect within the source's origin is followed, with the key: a relative Location, an
// absolute one, one with the default port spelt out; for list pages and creates.
func TestRedirectWithinTheOriginIsFollowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base, location string
	}{
		{"relative", "http://hr.example.com", "/moved"},
		{"absolute", "http://hr.example.com/v1", "http://hr.example.com/moved"},
		{"default port spelt out", "https://hr.example.com", "https://HR.example.com:443/moved"},
		{"another path on 127.0.0.1", "", ""},
	}
	for _, tt := range tests {
		// A 302 turns a POST into a GET (as browsers do): only 307 and 308 redirect a create.
		for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			t.Run(tt.name+"/"+http.StatusText(status), func(t *testing.T) {
				w := newRedirectWorld(t)
				base, location := tt.base, tt.location
				if base == "" {
					base = w.plain.URL
					location = w.plain.URL + "/moved"
				}
				bu, _ := url.Parse(base)
				w.source = origin(bu)
				w.redirect = func(rw http.ResponseWriter, r *http.Request) {
					http.Redirect(rw, r, location+r.URL.Path, status)
				}
				c, err := New(base, clientTestKey, Options{HTTPClient: w.client()})
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := c.ListEmployees(context.Background(), 1); err != nil {
					t.Fatalf("list: %v", err)
				}
				want := 1
				if status != http.StatusFound {
					want = 2
					if _, err := c.CreateEmployee(context.Background(), v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com"}); err != nil {
						t.Fatalf("create: %v", err)
					}
				}
				var moved []seenRequest
				for _, s := range w.requests() {
					if s.origin != w.source {
						t.Errorf("a request left the origin: %+v", s)
					}
					if strings.HasPrefix(s.path, "/moved/") {
						moved = append(moved, s)
						if s.key != clientTestKey {
							t.Errorf("the followed request lacks the key: %+v", s)
						}
					}
				}
				if len(moved) != want {
					t.Errorf("requests %+v, want %d followed to /moved/", w.requests(), want)
				}
			})
		}
	}
}

// The client's guard is on a copy: the caller's HTTP client keeps its own redirect policy, which
// the copy still applies within the origin.
func TestRedirectGuardKeepsTheCallersClient(t *testing.T) {
	t.Parallel()
	w := newRedirectWorld(t)
	w.source = "http://hr.example.com"
	w.redirect = func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "/moved"+r.URL.Path, http.StatusFound)
	}
	hc := w.client()
	stop := errors.New("no redirects here")
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return stop }
	c, err := New(w.source, clientTestKey, Options{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	if c.http == hc || c.http.Transport != hc.Transport {
		t.Error("the client does not use a copy of the given HTTP client")
	}
	if _, _, err := c.ListEmployees(context.Background(), 1); !errors.Is(err, stop) {
		t.Errorf("err = %v, want the caller's own redirect policy's", err)
	}
	if err := hc.CheckRedirect(nil, nil); err != stop {
		t.Error("the caller's client was changed")
	}
}

// A plain-http source.url to another machine is warned about once, naming its origin, never the
// key; https and loopback addresses are not.
func TestCleartextSourceIsWarnedOnce(t *testing.T) {
	t.Parallel()
	cleartextWarned.Clear()
	t.Cleanup(cleartextWarned.Clear)
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	for _, base := range []string{
		"http://hr.example.com/v1", "http://HR.example.com:80", // the same origin: one warning
		"https://hr.example.com", "http://127.0.0.1:8080", "http://localhost:9000", "http://[::1]:8080",
		"http://api.localhost", "http://127.9.9.9",
	} {
		if _, err := New(base, clientTestKey, Options{Logger: log}); err != nil {
			t.Fatal(err)
		}
	}
	got := buf.String()
	if n := strings.Count(got, "level=WARN"); n != 1 || !strings.Contains(got, "origin=http://hr.example.com") || !strings.Contains(got, "plain http") {
		t.Errorf("logs:\n%s\nwant one warning naming http://hr.example.com", got)
	}
	if strings.Contains(got, clientTestKey) {
		t.Errorf("the key is in the logs:\n%s", got)
	}
	buf.Reset()
	if _, err := New("http://10.1.2.3:8080", clientTestKey, Options{Logger: log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "origin=http://10.1.2.3:8080") {
		t.Errorf("no warning for another origin: %s", buf.String())
	}
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"https://HR.Example.com:443/v1?x=1": "https://hr.example.com",
		"http://hr.example.com:80/":         "http://hr.example.com",
		"http://u:p@hr.example.com:8080/a":  "http://hr.example.com:8080",
		"https://[::1]:8443/":               "https://[::1]:8443",
		"https://[::1]/":                    "https://[::1]",
	}
	for in, want := range tests {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := origin(u); got != want {
			t.Errorf("origin(%s) = %s, want %s", in, got, want)
		}
	}
	long := &url.URL{Scheme: "http", Host: strings.Repeat("a", 5000) + ".example.com"}
	if got := origin(long); len(got) > maxOriginLen+len("…") {
		t.Errorf("origin of a long host is %d bytes", len(got))
	}
}
