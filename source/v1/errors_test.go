package v1

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

func TestErrorBody(t *testing.T) {
	tests := []struct {
		status  int
		message string
		want    string
	}{
		{http.StatusUnauthorized, "", `{"error":"401 Unauthorized"}`},
		{http.StatusUnauthorized, "ignored: the 401 body is fixed", `{"error":"401 Unauthorized"}`},
		{http.StatusTooManyRequests, "", `{"error":{"type":"Rate Limit Reached"}}`},
		{http.StatusTooManyRequests, "retry later", `{"error":{"type":"Rate Limit Reached","message":"retry later"}}`},
		{http.StatusNotFound, "no employee with that id", `{"error":{"type":"Not Found","message":"no employee with that id"}}`},
		{http.StatusBadRequest, `page must be "1" or more`, `{"error":{"type":"Bad Request","message":"page must be \"1\" or more"}}`},
		{http.StatusMethodNotAllowed, "", `{"error":{"type":"Method Not Allowed"}}`},
		{http.StatusInternalServerError, "internal error", `{"error":{"type":"Internal Server Error","message":"internal error"}}`},
	}
	for _, tt := range tests {
		got := string(ErrorBody(tt.status, tt.message))
		if got != tt.want {
			t.Errorf("ErrorBody(%d, %q) = %s, want %s", tt.status, tt.message, got, tt.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("ErrorBody(%d) is not JSON: %s", tt.status, got)
		}
	}
}

func TestValidationErrorAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		add  [][2]string
		want string
	}{
		{"upstream example", [][2]string{{"employee[last_name]", "missing"}},
			`{"error":{"type":"Record Invalid","employee[last_name]":["missing"]}}`},
		{"fields in the order first named, reasons in order", [][2]string{
			{"employee[last_name]", "missing"},
			{"employee[email]", "contains control characters"},
			{"employee[last_name]", "is too long"},
			{"employee[email]", "is not a valid email address"},
		}, `{"error":{"type":"Record Invalid","employee[last_name]":["missing","is too long"],"employee[email]":["contains control characters","is not a valid email address"]}}`},
		{"names and reasons escaped", [][2]string{{"employee[a\"b]", "bad \\ value\n"}},
			`{"error":{"type":"Record Invalid","employee[a\"b]":["bad \\ value\n"]}}`},
		{"no problems", nil, `{"error":{"type":"Record Invalid"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v ValidationError
			for _, a := range tt.add {
				v.Add(a[0], a[1])
			}
			got := string(v.AppendJSON(nil))
			if got != tt.want {
				t.Errorf("AppendJSON\n got %s\nwant %s", got, tt.want)
			}
			// It reads back with ParseErrorBody.
			pe, err := ParseErrorBody([]byte(got))
			if err != nil {
				t.Fatal(err)
			}
			if pe.Type != TypeRecordInvalid {
				t.Errorf("read back type %q", pe.Type)
			}
			for _, p := range v.Problems {
				if !reflect.DeepEqual(pe.Fields[p.Field], p.Reasons) {
					t.Errorf("read back %s = %q, want %q", p.Field, pe.Fields[p.Field], p.Reasons)
				}
			}
			if len(pe.Fields) != len(v.Problems) {
				t.Errorf("read back %d fields, want %d", len(pe.Fields), len(v.Problems))
			}
		})
	}
}

func TestValidationErrorErrAndMessage(t *testing.T) {
	var v ValidationError
	if err := v.Err(); err != nil {
		t.Errorf("Err() of no problems = %v, want nil", err)
	}
	v.Add("employee[last_name]", "missing")
	v.Add("employee[email]", "is not a valid email address")
	v.Add("employee[last_name]", "is too long")
	err := v.Err()
	if err != error(&v) {
		t.Fatalf("Err() = %v, want the ValidationError itself", err)
	}
	const want = "record invalid: employee[last_name] [missing is too long]; employee[email] [is not a valid email address]"
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		name string
		body string
		want ParsedError
	}{
		{"401 string form", `{"error":"401 Unauthorized"}`, ParsedError{Type: "401 Unauthorized"}},
		{"429 object form", `{"error":{"type":"Rate Limit Reached"}}`, ParsedError{Type: "Rate Limit Reached"}},
		{"record invalid", `{"error":{"type":"Record Invalid","employee[last_name]":["missing"]}}`,
			ParsedError{Type: "Record Invalid", Fields: map[string][]string{"employee[last_name]": {"missing"}}}},
		{"several fields and reasons", `{"error":{"employee[email]":["is invalid","has already been taken"],"type":"Record Invalid","employee[join_date]":"is not a date"}}`,
			ParsedError{Type: "Record Invalid", Fields: map[string][]string{
				"employee[email]":     {"is invalid", "has already been taken"},
				"employee[join_date]": {"is not a date"},
			}}},
		{"message", `{"error":{"type":"Not Found","message":"no employee with that id"}}`,
			ParsedError{Type: "Not Found", Message: "no employee with that id"}},
		{"unreadable reasons kept as a field without reasons", `{"error":{"type":"Record Invalid","base":{"x":1}}}`,
			ParsedError{Type: "Record Invalid", Fields: map[string][]string{"base": nil}}},
		{"other members of the envelope ignored", `{"request_id":"r1","error":"401 Unauthorized"}`, ParsedError{Type: "401 Unauthorized"}},
		{"empty error object", `{"error":{}}`, ParsedError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseErrorBody([]byte(tt.body))
			if err != nil {
				t.Fatalf("ParseErrorBody(%s): %v", tt.body, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseErrorBody(%s)\n got %#v\nwant %#v", tt.body, got, tt.want)
			}
		})
	}
}

func TestParseErrorBodyRefuses(t *testing.T) {
	for _, body := range []string{
		``,
		`<html>Bad Gateway</html>`,
		`{}`,
		`{"errors":["x"]}`,
		`[{"error":"x"}]`,
		`{"error":5}`,
		`{"error":["a","b"]}`,
		`{"error":"x"`,
	} {
		if got, err := ParseErrorBody([]byte(body)); err == nil {
			t.Errorf("ParseErrorBody(%s) = %#v, want an error", body, got)
		}
	}
}

func TestErrorBodyReadsBack(t *testing.T) {
	for _, tt := range []struct {
		status       int
		message, typ string
	}{
		{http.StatusUnauthorized, "", "401 Unauthorized"},
		{http.StatusTooManyRequests, "slow down", TypeRateLimit},
		{http.StatusNotFound, "gone", "Not Found"},
	} {
		got, err := ParseErrorBody(ErrorBody(tt.status, tt.message))
		if err != nil || got.Type != tt.typ || got.Message != tt.message {
			t.Errorf("ParseErrorBody(ErrorBody(%d, %q)) = %#v, %v", tt.status, tt.message, got, err)
		}
	}
}

func TestStatusTextIsNetHTTPs(t *testing.T) {
	for code := 0; code < 1000; code++ {
		if got, want := statusText[code], http.StatusText(code); got != want {
			t.Errorf("statusText[%d] = %q, net/http says %q", code, got, want)
		}
	}
}
