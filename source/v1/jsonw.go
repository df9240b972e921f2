package v1

import (
	"strconv"
	"unicode/utf8"
)

// The wire format is written by hand, append-style, for two reasons: the seed fixes the field
// order (encoding/json would sort a map or follow struct order without a way to splice the
// unmodelled fields back in), and serving a 100-record page is the replica's hot path.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does (without its HTML
// escaping); invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// objectWriter appends the members of one JSON object.
type objectWriter struct {
	b     []byte
	first bool
}

func beginObject(b []byte) objectWriter { return objectWriter{b: append(b, '{'), first: true} }

func (w *objectWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

func (w *objectWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *objectWriter) optInt(k string, v *int64) {
	if v == nil {
		w.null(k)
		return
	}
	w.int(k, *v)
}

func (w *objectWriter) null(k string) {
	w.key(k)
	w.b = append(w.b, "null"...)
}

// optString writes "" as null: the source uses both for "no value" and we keep one.
func (w *objectWriter) optString(k, v string) {
	if v == "" {
		w.null(k)
		return
	}
	w.key(k)
	w.b = appendString(w.b, v)
}

func (w *objectWriter) optBool(k string, v *bool) {
	if v == nil {
		w.null(k)
		return
	}
	w.key(k)
	w.b = strconv.AppendBool(w.b, *v)
}

// raw writes an already-encoded JSON value; empty means null.
func (w *objectWriter) raw(k string, v []byte) {
	if len(v) == 0 {
		w.null(k)
		return
	}
	w.key(k)
	w.b = append(w.b, v...)
}

// extra splices the members of a canonical JSON object (see Extra) into this one.
func (w *objectWriter) extra(e Extra) {
	if len(e) <= 2 { // "" or "{}"
		return
	}
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, e[1:len(e)-1]...)
}

func (w *objectWriter) end() []byte { return append(w.b, '}') }
