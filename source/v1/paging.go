package v1

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Paging limits (seed section 8).
const (
	DefaultPerPage = 25
	MaxPerPage     = 100
	// MaxPage bounds the page number a request may name; beyond any real collection, it keeps
	// offset arithmetic far from overflow.
	MaxPage = 1 << 40
)

// Page selects one page of a collection: Number from 1, Size from 1 to MaxPerPage.
type Page struct {
	Number int64
	Size   int64
}

// Offset is the number of records before the page.
func (p Page) Offset() int64 { return (p.Number - 1) * p.Size }

// ErrBadPaging is wrapped by ParsePage's errors.
var ErrBadPaging = errors.New("bad paging parameter")

// ParsePage reads page and per_page from a query: page defaults to 1, per_page to 25 and is cut
// to 100, as the real service does. Anything but a positive decimal integer is an error.
func ParsePage(q url.Values) (Page, error) {
	p := Page{Number: 1, Size: DefaultPerPage}
	if vs, ok := q["page"]; ok {
		n, err := parsePositive("page", vs)
		if err != nil {
			return Page{}, err
		}
		if n > MaxPage {
			return Page{}, fmt.Errorf("%w: page must be at most %d", ErrBadPaging, int64(MaxPage))
		}
		p.Number = n
	}
	if vs, ok := q["per_page"]; ok {
		n, err := parsePositive("per_page", vs)
		if err != nil {
			return Page{}, err
		}
		p.Size = min(n, MaxPerPage)
	}
	return p, nil
}

func parsePositive(name string, vs []string) (int64, error) {
	if len(vs) != 1 {
		return 0, fmt.Errorf("%w: %s given %d times", ErrBadPaging, name, len(vs))
	}
	s := vs[0]
	if s == "" || len(s) > 18 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%w: %s must be a positive integer", ErrBadPaging, name)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: %s must be a positive integer", ErrBadPaging, name)
	}
	return n, nil
}

// LastPage is the number of pages a collection of total records fills (0 for an empty one).
func LastPage(total, size int64) int64 {
	if total <= 0 || size <= 0 {
		return 0
	}
	return (total + size - 1) / size
}

// FormatLink builds the Link header of one page the way the real service does: entries in the
// order first, prev, last, next; page 1 has only last and next, the last page only first and prev,
// a page past the end only first and prev, and a collection on one page (or none) no header at
// all (""). base is the absolute URL of the collection; query keeps the request's other
// parameters and is not modified.
func FormatLink(base *url.URL, query url.Values, p Page, total int64) string {
	last := LastPage(total, p.Size)
	var rels []struct {
		rel  string
		page int64
	}
	add := func(rel string, page int64) {
		rels = append(rels, struct {
			rel  string
			page int64
		}{rel, page})
	}
	if p.Number > 1 {
		add("first", 1)
		add("prev", p.Number-1)
	}
	if p.Number < last {
		add("last", last)
		add("next", p.Number+1)
	}
	if len(rels) == 0 {
		return ""
	}
	q := make(url.Values, len(query)+1)
	for k, v := range query {
		q[k] = v
	}
	u := *base
	var sb strings.Builder
	for i, r := range rels {
		if i > 0 {
			sb.WriteString(", ")
		}
		q["page"] = []string{strconv.FormatInt(r.page, 10)}
		u.RawQuery = q.Encode()
		sb.WriteByte('<')
		sb.WriteString(u.String())
		sb.WriteString(`>; rel="`)
		sb.WriteString(r.rel)
		sb.WriteByte('"')
	}
	return sb.String()
}

// ParseLink reads a Link header (RFC 8288) into its URLs by relation. It is tolerant of what
// servers write: any order, missing relations, unquoted or space-separated rel values, extra
// whitespace, other parameters, and commas inside the URLs. A header it cannot read is an error.
func ParseLink(header string) (map[string]string, error) {
	links := make(map[string]string)
	s := header
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return links, nil
		}
		if s[0] != '<' {
			return nil, fmt.Errorf("parse link header: want '<' at %q", clip(s))
		}
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return nil, fmt.Errorf("parse link header: unterminated URL")
		}
		target := strings.TrimSpace(s[1:end])
		s = s[end+1:]
		// Parameters run to the next comma outside quotes.
		var rel string
		for {
			s = strings.TrimLeft(s, " \t")
			if s == "" || s[0] == ',' {
				break
			}
			if s[0] != ';' {
				return nil, fmt.Errorf("parse link header: want ';' at %q", clip(s))
			}
			s = strings.TrimLeft(s[1:], " \t")
			name, rest, _ := cutAny(s, "=;,")
			name = strings.ToLower(strings.TrimSpace(name))
			s = rest
			var value string
			if strings.HasPrefix(s, "=") {
				s = strings.TrimLeft(s[1:], " \t")
				if strings.HasPrefix(s, `"`) {
					var ok bool
					if value, s, ok = quoted(s); !ok {
						return nil, fmt.Errorf("parse link header: unterminated quoted value")
					}
				} else {
					value, s, _ = cutAny(s, ";,")
					value = strings.TrimSpace(value)
				}
			}
			if name == "rel" && rel == "" {
				rel = value
			}
		}
		for _, r := range strings.Fields(rel) {
			r = strings.ToLower(r)
			if _, seen := links[r]; !seen {
				links[r] = target
			}
		}
	}
}

// quoted reads a quoted-string (RFC 9110 5.6.4) at the start of s, undoing \ escapes.
func quoted(s string) (value, rest string, ok bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", false
}

// cutAny splits s before the first byte of seps, leaving that byte at the start of rest.
func cutAny(s, seps string) (before, rest string, found bool) {
	if i := strings.IndexAny(s, seps); i >= 0 {
		return s[:i], s[i:], true
	}
	return s, "", false
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// PageOf returns the page query parameter of a link target, or 0 when it has none.
func PageOf(target string) int64 {
	u, err := url.Parse(target)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(u.Query().Get("page"), 10, 64)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// List is one page of a collection, read in one snapshot of the store.
type List[T any] struct {
	Items []T
	// Total is the number of records in the whole collection.
	Total int64
	// Version identifies the store's contents the page was read from (see Store.Version).
	Version int64
}
