package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Errors callers branch on.
var (
	// ErrNotFound: the record does not exist (or is not listed).
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: the API key is missing or wrong.
	ErrUnauthorized = errors.New("401 Unauthorized")
	// ErrBusy: a Store could not get its write lock in time (another writer holds it); the
	// write may succeed if retried later. The handler answers it 503 with Retry-After.
	ErrBusy = errors.New("the warehouse is busy with another write")
	// ErrUnreachable: the Store's database cannot be reached now (down, refusing connections,
	// shutting down, full); nothing was read or written, and the request may succeed if retried
	// later. The handler answers it 503 with Retry-After.
	ErrUnreachable = errors.New("the warehouse cannot be reached")
)

// Error type names used in bodies, as the real service writes them.
const (
	TypeRecordInvalid = "Record Invalid"
	TypeRateLimit     = "Rate Limit Reached"
)

// FieldProblem is one field's reasons in a Record Invalid error.
type FieldProblem struct {
	Field   string // the input name, e.g. "employee[email]"
	Reasons []string
}

// ValidationError is a create refused because of its fields: 400 with
// {"error":{"type":"Record Invalid","employee[field]":["reason"]}}.
type ValidationError struct {
	Problems []FieldProblem
}

func (e *ValidationError) Error() string {
	var b bytes.Buffer
	b.WriteString("record invalid:")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " %s %v", p.Field, p.Reasons)
	}
	return b.String()
}

// Add records a reason against a field, keeping the order fields were first named in.
func (e *ValidationError) Add(field, reason string) {
	for i := range e.Problems {
		if e.Problems[i].Field == field {
			e.Problems[i].Reasons = append(e.Problems[i].Reasons, reason)
			return
		}
	}
	e.Problems = append(e.Problems, FieldProblem{Field: field, Reasons: []string{reason}})
}

// Err returns e when it holds problems, else nil.
func (e *ValidationError) Err() error {
	if len(e.Problems) == 0 {
		return nil
	}
	return e
}

// AppendJSON appends the error body.
func (e *ValidationError) AppendJSON(b []byte) []byte {
	b = append(b, `{"error":`...)
	w := beginObject(b)
	w.key("type")
	w.b = appendString(w.b, TypeRecordInvalid)
	for _, p := range e.Problems {
		w.key(p.Field)
		w.b = append(w.b, '[')
		for i, r := range p.Reasons {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = appendString(w.b, r)
		}
		w.b = append(w.b, ']')
	}
	return append(w.end(), '}')
}

// ErrorBody renders the body of every other error hrsync answers: the 401 the real service
// sends ({"error":"401 Unauthorized"}) and otherwise {"error":{"type":…,"message":…}}.
func ErrorBody(status int, message string) []byte {
	if status == 401 {
		return []byte(`{"error":"401 Unauthorized"}`)
	}
	typ := statusText[status]
	if status == 429 {
		typ = TypeRateLimit
	}
	b := []byte(`{"error":`)
	w := beginObject(b)
	w.key("type")
	w.b = appendString(w.b, typ)
	if message != "" {
		w.key("message")
		w.b = appendString(w.b, message)
	}
	return append(w.end(), '}')
}

// ParsedError is an error body as read from a response: the real service writes error as a
// string or as an object of a type and per-field reasons.
type ParsedError struct {
	Type    string              // "Record Invalid", "Rate Limit Reached", or the string form
	Message string              // a message member, when present
	Fields  map[string][]string // per-field reasons, for Record Invalid
}

// ParseErrorBody reads an error body of either shape. It returns an error when the body is not
// one.
func ParseErrorBody(body []byte) (ParsedError, error) {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || len(env.Error) == 0 {
		return ParsedError{}, fmt.Errorf("parse error body: not an error object")
	}
	var s string
	if json.Unmarshal(env.Error, &s) == nil {
		return ParsedError{Type: s}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(env.Error, &m); err != nil {
		return ParsedError{}, fmt.Errorf("parse error body: error is neither string nor object")
	}
	pe := ParsedError{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		switch k {
		case "type":
			pe.Type, _ = scalarText(v)
		case "message":
			pe.Message, _ = scalarText(v)
		default:
			var reasons []string
			if json.Unmarshal(v, &reasons) != nil {
				if one, ok := scalarText(v); ok {
					reasons = []string{one}
				}
			}
			if pe.Fields == nil {
				pe.Fields = make(map[string][]string)
			}
			pe.Fields[k] = reasons
		}
	}
	return pe, nil
}

// ErrEmailTaken is returned by a Store's CreateEmployee when a listed employee has the email.
var ErrEmailTaken = errors.New("email already taken")

// RateLimitError is a 429: the account's shared budget is spent. RetryAfter is the wait the
// service asked for, or 0 when it named none (the real service never does).
type RateLimitError struct {
	RetryAfter time.Duration
	RequestID  string
}

func (e *RateLimitError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("source rate limit reached (retry after %s)", e.RetryAfter)
	}
	return "source rate limit reached"
}
