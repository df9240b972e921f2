package source

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/mail"
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
	// Fields that cannot be read as text are reported beside the others' problems.
	unreadable := &ValidationError{}
	var fields map[string]string
	switch ct {
	case "application/json":
		fields, err = jsonFields(r, unreadable)
	case "application/x-www-form-urlencoded", "multipart/form-data", "":
		fields, err = formFields(r, unreadable)
	default:
		return NewEmployee{}, fmt.Errorf("%w: send application/json or a form", ErrUnsupportedMediaType)
	}
	if err != nil {
		return NewEmployee{}, err
	}
	return validate(fields, unreadable)
}

func jsonFields(r *http.Request, unreadable *ValidationError) (map[string]string, error) {
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

func formFields(r *http.Request, unreadable *ValidationError) (map[string]string, error) {
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
	fields := make(map[string]string)
	for _, k := range slices.Sorted(maps.Keys(r.PostForm)) {
		vs := r.PostForm[k]
		name, ok := strings.CutPrefix(k, "employee[")
		if !ok {
			continue // other form fields (utf8, commit buttons) are not ours
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
