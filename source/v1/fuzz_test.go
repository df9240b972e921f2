package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Run one at a time, e.g.
//   go test -run '^$' -fuzz '^FuzzLinkRoundTrip$' -fuzztime 20s ./source/v1/

func FuzzParsePage(f *testing.F) {
	for _, s := range []string{
		"", "page=1", "page=2&per_page=100", "per_page=101", "per_page=0", "page=-1", "page=abc",
		"page=1.5", "page=", "page=1&page=2", "page=1099511627777", "per_page=99999999999999999999",
		"department=3&page=2&per_page=10", "page=%201", "page=+1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, _ := url.ParseQuery(raw) // keeps what it could read, like net/http does
		p, err := ParsePage(q)
		if err != nil {
			if !errors.Is(err, ErrBadPaging) {
				t.Fatalf("ParsePage(%q) error %v does not wrap ErrBadPaging", raw, err)
			}
			return
		}
		if p.Number < 1 || p.Number > MaxPage || p.Size < 1 || p.Size > MaxPerPage {
			t.Fatalf("ParsePage(%q) = %+v, out of bounds", raw, p)
		}
		if p.Offset() < 0 {
			t.Fatalf("ParsePage(%q) = %+v has a negative offset", raw, p)
		}
		if vs, ok := q["page"]; !ok {
			if p.Number != 1 {
				t.Fatalf("ParsePage(%q) = %+v without page", raw, p)
			}
		} else if n, err := strconv.ParseInt(vs[0], 10, 64); err != nil || n != p.Number {
			t.Fatalf("ParsePage(%q) = %+v, page %q", raw, p, vs[0])
		}
		if vs, ok := q["per_page"]; !ok {
			if p.Size != DefaultPerPage {
				t.Fatalf("ParsePage(%q) = %+v without per_page", raw, p)
			}
		} else if n, err := strconv.ParseInt(vs[0], 10, 64); err != nil || min(n, MaxPerPage) != p.Size {
			t.Fatalf("ParsePage(%q) = %+v, per_page %q", raw, p, vs[0])
		}
	})
}

func FuzzLinkRoundTrip(f *testing.F) {
	f.Add(int64(95), int64(1), int64(10), "department", "3")
	f.Add(int64(95), int64(5), int64(10), "per_page", "10")
	f.Add(int64(95), int64(10), int64(10), "q", "a b,c>d;e")
	f.Add(int64(95), int64(12), int64(10), "", "")
	f.Add(int64(10), int64(1), int64(10), "x", "y")
	f.Add(int64(0), int64(1), int64(25), "x", "y")
	f.Add(int64(6000), int64(60), int64(100), "sort", `"name"`)
	f.Fuzz(func(t *testing.T, total, page, size int64, key, value string) {
		// Keep the numbers in the ranges ParsePage allows and far from overflow.
		total = nonNegative(total) % 10_000_000
		size = 1 + nonNegative(size)%MaxPerPage
		page = 1 + nonNegative(page)%200_000
		if key == "page" {
			key = "x"
		}
		base, _ := url.Parse("https://api.example.com/hr/v1/employees")
		query := url.Values{key: {value}}
		p := Page{Number: page, Size: size}
		header := FormatLink(base, query, p, total)

		last := (total + size - 1) / size
		want := map[string]int64{}
		var order []string
		if page > 1 {
			want["first"], want["prev"] = 1, page-1
			order = append(order, "first", "prev")
		}
		if page < last {
			want["last"], want["next"] = last, page+1
			order = append(order, "last", "next")
		}
		if len(want) == 0 {
			if header != "" {
				t.Fatalf("FormatLink(page %d, size %d, total %d) = %q, want no header", page, size, total, header)
			}
			return
		}
		links, err := ParseLink(header)
		if err != nil {
			t.Fatalf("ParseLink(%q): %v", header, err)
		}
		if len(links) != len(want) {
			t.Fatalf("ParseLink(%q) = %v, want rels %v", header, links, want)
		}
		pos := -1
		for _, rel := range order {
			target, ok := links[rel]
			if !ok {
				t.Fatalf("ParseLink(%q) has no %s", header, rel)
			}
			if got := PageOf(target); got != want[rel] {
				t.Fatalf("%s = %q: page %d, want %d", rel, target, got, want[rel])
			}
			u, err := url.Parse(target)
			if err != nil || u.Scheme != "https" || u.Host != "api.example.com" || u.Path != "/hr/v1/employees" {
				t.Fatalf("%s = %q is not the collection's absolute URL", rel, target)
			}
			if got := u.Query()[key]; len(got) != 1 || got[0] != value {
				t.Fatalf("%s = %q lost %q=%q (got %q)", rel, target, key, value, got)
			}
			i := strings.Index(header, `rel="`+rel+`"`)
			if i <= pos {
				t.Fatalf("rels of %q not in the order first, prev, last, next", header)
			}
			pos = i
		}
	})
}

func nonNegative(n int64) int64 {
	if n < 0 {
		n = -n
	}
	if n < 0 { // math.MinInt64
		return 0
	}
	return n
}

func FuzzParseLink(f *testing.F) {
	for _, s := range []string{
		`<https://api.breathehr.com/v1/employees?page=1&per_page=100>; rel="first", <https://api.breathehr.com/v1/employees?page=2&per_page=100>; rel="prev", <https://api.breathehr.com/v1/employees?page=10&per_page=100>; rel="last", <https://api.breathehr.com/v1/employees?page=4&per_page=100>; rel="next"`,
		`<a>; rel=next`,
		`<a,b>; title="a,b;c"; rel="next last"`,
		`<a>; rel="next`,
		`<a`,
		`garbage`,
		`, ,`,
		`<a>; rel="x";;,`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		links, err := ParseLink(header)
		if err != nil {
			if links != nil {
				t.Fatalf("ParseLink(%q) returned links with its error", header)
			}
			return
		}
		for rel, target := range links {
			if rel == "" || rel != strings.ToLower(rel) || strings.ContainsAny(rel, " \t") {
				t.Fatalf("ParseLink(%q) has rel %q", header, rel)
			}
			if strings.Contains(target, ">") || !strings.Contains(header, target) {
				t.Fatalf("ParseLink(%q) has target %q not taken from the header", header, target)
			}
		}
	})
}

func FuzzEmployeeDecode(f *testing.F) {
	f.Add([]byte(upstreamEmployee))
	f.Add([]byte(`{"id":"42","join_date":"2023/01/05","company_join_date":"","hr":"true","age":"","created_at":"2024-03-01T10:00:00+01:00"}`))
	f.Add([]byte(`{"id":1,"working_pattern":{"id":"31","total_hours":40.0,"default":"1","x":[1,{"b":2,"a":1}]},"custom":{"b":1,"a":2}}`))
	f.Add([]byte(`{"id":1,"line_manager":{"id":9,"name":"Jo"},"department":{"id":"3","name":"Ops","code":null},"\u00e9":"\u2028"}`))
	f.Add([]byte(`{"id":1e2,"first_name":12.50,"email":true,"status":"Ex-employee","length_of_service_in_months":"12.0"}`))
	f.Add([]byte(`{"id":1,"id":2,"x":"\ud800","":null}`))
	f.Add([]byte(`{"id":1,"company_join_date":"2023-02-29"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Employee
		if err := e.UnmarshalJSON(data); err != nil {
			return
		}
		// Written back as sent: a valid UTF-8 object, every member and value as in the input.
		if sent := e.AppendJSON(nil); !ValidSent(sent) || !sameJSON(data, sent) {
			t.Fatalf("not written as sent:\n in  %q\n out %q", data, sent)
		}
		// Built from its fields (the form of a record without its sent form): stable too.
		e.Sent = nil
		out := e.AppendJSON(nil)
		if !json.Valid(out) {
			t.Fatalf("AppendJSON of %q is not JSON: %s", data, out)
		}
		var again Employee
		if err := again.UnmarshalJSON(out); err != nil {
			t.Fatalf("decoding our own output %s: %v", out, err)
		}
		if again.Sent = nil; !bytes.Equal(out, again.AppendJSON(nil)) {
			out2 := again.AppendJSON(nil)
			t.Fatalf("not stable:\n in   %q\n out  %s\n out2 %s", data, out, out2)
		}

		// The same bytes as a working pattern obey the same rule.
		var p WorkingPattern
		if err := p.UnmarshalJSON(data); err != nil {
			return
		}
		if sent := p.AppendJSON(nil); !ValidSent(sent) || !sameJSON(data, sent) {
			t.Fatalf("working pattern not written as sent:\n in  %q\n out %q", data, sent)
		}
		p.Sent = nil
		pout := p.AppendJSON(nil)
		if !json.Valid(pout) {
			t.Fatalf("WorkingPattern.AppendJSON of %q is not JSON: %s", data, pout)
		}
		var p2 WorkingPattern
		if err := p2.UnmarshalJSON(pout); err != nil {
			t.Fatalf("decoding our own working pattern %s: %v", pout, err)
		}
		if p2.Sent = nil; !bytes.Equal(pout, p2.AppendJSON(nil)) {
			pout2 := p2.AppendJSON(nil)
			t.Fatalf("working pattern not stable:\n in   %q\n out  %s\n out2 %s", data, pout, pout2)
		}
	})
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{
		"", "Ana", "López", `O"Brien\`, "a\nb\tc\x00\x1f\x7f", "<&>", "\u2028\u2029", "😀",
		"a\xffb", "\xc3", "\xed\xa0\x80", "\xef\xbf\xbd", "Current employee",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		if !json.Valid(out) {
			t.Fatalf("appendString(%q) = %s is not JSON", s, out)
		}
		if !utf8.Valid(out) {
			t.Fatalf("appendString(%q) = %q is not UTF-8", s, out)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		if utf8.ValidString(s) {
			if back != s {
				t.Fatalf("appendString(%q) = %s reads back as %q", s, out, back)
			}
			return
		}
		// Invalid bytes become U+FFFD exactly as encoding/json replaces them.
		std, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if back != want {
			t.Fatalf("appendString(%q) = %s reads back as %q, encoding/json as %q", s, out, back, want)
		}
	})
}

func FuzzReadNewEmployee(f *testing.F) {
	const form = "application/x-www-form-urlencoded"
	f.Add(form, "employee[first_name]=Ana&employee[last_name]=L%C3%B3pez&employee[email]=ana%40example.com&employee[join_date]=2024%2F02%2F29")
	f.Add(form, "employee[first_name]=A&employee[first_name]=B&employee[]=x&employee[email=y")
	f.Add(form, "employee[join_date]=2023-02-29&employee[email]=Ana+%3Cana%40example.com%3E&employee[x]=%FF")
	f.Add("application/json", `{"employee":{"first_name":"Ana","last_name":"López","email":"ana@example.com","job_title":"Engineer","join_date":"2024/02/29"}}`)
	f.Add("application/json; charset=utf-8", `{"employee":{"first_name":1,"last_name":true,"email":"a@b.co","company_join_date":"2024-01-01T00:00:00+01:00"}}`)
	f.Add("application/json", `{"employee":{"first_name":{},"last_name":[]}} {}`)
	f.Add("multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"employee[first_name]\"\r\n\r\nAna\r\n--XX--\r\n")
	f.Add("multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"employee[photo]\"; filename=\"a.jpg\"\r\n\r\n\xff\r\n--XX--\r\n")
	f.Add("", "")
	f.Add("text/plain", "Ana")
	f.Add("application/json; =", "{}")
	f.Add(form, "employee[first_name]=%zz&employee[last_name]=B")
	f.Add("multipart/form-data", "--XX\r\n")
	f.Add("multipart/form-data; boundary=XX", "--XX\r\nno end of headers")
	f.Fuzz(func(t *testing.T, contentType, body string) {
		r := httptest.NewRequest(http.MethodPost, "/v1/employees", strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		ne, err := ReadNewEmployee(r.Header.Get("Content-Type"), r.Body)
		if err != nil {
			var verr *ValidationError
			if errors.As(err, &verr) && len(verr.Problems) == 0 {
				t.Fatalf("a ValidationError without problems for %q %q", contentType, body)
			}
			return
		}
		if !ValidEmail(ne.Email) {
			t.Fatalf("accepted email %q", ne.Email)
		}
		if d, err := ParseDate(ne.JoinDate); err != nil || d != ne.JoinDate || len(d) != 10 || d[4] != '-' {
			t.Fatalf("accepted join date %q", ne.JoinDate)
		}
		for name, v := range map[string]string{"first_name": ne.FirstName, "last_name": ne.LastName, "email": ne.Email, "job_title": ne.JobTitle} {
			if name != "job_title" && v == "" {
				t.Fatalf("accepted an empty %s", name)
			}
			if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxFieldLength || v != strings.TrimSpace(v) ||
				strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("accepted %s %q", name, v)
			}
		}
		// What was accepted is sent upstream as the form (or JSON), and that reads back the same.
		for _, sent := range []struct {
			contentType string
			body        []byte
		}{{FormContentType, ne.AppendForm(nil)}, {"application/json", ne.AppendJSON(nil)}} {
			r2 := httptest.NewRequest(http.MethodPost, "/v1/employees", bytes.NewReader(sent.body))
			r2.Header.Set("Content-Type", sent.contentType)
			back, err := ReadNewEmployee(r2.Header.Get("Content-Type"), r2.Body)
			if err != nil || back != ne {
				t.Fatalf("NewEmployee %#v sent as %s reads back as %#v, %v", ne, sent.body, back, err)
			}
		}
	})
}

// FuzzIdempotencyKey: a key accepted is 1 to 255 bytes of printable ASCII, and hashing any
// employee is stable and hex.
func FuzzIdempotencyKey(f *testing.F) {
	f.Add("onboard-42", "Ida", "ida@example.com")
	f.Add("with space", "", "")
	f.Fuzz(func(t *testing.T, key, name, email string) {
		if ValidIdempotencyKey(key) {
			if len(key) == 0 || len(key) > 255 || strings.IndexFunc(key, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
				t.Fatalf("accepted %q", key)
			}
		}
		ne := NewEmployee{FirstName: name, Email: email}
		if h := ne.Hash(); len(h) != 64 || h != ne.Hash() {
			t.Fatalf("hash %q", h)
		}
	})
}

// FuzzRecordDecode: whatever a declared collection decodes, it writes back as the source sent it
// (valid JSON, a valid UTF-8 object, every member and value as in the input), and that form
// decodes to the same record.
func FuzzRecordDecode(f *testing.F) {
	f.Add([]byte(recordedAbsence))
	f.Add([]byte(`{"id":"7","notes":"","half_start_am_pm":null,"deducted":3.50,"x":"\ud800"}`))
	f.Add([]byte("{\"id\":1,\"notes\":\"\xff\",\"id\":2}"))
	f.Add([]byte(`{"id":1,"employee":{"id":"4","email":""}, "leave_reason":"" }`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Absences.Decode(data)
		if err != nil {
			return
		}
		out := Absences.AppendJSON(nil, &r)
		if !ValidSent(out) {
			t.Fatalf("AppendJSON of %q is not a valid object: %q", data, out)
		}
		var in, back any
		if json.Unmarshal(data, &in) != nil || json.Unmarshal(out, &back) != nil || !reflect.DeepEqual(in, back) {
			t.Fatalf("not written as sent:\n in  %q\n out %q", data, out)
		}
		again, err := Absences.Decode(out)
		if err != nil {
			t.Fatalf("decoding our own output %s: %v", out, err)
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("not stable:\n %+v\n %+v", r, again)
		}
	})
}

// sameJSON reports whether a and b decode to the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
