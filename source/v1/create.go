package v1

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// NewEmployee is the input of a create (seed 4.2), validated: JoinDate is YYYY-MM-DD.
type NewEmployee struct {
	FirstName string
	LastName  string
	Email     string
	JobTitle  string
	JoinDate  string
}

// createFields are the accepted input names, in the order problems are reported.
var createFields = []string{"first_name", "last_name", "email", "job_title", "join_date"}

// MaxFieldLength bounds every create field, in characters.
const MaxFieldLength = 255

// ErrUnsupportedMediaType is returned by ReadNewEmployee for a body that is neither form nor JSON.
var ErrUnsupportedMediaType = errors.New("unsupported media type")

// ErrMalformedBody is returned by ReadNewEmployee for a body that does not parse as its
// Content-Type says (a form with a bad %-escape, a broken multipart body, invalid JSON).
var ErrMalformedBody = errors.New("malformed body")

// ErrUnreadableBody is returned by ReadNewEmployee, wrapping the reader's error, for a body that
// could not be read to its end (a connection that failed or timed out). The reader's error may
// name the connection's addresses: it is for a log, not for an answer.
var ErrUnreadableBody = errors.New("body could not be read")

// maxFormMemory is what a multipart body may hold in memory; the caller's body limit is lower.
const maxFormMemory = 64 << 10

// ReadNewEmployee reads a create request's body, given its Content-Type header: form fields
// employee[...] (urlencoded or multipart) or a JSON body {"employee":{...}}. Field problems come
// back as a *ValidationError; a body that does not parse as its type as an error wrapping
// ErrMalformedBody; a body the reader fails to deliver (one over the caller's limit: an
// *http.MaxBytesError under http.MaxBytesReader) as the reader's error. The caller bounds the
// body's size. The query string is never read: only the body holds the fields.
func ReadNewEmployee(contentType string, body io.Reader) (NewEmployee, error) {
	ct, params, err := mime.ParseMediaType(contentType)
	if err != nil && contentType != "" {
		return NewEmployee{}, fmt.Errorf("%w: unreadable Content-Type", ErrUnsupportedMediaType)
	}
	// Fields that cannot be read as text are reported beside the others' problems.
	unreadable := &ValidationError{}
	r := &bodyReader{r: body}
	var fields map[string]string
	switch ct {
	case "application/json":
		fields, err = jsonFields(r, unreadable)
	case "application/x-www-form-urlencoded", "":
		fields, err = urlencodedFields(r, unreadable)
	case "multipart/form-data":
		fields, err = multipartFields(r, params["boundary"], unreadable)
	default:
		return NewEmployee{}, fmt.Errorf("%w: send application/x-www-form-urlencoded, multipart/form-data or application/json", ErrUnsupportedMediaType)
	}
	if err != nil {
		return NewEmployee{}, err
	}
	return validate(fields, unreadable)
}

// bodyReader keeps the first error its reader gave other than io.EOF, so that a body the reader
// failed to deliver (one over the caller's limit) is told from a body that does not parse.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

func jsonFields(r *bodyReader, unreadable *ValidationError) (map[string]string, error) {
	var env map[string]json.RawMessage
	dec := json.NewDecoder(r)
	if err := dec.Decode(&env); err != nil {
		if r.err != nil {
			return nil, fmt.Errorf("read JSON body: %w: %w", ErrUnreadableBody, r.err)
		}
		return nil, fmt.Errorf("read JSON body: %w: %w", ErrMalformedBody, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("read JSON body: %w: more than one JSON value", ErrMalformedBody)
	}
	raw, ok := env["employee"]
	if !ok || isNull(raw) {
		return nil, invalid("employee", "missing")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalid("employee", "must be an object")
	}
	fields := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if isNull(v) {
			fields[k] = ""
			continue
		}
		s, ok := scalarText(v)
		if !ok {
			unreadable.Add("employee["+k+"]", "must be a string")
			continue
		}
		fields[k] = s
	}
	return fields, nil
}

// urlencodedFields reads an application/x-www-form-urlencoded body (also a body sent without a
// Content-Type). It parses the body alone: http.Request.ParseForm would mix in the query
// string, and ParseMultipartForm drops ParseForm's error for a body that is not multipart.
func urlencodedFields(r *bodyReader, unreadable *ValidationError) (map[string]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read form body: %w: %w", ErrUnreadableBody, err)
	}
	vs, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, fmt.Errorf("read form body: %w: %w", ErrMalformedBody, err)
	}
	return employeeFields(vs, unreadable), nil
}

// multipartFields reads a multipart/form-data body of plain fields; a file is refused.
func multipartFields(r *bodyReader, boundary string, unreadable *ValidationError) (map[string]string, error) {
	if boundary == "" {
		return nil, fmt.Errorf("read form body: %w: multipart/form-data without a boundary", ErrMalformedBody)
	}
	form, err := multipart.NewReader(r, boundary).ReadForm(maxFormMemory)
	if err != nil {
		if r.err != nil {
			return nil, fmt.Errorf("read form body: %w: %w", ErrUnreadableBody, r.err)
		}
		return nil, fmt.Errorf("read form body: %w: %w", ErrMalformedBody, err)
	}
	defer func() { _ = form.RemoveAll() }()
	if len(form.File) > 0 {
		return nil, fmt.Errorf("read form body: file uploads are not accepted")
	}
	return employeeFields(form.Value, unreadable), nil
}

// employeeFields takes the employee[...] fields of a form; other fields (utf8, commit buttons)
// are not ours.
func employeeFields(form url.Values, unreadable *ValidationError) map[string]string {
	fields := make(map[string]string)
	for _, k := range slices.Sorted(maps.Keys(form)) {
		vs := form[k]
		name, ok := strings.CutPrefix(k, "employee[")
		if !ok {
			continue
		}
		name, ok = strings.CutSuffix(name, "]")
		switch {
		case !ok || name == "":
			unreadable.Add(k, "is not a supported field")
		case len(vs) != 1:
			unreadable.Add(k, "given more than once")
		default:
			fields[name] = vs[0]
		}
	}
	return fields
}

func invalid(field, reason string) error {
	v := &ValidationError{}
	v.Add(field, reason)
	return v
}

// ValidateNewEmployee checks create input given as field name → text. company_join_date is
// accepted as another name for join_date. Every problem is reported, not just the first.
func ValidateNewEmployee(fields map[string]string) (NewEmployee, error) {
	return validate(fields, &ValidationError{})
}

// validate checks the fields; verr already holds the problems of fields that could not be read,
// which are not checked again (a field sent as an object is not also "missing").
func validate(in map[string]string, verr *ValidationError) (NewEmployee, error) {
	fields := maps.Clone(in)
	if v, ok := fields["company_join_date"]; ok {
		if _, both := fields["join_date"]; !both {
			fields["join_date"] = v
		}
		delete(fields, "company_join_date")
	}
	unreadable := make(map[string]bool, len(verr.Problems))
	for _, p := range verr.Problems {
		unreadable[p.Field] = true
	}
	reported := func(name string) bool { return unreadable["employee["+name+"]"] }
	var unknown []string
	for k := range fields {
		if !slices.Contains(createFields, k) && !reported(k) {
			unknown = append(unknown, k)
		}
	}
	get := func(name string, required bool) string {
		v := strings.TrimSpace(fields[name])
		field := "employee[" + name + "]"
		switch {
		case reported(name):
		case v == "" && required:
			verr.Add(field, "missing")
		case !utf8.ValidString(v):
			verr.Add(field, "is not valid UTF-8")
		case utf8.RuneCountInString(v) > MaxFieldLength:
			verr.Add(field, fmt.Sprintf("is too long (maximum is %d characters)", MaxFieldLength))
		case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			verr.Add(field, "contains control characters")
		}
		return v
	}
	ne := NewEmployee{
		FirstName: get("first_name", true),
		LastName:  get("last_name", true),
		Email:     get("email", true),
		JobTitle:  get("job_title", false),
	}
	if ne.Email != "" && !reported("email") && !ValidEmail(ne.Email) {
		verr.Add("employee[email]", "is not a valid email address")
	}
	if jd := get("join_date", true); jd != "" && !reported("join_date") {
		d, err := ParseDate(jd)
		if err != nil {
			verr.Add("employee[join_date]", "is not a valid date (use YYYY/MM/DD or YYYY-MM-DD)")
		}
		ne.JoinDate = d
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		verr.Add("employee["+k+"]", "is not a supported field")
	}
	if err := verr.Err(); err != nil {
		return NewEmployee{}, err
	}
	return ne, nil
}

// ValidEmail reports whether s is a bare address (local@domain, no display name) whose domain
// has a dot.
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	domain := s[at+1:]
	return at > 0 && strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}

// formFields are the create's form fields, in the interface's order (seed 4.2).
var formFields = [...]string{"employee[first_name]", "employee[last_name]", "employee[email]", "employee[job_title]", "employee[join_date]"}

// FormContentType is the Content-Type of AppendForm's body.
const FormContentType = "application/x-www-form-urlencoded"

// AppendForm appends the create body as the interface documents it (seed 4.2): the
// application/x-www-form-urlencoded fields employee[first_name], employee[last_name],
// employee[email], employee[job_title] and employee[join_date], every one of them, in that
// order, with join_date in the input form YYYY/MM/DD. An empty job title is sent empty, as a
// browser submits an empty field of the form.
func (n NewEmployee) AppendForm(b []byte) []byte {
	values := [...]string{n.FirstName, n.LastName, n.Email, n.JobTitle, strings.ReplaceAll(n.JoinDate, "-", "/")}
	for i, name := range formFields {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(b, url.QueryEscape(name)...)
		b = append(b, '=')
		b = append(b, url.QueryEscape(values[i])...)
	}
	return b
}

// SortByCreateOrder orders employee[...] field names as the create form lists them, others after.
func SortByCreateOrder(keys []string) {
	rank := func(k string) int {
		for i, f := range createFields {
			if k == "employee["+f+"]" {
				return i
			}
		}
		return len(createFields)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
}
