package config

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
)

// Redacted is what a secret is replaced with in a log line.
const Redacted = "[redacted]"

// minSecret is the shortest secret redacted: a shorter one would blank out common words of
// every line, and no key hrsync accepts is that short.
const minSecret = 4

// Secrets are the configuration's secrets that a log line must never hold: the source API key
// of every account, the warehouse passwords, the serve keys written in the configuration, the
// ETag secret, the onboarding webhooks' addresses and the events' webhook secrets (serve's key
// files are read by serve, which logs none of their keys). Each is also given as
// percent-encoded, the form a URL or a form body carries it in.
func (s Settings) Secrets() []string {
	var raw []string
	passwordOf := func(rawURL string) {
		if u, err := url.Parse(rawURL); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok {
				raw = append(raw, p)
			}
		}
	}
	raw = append(raw, s.Source.APIKey, s.Serve.ETagSecret)
	passwordOf(s.Warehouse.URL)
	raw = append(raw, s.Serve.APIKeys...)
	for _, k := range s.Serve.Keys {
		raw = append(raw, k.Key)
	}
	// A webhook's address is its secret (Slack's carry it in the path): the whole address,
	// and its path, which a log line could hold without the host.
	webhook := func(u string) {
		raw = append(raw, u)
		if p, err := url.Parse(u); err == nil && len(strings.Trim(p.Path, "/")) >= minSecret {
			raw = append(raw, p.Path)
		}
	}
	if s.Onboarding.Notify.URL != "" {
		webhook(s.Onboarding.Notify.URL)
	}
	for _, a := range s.Accounts {
		raw = append(raw, a.Source.APIKey)
		passwordOf(a.Warehouse.URL)
		if a.Onboarding.Notify.URL != "" {
			webhook(a.Onboarding.Notify.URL)
		}
		for _, w := range a.Webhooks { // the events' subscribers: their signing secrets
			raw = append(raw, w.Secret, strings.TrimPrefix(w.Secret, "whsec_"))
		}
	}
	var out []string
	for _, r := range raw {
		if len(r) < minSecret {
			continue
		}
		out = append(out, r, url.QueryEscape(r), url.PathEscape(r))
	}
	// Longest first, so that a secret holding another is replaced whole.
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
	return slices.Compact(out)
}

// RedactingHandler is h with every secret replaced by Redacted in each record's message and in
// every attribute's key and value (strings, errors, and whatever else prints a secret), the
// attributes added by With and in groups included. Secrets leak into logs through text that is
// not hrsync's own (a driver's error, an answer's body); this is the last guard, at the one
// place the process's loggers are built. With no secret it is h.
func RedactingHandler(h slog.Handler, secrets []string) slog.Handler {
	if len(secrets) == 0 {
		return h
	}
	pairs := make([]string, 0, 2*len(secrets))
	byPrefix := make(map[string][]string, len(secrets))
	for _, s := range secrets {
		if len(s) < minSecret {
			continue
		}
		pairs = append(pairs, s, Redacted)
		byPrefix[s[:minSecret]] = append(byPrefix[s[:minSecret]], s)
	}
	if len(pairs) == 0 {
		return h
	}
	return &redactHandler{h: h, secrets: &secretSet{byPrefix: byPrefix, r: strings.NewReplacer(pairs...)}}
}

// secretSet finds secrets in text: by their first minSecret bytes, one map look-up per byte of
// the text, whatever the number of secrets (a worker of a thousand accounts has thousands; a
// search for each in every attribute of every line cost a quarter of a millisecond a line).
type secretSet struct {
	byPrefix map[string][]string
	r        *strings.Replacer // every secret, longest first, to Redacted
}

type redactHandler struct {
	h       slog.Handler
	secrets *secretSet
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return &redactHandler{h: h.h.WithAttrs(out), secrets: h.secrets}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: h.h.WithGroup(h.redact(name)), secrets: h.secrets}
}

func (h *redactHandler) redact(s string) string {
	if !h.secrets.in(s) {
		return s
	}
	return h.secrets.r.Replace(s)
}

// in reports whether s holds a secret.
func (ss *secretSet) in(s string) bool {
	for i := 0; i+minSecret <= len(s); i++ {
		for _, sec := range ss.byPrefix[s[i:i+minSecret]] {
			if strings.HasPrefix(s[i:], sec) {
				return true
			}
		}
	}
	return false
}

// attr is a with its secrets redacted. A value of any other kind than a string or a group is
// kept as it is unless its printed form holds a secret; then it is that form, redacted.
func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	a.Key = h.redact(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(h.redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = h.attr(ga)
		}
		a.Value = slog.GroupValue(out...)
	case slog.KindAny:
		var text string
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		default:
			text = fmt.Sprintf("%+v", x)
		}
		if h.secrets.in(text) {
			a.Value = slog.StringValue(h.secrets.r.Replace(text))
		} else {
			a.Value = v
		}
	default:
		a.Value = v
	}
	return a
}
