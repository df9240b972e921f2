package server

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/v1"
)

// TestETagNamesEveryField: keys that differ in any one field, or only in where one string ends
// and the next begins, get different tags; the coding is not in the tag (codedTag adds it).
func TestETagNamesEveryField(t *testing.T) {
	t.Parallel()
	tg := newTagger([]byte(strings.Repeat("k", MinETagSecretBytes)), "build")
	acme, bolt := &account{name: "acme"}, &account{name: "bolt"}
	base := answerKey{acct: acme, scope: "s", route: routeList, coll: "employees", id: 0,
		page: v1.Page{Number: 2, Size: 5}, perPage: true, base: "http://h/v1/employees", version: 7}
	variants := map[string]func(k *answerKey){
		"account":   func(k *answerKey) { k.acct = bolt },
		"no scope":  func(k *answerKey) { k.scope = "" },
		"route":     func(k *answerKey) { k.route = routeOne },
		"coll":      func(k *answerKey) { k.coll = "departments" },
		"id":        func(k *answerKey) { k.id = 1 },
		"page":      func(k *answerKey) { k.page.Number = 3 },
		"size":      func(k *answerKey) { k.page.Size = 6 },
		"per_page":  func(k *answerKey) { k.perPage = false },
		"base":      func(k *answerKey) { k.base = "http://other/v1/employees" },
		"version":   func(k *answerKey) { k.version = 8 },
		"shifted":   func(k *answerKey) { k.scope, k.route = "sl", "ist" },
		"shifted 2": func(k *answerKey) { k.coll, k.base = "employeeshttp://h/v1", "/employees" },
	}
	want := tg.tag(&base)
	if len(want) != 2+2*etagBytes || want[0] != '"' || want[len(want)-1] != '"' {
		t.Fatalf("tag %s", want)
	}
	seen := map[string]string{want: "base"}
	for name, change := range variants {
		k := base
		change(&k)
		got := tg.tag(&k)
		if other, ok := seen[got]; ok {
			t.Errorf("%s: the tag of %s", name, other)
		}
		seen[got] = name
	}
	k := base
	k.coding = "gzip"
	if tg.tag(&k) != want {
		t.Error("the coding changed the tag")
	}
	if newTagger([]byte(strings.Repeat("k", MinETagSecretBytes)), "build 2").tag(&base) == want {
		t.Error("another build, the same tag")
	}
}

// BenchmarkETag: the tag of a list answer, as HMAC-SHA256 (now) and as the 64-bit FNV-1a of old
// over the same fields, in one run.
func BenchmarkETag(b *testing.B) {
	a := &account{name: "acme"}
	k := answerKey{acct: a, scope: "collections:departments,employees\x00allow:email,first_name,id", route: routeList,
		coll: "employees", page: v1.Page{Number: 37, Size: 100}, perPage: true, base: "https://replica.example.com/v1/employees", version: 123456}
	b.Run("fnv-old", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f := fnv.New64a()
			fmt.Fprintf(f, "%d\x00%s\x00%s\x00%s\x00%d:%s", k.version, k.base, "page=37&per_page=100", "build", len(a.name), a.name)
			fmt.Fprintf(f, "\x00scope:%s", k.scope)
			var sum [8]byte
			_ = fmt.Sprintf(`"%x"`, f.Sum(sum[:0]))
		}
	})
	b.Run("hmac", func(b *testing.B) {
		tg := newTagger([]byte(strings.Repeat("k", MinETagSecretBytes)), "build")
		b.ReportAllocs()
		for b.Loop() {
			_ = tg.tag(&k)
		}
	})
}
