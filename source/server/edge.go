package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// This file is what the replica does at the web's edge: CORS for browsers on other origins, and
// the address its links are built on behind proxies.

// corsExposed are the answer headers a browser's script may read: paging, tags, request ids
// and what a create or a refusal says.
const corsExposed = "Link, Total, Per-Page, ETag, X-Request-Id, Location, Retry-After, Idempotent-Replayed"

// corsAllowedHeaders are the request headers a cross-origin script may send.
var corsAllowedHeaders = []string{"X-Api-Key", "Content-Type", "If-None-Match", "Idempotency-Key", "X-Request-Id"}

// corsMaxAge is how long (seconds) a browser may keep a preflight's answer.
const corsMaxAge = "600"

// cors is the CORS policy: which origins' scripts may read the replica's answers.
type cors struct {
	any     bool            // "*": every origin
	origins map[string]bool // exact, normalized origins
}

// newCORS reads Options.CORSOrigins; nil when it is empty (CORS off: no Access-Control-*
// header, preflights answered like any request without a key).
func newCORS(list []string) (*cors, error) {
	if len(list) == 0 {
		return nil, nil
	}
	c := &cors{origins: make(map[string]bool, len(list))}
	for _, o := range list {
		if o == "*" {
			c.any = true
			continue
		}
		n, err := NormalizeOrigin(o)
		if err != nil {
			return nil, err
		}
		c.origins[n] = true
	}
	return c, nil
}

// NormalizeOrigin checks an origin as configured (scheme://host[:port], nothing after) and
// returns it as browsers send it: lower case, without a default port.
func NormalizeOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || !validHost(u.Host) {
		return "", fmt.Errorf("origin %q: want scheme://host[:port] (e.g. https://dash.example.com), or *", o)
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		host = strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	return u.Scheme + "://" + host, nil
}

// handle applies the policy to a request: every answer varies on Origin; an allowed origin's
// answers say so and expose the interface's headers. A preflight is answered here, without a
// key (a browser sends none with it): 204 for an allowed origin, 403 for another. It reports
// whether it answered.
func (c *cors) handle(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	allowed := c.any || c.origins[origin]
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		if !allowed {
			WriteError(w, http.StatusForbidden, "origin not allowed: serve.cors_origins does not list it")
			return true
		}
		c.allow(h, origin)
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST")
		h.Set("Access-Control-Allow-Headers", strings.Join(corsAllowedHeaders, ", "))
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	if allowed {
		c.allow(h, origin)
		h.Set("Access-Control-Expose-Headers", corsExposed)
	}
	return false
}

func (c *cors) allow(h http.Header, origin string) {
	if c.any {
		h.Set("Access-Control-Allow-Origin", "*")
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
}

// linkBase is where links point when no public URL is configured: the scheme and host a
// trusted proxy forwarded, else the Host header when it is an allowed host, else the address
// the request arrived at. A client's own Host or X-Forwarded-* never reaches a link unless
// configuration says to trust it.
func (h *Handler) linkBase(r *http.Request) (scheme, host string) {
	scheme = "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if h.trusted(r.RemoteAddr) {
		_, proto, fhost := Forwarded(r.Header, h.opts.TrustedProxies)
		if proto != "" {
			scheme = proto
		}
		if fhost != "" && (len(h.opts.AllowedHosts) == 0 || h.allowedHost(fhost)) {
			return scheme, fhost
		}
	}
	if h.allowedHost(r.Host) {
		return scheme, r.Host
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return scheme, a.String()
	}
	// A handler called without a server (a test's recorder): the host it was asked for.
	return scheme, r.Host
}

// trusted reports whether the request's peer is one of Options.TrustedProxies.
func (h *Handler) trusted(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	return err == nil && isTrusted(ap.Addr(), h.opts.TrustedProxies)
}

// isTrusted reports whether a is in one of the prefixes.
func isTrusted(a netip.Addr, proxies []netip.Prefix) bool {
	a = a.Unmap()
	return a.IsValid() && slices.ContainsFunc(proxies, func(p netip.Prefix) bool { return p.Contains(a) })
}

// maxClientBytes bounds a client identity read from a forwarded for= that is no address.
const maxClientBytes = 64

// clientOf is who sent the request, as failed authentications are counted: the peer, or
// behind a trusted proxy the client it forwarded (Forwarded); an IPv6 address counts as its
// /64, which one client commonly holds whole.
func (h *Handler) clientOf(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return bounded(r.RemoteAddr, maxClientBytes) // no server: a test's recorder
	}
	client := ap.Addr().Unmap()
	if isTrusted(client, h.opts.TrustedProxies) {
		if c, _, _ := Forwarded(r.Header, h.opts.TrustedProxies); c != "" {
			if a, err := netip.ParseAddr(c); err == nil {
				client = a.Unmap()
			} else {
				return "for=" + bounded(c, maxClientBytes)
			}
		}
	}
	if client.Is6() {
		p, _ := client.Prefix(64)
		return p.String()
	}
	return client.String()
}

// bounded is s cut to at most n bytes.
func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// allowedHost reports whether host (host[:port]) is one of Options.AllowedHosts: the same name,
// case ignored, and the same port when the entry has one.
func (h *Handler) allowedHost(host string) bool {
	if host == "" || !validHost(host) {
		return false
	}
	name, port := splitHost(host)
	for _, a := range h.opts.AllowedHosts {
		an, ap := splitHost(a)
		if strings.EqualFold(an, name) && (ap == "" || ap == port) {
			return true
		}
	}
	return false
}

func splitHost(host string) (name, port string) {
	if n, p, err := net.SplitHostPort(host); err == nil {
		return n, p
	}
	return strings.Trim(host, "[]"), ""
}

// Forwarded reads what the proxies in front of the replica say of the request: the client
// (its address, or the token a proxy gave it), and the scheme and host it asked for. Each proxy
// appends its hop to the right; a client can put anything to the left. So the hop read is the
// rightmost one whose client is not one of trusted (the proxies of Options.TrustedProxies): the
// hop the outermost trusted proxy added. Trusted hops further right are skipped; when every hop
// is trusted, the leftmost is read.
//
// RFC 7239's Forwarded is read when present (each element's for=, proto= and host=); else
// X-Forwarded-For, with X-Forwarded-Proto and X-Forwarded-Host: their value at the same hop
// when they list as many as X-Forwarded-For, else their rightmost. A value that is not a plain
// http/https scheme or a valid host[:port] is ignored ("").
func Forwarded(hdr http.Header, trusted []netip.Prefix) (client, proto, host string) {
	if f := hdr.Values("Forwarded"); len(f) > 0 {
		var hops []map[string]string
		for _, line := range f {
			for _, el := range splitQuoted(line, ',') {
				pairs := map[string]string{}
				for _, pair := range splitQuoted(el, ';') {
					k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
					if ok {
						pairs[strings.ToLower(strings.TrimSpace(k))] = unquote(strings.TrimSpace(v))
					}
				}
				hops = append(hops, pairs)
			}
		}
		i := hop(len(hops), func(i int) string { return forAddr(hops[i]["for"]) }, trusted)
		client, proto, host = forAddr(hops[i]["for"]), hops[i]["proto"], hops[i]["host"]
	} else {
		fors := listValues(hdr, "X-Forwarded-For")
		protos := listValues(hdr, "X-Forwarded-Proto")
		hosts := listValues(hdr, "X-Forwarded-Host")
		at := func(list []string, i int) string {
			switch {
			case len(list) == 0:
				return ""
			case len(list) == len(fors):
				return list[i]
			}
			return list[len(list)-1]
		}
		i := hop(len(fors), func(i int) string { return fors[i] }, trusted)
		client, proto, host = at(fors, i), at(protos, i), at(hosts, i)
	}
	proto = strings.ToLower(strings.TrimSpace(proto))
	if proto != "http" && proto != "https" {
		proto = ""
	}
	if host = strings.TrimSpace(host); !validHost(host) {
		host = ""
	}
	return client, proto, host
}

// hop is the index of the rightmost of n hops whose client (addr) is not trusted; 0 when each
// is, or there is none.
func hop(n int, addr func(int) string, trusted []netip.Prefix) int {
	for i := n - 1; i > 0; i-- {
		a, err := netip.ParseAddr(addr(i))
		if err != nil || !isTrusted(a, trusted) {
			return i
		}
	}
	return 0
}

// forAddr is a Forwarded for= value without its port and brackets: "[2001:db8::1]:4711" is
// 2001:db8::1, "192.0.2.1:80" is 192.0.2.1; a token (unknown, _hidden) as it is.
func forAddr(v string) string {
	if ap, err := netip.ParseAddrPort(v); err == nil {
		return ap.Addr().String()
	}
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		return v[1 : len(v)-1]
	}
	return v
}

// listValues are a comma-separated header's values over all its lines, trimmed.
func listValues(hdr http.Header, name string) []string {
	var out []string
	for _, line := range hdr.Values(name) {
		for v := range strings.SplitSeq(line, ",") {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// splitQuoted splits s at sep outside RFC 7230 quoted-strings.
func splitQuoted(s string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unquote reads an RFC 7230 quoted-string (or returns a token as it is).
func unquote(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	var b strings.Builder
	for i := 1; i < len(v)-1; i++ {
		if v[i] == '\\' && i+1 < len(v)-1 {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ValidHost reports whether s is a host[:port] fit for a URL (see validHost): what
// Options.AllowedHosts may hold.
func ValidHost(s string) bool { return validHost(s) }

// validHost reports whether s is a host[:port] fit for a URL: a DNS name or IP address (IPv6
// in brackets) of at most 253 bytes, and a numeric port; no user, path or other character.
func validHost(s string) bool {
	if s == "" || len(s) > 260 {
		return false
	}
	name, port := s, ""
	if n, p, err := net.SplitHostPort(s); err == nil {
		name, port = n, p
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		name = s[1 : len(s)-1]
	}
	if port != "" {
		if len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return false
		}
	} else if strings.HasSuffix(s, ":") {
		return false
	}
	bracketed := strings.HasPrefix(s, "[")
	if a, err := netip.ParseAddr(name); err == nil {
		// An IPv6 address goes in brackets, and only it; a zone has no place in a link.
		return a.Zone() == "" && a.Is6() == bracketed
	} else if bracketed {
		return false
	}
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// baseURL is the absolute URL of the requested path: the public base when configured, else
// linkBase's scheme and host.
func (h *Handler) baseURL(r *http.Request) *url.URL {
	var u url.URL
	if h.opts.PublicURL != nil {
		u = *h.opts.PublicURL
		u.Path += r.URL.Path
	} else {
		u.Scheme, u.Host = h.linkBase(r)
		u.Path = r.URL.Path
	}
	return &u
}
