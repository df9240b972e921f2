package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestObjectMembers(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []member // nil with wantErr
		err  bool
	}{
		{"empty", `{}`, []member{}, false},
		{"spaces", " \t\r\n{ \"a\" : 1 , \"b\":[ 1, {\"c\":null} ] }\n", []member{{"a", []byte("1")}, {"b", []byte(`[ 1, {"c":null} ]`)}}, false},
		{"duplicates kept in order", `{"a":1,"a":2}`, []member{{"a", []byte("1")}, {"a", []byte("2")}}, false},
		{"escaped key", `{"\u0069d":"x","\"q\"":true}`, []member{{"id", []byte(`"x"`)}, {`"q"`, []byte("true")}}, false},
		{"utf-8 key", `{"é":false}`, []member{{"é", []byte("false")}}, false},
		{"numbers", `{"a":-0.5e+10,"b":0,"c":12.50,"d":1E2}`, []member{{"a", []byte("-0.5e+10")}, {"b", []byte("0")}, {"c", []byte("12.50")}, {"d", []byte("1E2")}}, false},
		{"not an object", `[1]`, nil, true},
		{"empty input", ``, nil, true},
		{"trailing data", `{"a":1} x`, nil, true},
		{"two objects", `{}{}`, nil, true},
		{"trailing comma", `{"a":1,}`, nil, true},
		{"missing colon", `{"a" 1}`, nil, true},
		{"unquoted key", `{a:1}`, nil, true},
		{"leading zero", `{"a":01}`, nil, true},
		{"bare minus", `{"a":-}`, nil, true},
		{"dot without digits", `{"a":1.}`, nil, true},
		{"exponent without digits", `{"a":1e}`, nil, true},
		{"bad literal", `{"a":tru}`, nil, true},
		{"bad escape", `{"a":"\x"}`, nil, true},
		{"short unicode escape", `{"a":"\u12"}`, nil, true},
		{"control character", "{\"a\":\"\x01\"}", nil, true},
		{"unterminated string", `{"a":"x`, nil, true},
		{"unterminated object", `{"a":{"b":1}`, nil, true},
		{"unterminated array", `{"a":[1,2}`, nil, true},
		{"single quotes", `{'a':1}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := objectMembers([]byte(tt.in))
			if (err != nil) != tt.err {
				t.Fatalf("objectMembers(%q) error = %v, want error %v", tt.in, err, tt.err)
			}
			if tt.err {
				return
			}
			if len(got) != len(tt.want) {
				t.Fatalf("objectMembers(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for i := range got {
				if got[i].key != tt.want[i].key || !bytes.Equal(got[i].val, tt.want[i].val) {
					t.Errorf("member %d = %q:%s, want %q:%s", i, got[i].key, got[i].val, tt.want[i].key, tt.want[i].val)
				}
			}
		})
	}
}

func TestDeepNesting(t *testing.T) {
	deep := bytes.Repeat([]byte("["), maxDepth+10)
	in := append(append([]byte(`{"a":`), deep...), append(bytes.Repeat([]byte("]"), maxDepth+10), '}')...)
	var se *SyntaxError
	if _, err := objectMembers(in); !errors.As(err, &se) {
		t.Fatalf("objectMembers of %d nested arrays: %v, want a *SyntaxError", maxDepth+10, err)
	}
}

// FuzzObjectMembers holds the scanner to encoding/json: it accepts exactly what json.Valid
// accepts (as an object), and its members, last duplicate winning, are what json.Unmarshal
// reads into a map.
func FuzzObjectMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":[2,{"b":"\u00e9\n"}]}`, `{"\ud800":"\xff"}`, ` {"x":-1.5E-3} `,
		`{"a":tru}`, `{"a":01}`, `[{"a":1}]`, `{"a":"\u12"}`, upstreamEmployee} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", data, got, want)
		}
		ms, err := objectMembers(data)
		var want map[string]json.RawMessage
		werr := json.Unmarshal(data, &want)
		isObject := werr == nil && want != nil
		if (err == nil) != isObject {
			t.Fatalf("objectMembers(%q) error %v; json.Unmarshal into a map: %v (object %v)", data, err, werr, isObject)
		}
		if err != nil {
			return
		}
		got := map[string]json.RawMessage{}
		for _, m := range ms {
			got[m.key] = m.val
		}
		if len(got) != len(want) {
			t.Fatalf("objectMembers(%q) has %d names, json.Unmarshal %d", data, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("objectMembers(%q)[%q] = %s, json.Unmarshal %s", data, k, got[k], v)
			}
		}
		// Scalar text and compaction agree with encoding/json too.
		for _, m := range ms {
			if s, ok := plainString(m.val); ok {
				var ws string
				if err := json.Unmarshal(m.val, &ws); err != nil || ws != s {
					t.Fatalf("plainString(%s) = %q, json.Unmarshal %q (%v)", m.val, s, ws, err)
				}
			}
			c, err := compactUTF8(m.val)
			if err != nil || !json.Valid(c) {
				t.Fatalf("compactUTF8(%s) = %s, %v", m.val, c, err)
			}
		}
	})
}
