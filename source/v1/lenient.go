package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Lenient decoding of what the real service sends (UPSTREAM.md): numbers as numbers or strings,
// "" and null both meaning "no value", dates with '-' or '/', timestamps with Z or an offset.
// Every decoder returns a *FieldError naming the field, never the value (values are personal data).

// FieldError reports a field whose value could not be read.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %s: %s", e.Field, e.Reason) }

// Extra holds the fields of a record that hrsync does not model, as a canonical JSON object:
// compact, keys sorted, never containing a modelled field. Empty means none.
type Extra []byte

// newExtra builds the canonical object from leftover members; it returns nil when there are none.
func newExtra(m map[string]json.RawMessage) (Extra, error) {
	if len(m) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w := beginObject(make([]byte, 0, 64))
	for _, k := range keys {
		v, err := compactUTF8(m[k])
		if err != nil {
			return nil, &FieldError{Field: k, Reason: "not valid JSON"}
		}
		w.raw(k, v)
	}
	return Extra(w.end()), nil
}

// Members returns the unmodelled fields as a map (nil when there are none).
func (e Extra) Members() (map[string]json.RawMessage, error) {
	if len(e) == 0 {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(e, &m); err != nil {
		return nil, fmt.Errorf("extra fields: %w", err)
	}
	return m, nil
}

// isNull reports whether a raw value means "no value": absent, null or "".
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null" || string(raw) == `""`
}

// scalarText returns the text of a JSON string or the literal of a number or boolean.
func scalarText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		if s, ok := plainString(raw); ok {
			return s, true
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case '{', '[':
		return "", false
	default:
		return string(raw), true
	}
}

func decodeString(field string, raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	s, ok := scalarText(raw)
	if !ok {
		return "", &FieldError{Field: field, Reason: "want a string"}
	}
	return s, nil
}

func decodeInt(field string, raw json.RawMessage) (*int64, error) {
	if isNull(raw) {
		return nil, nil
	}
	s, ok := scalarText(raw)
	if !ok {
		return nil, &FieldError{Field: field, Reason: "want an integer"}
	}
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// 12.0 is an integer written as a float.
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int64(f)) {
			return nil, &FieldError{Field: field, Reason: "want an integer"}
		}
		n = int64(f)
	}
	return &n, nil
}

func decodeID(field string, raw json.RawMessage) (int64, error) {
	n, err := decodeInt(field, raw)
	if err != nil {
		return 0, err
	}
	if n == nil || *n <= 0 {
		return 0, &FieldError{Field: field, Reason: "want a positive integer id"}
	}
	return *n, nil
}

func decodeBool(field string, raw json.RawMessage) (*bool, error) {
	if isNull(raw) {
		return nil, nil
	}
	s, ok := scalarText(raw)
	if !ok {
		return nil, &FieldError{Field: field, Reason: "want a boolean"}
	}
	var v bool
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "t", "yes":
		v = true
	case "false", "0", "f", "no":
		v = false
	default:
		return nil, &FieldError{Field: field, Reason: "want a boolean"}
	}
	return &v, nil
}

var decimalRE = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)$`)

// decodeDecimal keeps the source's text ("40.0" stays "40.0").
func decodeDecimal(field string, raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	s, ok := scalarText(raw)
	s = strings.TrimSpace(s)
	if !ok || !decimalRE.MatchString(s) {
		return "", &FieldError{Field: field, Reason: "want a decimal number"}
	}
	return s, nil
}

// ParseDate reads a calendar date written YYYY-MM-DD or YYYY/MM/DD (or a timestamp, whose date
// part is taken) and returns it as YYYY-MM-DD. It rejects dates that do not exist.
func ParseDate(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) > 10 && (s[10] == 'T' || s[10] == ' ') {
		// A timestamp: its date as written, not as in UTC (a join date at local midnight
		// +01:00 is that day, not the day before).
		if _, err := parseTimestamp(s); err != nil {
			return "", fmt.Errorf("want a date as YYYY-MM-DD or YYYY/MM/DD")
		}
		s = s[:10]
	}
	if len(s) != 10 || (s[4] != '-' && s[4] != '/') || s[7] != s[4] {
		return "", fmt.Errorf("want a date as YYYY-MM-DD or YYYY/MM/DD")
	}
	layout := time.DateOnly
	if s[4] == '/' {
		layout = "2006/01/02"
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return "", fmt.Errorf("not a calendar date")
	}
	if t.Year() < 1 {
		return "", fmt.Errorf("not a calendar date")
	}
	return t.Format(time.DateOnly), nil
}

// TimestampLayout is the seed's timestamp form, always UTC.
const TimestampLayout = "2006-01-02T15:04:05Z"

// parseTimestamp reads an ISO 8601 timestamp with Z or an offset (or none, taken as UTC) and
// returns it in UTC as YYYY-MM-DDTHH:MM:SSZ.
func parseTimestamp(s string) (string, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			if y := t.UTC().Year(); y < 1 || y > 9999 {
				break
			}
			return t.UTC().Format(TimestampLayout), nil
		}
	}
	return "", fmt.Errorf("want an ISO 8601 timestamp")
}

func decodeDate(field string, raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	s, ok := scalarText(raw)
	if !ok {
		return "", &FieldError{Field: field, Reason: "want a date"}
	}
	d, err := ParseDate(s)
	if err != nil {
		return "", &FieldError{Field: field, Reason: err.Error()}
	}
	return d, nil
}

func decodeTimestamp(field string, raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	s, ok := scalarText(raw)
	if !ok {
		return "", &FieldError{Field: field, Reason: "want a timestamp"}
	}
	t, err := parseTimestamp(s)
	if err != nil {
		return "", &FieldError{Field: field, Reason: err.Error()}
	}
	return t, nil
}

// decodeOpaque keeps a value whose type the seed does not show, compacted; "" and null are none.
func decodeOpaque(field string, raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	b, err := compactUTF8(raw)
	if err != nil {
		return nil, &FieldError{Field: field, Reason: "not valid JSON"}
	}
	return b, nil
}

// compactUTF8 compacts a JSON value and makes sure it is valid UTF-8, as every string hrsync
// writes is: invalid bytes inside strings become U+FFFD, as encoding/json does for strings.
func compactUTF8(raw []byte) (json.RawMessage, error) {
	// Already compact (no whitespace byte at all, not even inside strings) and valid: as is.
	if !bytes.ContainsAny(raw, " \t\r\n") && utf8.Valid(raw) && validJSON(raw) {
		return json.RawMessage(raw), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	if utf8.Valid(buf.Bytes()) {
		return json.RawMessage(buf.Bytes()), nil
	}
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(out.Bytes(), "\n")), nil
}

// members decodes a JSON object into its members, refusing anything else.
// Duplicate names keep the last value, as encoding/json does.
func members(what string, data []byte) (map[string]json.RawMessage, error) {
	ms, err := objectMembers(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return memberMap(ms), nil
}

// memberMap indexes members by name, the last of duplicates winning, as encoding/json does.
func memberMap(ms []member) map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(ms))
	for _, mb := range ms {
		m[mb.key] = mb.val
	}
	return m
}

// nestedMembers reads a nested object once, for both its typed fields and its normalized form.
func nestedMembers(field string, raw json.RawMessage) ([]member, error) {
	ms, err := objectMembers(raw)
	if err != nil {
		return nil, &FieldError{Field: field, Reason: "want an object"}
	}
	return ms, nil
}

// take removes and returns a member.
func take(m map[string]json.RawMessage, k string) json.RawMessage {
	v := m[k]
	delete(m, k)
	return v
}

// nestedKind says how a known member of a nested object is normalized.
type nestedKind int

const (
	kindID nestedKind = iota
	kindString
	kindDecimal
	kindBool
)

var (
	refKinds     = map[string]nestedKind{"id": kindID, "name": kindString}
	patternKinds = map[string]nestedKind{"id": kindID, "name": kindString, "total_hours": kindDecimal, "default": kindBool}
	personKinds  = map[string]nestedKind{"id": kindID, "name": kindString, "first_name": kindString, "last_name": kindString, "email": kindString}
)

// normalizeNested keeps a nested object's shape (its members, in the source's order) and writes
// its known members as the seed prescribes: ids as integers, decimals as strings, "" as null.
// What the source sent is accepted either way; what hrsync serves follows the seed.
func normalizeNested(field string, ms []member, size int, kinds map[string]nestedKind) (json.RawMessage, error) {
	w := beginObject(make([]byte, 0, size))
	seen := make(map[string]bool, len(ms))
	for _, mb := range ms {
		k, v := mb.key, json.RawMessage(mb.val)
		if seen[k] {
			continue // encoding/json keeps the last; the typed fields were read that way
		}
		seen[k] = true
		kind, known := kinds[k]
		switch {
		case !known:
			c, err := compactUTF8(v)
			if err != nil {
				return nil, &FieldError{Field: field + "." + k, Reason: "not valid JSON"}
			}
			w.raw(k, c)
		case kind == kindID:
			n, err := decodeInt(field+"."+k, v)
			if err != nil {
				return nil, err
			}
			w.optInt(k, n)
		case kind == kindString:
			s, err := decodeString(field+"."+k, v)
			if err != nil {
				return nil, err
			}
			w.optString(k, s)
		case kind == kindDecimal:
			s, err := decodeDecimal(field+"."+k, v)
			if err != nil {
				return nil, err
			}
			w.optString(k, s)
		case kind == kindBool:
			b, err := decodeBool(field+"."+k, v)
			if err != nil {
				return nil, err
			}
			w.optBool(k, b)
		}
	}
	return json.RawMessage(w.end()), nil
}
