package serve

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
		proto, fhost := Forwarded(r.Header)
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
	if len(h.opts.TrustedProxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	return slices.ContainsFunc(h.opts.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(a) })
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

// Forwarded reads the scheme and host a proxy says the client asked for: RFC 7239's Forwarded
// (its first element's proto= and host=), else X-Forwarded-Proto and X-Forwarded-Host (their
// first values). A value that is not a plain http/https scheme or a valid host[:port] is
// ignored ("").
func Forwarded(hdr http.Header) (proto, host string) {
	if f := hdr.Get("Forwarded"); f != "" {
		first, _, _ := strings.Cut(f, ",")
		for pair := range strings.SplitSeq(first, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok {
				continue
			}
			v = unquote(v)
			switch strings.ToLower(k) {
			case "proto":
				proto = v
			case "host":
				host = v
			}
		}
	} else {
		proto, _, _ = strings.Cut(hdr.Get("X-Forwarded-Proto"), ",")
		host, _, _ = strings.Cut(hdr.Get("X-Forwarded-Host"), ",")
	}
	proto = strings.ToLower(strings.TrimSpace(proto))
	if proto != "http" && proto != "https" {
		proto = ""
	}
	if host = strings.TrimSpace(host); !validHost(host) {
		host = ""
	}
	return proto, host
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
