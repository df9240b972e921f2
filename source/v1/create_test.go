package v1

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestValidEmail(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"ana@example.com", true},
		{"Ana.Lopez+hr@mail.example.co.uk", true},
		{"a@b.c", true},
		{"o'brien@example.ie", true},
		{"", false},
		{"ana", false},
		{"ana@", false},
		{"@example.com", false},
		{"ana@example", false}, // no dot in the domain
		{"ana@.example.com", false},
		{"ana@example.com.", false},
		{"ana@example..com", false},
		{"ana@@example.com", false},
		{"ana lopez@example.com", false},
		{"Ana <ana@example.com>", false}, // display name
		{"<ana@example.com>", false},
		{" ana@example.com", false},
		{"ana@example.com ", false},
		{"ana@example.com\n", false},
		{"ana@example.com, bo@example.com", false},
		{"ana@example.com (Ana)", false},
	}
	for _, tt := range tests {
		if got := ValidEmail(tt.in); got != tt.want {
			t.Errorf("ValidEmail(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidateNewEmployee(t *testing.T) {
	valid := func(mod func(m map[string]string)) map[string]string {
		m := map[string]string{
			"first_name": "Ana", "last_name": "López", "email": "ana@example.com",
			"job_title": "Engineer", "join_date": "2024/02/29",
		}
		if mod != nil {
			mod(m)
		}
		return m
	}
	ana := NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"}
	long := strings.Repeat("é", MaxFieldLength+1)
	atMax := strings.Repeat("é", MaxFieldLength)

	tests := []struct {
		name     string
		fields   map[string]string
		want     NewEmployee
		problems []FieldProblem // nil: success
	}{
		{"valid", valid(nil), ana, nil},
		{"ISO join date", valid(func(m map[string]string) { m["join_date"] = "2024-02-29" }), ana, nil},
		{"join date as timestamp", valid(func(m map[string]string) { m["join_date"] = "2024-02-29T10:00:00Z" }), ana, nil},
		{"values trimmed", valid(func(m map[string]string) { m["first_name"] = "  Ana\t"; m["email"] = " ana@example.com " }), ana, nil},
		{"job title optional", valid(func(m map[string]string) { delete(m, "job_title") }),
			NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JoinDate: "2024-02-29"}, nil},
		{"job title blank", valid(func(m map[string]string) { m["job_title"] = " \t " }),
			NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JoinDate: "2024-02-29"}, nil},
		{"company_join_date alias", valid(func(m map[string]string) { delete(m, "join_date"); m["company_join_date"] = "2024/02/29" }), ana, nil},
		{"join_date wins over company_join_date", valid(func(m map[string]string) { m["company_join_date"] = "1999-01-01" }), ana, nil},
		{"field at the maximum length", valid(func(m map[string]string) { m["first_name"] = atMax }),
			NewEmployee{FirstName: atMax, LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"}, nil},

		{"nothing", map[string]string{}, NewEmployee{}, []FieldProblem{
			{"employee[first_name]", []string{"missing"}},
			{"employee[last_name]", []string{"missing"}},
			{"employee[email]", []string{"missing"}},
			{"employee[join_date]", []string{"missing"}},
		}},
		{"blank counts as missing", valid(func(m map[string]string) { m["last_name"] = "   " }), NewEmployee{}, []FieldProblem{
			{"employee[last_name]", []string{"missing"}},
		}},
		{"invalid calendar date", valid(func(m map[string]string) { m["join_date"] = "2023/02/29" }), NewEmployee{}, []FieldProblem{
			{"employee[join_date]", []string{"is not a valid date (use YYYY/MM/DD or YYYY-MM-DD)"}},
		}},
		{"day first date", valid(func(m map[string]string) { m["join_date"] = "29/02/2024" }), NewEmployee{}, []FieldProblem{
			{"employee[join_date]", []string{"is not a valid date (use YYYY/MM/DD or YYYY-MM-DD)"}},
		}},
		{"bad email", valid(func(m map[string]string) { m["email"] = "Ana <ana@example.com>" }), NewEmployee{}, []FieldProblem{
			{"employee[email]", []string{"is not a valid email address"}},
		}},
		{"unknown fields sorted after the known ones", valid(func(m map[string]string) { m["zeta"] = "1"; m["middle_name"] = "Q" }), NewEmployee{}, []FieldProblem{
			{"employee[middle_name]", []string{"is not a supported field"}},
			{"employee[zeta]", []string{"is not a supported field"}},
		}},
		{"every problem, in order", map[string]string{
			"zeta":       "x",
			"join_date":  "2023-02-29",
			"job_title":  "Eng\xffineer",
			"email":      "ana@exa\x00mple.com",
			"last_name":  "Ló\x01pez",
			"first_name": long,
			"alpha":      "y",
		}, NewEmployee{}, []FieldProblem{
			{"employee[first_name]", []string{"is too long (maximum is 255 characters)"}},
			{"employee[last_name]", []string{"contains control characters"}},
			{"employee[email]", []string{"contains control characters", "is not a valid email address"}},
			{"employee[job_title]", []string{"is not valid UTF-8"}},
			{"employee[join_date]", []string{"is not a valid date (use YYYY/MM/DD or YYYY-MM-DD)"}},
			{"employee[alpha]", []string{"is not a supported field"}},
			{"employee[zeta]", []string{"is not a supported field"}},
		}},
		{"control characters", valid(func(m map[string]string) { m["first_name"] = "A\nna"; m["job_title"] = "Eng\x7f" }), NewEmployee{}, []FieldProblem{
			{"employee[first_name]", []string{"contains control characters"}},
			{"employee[job_title]", []string{"contains control characters"}},
		}},
		{"too long optional field", valid(func(m map[string]string) { m["job_title"] = long }), NewEmployee{}, []FieldProblem{
			{"employee[job_title]", []string{"is too long (maximum is 255 characters)"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ValidateNewEmployee(tt.fields)
			if tt.problems == nil {
				if err != nil {
					t.Fatalf("ValidateNewEmployee: %v", err)
				}
				if got != tt.want {
					t.Errorf("got %#v\nwant %#v", got, tt.want)
				}
				return
			}
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("error %v (%T), want a *ValidationError", err, err)
			}
			if !reflect.DeepEqual(verr.Problems, tt.problems) {
				t.Errorf("problems\n %q\nwant\n %q", verr.Problems, tt.problems)
			}
			if got != (NewEmployee{}) {
				t.Errorf("a refused input returned %#v", got)
			}
		})
	}
}

// createRequest builds a POST with the body and content type.
func createRequest(t *testing.T, contentType, body string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/employees", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

// readRequest reads the request's body as its Content-Type says.
func readRequest(r *http.Request) (NewEmployee, error) {
	return ReadNewEmployee(r.Header.Get("Content-Type"), r.Body)
}

// A body over the caller's limit comes back as the reader's error (413 to the handler), in every
// media type, and not as a malformed body (400).
func TestReadNewEmployeeBodyLimit(t *testing.T) {
	long := strings.Repeat("x", 200)
	mpCT, mpBody := multipartBody(t, [][2]string{{"employee[first_name]", long}}, false)
	tests := []struct{ name, contentType, body string }{
		{"form", FormContentType, "employee[first_name]=" + long},
		{"JSON", "application/json", `{"employee":{"first_name":"` + long + `"}}`},
		{"multipart", mpCT, mpBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := createRequest(t, tt.contentType, tt.body)
			r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 64)
			_, err := readRequest(r)
			var tooLarge *http.MaxBytesError
			if !errors.As(err, &tooLarge) || errors.Is(err, ErrMalformedBody) {
				t.Errorf("error %v (%T), want the *http.MaxBytesError alone", err, err)
			}
		})
	}
}

func multipartBody(t *testing.T, fields [][2]string, file bool) (contentType, body string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if file {
		fw, err := mw.CreateFormFile("employee[photo]", "photo.jpg")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write([]byte("\xff\xd8\xff"))
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), b.String()
}

func TestReadNewEmployee(t *testing.T) {
	ana := NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"}
	form := url.Values{
		"employee[first_name]": {"Ana"}, "employee[last_name]": {"López"}, "employee[email]": {"ana@example.com"},
		"employee[job_title]": {"Engineer"}, "employee[join_date]": {"2024/02/29"},
	}
	withForm := func(mod func(v url.Values)) string {
		v := url.Values{}
		for k, vs := range form {
			v[k] = append([]string(nil), vs...)
		}
		mod(v)
		return v.Encode()
	}
	mpCT, mpBody := multipartBody(t, [][2]string{
		{"employee[first_name]", "Ana"}, {"employee[last_name]", "López"}, {"employee[email]", "ana@example.com"},
		{"employee[job_title]", "Engineer"}, {"employee[join_date]", "2024/02/29"}, {"commit", "Save"},
	}, false)
	mpFileCT, mpFileBody := multipartBody(t, [][2]string{{"employee[first_name]", "Ana"}}, true)
	const formCT = "application/x-www-form-urlencoded"
	const jsonCT = "application/json"
	const anaJSON = `{"employee":{"first_name":"Ana","last_name":"López","email":"ana@example.com","job_title":"Engineer","join_date":"2024/02/29"}}`

	tests := []struct {
		name        string
		contentType string
		body        string
		query       string
		want        NewEmployee
		problems    []FieldProblem // for a *ValidationError
		errIs       error          // for another error: errors.Is target, or nil for "any non-validation error"
		otherErr    bool
	}{
		{name: "urlencoded", contentType: formCT, body: form.Encode(), want: ana},
		{name: "urlencoded with charset", contentType: formCT + "; charset=utf-8", body: form.Encode(), want: ana},
		{name: "urlencoded with other fields", contentType: formCT, body: withForm(func(v url.Values) { v.Set("utf8", "✓"); v.Set("commit", "Create") }), want: ana},
		{name: "urlencoded ISO date", contentType: formCT, body: withForm(func(v url.Values) { v.Set("employee[join_date]", "2024-02-29") }), want: ana},
		{name: "multipart", contentType: mpCT, body: mpBody, want: ana},
		{name: "JSON", contentType: jsonCT, body: anaJSON, want: ana},
		{name: "JSON with charset", contentType: "application/json; charset=utf-8", body: anaJSON, want: ana},
		{name: "JSON numbers and company_join_date", contentType: jsonCT,
			body: `{"employee":{"first_name":"Ana","last_name":"López","email":"ana@example.com","job_title":42,"company_join_date":"2024-02-29"}}`,
			want: NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "42", JoinDate: "2024-02-29"}},

		{name: "urlencoded missing fields", contentType: formCT, body: "employee[first_name]=Ana", problems: []FieldProblem{
			{"employee[last_name]", []string{"missing"}},
			{"employee[email]", []string{"missing"}},
			{"employee[join_date]", []string{"missing"}},
		}},
		{name: "query fields are not form fields", contentType: formCT, body: withForm(func(v url.Values) { v.Del("employee[last_name]") }),
			query: "employee[last_name]=L%C3%B3pez", problems: []FieldProblem{{"employee[last_name]", []string{"missing"}}}},
		{name: "urlencoded unknown field", contentType: formCT, body: withForm(func(v url.Values) { v.Set("employee[salary]", "1") }),
			problems: []FieldProblem{{"employee[salary]", []string{"is not a supported field"}}}},
		{name: "urlencoded invalid UTF-8", contentType: formCT, body: withForm(func(v url.Values) { v.Set("employee[last_name]", "L\xf3pez") }),
			problems: []FieldProblem{{"employee[last_name]", []string{"is not valid UTF-8"}}}},
		{name: "urlencoded too long", contentType: formCT, body: withForm(func(v url.Values) { v.Set("employee[job_title]", strings.Repeat("x", 256)) }),
			problems: []FieldProblem{{"employee[job_title]", []string{"is too long (maximum is 255 characters)"}}}},
		{name: "urlencoded control characters", contentType: formCT, body: withForm(func(v url.Values) { v.Set("employee[first_name]", "A\x1bna") }),
			problems: []FieldProblem{{"employee[first_name]", []string{"contains control characters"}}}},
		{name: "urlencoded field given twice", contentType: formCT, body: withForm(func(v url.Values) { v.Add("employee[email]", "bo@example.com") }),
			problems: []FieldProblem{{"employee[email]", []string{"given more than once"}}}},
		{name: "urlencoded empty field name", contentType: formCT, body: withForm(func(v url.Values) { v.Set("employee[]", "x") }),
			problems: []FieldProblem{{"employee[]", []string{"is not a supported field"}}}},
		{name: "urlencoded unclosed field name", contentType: formCT, body: withForm(func(v url.Values) { v.Set("employee[email", "x") }),
			problems: []FieldProblem{{"employee[email", []string{"is not a supported field"}}}},
		{name: "no content type, empty body", body: "", problems: []FieldProblem{
			{"employee[first_name]", []string{"missing"}},
			{"employee[last_name]", []string{"missing"}},
			{"employee[email]", []string{"missing"}},
			{"employee[join_date]", []string{"missing"}},
		}},
		{name: "JSON unknown and invalid fields", contentType: jsonCT,
			body: `{"employee":{"first_name":"Ana","last_name":null,"email":"not-an-email","join_date":"2023-02-29","dob":"1990-01-01"}}`,
			problems: []FieldProblem{
				{"employee[last_name]", []string{"missing"}},
				{"employee[email]", []string{"is not a valid email address"}},
				{"employee[join_date]", []string{"is not a valid date (use YYYY/MM/DD or YYYY-MM-DD)"}},
				{"employee[dob]", []string{"is not a supported field"}},
			}},
		{name: "JSON without employee", contentType: jsonCT, body: `{"first_name":"Ana"}`, problems: []FieldProblem{{"employee", []string{"missing"}}}},
		{name: "JSON employee null", contentType: jsonCT, body: `{"employee":null}`, problems: []FieldProblem{{"employee", []string{"missing"}}}},
		{name: "JSON null body", contentType: jsonCT, body: `null`, problems: []FieldProblem{{"employee", []string{"missing"}}}},
		{name: "JSON employee not an object", contentType: jsonCT, body: `{"employee":"Ana"}`, problems: []FieldProblem{{"employee", []string{"must be an object"}}}},
		{name: "JSON field not a scalar", contentType: jsonCT,
			body:     `{"employee":{"first_name":{"given":"Ana"},"last_name":"López","email":"ana@example.com","join_date":"2024/02/29"}}`,
			problems: []FieldProblem{{"employee[first_name]", []string{"must be a string"}}}},

		{name: "JSON syntax error", contentType: jsonCT, body: `{"employee":`, otherErr: true},
		{name: "JSON array", contentType: jsonCT, body: `[]`, otherErr: true},
		{name: "JSON trailing value", contentType: jsonCT, body: anaJSON + ` {}`, otherErr: true},
		{name: "multipart with a file", contentType: mpFileCT, body: mpFileBody, otherErr: true},
		{name: "multipart without boundary", contentType: "multipart/form-data", body: "x", otherErr: true},
		{name: "plain text", contentType: "text/plain", body: "Ana", errIs: ErrUnsupportedMediaType},
		{name: "XML", contentType: "application/xml", body: "<employee/>", errIs: ErrUnsupportedMediaType},
		{name: "unreadable content type", contentType: "application/json; =", body: anaJSON, errIs: ErrUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := createRequest(t, tt.contentType, tt.body)
			if tt.query != "" {
				r.URL.RawQuery = tt.query
			}
			got, err := readRequest(r)
			var verr *ValidationError
			switch {
			case tt.problems != nil:
				if !errors.As(err, &verr) {
					t.Fatalf("error %v (%T), want a *ValidationError", err, err)
				}
				if !reflect.DeepEqual(verr.Problems, tt.problems) {
					t.Errorf("problems\n %q\nwant\n %q", verr.Problems, tt.problems)
				}
			case tt.errIs != nil:
				if !errors.Is(err, tt.errIs) {
					t.Errorf("error %v, want %v", err, tt.errIs)
				}
			case tt.otherErr:
				if err == nil || errors.As(err, &verr) || errors.Is(err, ErrUnsupportedMediaType) {
					t.Errorf("error %v (%T), want a body-reading error", err, err)
				}
			default:
				if err != nil {
					t.Fatalf("ReadNewEmployee: %v", err)
				}
				if got != tt.want {
					t.Errorf("got %#v\nwant %#v", got, tt.want)
				}
			}
		})
	}
}

// Every problem is reported, not just the first: the fields that cannot be read as text must not
// hide each other, nor the other fields' problems.
func TestReadNewEmployeeReportsEveryUnreadableField(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		want                    []string // fields that must all be named
	}{
		{"JSON", "application/json", `{"employee":{"first_name":{"a":1},"last_name":["x"]}}`,
			[]string{"employee[first_name]", "employee[last_name]", "employee[email]", "employee[join_date]"}},
		{"form", "application/x-www-form-urlencoded", "employee[first_name]=A&employee[first_name]=B&employee[last_name]=C&employee[last_name]=D",
			[]string{"employee[first_name]", "employee[last_name]", "employee[email]", "employee[join_date]"}},
	}
	for _, tt := range tests {
		_, err := readRequest(createRequest(t, tt.contentType, tt.body))
		var verr *ValidationError
		if !errors.As(err, &verr) {
			t.Fatalf("%s: error %v, want a *ValidationError", tt.name, err)
		}
		named := map[string]bool{}
		for _, p := range verr.Problems {
			named[p.Field] = true
		}
		for _, f := range tt.want {
			if !named[f] {
				t.Errorf("%s: %v does not name %s", tt.name, verr, f)
			}
		}
	}
}

func TestNewEmployeeAppendForm(t *testing.T) {
	tests := []struct {
		ne   NewEmployee
		want string
	}{
		{NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"},
			"employee%5Bfirst_name%5D=Ana&employee%5Blast_name%5D=L%C3%B3pez&employee%5Bemail%5D=ana%40example.com&employee%5Bjob_title%5D=Engineer&employee%5Bjoin_date%5D=2024%2F02%2F29"},
		{NewEmployee{FirstName: "Ana Sofía", LastName: "O'Brien&Co", Email: "a+b@example.com", JoinDate: "2024-01-05"},
			"employee%5Bfirst_name%5D=Ana+Sof%C3%ADa&employee%5Blast_name%5D=O%27Brien%26Co&employee%5Bemail%5D=a%2Bb%40example.com&employee%5Bjob_title%5D=&employee%5Bjoin_date%5D=2024%2F01%2F05"},
	}
	for _, tt := range tests {
		got := string(tt.ne.AppendForm(nil))
		if got != tt.want {
			t.Errorf("AppendForm(%#v)\n = %s\nwant %s", tt.ne, got, tt.want)
		}
		// What the client sends reads back as the same input.
		back, err := readRequest(createRequest(t, FormContentType, got))
		if err != nil || back != tt.ne {
			t.Errorf("ReadNewEmployee(%s) = %#v, %v; want %#v", got, back, err, tt.ne)
		}
	}
}

func TestNewEmployeeAppendJSON(t *testing.T) {
	tests := []struct {
		ne   NewEmployee
		want string
	}{
		{NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"},
			`{"employee":{"first_name":"Ana","last_name":"López","email":"ana@example.com","job_title":"Engineer","join_date":"2024/02/29"}}`},
		{NewEmployee{FirstName: "Ana", LastName: `O"Brien`, Email: "ana@example.com", JoinDate: "2024-01-05"},
			`{"employee":{"first_name":"Ana","last_name":"O\"Brien","email":"ana@example.com","join_date":"2024/01/05"}}`},
	}
	for _, tt := range tests {
		got := string(tt.ne.AppendJSON(nil))
		if got != tt.want {
			t.Errorf("AppendJSON(%#v)\n = %s\nwant %s", tt.ne, got, tt.want)
		}
		// What the client sends reads back as the same input.
		back, err := readRequest(createRequest(t, "application/json", got))
		if err != nil || back != tt.ne {
			t.Errorf("ReadNewEmployee(%s) = %#v, %v; want %#v", got, back, err, tt.ne)
		}
	}
}
