package v1

import (
	"errors"
	"maps"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestParsePage(t *testing.T) {
	tests := []struct {
		query string
		want  Page
	}{
		{"", Page{1, 25}},
		{"page=3", Page{3, 25}},
		{"per_page=10", Page{1, 10}},
		{"page=2&per_page=50", Page{2, 50}},
		{"per_page=1", Page{1, 1}},
		{"per_page=100", Page{1, 100}},
		{"per_page=101", Page{1, 100}},
		{"per_page=100000", Page{1, 100}},
		{"per_page=999999999999999999", Page{1, 100}},
		{"page=1099511627776", Page{MaxPage, 25}},
		{"page=007", Page{7, 25}},
		{"department=3&page=2&sort=name", Page{2, 25}},
		{"Page=0&PER_PAGE=0", Page{1, 25}}, // names are case-sensitive; these are other parameters
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParsePage(q)
		if err != nil || got != tt.want {
			t.Errorf("ParsePage(%q) = %+v, %v; want %+v", tt.query, got, err, tt.want)
		}
	}
}

func TestParsePageRefuses(t *testing.T) {
	tests := []struct {
		query string
		param string // named in the error
	}{
		{"page=0", "page"},
		{"page=-1", "page"},
		{"page=abc", "page"},
		{"page=1.5", "page"},
		{"page=", "page"},
		{"page", "page"},
		{"page=+1", "page"},
		{"page=%201", "page"},
		{"page=1%20", "page"},
		{"page=0x10", "page"},
		{"page=1e3", "page"},
		{"page=1&page=2", "page"},
		{"page=1&page=1", "page"},
		{"page=1099511627777", "page"},
		{"page=99999999999999999", "page"},
		{"page=99999999999999999999999999", "page"},
		{"per_page=0", "per_page"},
		{"per_page=-5", "per_page"},
		{"per_page=ten", "per_page"},
		{"per_page=2.5", "per_page"},
		{"per_page=", "per_page"},
		{"per_page=10&per_page=10", "per_page"},
		{"per_page=9999999999999999999", "per_page"},
		{"page=2&per_page=0", "per_page"},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParsePage(q)
		if err == nil {
			t.Errorf("ParsePage(%q) = %+v, want an error", tt.query, got)
			continue
		}
		if !errors.Is(err, ErrBadPaging) {
			t.Errorf("ParsePage(%q) error %v does not wrap ErrBadPaging", tt.query, err)
		}
		if !strings.Contains(err.Error(), tt.param) {
			t.Errorf("ParsePage(%q) error %q does not name %s", tt.query, err, tt.param)
		}
		if got != (Page{}) {
			t.Errorf("ParsePage(%q) returned %+v with its error", tt.query, got)
		}
	}
}

func TestPageOffset(t *testing.T) {
	tests := []struct {
		p    Page
		want int64
	}{
		{Page{1, 25}, 0},
		{Page{2, 25}, 25},
		{Page{3, 100}, 200},
		{Page{MaxPage, MaxPerPage}, (MaxPage - 1) * MaxPerPage},
	}
	for _, tt := range tests {
		if got := tt.p.Offset(); got != tt.want {
			t.Errorf("%+v.Offset() = %d, want %d", tt.p, got, tt.want)
		}
	}
}

func TestLastPage(t *testing.T) {
	tests := []struct{ total, size, want int64 }{
		{0, 25, 0},
		{-1, 25, 0},
		{1, 25, 1},
		{25, 25, 1},
		{26, 25, 2},
		{95, 10, 10},
		{100, 10, 10},
		{101, 100, 2},
		{10, 0, 0},
		{10, -1, 0},
		{1 << 50, 1, 1 << 50},
	}
	for _, tt := range tests {
		if got := LastPage(tt.total, tt.size); got != tt.want {
			t.Errorf("LastPage(%d, %d) = %d, want %d", tt.total, tt.size, got, tt.want)
		}
	}
}

func TestFormatLink(t *testing.T) {
	base, _ := url.Parse("https://api.example.com/v1/employees")
	q := url.Values{"per_page": {"10"}, "department": {"3"}}
	const u = "https://api.example.com/v1/employees?department=3&page="
	tests := []struct {
		name  string
		base  *url.URL
		query url.Values
		p     Page
		total int64
		want  string
	}{
		{"first page: last and next only", base, q, Page{1, 10}, 95,
			`<` + u + `10&per_page=10>; rel="last", <` + u + `2&per_page=10>; rel="next"`},
		{"middle page: first, prev, last, next", base, q, Page{5, 10}, 95,
			`<` + u + `1&per_page=10>; rel="first", <` + u + `4&per_page=10>; rel="prev", <` + u + `10&per_page=10>; rel="last", <` + u + `6&per_page=10>; rel="next"`},
		{"next to last page", base, q, Page{9, 10}, 95,
			`<` + u + `1&per_page=10>; rel="first", <` + u + `8&per_page=10>; rel="prev", <` + u + `10&per_page=10>; rel="last", <` + u + `10&per_page=10>; rel="next"`},
		{"last page: first and prev only", base, q, Page{10, 10}, 95,
			`<` + u + `1&per_page=10>; rel="first", <` + u + `9&per_page=10>; rel="prev"`},
		{"last page exactly full", base, q, Page{10, 10}, 100,
			`<` + u + `1&per_page=10>; rel="first", <` + u + `9&per_page=10>; rel="prev"`},
		{"page past the end: first and prev only", base, q, Page{12, 10}, 95,
			`<` + u + `1&per_page=10>; rel="first", <` + u + `11&per_page=10>; rel="prev"`},
		{"two pages, first", base, q, Page{1, 10}, 11,
			`<` + u + `2&per_page=10>; rel="last", <` + u + `2&per_page=10>; rel="next"`},
		{"two pages, second", base, q, Page{2, 10}, 11,
			`<` + u + `1&per_page=10>; rel="first", <` + u + `1&per_page=10>; rel="prev"`},
		{"one page: no header", base, q, Page{1, 10}, 10, ""},
		{"one record: no header", base, q, Page{1, 10}, 1, ""},
		{"empty collection: no header", base, q, Page{1, 10}, 0, ""},
		// Like the Rails pagination the service runs on: the "no header" rule is about the first
		// page; a page past the end of a one-page collection still links back.
		{"page past the end of a one-page collection", base, q, Page{3, 10}, 4,
			`<` + u + `1&per_page=10>; rel="first", <` + u + `2&per_page=10>; rel="prev"`},
		{"no other parameters", base, nil, Page{2, 25}, 60,
			`<https://api.example.com/v1/employees?page=1>; rel="first", <https://api.example.com/v1/employees?page=1>; rel="prev", ` +
				`<https://api.example.com/v1/employees?page=3>; rel="last", <https://api.example.com/v1/employees?page=3>; rel="next"`},
		{"request's page replaced, other values escaped", base, url.Values{"page": {"2"}, "q": {"a b,c>d"}, "tag": {"x", "y"}}, Page{2, 25}, 30,
			`<https://api.example.com/v1/employees?page=1&q=a+b%2Cc%3Ed&tag=x&tag=y>; rel="first", <https://api.example.com/v1/employees?page=1&q=a+b%2Cc%3Ed&tag=x&tag=y>; rel="prev"`},
		{"base with port and prefix", mustURL(t, "http://localhost:8080/hr/v1/working_patterns"), url.Values{"per_page": {"100"}}, Page{1, 100}, 250,
			`<http://localhost:8080/hr/v1/working_patterns?page=3&per_page=100>; rel="last", <http://localhost:8080/hr/v1/working_patterns?page=2&per_page=100>; rel="next"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := maps.Clone(tt.query)
			baseBefore := *tt.base
			got := FormatLink(tt.base, tt.query, tt.p, tt.total)
			if got != tt.want {
				t.Errorf("FormatLink\n got %s\nwant %s", got, tt.want)
			}
			if !reflect.DeepEqual(tt.query, before) {
				t.Errorf("FormatLink modified the query: %v, was %v", tt.query, before)
			}
			if *tt.base != baseBefore {
				t.Errorf("FormatLink modified the base URL: %v", tt.base)
			}
			if got == "" {
				return
			}
			// Every target is absolute and reads back with ParseLink.
			links, err := ParseLink(got)
			if err != nil {
				t.Fatalf("ParseLink(FormatLink) = %v", err)
			}
			for rel, target := range links {
				if u, err := url.Parse(target); err != nil || !u.IsAbs() || u.Host == "" {
					t.Errorf("%s target %q is not an absolute URL", rel, target)
				}
			}
		})
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestParseLink(t *testing.T) {
	const (
		first = "https://api.breathehr.com/v1/employees?page=1&per_page=100"
		prev  = "https://api.breathehr.com/v1/employees?page=3&per_page=100"
		last  = "https://api.breathehr.com/v1/employees?page=10&per_page=100"
		next  = "https://api.breathehr.com/v1/employees?page=5&per_page=100"
	)
	all := map[string]string{"first": first, "prev": prev, "last": last, "next": next}
	tests := []struct {
		name   string
		header string
		want   map[string]string
	}{
		{"upstream form", `<` + first + `>; rel="first", <` + prev + `>; rel="prev", <` + last + `>; rel="last", <` + next + `>; rel="next"`, all},
		{"any order", `<` + next + `>; rel="next", <` + last + `>; rel="last", <` + first + `>; rel="first", <` + prev + `>; rel="prev"`, all},
		{"unquoted rel", `<` + first + `>; rel=first, <` + prev + `>; rel=prev, <` + last + `>;rel=last,<` + next + `>;rel=next`, all},
		{"extra whitespace", "  <" + first + ">  ;  rel = \"first\"  ,\t<" + prev + ">\t;\trel=prev ,  <" + last + "> ; rel= \"last\"  ,  <" + next + " > ; rel =next  ", all},
		{"space-separated rels", `<` + last + `>; rel="next last"`, map[string]string{"next": last, "last": last}},
		{"upper case rel", `<` + next + `>; REL="Next"`, map[string]string{"next": next}},
		{"commas and semicolons inside URLs", `<https://x.example/v1/e?ids=1,2;3&page=2>; rel="next", <https://x.example/v1/e?ids=1,2;3&page=1>; rel="prev"`,
			map[string]string{"next": "https://x.example/v1/e?ids=1,2;3&page=2", "prev": "https://x.example/v1/e?ids=1,2;3&page=1"}},
		{"other parameters, quoted with commas and semicolons", `<` + next + `>; title="a,b;c"; rel="next", <` + prev + `>; type=text/html; rel="prev"; hreflang=en`,
			map[string]string{"next": next, "prev": prev}},
		{"parameter without a value", `<` + next + `>; crossorigin; rel="next"`, map[string]string{"next": next}},
		{"first rel parameter counts", `<` + next + `>; rel="next"; rel="last"`, map[string]string{"next": next}},
		{"first link of a relation counts", `<` + next + `>; rel="next", <` + last + `>; rel="next"`, map[string]string{"next": next}},
		{"link without rel ignored", `<` + first + `>; title="x", <` + next + `>; rel="next"`, map[string]string{"next": next}},
		{"empty rel ignored", `<` + first + `>; rel="", <` + next + `>; rel="next"`, map[string]string{"next": next}},
		{"trailing semicolon and comma", `<` + next + `>; rel="next";, `, map[string]string{"next": next}},
		{"relative target kept as written", `</v1/employees?page=2>; rel="next"`, map[string]string{"next": "/v1/employees?page=2"}},
		{"empty header", ``, map[string]string{}},
		{"only separators", ` , ,	`, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLink(tt.header)
			if err != nil {
				t.Fatalf("ParseLink(%q): %v", tt.header, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseLink(%q)\n got %v\nwant %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestParseLinkRefuses(t *testing.T) {
	for _, h := range []string{
		`garbage`,
		`https://x.example/v1/e?page=2; rel="next"`,
		`<https://x.example/v1/e?page=2`,
		`<https://x.example/v1/e?page=2>; rel="next`,
		`<https://x.example/v1/e?page=2> rel="next"`,
		`<https://x.example/v1/e?page=2>; rel="next" junk`,
		`<https://x.example/v1/e?page=2>; rel="next", junk`,
	} {
		if got, err := ParseLink(h); err == nil {
			t.Errorf("ParseLink(%q) = %v, want an error", h, got)
		}
	}
}

// RFC 8288 allows quoted-pair escapes in quoted parameter values (title="say \"hi\"").
func TestParseLinkQuotedPair(t *testing.T) {
	got, err := ParseLink(`<https://x.example/v1/e?page=2>; title="say \"hi\", ok"; rel="next"`)
	want := map[string]string{"next": "https://x.example/v1/e?page=2"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseLink = %v, %v; want %v", got, err, want)
	}
}

func TestPageOf(t *testing.T) {
	tests := []struct {
		target string
		want   int64
	}{
		{"https://api.breathehr.com/v1/employees?page=3&per_page=100", 3},
		{"https://api.breathehr.com/v1/employees?per_page=100&page=12", 12},
		{"/v1/employees?page=2", 2},
		{"?page=7", 7},
		{"https://api.breathehr.com/v1/employees?page=9223372036854775807", 9223372036854775807},
		{"https://api.breathehr.com/v1/employees?page=2&page=5", 2},
		{"https://api.breathehr.com/v1/employees?per_page=100", 0},
		{"https://api.breathehr.com/v1/employees", 0},
		{"https://api.breathehr.com/v1/employees?page=0", 0},
		{"https://api.breathehr.com/v1/employees?page=-1", 0},
		{"https://api.breathehr.com/v1/employees?page=abc", 0},
		{"https://api.breathehr.com/v1/employees?page=1.5", 0},
		{"https://api.breathehr.com/v1/employees?page=99999999999999999999", 0},
		{"https://api.breathehr.com/v1/employees#page=3", 0},
		{"http://[::1:bad/?page=2", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := PageOf(tt.target); got != tt.want {
			t.Errorf("PageOf(%q) = %d, want %d", tt.target, got, tt.want)
		}
	}
}
