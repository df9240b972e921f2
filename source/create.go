package source

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
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

// ReadNewEmployee reads a create request: form fields employee[...] (urlencoded or multipart) or
// a JSON body {"employee":{...}}. Field problems come back as a *ValidationError; a body that
// cannot be read at all as another error. The caller bounds the body's size.
func ReadNewEmployee(r *http.Request) (NewEmployee, error) {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil && r.Header.Get("Content-Type") != "" {
		return NewEmployee{}, fmt.Errorf("%w: unreadable Content-Type", ErrUnsupportedMediaType)
	}
	var fields map[string]string
	switch ct {
	case "application/json":
		fields, err = jsonFields(r)
	case "application/x-www-form-urlencoded", "multipart/form-data", "":
		fields, err = formFields(r)
	default:
		return NewEmployee{}, fmt.Errorf("%w: send application/json or a form", ErrUnsupportedMediaType)
	}
	if err != nil {
		return NewEmployee{}, err
	}
	return ValidateNewEmployee(fields)
}

func jsonFields(r *http.Request) (map[string]string, error) {
	var env map[string]json.RawMessage
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("read JSON body: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("read JSON body: more than one JSON value")
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
	for k, v := range m {
		if isNull(v) {
			fields[k] = ""
			continue
		}
		s, ok := scalarText(v)
		if !ok {
			return nil, invalid("employee["+k+"]", "must be a string")
		}
		fields[k] = s
	}
	return fields, nil
}

func formFields(r *http.Request) (map[string]string, error) {
	// ParseMultipartForm also parses urlencoded bodies; it refuses a multipart body that is not.
	err := r.ParseMultipartForm(32 << 10)
	if err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return nil, fmt.Errorf("read form body: %w", err)
	}
	if r.MultipartForm != nil {
		defer func() { _ = r.MultipartForm.RemoveAll() }()
		if len(r.MultipartForm.File) > 0 {
			return nil, fmt.Errorf("read form body: file uploads are not accepted")
		}
	}
	var form url.Values = r.PostForm
	fields := make(map[string]string)
	for k, vs := range form {
		name, ok := strings.CutPrefix(k, "employee[")
		if !ok {
			continue // other form fields (utf8, commit buttons) are not ours
		}
		name, ok = strings.CutSuffix(name, "]")
		if !ok || name == "" {
			return nil, invalid(k, "is not a supported field")
		}
		if len(vs) != 1 {
			return nil, invalid(k, "given more than once")
		}
		fields[name] = vs[0]
	}
	return fields, nil
}

func invalid(field, reason string) error {
	v := &ValidationError{}
	v.Add(field, reason)
	return v
}

// ValidateNewEmployee checks create input given as field name → text. company_join_date is
// accepted as another name for join_date. Every problem is reported, not just the first.
func ValidateNewEmployee(fields map[string]string) (NewEmployee, error) {
	if v, ok := fields["company_join_date"]; ok {
		if _, both := fields["join_date"]; !both {
			fields["join_date"] = v
		}
		delete(fields, "company_join_date")
	}
	var verr ValidationError
	var unknown []string
	for k := range fields {
		if !slices.Contains(createFields, k) {
			unknown = append(unknown, k)
		}
	}
	get := func(name string, required bool) string {
		v := strings.TrimSpace(fields[name])
		field := "employee[" + name + "]"
		switch {
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
	if ne.Email != "" && !ValidEmail(ne.Email) {
		verr.Add("employee[email]", "is not a valid email address")
	}
	if jd := get("join_date", true); jd != "" {
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

// AppendJSON appends the create body the service accepts: {"employee":{...}} with join_date in
// the seed's input form YYYY/MM/DD.
func (n NewEmployee) AppendJSON(b []byte) []byte {
	b = append(b, `{"employee":`...)
	w := beginObject(b)
	w.key("first_name")
	w.b = appendString(w.b, n.FirstName)
	w.key("last_name")
	w.b = appendString(w.b, n.LastName)
	w.key("email")
	w.b = appendString(w.b, n.Email)
	if n.JobTitle != "" {
		w.key("job_title")
		w.b = appendString(w.b, n.JobTitle)
	}
	w.key("join_date")
	w.b = appendString(w.b, strings.ReplaceAll(n.JoinDate, "-", "/"))
	return append(w.end(), '}')
}
