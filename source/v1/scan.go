package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// A one-pass JSON splitter for the client's hot path. Reading a page with encoding/json alone
// checked every byte of it five or six times (the envelope, the array, each record, each
// record's members, each nested object, each string), which made decoding, not the network,
// the cost of a concurrent walk. The scanner below checks the syntax once, as strictly as
// encoding/json (strings, escapes, literals, the number grammar, nesting, nothing after the
// value), and hands out the raw members and elements, which are then known to be valid.

// maxDepth is how deeply values may nest, as in encoding/json.
const maxDepth = 10000

// SyntaxError is JSON that does not parse; Offset is the byte where reading stopped.
type SyntaxError struct {
	Offset int
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.msg)
}

var (
	errNotObject = errors.New("want a JSON object")
	errNotArray  = errors.New("want a JSON array")
)

// member is one member of an object: its key, unescaped, and its raw value.
type member struct {
	key string
	val []byte
}

type scanner struct{ data []byte }

func (s scanner) fail(i int, msg string) error { return &SyntaxError{Offset: i, msg: msg} }

func (s scanner) ws(i int) int {
	for i < len(s.data) {
		switch s.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// str reads the string starting at data[i] == '"': it returns the offset after the closing
// quote and whether any escape (or byte that is not plain UTF-8 text) occurs in it.
func (s scanner) str(i int) (end int, escaped bool, err error) {
	d := s.data
	for i++; i < len(d); i++ {
		c := d[i]
		switch {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			i++
			if i >= len(d) {
				return 0, false, s.fail(i, "unterminated string")
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d) {
					return 0, false, s.fail(i, "unterminated string")
				}
				for _, h := range d[i+1 : i+5] {
					if !isHex(h) {
						return 0, false, s.fail(i, `invalid \u escape`)
					}
				}
				i += 4
			default:
				return 0, false, s.fail(i, "invalid escape")
			}
		case c < 0x20:
			return 0, false, s.fail(i, "control character in string")
		case c >= utf8.RuneSelf:
			escaped = true // decoded by encoding/json, which replaces invalid UTF-8
		}
	}
	return 0, false, s.fail(i, "unterminated string")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// value reads the value starting at data[i] (no leading whitespace) and returns its end.
func (s scanner) value(i, depth int) (int, error) {
	d := s.data
	if i >= len(d) {
		return 0, s.fail(i, "unexpected end")
	}
	switch c := d[i]; {
	case c == '"':
		end, _, err := s.str(i)
		return end, err
	case c == '{':
		return s.container(i, depth+1, '}', nil)
	case c == '[':
		return s.container(i, depth+1, ']', nil)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	case c == '-' || isDigit(c):
		return s.number(i)
	default:
		return 0, s.fail(i, fmt.Sprintf("unexpected %q", c))
	}
}

func (s scanner) literal(i int, lit string) (int, error) {
	if len(s.data)-i < len(lit) || string(s.data[i:i+len(lit)]) != lit {
		return 0, s.fail(i, "invalid literal")
	}
	return i + len(lit), nil
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s scanner) number(i int) (int, error) {
	d, start := s.data, i
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && isDigit(d[i]):
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return 0, s.fail(start, "invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return 0, s.fail(start, "invalid number")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return 0, s.fail(start, "invalid number")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	return i, nil
}

// container reads the object or the array at data[i], '{' or '[', whose closing byte is close
// ('}' or ']'), calling each (when not nil) for every member of an object, or every element of
// an array (key nil).
func (s scanner) container(i, depth int, close byte, each func(key []byte, escaped bool, val []byte) error) (int, error) {
	if depth > maxDepth {
		return 0, s.fail(i, "nested too deeply")
	}
	d := s.data
	i = s.ws(i + 1)
	if i < len(d) && d[i] == close {
		return i + 1, nil
	}
	for {
		var key []byte
		var kesc bool
		if close == '}' {
			if i >= len(d) || d[i] != '"' {
				return 0, s.fail(i, "want a member name")
			}
			kend, esc, err := s.str(i)
			if err != nil {
				return 0, err
			}
			key, kesc = d[i+1:kend-1], esc
			i = s.ws(kend)
			if i >= len(d) || d[i] != ':' {
				return 0, s.fail(i, "want ':' after a member name")
			}
			i = s.ws(i + 1)
		}
		start := i
		var err error
		if i, err = s.value(i, depth); err != nil {
			return 0, err
		}
		if each != nil {
			if err := each(key, kesc, d[start:i]); err != nil {
				return 0, err
			}
		}
		if i = s.ws(i); i >= len(d) || d[i] != ',' {
			break
		}
		i = s.ws(i + 1)
	}
	if i < len(d) && d[i] == close {
		return i + 1, nil
	}
	kind := "object"
	if close == ']' {
		kind = "array"
	}
	if i >= len(d) {
		return 0, s.fail(i, "unterminated "+kind)
	}
	return 0, s.fail(i, "want ',' or '"+string(close)+"' in an "+kind)
}

// whole checks that data is one value of the kind opened by open ('{' or '['), read by read,
// with only whitespace around it; a value of another kind is notKind.
func (s scanner) whole(open byte, notKind error, read func(i int) (int, error)) error {
	i := s.ws(0)
	if i >= len(s.data) || s.data[i] != open {
		return notKind
	}
	end, err := read(i)
	if err != nil {
		return err
	}
	if j := s.ws(end); j != len(s.data) {
		return s.fail(j, "data after the value")
	}
	return nil
}

// objectMembers returns the members of the JSON object data in order, duplicates included.
// Anything but one well-formed object is an error (errNotObject when it is not an object).
func objectMembers(data []byte) ([]member, error) {
	s := scanner{data: data}
	out := make([]member, 0, 24)
	err := s.whole('{', errNotObject, func(i int) (int, error) {
		return s.container(i, 1, '}', func(key []byte, escaped bool, val []byte) error {
			k, err := unquote(key, escaped)
			if err != nil {
				return err
			}
			out = append(out, member{key: k, val: val})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// arrayElements returns the raw elements of the JSON array data.
func arrayElements(data []byte) ([]json.RawMessage, error) {
	s := scanner{data: data}
	out := make([]json.RawMessage, 0, MaxPerPage)
	err := s.whole('[', errNotArray, func(i int) (int, error) {
		return s.container(i, 1, ']', func(_ []byte, _ bool, val []byte) error {
			out = append(out, val)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// validJSON reports whether data is one well-formed JSON value, like json.Valid.
func validJSON(data []byte) bool {
	s := scanner{data: data}
	i := s.ws(0)
	end, err := s.value(i, 0)
	return err == nil && s.ws(end) == len(data)
}

// unquote returns the text of a string's contents (without its quotes) already checked by
// scanner.str: as is when plain, else decoded as encoding/json does (escapes, and invalid
// UTF-8 as U+FFFD).
func unquote(contents []byte, escaped bool) (string, error) {
	if !escaped || !bytes.Contains(contents, []byte{'\\'}) && utf8.Valid(contents) {
		return string(contents), nil
	}
	quoted := make([]byte, 0, len(contents)+2)
	quoted = append(append(append(quoted, '"'), contents...), '"')
	var str string
	if err := json.Unmarshal(quoted, &str); err != nil {
		return "", err
	}
	return str, nil
}

// plainString returns the contents of raw when it is a JSON string with no escapes, no
// control characters and only ASCII or valid UTF-8: the common case, which needs no decoding.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	ascii := true
	for _, c := range in {
		if c == '"' || c == '\\' || c < 0x20 {
			return "", false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}
