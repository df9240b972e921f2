package client

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
)

// The API key goes to the source's origin only. Go's HTTP client follows redirects by itself and
// copies every header of the first request to the next one, X-API-KEY included, whatever host
// the redirect names (it strips only Authorization, Cookie and their kin, and only off the
// initial host and its subdomains). So every client hrsync builds (syncs, onboarding's creates,
// serve's forwarded creates) refuses a redirect to another origin before it is sent: the
// request fails with a *RedirectError and the key goes nowhere.

// Why a redirect was refused (RedirectError.Reason).
const (
	// RedirectOtherOrigin: the target's scheme, host or port differ from the request's.
	RedirectOtherOrigin = "another origin"
	// RedirectDowngrade: the request was https and the target is http.
	RedirectDowngrade = "https to http"
	// RedirectUserInfo: the target carries user info (user:password@).
	RedirectUserInfo = "user info"
)

// maxRedirects is how many redirects within the origin a request follows, as Go's default.
const maxRedirects = 10

// RedirectError is a redirect the client refused to follow: to another origin (scheme, host or
// port differ), from https to http, or to an address carrying user info. The request was not
// sent there, so neither was the API key. It names origins only: never a path, a query or the
// key.
type RedirectError struct {
	Status int    // the redirect's status (301, 302, 303, 307, 308)
	From   string // the origin the request went to, scheme://host[:port]
	To     string // the origin the redirect named
	Reason string // RedirectOtherOrigin, RedirectDowngrade or RedirectUserInfo
}

func (e *RedirectError) Error() string {
	switch e.Reason {
	case RedirectDowngrade:
		return fmt.Sprintf("the source redirected from https to http (%s, status %d); refused: the API key is not sent in clear", e.To, e.Status)
	case RedirectUserInfo:
		return fmt.Sprintf("the source redirected to an address with user info at %s (status %d); refused, the API key was not sent", e.To, e.Status)
	}
	return fmt.Sprintf("the source redirected to another origin, %s (status %d); refused: the API key goes only to %s", e.To, e.Status, e.From)
}

// guardRedirects returns a copy of hc that refuses redirects leaving the first request's
// origin (then calls hc's own CheckRedirect, if any, or stops after maxRedirects). hc itself,
// which the caller may share, is not changed.
func guardRedirects(hc *http.Client) *http.Client {
	g := *hc
	next := hc.CheckRedirect
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 {
			if err := checkRedirect(via[0].URL, req.URL); err != nil {
				if req.Response != nil {
					err.Status = req.Response.StatusCode
				}
				return err
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &g
}

// checkRedirect is nil when a request to from may follow a redirect to to with the API key.
func checkRedirect(from, to *url.URL) *RedirectError {
	e := &RedirectError{From: origin(from), To: origin(to)}
	switch {
	case strings.EqualFold(from.Scheme, "https") && !strings.EqualFold(to.Scheme, "https"):
		e.Reason = RedirectDowngrade
	case !sameOrigin(from, to):
		e.Reason = RedirectOtherOrigin
	case to.User != nil:
		e.Reason = RedirectUserInfo
	default:
		return nil
	}
	return e
}

// sameOrigin reports whether a and b have the same scheme, host and port (a missing port is its
// scheme's default).
func sameOrigin(a, b *url.URL) bool {
	return a.Host != "" && b.Host != "" && strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) && effectivePort(a) == effectivePort(b)
}

// maxOriginLen bounds an origin in a message: a hostile redirect names what it likes.
const maxOriginLen = 200

// origin is u's scheme://host[:port], the port left out when it is the scheme's default; no
// user info, path or query.
func origin(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if p := u.Port(); p != "" && p != effectivePort(&url.URL{Scheme: u.Scheme}) {
		host = net.JoinHostPort(host, p)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	o := strings.ToLower(u.Scheme) + "://" + host
	if len(o) > maxOriginLen {
		o = strings.ToValidUTF8(o[:maxOriginLen], "") + "…"
	}
	return o
}

// cleartextWarned holds the origins warned about, so that a process says it once per origin
// however many clients it builds.
var cleartextWarned sync.Map

// warnCleartext warns, once per process and origin, when base is plain http to a host that is
// not this machine: the API key travels in clear.
func warnCleartext(log *slog.Logger, base *url.URL) {
	if !strings.EqualFold(base.Scheme, "http") || isLoopback(base.Hostname()) {
		return
	}
	o := origin(base)
	if _, seen := cleartextWarned.LoadOrStore(o, true); seen {
		return
	}
	log.Warn("source.url is plain http to another host: the API key and the records travel in clear; use https", "origin", o)
}

// isLoopback reports whether host is this machine: localhost (and names under .localhost) or a
// loopback address.
func isLoopback(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// unwrapRedirect is the *RedirectError in err, without the *url.Error around it (whose URL is
// the redirect's whole Location, query included); other errors are returned as they are.
func unwrapRedirect(err error) error {
	var re *RedirectError
	if errors.As(err, &re) {
		return re
	}
	return err
}
