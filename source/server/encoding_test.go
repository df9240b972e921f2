package server

import (
	"fmt"
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ header, want string }{
		{"", ""},
		{"gzip", "gzip"},
		{"GZIP", "gzip"},
		{"x-gzip", "gzip"},
		{"gzip, deflate, br", "gzip"},
		{"deflate, br", ""},
		{"br;q=1.0, gzip;q=0.8, *;q=0.1", "gzip"},
		{"gzip;q=0", ""},
		{"gzip; q=0.000", ""},
		{"*", "gzip"},
		{"*;q=0", ""},
		{"*;q=0, identity", ""},
		{"identity", ""},
		{"identity;q=0", ""},                   // nothing acceptable: identity is sent anyway
		{"identity;q=0, gzip", "gzip"},         // only gzip acceptable
		{"gzip;q=0.5, identity", ""},           // identity preferred
		{"gzip;q=0.5, identity;q=0.5", "gzip"}, // a tie goes to the smaller answer
		{"gzip;q=0.5", "gzip"},                 // identity is implicitly 1 only if not excluded... see below
		{"gzip;q=2", ""},                       // malformed q: the element is ignored
		{"gzip;q=0.1234", ""},
		{"gzip;q=", ""},
		{"gzip;q=abc", ""},
		{"gzip;level=9", "gzip"}, // unknown parameters change nothing
		{"gzip;;q=1", "gzip"},
		{"gzip;q", ""},
		{" , ,gzip , ", "gzip"},
		{"zstd, identity;q=0.5", ""},
	} {
		if got := negotiate(c.header); got != c.want {
			t.Errorf("negotiate(%q) = %q, want %q", c.header, got, c.want)
		}
	}
}

// FuzzNegotiate: any header gives identity or gzip, and gzip only when the header names gzip
// (or x-gzip, or *); never a panic.
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "gzip", "gzip;q=0", "*;q=0.5, identity;q=0", "br;q=1.0, gzip;q=0.8", "gzip;q=1.000;x=y", ";;;,,,", "gzip;q=0.\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got := negotiate(header)
		switch got {
		case "":
		case "gzip":
			l := strings.ToLower(header)
			if !strings.Contains(l, "gzip") && !strings.Contains(l, "*") {
				t.Fatalf("negotiate(%q) = gzip, which it does not name", header)
			}
		default:
			t.Fatalf("negotiate(%q) = %q", header, got)
		}
	})
}

func TestETagMatchEitherCoding(t *testing.T) {
	t.Parallel()
	tag := `"0123456789abcdef"`
	gz := codedTag(tag, "gzip")
	if gz != `"0123456789abcdef-gzip"` || codedTag(tag, "") != tag {
		t.Fatalf("codedTag: %s", gz)
	}
	for _, c := range []struct{ header, want string }{
		{"", ""},
		{tag, tag},
		{gz, gz},
		{"W/" + gz, gz},
		{`"other", ` + gz, gz},
		{"*", tag},
		{`"0123456789abcdef-br"`, ""},
		{`"other"`, ""},
	} {
		if got := etagMatch(c.header, tag); got != c.want {
			t.Errorf("etagMatch(%q) = %q, want %q", c.header, got, c.want)
		}
	}
}

// TestAnswerCacheBound: the kept bytes never pass the bound, an answer over an eighth of it is
// not kept, the least recently used goes first, and a newer version drops an account's older
// answers.
func TestAnswerCacheBound(t *testing.T) {
	t.Parallel()
	const max = 64 << 10
	c := newAnswerCache(max)
	a, b := &account{}, &account{}
	mk := func(acct *account, v int64, name string, n int) *answer {
		return &answer{key: answerKey{acct: acct, version: v, coll: name}, etag: name, body: make([]byte, n)}
	}
	at := func(acct *account, v int64, name string) answerKey {
		return answerKey{acct: acct, version: v, coll: name}
	}
	c.put(mk(a, 1, "huge", max/8))
	if ans, _ := c.get(at(a, 1, "huge")); ans != nil {
		t.Error("an answer over an eighth of the bound was kept")
	}
	// 4,000-byte bodies: 15 fit.
	for i := range 15 {
		c.put(mk(a, 1, fmt.Sprint(i), 4000))
	}
	if ans, _ := c.get(at(a, 1, "0")); ans == nil {
		t.Fatal("0 gone before the bound was reached")
	}
	c.put(mk(a, 1, "15", 4000))
	if ans, _ := c.get(at(a, 1, "0")); ans == nil {
		t.Error("the recently used 0 was evicted")
	}
	if ans, _ := c.get(at(a, 1, "1")); ans != nil {
		t.Error("the least recently used 1 was kept")
	}
	for i := range 200 {
		c.put(mk(a, 1, fmt.Sprint(i), 1000+i*37%5000))
		if got := c.Bytes(); got > max {
			t.Fatalf("after %d puts: %d bytes kept, bound %d", i+1, got, max)
		}
	}
	c.put(mk(b, 1, "b1", 100))
	c.seen(a, 2)
	if ans, _ := c.get(at(a, 1, "199")); ans != nil {
		t.Error("an answer of a superseded version was kept")
	}
	if ans, _ := c.get(at(b, 1, "b1")); ans == nil {
		t.Error("another account's answer was dropped")
	}
	c.put(mk(a, 1, "late", 100))
	if ans, _ := c.get(at(a, 1, "late")); ans != nil {
		t.Error("an answer of a superseded version was kept when it arrived late")
	}
	if got := c.Bytes(); got != mk(b, 1, "b1", 100).size() {
		t.Errorf("%d bytes kept, want only b1's %d", got, mk(b, 1, "b1", 100).size())
	}
}
