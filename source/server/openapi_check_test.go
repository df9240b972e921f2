package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hrsync/hrsync/source/server"
)

// apiDoc is the committed document (the one served), read to check answers against it: its
// paths, operations, responses and headers as written, and each schema they hold compiled by a
// JSON Schema 2020-12 validator (OpenAPI 3.1's dialect), formats asserted. Every schema is
// compiled when the document is read, so a reference that resolves to nothing fails there, and
// the compiled schemas are only read afterwards, by tests in parallel.
type apiDoc struct {
	paths   map[string]map[string]apiOperation // by path template, then lower-case method
	schemas map[string]*jsonschema.Schema      // by JSON pointer into the document
}

// An apiOperation is one method of one path: its responses by status ("200", "4XX", "default").
type apiOperation map[string]apiResponse

type apiResponse struct {
	pointer string               // where the response is in the document (after its $ref)
	content map[string]string    // media type → its schema's pointer
	headers map[string]apiHeader // canonical header name → the header
}

type apiHeader struct {
	required bool
	schema   string // its schema's pointer ("" when it has none)
}

const apiDocURL = "https://hrsync.test/v1/openapi.json"

var apiDocOnce = sync.OnceValues(func() (*apiDoc, error) { return readAPIDoc(server.OpenAPI) })

// openAPIDoc is the committed document, read once per test process.
func openAPIDoc(t *testing.T) *apiDoc {
	t.Helper()
	d, err := apiDocOnce()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return d
}

func readAPIDoc(raw []byte) (*apiDoc, error) {
	root, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(apiDocURL, root); err != nil {
		return nil, err
	}
	d := &apiDoc{paths: map[string]map[string]apiOperation{}, schemas: map[string]*jsonschema.Schema{}}
	compile := func(ptr string) error {
		if _, ok := d.schemas[ptr]; ok {
			return nil
		}
		s, err := c.Compile(apiDocURL + "#" + ptr)
		if err != nil {
			return fmt.Errorf("the schema at %s: %w", ptr, err)
		}
		d.schemas[ptr] = s
		return nil
	}
	doc, _ := root.(map[string]any)
	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		return nil, fmt.Errorf("no paths")
	}
	for path, item := range paths {
		ops := map[string]apiOperation{}
		for method, op := range asObject(item) {
			if method == "parameters" || method == "summary" || method == "description" || method == "servers" {
				continue
			}
			opPtr := pointer("paths", path, method)
			responses := asObject(asObject(op)["responses"])
			if len(responses) == 0 {
				return nil, fmt.Errorf("%s: no responses", opPtr)
			}
			operation := apiOperation{}
			for status, r := range responses {
				respPtr, resp, err := deref(doc, pointer("paths", path, method, "responses", status), r)
				if err != nil {
					return nil, err
				}
				answer := apiResponse{pointer: respPtr, content: map[string]string{}, headers: map[string]apiHeader{}}
				for mediaType, m := range asObject(resp["content"]) {
					if _, ok := asObject(m)["schema"]; !ok {
						return nil, fmt.Errorf("%s: %s has no schema", respPtr, mediaType)
					}
					ptr := respPtr + pointer("content", mediaType, "schema")
					if err := compile(ptr); err != nil {
						return nil, err
					}
					answer.content[mediaType] = ptr
				}
				for name, h := range asObject(resp["headers"]) {
					hPtr, header, err := deref(doc, respPtr+pointer("headers", name), h)
					if err != nil {
						return nil, err
					}
					required, _ := header["required"].(bool)
					hd := apiHeader{required: required}
					if _, ok := header["schema"]; ok {
						hd.schema = hPtr + pointer("schema")
						if err := compile(hd.schema); err != nil {
							return nil, err
						}
					}
					answer.headers[http.CanonicalHeaderKey(name)] = hd
				}
				operation[status] = answer
			}
			ops[method] = operation
		}
		d.paths[path] = ops
	}
	// The schemas no answer names (what a create sends) are compiled too: each must resolve.
	for name := range asObject(asObject(doc["components"])["schemas"]) {
		if err := compile(pointer("components", "schemas", name)); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// deref follows v's $ref, if it has one, within the document: the object it names and its
// pointer (v's own pointer when it has no $ref).
func deref(doc map[string]any, ptr string, v any) (string, map[string]any, error) {
	for range 8 {
		obj := asObject(v)
		ref, ok := obj["$ref"].(string)
		if !ok {
			return ptr, obj, nil
		}
		if !strings.HasPrefix(ref, "#/") {
			return "", nil, fmt.Errorf("%s: $ref %q is not within the document", ptr, ref)
		}
		ptr = ref[1:]
		v = any(doc)
		for _, token := range strings.Split(ref[2:], "/") {
			token = unescapeToken.Replace(token)
			next, ok := asObject(v)[token]
			if !ok {
				return "", nil, fmt.Errorf("$ref %q resolves to nothing", ref)
			}
			v = next
		}
	}
	return "", nil, fmt.Errorf("%s: $ref chain too long", ptr)
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// A JSON pointer's tokens escape "~" and "/" (RFC 6901).
var (
	escapeToken   = strings.NewReplacer("~", "~0", "/", "~1")
	unescapeToken = strings.NewReplacer("~1", "/", "~0", "~")
)

// pointer is the JSON pointer of tokens, each escaped.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken.Replace(t))
	}
	return b.String()
}

// operation finds the path template target matches, its literal segments before its templated
// ones ("/v1/openapi.json" before a "/v1/{name}", were there one), and its method's operation.
func (d *apiDoc) operation(method, target string) (string, apiOperation, error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", nil, err
	}
	segments := strings.Split(u.Path, "/")
	best, bestLiterals := "", -1
	for tmpl := range d.paths {
		parts := strings.Split(tmpl, "/")
		if len(parts) != len(segments) {
			continue
		}
		literals := 0
		for i, p := range parts {
			if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") && segments[i] != "" {
				continue
			}
			if p != segments[i] {
				literals = -1
				break
			}
			literals++
		}
		if literals > bestLiterals || (literals == bestLiterals && tmpl < best) {
			best, bestLiterals = tmpl, literals
		}
	}
	if bestLiterals < 0 {
		return "", nil, fmt.Errorf("no path of the document matches %s", u.Path)
	}
	op, ok := d.paths[best][strings.ToLower(method)]
	if !ok {
		return best, nil, fmt.Errorf("%s has no %s operation", best, method)
	}
	return best, op, nil
}

// check lists how an answer to method target departs from the document: a status it does not
// list (nor its range, nor a default), a media type it does not list, a body its schema
// refuses, a body where it documents none, a header whose value its schema refuses or a
// required header missing.
func (d *apiDoc) check(method, target string, resp *http.Response, body []byte) []string {
	tmpl, op, err := d.operation(method, target)
	if err != nil {
		return []string{err.Error()}
	}
	code := strconv.Itoa(resp.StatusCode)
	r, ok := op[code]
	if !ok {
		r, ok = op[code[:1]+"XX"]
	}
	if !ok {
		r, ok = op["default"]
	}
	if !ok {
		return []string{fmt.Sprintf("%s %s lists no status %s (nor %sXX, nor a default)", method, tmpl, code, code[:1])}
	}
	var problems []string
	if len(r.content) == 0 {
		if len(body) > 0 {
			problems = append(problems, fmt.Sprintf("%s documents no body, the answer has %d bytes", r.pointer, len(body)))
		}
	} else {
		problems = append(problems, d.checkBody(r, resp.Header.Get("Content-Type"), body)...)
	}
	names := make([]string, 0, len(r.headers))
	for name := range r.headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		h := r.headers[name]
		if name == "Content-Type" {
			continue // OpenAPI: a Content-Type header is described by the content, not here
		}
		values := resp.Header.Values(name)
		if len(values) == 0 && h.required {
			problems = append(problems, fmt.Sprintf("%s: the required header %s is missing", r.pointer, name))
		}
		if h.schema == "" {
			continue
		}
		for _, v := range values {
			if err := validateHeader(d.schemas[h.schema], v); err != nil {
				problems = append(problems, fmt.Sprintf("header %s: %q: %v", name, v, err))
			}
		}
	}
	return problems
}

func (d *apiDoc) checkBody(r apiResponse, contentType string, body []byte) []string {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return []string{fmt.Sprintf("Content-Type %q: %v", contentType, err)}
	}
	ptr, ok := r.content[mediaType]
	if !ok {
		ptr, ok = r.content[strings.Split(mediaType, "/")[0]+"/*"]
	}
	if !ok {
		ptr, ok = r.content["*/*"]
	}
	if !ok {
		return []string{fmt.Sprintf("%s lists no media type %s", r.pointer, mediaType)}
	}
	if mediaType != "application/json" && !strings.HasSuffix(mediaType, "+json") {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return []string{fmt.Sprintf("the body is not JSON: %v", err)}
	}
	if err := d.schemas[ptr].Validate(v); err != nil {
		return []string{fmt.Sprintf("the body against %s: %v", ptr, err)}
	}
	return nil
}

// validateHeader: a header's value is text its schema may read as a string or as the JSON
// value it spells ("25" is the integer 25); it is valid when either reading is.
func validateHeader(s *jsonschema.Schema, value string) error {
	err := s.Validate(value)
	if err == nil {
		return nil
	}
	if v, jerr := jsonschema.UnmarshalJSON(strings.NewReader(value)); jerr == nil {
		if _, isString := v.(string); !isString && s.Validate(v) == nil {
			return nil
		}
	}
	return err // the text's: "want integer" says what the value should have been
}

// checkAnswer validates an answer to method path against the document: status, media type,
// headers and body.
func checkAnswer(t *testing.T, method, path string, resp *http.Response, body []byte) {
	t.Helper()
	if problems := openAPIDoc(t).check(method, path, resp, body); len(problems) > 0 {
		t.Errorf("%s %s → %d does not match openapi.json:\n  %s\nbody %.300s", method, path, resp.StatusCode, strings.Join(problems, "\n  "), body)
	}
}

// TestOpenAPICheckRefuses: the check of answers fails where an answer departs from the document,
// each way it can.
func TestOpenAPICheckRefuses(t *testing.T) {
	t.Parallel()
	d := openAPIDoc(t)
	ok := `{"employees":[{"id":1,"first_name":"Ada"}]}`
	header := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for _, c := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		want               string // in the problems; "" for none
	}{
		{"as documented", "GET", "/v1/employees?page=2", 200, header("Total", "25", "Per-Page", "2"), ok, ""},
		{"a templated path", "GET", "/v1/employees/42", 200, header(), ok, ""},
		{"an id of the wrong type", "GET", "/v1/employees", 200, header(), `{"employees":[{"id":true}]}`, "/employees/0/id"},
		{"the collection's key missing", "GET", "/v1/employees", 200, header(), `{"people":[]}`, "employees"},
		{"not JSON", "GET", "/v1/employees", 200, header(), `{"employees":`, "not JSON"},
		{"a status not listed", "GET", "/v1/employees", 418, header(), ok, "no status 418"},
		{"a media type not listed", "GET", "/v1/employees", 200, header("Content-Type", "text/html"), ok, "no media type text/html"},
		{"a header its schema refuses", "GET", "/v1/employees", 200, header("Total", "many"), ok, "header Total"},
		{"a negative count", "GET", "/v1/employees", 200, header("Total", "-1"), ok, "header Total"},
		{"a body where none is documented", "GET", "/v1/employees", 304, http.Header{}, ok, "documents no body"},
		{"no such path", "GET", "/v2/employees", 200, header(), ok, "no path"},
		{"no such method", "PATCH", "/v1/employees", 200, header(), ok, "no PATCH operation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: c.status, Header: c.header}
			problems := strings.Join(d.check(c.method, c.path, resp, []byte(c.body)), "\n")
			switch {
			case c.want == "" && problems != "":
				t.Errorf("problems with a documented answer:\n%s", problems)
			case c.want != "" && !strings.Contains(problems, c.want):
				t.Errorf("problems %q, want one naming %q", problems, c.want)
			}
		})
	}
	// And a document with a reference to nothing is refused when read.
	var doc map[string]any
	if err := json.Unmarshal(server.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	doc["components"].(map[string]any)["schemas"].(map[string]any)["Dangling"] = map[string]any{"$ref": "#/components/schemas/Nowhere"}
	raw, _ := json.Marshal(doc)
	if _, err := readAPIDoc(raw); err == nil || !strings.Contains(err.Error(), "Dangling") {
		t.Errorf("a dangling reference: %v", err)
	}
}
