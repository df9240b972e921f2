package personal

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"time"
)

// How the document writes values for a reader. The JSON and CSV keep the machine forms (ISO
// dates and RFC 3339 timestamps); the HTML writes every date and time one way, dates as
// "24 Jan 2023" and points in time as "8 Jan 2023, 15:17 UTC".
const (
	dateLayout = "2 Jan 2006"
	timeLayout = "2 Jan 2006, 15:04 MST"
)

// timestampLayouts are the forms a point in time comes in: RFC 3339 (the source's and SQLite's),
// and Postgres's text of a timestamptz.
var timestampLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07"}

// parseTimestamp reads a point in time in one of timestampLayouts.
func parseTimestamp(s string) (time.Time, bool) {
	for _, l := range timestampLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// day is the date of a timestamp or date for a reader: "29 Nov 2026"; anything else as it is.
func day(ts string) string {
	if len(ts) >= 10 {
		if t, err := time.Parse(time.DateOnly, ts[:10]); err == nil {
			return t.Format(dateLayout)
		}
	}
	return ts
}

// when is a point in time for a reader, to the minute, in UTC: "8 Jan 2023, 15:17 UTC"; a date
// as day writes it; anything else as it is.
func when(ts string) string {
	if t, ok := parseTimestamp(ts); ok {
		return t.UTC().Format(timeLayout)
	}
	if len(ts) == 10 {
		return day(ts)
	}
	return ts
}

// shown is a member's value for a reader: a value that is a date or a point in time, whole,
// written as day and when write them; any other as it is.
func shown(value string) string {
	if len(value) == 10 {
		if _, err := time.Parse(time.DateOnly, value); err == nil {
			return day(value)
		}
	}
	if len(value) >= 20 && value[10] == 'T' {
		if t, ok := parseTimestamp(value); ok {
			return t.UTC().Format(timeLayout)
		}
	}
	return value
}

// acronyms are the words of member names written as a reader writes them: "hr" is "HR".
var acronyms = map[string]string{"hr": "HR", "id": "ID", "dob": "DOB", "ni": "NI", "url": "URL", "api": "API",
	"csv": "CSV", "uk": "UK", "eu": "EU", "am": "AM", "pm": "PM", "fte": "FTE"}

// label is a member's name for a reader: company_join_date is "Company join date", hr is "HR",
// half_start_am_pm is "Half start AM/PM". The declarations give no description of a member, so
// its name is all there is to go on.
func label(name string) string {
	words := strings.Fields(strings.ReplaceAll(name, "_", " "))
	if len(words) == 0 {
		return ""
	}
	for i, w := range words {
		if a, ok := acronyms[strings.ToLower(w)]; ok {
			words[i] = a
		}
	}
	s := strings.Join(words, " ")
	s = strings.ReplaceAll(s, "AM PM", "AM/PM")
	return strings.ToUpper(s[:1]) + s[1:]
}

// readable is a JSON value for a reader, and whether it holds nothing (null, "", {}, [], or
// only such members): a string as it is; a reference to a named thing ({"id":1,"name":"England
// and Wales"}) as "England and Wales (1)", as the record's own references are; a name and a
// value ({"name":"Shoe size","value":"42"}) as "Shoe size: 42"; any other object as its members'
// labels and values ("Code: OPS; Weeks: 1, 3"), in the order sent, one holding several of its
// own in brackets; an array as its items, ", " between values and "; " between objects. Never JSON text, unless the value is not JSON.
func readable(raw json.RawMessage) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err == nil {
		if _, end := dec.Token(); end != io.EOF {
			err = errors.New("more than one value")
		}
	}
	if err != nil {
		s := strings.TrimSpace(string(raw))
		return s, s == ""
	}
	s := valueText(v)
	return s, s == ""
}

// object is a JSON object, its members in the order sent.
type object struct {
	keys []string
	vals []any
}

func (o object) get(key string) (any, bool) {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

// decodeOrdered decodes the next JSON value of dec: nil, bool, string, json.Number, []any or
// object.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var o object
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				o.keys, o.vals = append(o.keys, key), append(o.vals, v)
			}
			_, err := dec.Token() // }
			return o, err
		case '[':
			items := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				items = append(items, v)
			}
			_, err := dec.Token() // ]
			return items, err
		}
		return nil, errors.New("unexpected delimiter")
	case nil, bool, string, json.Number:
		return t, nil
	}
	return nil, errors.New("unexpected token")
}

// valueText is a decoded JSON value as text, "" when it holds nothing.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "true"
		}
		return "false"
	case string:
		return shown(x) // a date inside an object too: an event's leaving_date
	case json.Number:
		return x.String()
	case []any:
		var parts []string
		sep := ", " // a list of values; of objects, "; " between them
		for _, it := range x {
			if s := valueText(it); s != "" {
				parts = append(parts, s)
			}
			if _, ok := it.(object); ok {
				sep = "; "
			}
		}
		return strings.Join(parts, sep)
	case object:
		return objectText(x)
	}
	return ""
}

// objectText is an object as text (readable).
func objectText(o object) string {
	name, hasName := o.get("name")
	nameText := valueText(name)
	rest := func(skip ...string) []string {
		var parts []string
		for i, k := range o.keys {
			if slices.Contains(skip, k) {
				continue
			}
			s := valueText(o.vals[i])
			if s == "" {
				continue
			}
			if strings.Contains(s, "; ") {
				s = "(" + s + ")"
			}
			parts = append(parts, label(k)+": "+s)
		}
		return parts
	}
	if id, hasID := o.get("id"); hasID && hasName && nameText != "" {
		s := nameText + " (" + valueText(id) + ")"
		if more := rest("id", "name"); len(more) > 0 {
			s += "; " + strings.Join(more, "; ")
		}
		return s
	}
	if value, hasValue := o.get("value"); hasValue && hasName && nameText != "" && len(o.keys) == 2 {
		if s := valueText(value); s != "" {
			return nameText + ": " + s
		}
		return ""
	}
	return strings.Join(rest(), "; ")
}
