package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// This file makes openapi.json, the OpenAPI 3.1 document of what serve answers: the
// collections' paths and schemas from their declarations (v1.Collections), the rest written
// here. TestOpenAPIFileIsGenerated fails when the committed file is not what it makes;
// `go test ./source/server -run TestOpenAPIFileIsGenerated -update` writes it again.

type obj = map[string]any

func ref(name string) obj { return obj{"$ref": "#/components/" + name} }

// kindSchema is the JSON Schema of a declared field as Collection.AppendJSON writes it: as the
// source sent it, so in any of the forms the source's values are read from (UPSTREAM.md: numbers
// as numbers or strings, "" as well as null), the usual one first in each description.
func kindSchema(f v1.Field) obj {
	anyOf := func(desc string, types ...string) obj {
		return obj{"type": append(types, "null"), "description": desc}
	}
	switch f.Kind {
	case v1.Int:
		return anyOf("an integer, as the source sent it: a number, or a string holding one", "integer", "string")
	case v1.Bool:
		return anyOf("a boolean, as the source sent it: true or false (0, 1 and their strings are read as booleans too)", "boolean", "integer", "string")
	case v1.Date:
		return anyOf("a date, as the source sent it: YYYY-MM-DD (YYYY/MM/DD and \"\" are read too)", "string")
	case v1.Timestamp:
		return anyOf("an ISO 8601 timestamp, as the source sent it: with Z or an offset such as +01:00", "string")
	case v1.Decimal:
		return anyOf("a decimal, as the source sent it: a string such as \"3.5\", or a number", "string", "number")
	case v1.Opaque:
		return obj{"description": "any JSON value, as the source sent it"}
	case v1.Nested:
		props := obj{"id": sentID()}
		for _, nf := range f.Nested.Fields {
			props[nf.Name] = kindSchema(nf)
		}
		return obj{"type": []string{"object", "string", "null"}, "description": "a nested " + f.Nested.Target + " record, as the source embedded it (\"\" for none, at times)",
			"properties": props, "additionalProperties": true}
	default:
		return anyOf("text, as the source sent it (\"\" and null both occur; a number or boolean is read as its text)", "string", "number", "boolean")
	}
}

// sentID is the id of a record or nested object as the source sent it: a number, or a string
// holding one.
func sentID() obj { return obj{"type": []string{"integer", "string"}} }

// record is a record's schema: id required, every other member optional, nested objects' too (a
// scoped key's answers leave out members outside its scope, at any depth), members the source
// sent beyond these passed through. TestOpenAPIRequiresOnlyRecordIDs keeps it so.
func record(desc string, props obj) obj {
	props["id"] = obj{"type": "integer", "minimum": 1}
	return obj{"type": "object", "description": desc, "required": []string{"id"}, "properties": props, "additionalProperties": true}
}

// nestedRef is an employee's nested reference as the source embedded it: an object whose id
// may be a string, or "" or null for none.
func nestedRef(desc string, members ...string) obj {
	props := obj{"id": sentID()}
	for _, m := range members {
		props[m] = obj{}
	}
	return obj{"type": []string{"object", "string", "null"}, "description": desc + ", as the source embedded it (\"\" for none, at times)",
		"properties": props, "additionalProperties": true}
}

// kind is the schema of a member of the seed's records read as a field of that kind: like a
// declared collection's, in any of the forms the source sends (see kindSchema).
func kind(k v1.Kind) obj { return kindSchema(v1.Field{Kind: k}) }

// employeeSchema is an employee as served: exactly as the source sent it (or, for one created
// here, in the interface document's forms, which these schemas allow too).
func employeeSchema() obj {
	anyValue := obj{"description": "any JSON value, as the source sent it"}
	props := obj{
		"account_id":        kind(v1.Int),
		"first_name":        kind(v1.String),
		"last_name":         kind(v1.String),
		"email":             kind(v1.String),
		"job_title":         kind(v1.String),
		"status":            kind(v1.String),
		"company_join_date": kind(v1.Date),
		"join_date": obj{"type": []string{"string", "null"},
			"description": "the company join date under the name the source sends it by at times, in place of company_join_date: YYYY-MM-DD or YYYY/MM/DD"},
		"job_start_date":              kind(v1.Date),
		"length_of_service_in_months": kind(v1.Int),
		"age":                         anyValue,
		"full_or_part_time":           anyValue,
		"notice_period":               anyValue,
		"working_pattern":             nestedRef("the employee's working pattern", "name", "total_hours", "default"),
		"holiday_allowance":           nestedRef("the employee's holiday allowance", "name"),
		"line_manager":                nestedRef("the employee's line manager", "first_name", "last_name", "email"),
		"holiday_approver":            nestedRef("who approves the employee's holidays", "first_name", "last_name", "email"),
		"department":                  nestedRef("the employee's department", "name"),
		"division":                    nestedRef("the employee's division", "name"),
		"location":                    anyValue,
		"receives_statutory_holidays": kind(v1.Bool),
		"hr":                          kind(v1.Bool),
		"created_at":                  kind(v1.Timestamp),
		"updated_at":                  kind(v1.Timestamp),
	}
	schema := record("An employee, exactly as the source sent it (one created here: in the interface document's forms). Fields outside a scoped key's scope are absent; fields the source sends beyond these are passed through.", props)
	props["id"] = sentID()
	return schema
}

// workingPatternSchema is a working pattern as served: exactly as the source sent it.
func workingPatternSchema() obj {
	props := obj{"name": kind(v1.String), "default": kind(v1.Bool), "total_hours": kind(v1.Decimal),
		"created_at": kind(v1.Timestamp), "updated_at": kind(v1.Timestamp)}
	for _, d := range v1.Weekdays {
		props[d] = kind(v1.Bool)
		props[d+"_hr"] = kind(v1.Decimal)
	}
	schema := record("A working pattern, exactly as the source sent it.", props)
	props["id"] = sentID()
	return schema
}

func header(desc string, schema obj) obj { return obj{"description": desc, "schema": schema} }

func headers(names ...string) obj {
	h := obj{}
	for _, n := range names {
		h[n] = ref("headers/" + n)
	}
	return h
}

// errorResponse is a JSON error answer with the headers it carries.
func errorResponse(desc string, hdrs ...string) obj {
	return obj{"description": desc, "headers": headers(append([]string{"X-Request-Id"}, hdrs...)...),
		"content": obj{"application/json": obj{"schema": ref("schemas/Error")}}}
}

func jsonResponse(desc string, schema obj, hdrs ...string) obj {
	return obj{"description": desc, "headers": headers(append([]string{"X-Request-Id"}, hdrs...)...),
		"content": obj{"application/json": obj{"schema": schema}}}
}

// readErrors are the errors every GET may answer.
func readErrors(r obj) obj {
	for code, name := range map[string]string{"400": "BadRequest", "401": "Unauthorized", "403": "Forbidden", "404": "NotFound",
		"405": "MethodNotAllowed", "414": "URITooLong", "500": "InternalError", "503": "Unavailable"} {
		r[code] = ref("responses/" + name)
	}
	r["304"] = ref("responses/NotModified")
	return r
}

func envelope(key string, item obj) obj {
	return obj{"type": "object", "required": []string{key}, "properties": obj{key: obj{"type": "array", "items": item}}}
}

// listPath and recordPath are a collection's two paths.
func listPath(name, desc string, item obj) obj {
	return obj{
		"get": obj{"summary": desc, "operationId": "list_" + name, "tags": []string{name},
			"parameters": []any{ref("parameters/page"), ref("parameters/per_page"), ref("parameters/If-None-Match")},
			"responses": readErrors(obj{"200": jsonResponse("one page of "+name, envelope(name, item),
				"Total", "Per-Page", "Link", "ETag", "Cache-Control", "Vary")})},
	}
}

func recordPath(name, noun string, item obj) obj {
	return obj{
		"get": obj{"summary": "One " + noun + " by id, in the collection's envelope (an extension)", "operationId": "get_" + name,
			"tags": []string{name}, "parameters": []any{ref("parameters/id"), ref("parameters/If-None-Match")},
			"responses": readErrors(obj{"200": jsonResponse("the "+noun, envelope(name, item), "ETag", "Cache-Control", "Vary")})},
	}
}

func openAPIDocument() obj {
	preflight := obj{"summary": "CORS preflight, answered without a key when serve.cors_origins is set", "security": []any{},
		"responses": obj{
			"204": obj{"description": "the origin may call: Access-Control-Allow-* say what", "headers": obj{
				"Access-Control-Allow-Origin":  header("the origin, or *", obj{"type": "string"}),
				"Access-Control-Allow-Methods": header("GET, HEAD, POST", obj{"type": "string"}),
				"Access-Control-Allow-Headers": header("the request headers a script may send", obj{"type": "string"}),
				"Access-Control-Max-Age":       header("seconds a browser may keep this answer", obj{"type": "integer"})}},
			"401": ref("responses/Unauthorized"),
			"403": errorResponse("the origin is not in serve.cors_origins"),
			"405": ref("responses/MethodNotAllowed")}}
	paths := obj{}
	paths["/v1"] = obj{"get": obj{"summary": "The collections served, with their paths and Totals (an extension)", "operationId": "index",
		"parameters": []any{ref("parameters/If-None-Match")},
		"responses": readErrors(obj{"200": jsonResponse("the collections the key may read", obj{"type": "object", "required": []string{"collections"},
			"properties": obj{"collections": obj{"type": "array", "items": obj{"type": "object", "required": []string{"name", "path", "total"},
				"properties": obj{"name": obj{"type": "string"}, "path": obj{"type": "string"}, "total": obj{"type": "integer", "minimum": 0}}}}}},
			"ETag", "Cache-Control", "Vary")})}, "options": preflight}
	paths["/v1/openapi.json"] = obj{"get": obj{"summary": "This document; no key needed", "operationId": "openapi", "security": []any{},
		"parameters": []any{ref("parameters/If-None-Match")},
		"responses": obj{"200": obj{"description": "the OpenAPI document", "headers": headers("ETag", "Cache-Control"),
			"content": obj{"application/json": obj{"schema": obj{"type": "object"}}}},
			"304": ref("responses/NotModified"), "405": ref("responses/MethodNotAllowed")}}}

	employees := listPath("employees", "Employees, one page", ref("schemas/Employee"))
	employees["post"] = obj{"summary": "Create an employee", "operationId": "create_employee", "tags": []string{"employees"},
		"description": "Kept in the warehouse (serve.writes: local) or sent to the source and kept as it answers (forward). A read-only key gets 403. With an Idempotency-Key, a retry with the same key and employee gets the first answer.",
		"parameters":  []any{ref("parameters/Idempotency-Key")},
		"requestBody": obj{"required": true, "content": obj{
			"application/x-www-form-urlencoded": obj{"schema": ref("schemas/NewEmployeeForm")},
			"multipart/form-data":               obj{"schema": ref("schemas/NewEmployeeForm")},
			"application/json":                  obj{"schema": ref("schemas/NewEmployeeJSON")}}},
		"responses": obj{
			"201": jsonResponse("created: the employee in its envelope", envelope("employees", ref("schemas/Employee")), "Location", "Idempotent-Replayed"),
			"400": obj{"description": "the record is invalid (every problem at once), or the body does not parse",
				"headers": headers("X-Request-Id", "Idempotent-Replayed"), "content": obj{"application/json": obj{"schema": ref("schemas/Error")}}},
			"401": ref("responses/Unauthorized"), "403": ref("responses/Forbidden"), "405": ref("responses/MethodNotAllowed"),
			"409": errorResponse("a request with this Idempotency-Key is still being answered", "Retry-After"),
			"413": errorResponse("the body is larger than the replica takes (64 KiB)"),
			"415": errorResponse("the body is neither a form nor JSON"),
			"422": errorResponse("this Idempotency-Key was used with a different request"),
			"429": errorResponse("the source's rate limit is reached (forward writes)", "Retry-After"),
			"500": ref("responses/InternalError"),
			"502": errorResponse("the source did not accept the create (forward writes)"),
			"503": ref("responses/Unavailable")}}
	paths["/v1/employees"] = employees
	paths["/v1/employees/{id}"] = recordPath("employees", "employee", ref("schemas/Employee"))
	paths["/v1/working_patterns"] = listPath("working_patterns", "Working patterns, one page", ref("schemas/WorkingPattern"))

	schemas := obj{
		"Employee":       employeeSchema(),
		"WorkingPattern": workingPatternSchema(),
		"Error": obj{"type": "object", "required": []string{"error"}, "description": "Every error: a 401's error is a string; others an object with the status's type, a message, and for an invalid record the reasons per field.",
			"properties": obj{"error": obj{"oneOf": []any{
				obj{"type": "string", "examples": []string{"401 Unauthorized"}},
				obj{"type": "object", "required": []string{"type"}, "properties": obj{"type": obj{"type": "string"}, "message": obj{"type": "string"}},
					"additionalProperties": obj{"type": "array", "items": obj{"type": "string"}, "description": "reasons for one field, e.g. employee[email]"}},
			}}}},
		"NewEmployeeForm": obj{"type": "object", "required": []string{"employee[first_name]", "employee[last_name]", "employee[email]", "employee[join_date]"},
			"properties": obj{"employee[first_name]": obj{"type": "string"}, "employee[last_name]": obj{"type": "string"},
				"employee[email]": obj{"type": "string"}, "employee[job_title]": obj{"type": "string"},
				"employee[join_date]": obj{"type": "string", "description": "YYYY/MM/DD or YYYY-MM-DD"}}},
		"NewEmployeeJSON": obj{"type": "object", "required": []string{"employee"}, "properties": obj{"employee": obj{"type": "object",
			"required": []string{"first_name", "last_name", "email", "join_date"},
			"properties": obj{"first_name": obj{"type": "string"}, "last_name": obj{"type": "string"}, "email": obj{"type": "string"},
				"job_title": obj{"type": "string"}, "join_date": obj{"type": "string", "description": "YYYY/MM/DD or YYYY-MM-DD"}}}}},
	}
	for _, c := range v1.Collections {
		props := obj{}
		for _, f := range c.Fields {
			props[f.Name] = kindSchema(f)
		}
		name := schemaName(c.Name)
		schema := record("A record of "+c.Name+", exactly as the source sent it.", props)
		props["id"] = sentID()
		schemas[name] = schema
		paths["/v1/"+c.Name] = listPath(c.Name, strings.ReplaceAll(c.Name, "_", " ")+", one page", ref("schemas/"+name))
		paths["/v1/"+c.Name+"/{id}"] = recordPath(c.Name, "record", ref("schemas/"+name))
	}
	for _, p := range paths {
		p.(obj)["options"] = preflight
	}

	return obj{
		"openapi": "3.1.0",
		"info": obj{"title": "hrsync replica of the Employee Records service", "version": "1",
			"description": "What `hrsync serve` answers: the service's /v1 interface over the warehouse, with extensions (GET /v1, one record by id, Idempotency-Key, this document). Pagination, Link, Total and errors are the service's."},
		"servers":  []any{obj{"url": "/"}},
		"security": []any{obj{"apiKey": []any{}}},
		"paths":    paths,
		"components": obj{
			"schemas": schemas,
			"securitySchemes": obj{"apiKey": obj{"type": "apiKey", "in": "header", "name": "X-API-KEY",
				"description": "A serve key. A key may be scoped (serve.keys): limited to some collections (others answer 403), to some fields, at any depth (the others are absent from its answers: a record's members, its nested objects' and its arrays' objects', and those the source sent beyond the documented ones; only a record's id is always there), and read-only (POST answers 403)."}},
			"parameters": obj{
				"page":            obj{"name": "page", "in": "query", "schema": obj{"type": "integer", "minimum": 1, "maximum": v1.MaxPage, "default": 1}},
				"per_page":        obj{"name": "per_page", "in": "query", "description": fmt.Sprintf("records a page, cut to %d", v1.MaxPerPage), "schema": obj{"type": "integer", "minimum": 1, "default": v1.DefaultPerPage}},
				"id":              obj{"name": "id", "in": "path", "required": true, "schema": obj{"type": "string", "pattern": "^[0-9]+$"}},
				"If-None-Match":   obj{"name": "If-None-Match", "in": "header", "description": "an ETag from an earlier answer: 304 while it is current", "schema": obj{"type": "string"}},
				"Idempotency-Key": obj{"name": "Idempotency-Key", "in": "header", "description": "makes a retried create return the first answer (kept serve.idempotency_ttl, 24 h by default)", "schema": obj{"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"}},
			},
			"headers": obj{
				"Total":               header("records in the whole collection", obj{"type": "integer", "minimum": 0}),
				"Per-Page":            header("records a page", obj{"type": "integer", "minimum": 1}),
				"Link":                header(`first, prev, last, next pages (RFC 8288), e.g. <https://…/v1/employees?page=2&per_page=100>; rel="next"`, obj{"type": "string"}),
				"ETag":                header("names this answer; send it back in If-None-Match", obj{"type": "string"}),
				"Cache-Control":       header("max-age=0, private, must-revalidate", obj{"type": "string"}),
				"Vary":                header("X-API-KEY, and Accept-Encoding / Origin when they matter", obj{"type": "string"}),
				"X-Request-Id":        header("the client's request id, or one made for it", obj{"type": "string"}),
				"Location":            header("the new employee's URL", obj{"type": "string"}),
				"Retry-After":         header("seconds to wait before retrying", obj{"type": "integer", "minimum": 0}),
				"Allow":               header("the methods the path takes", obj{"type": "string"}),
				"WWW-Authenticate":    header(`APIKey realm="hrsync", header="X-API-KEY"`, obj{"type": "string"}),
				"Idempotent-Replayed": header("true on an answer replayed for an Idempotency-Key", obj{"type": "string", "enum": []string{"true"}}),
			},
			"responses": obj{
				"NotModified":      obj{"description": "the ETag sent is current", "headers": headers("ETag", "Cache-Control", "Vary", "X-Request-Id")},
				"BadRequest":       errorResponse("a malformed page or per_page"),
				"Unauthorized":     errorResponse("no key, or not a configured key", "WWW-Authenticate"),
				"Forbidden":        errorResponse("the key's scope does not include this collection, or the key is read-only"),
				"NotFound":         errorResponse("no such resource or record, or a collection the account does not offer"),
				"MethodNotAllowed": errorResponse("the path does not take this method", "Allow"),
				"URITooLong":       errorResponse("a query string over 2 KiB"),
				"InternalError":    errorResponse("an internal error (logged with the request id)"),
				"Unavailable":      errorResponse("the warehouse cannot be reached or is busy with a write, or the request was canceled", "Retry-After"),
			},
		},
	}
}

// schemaName is a collection's schema name: employee_training_courses → EmployeeTrainingCourse.
func schemaName(collection string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(strings.TrimSuffix(collection, "s"), "_") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// generatedOpenAPI is the document as the generator makes it, indented.
func generatedOpenAPI(t *testing.T) []byte {
	t.Helper()
	b, err := json.MarshalIndent(openAPIDocument(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestOpenAPIFileIsGenerated keeps openapi.json what the generator makes from the declared
// collections; -update writes it.
func TestOpenAPIFileIsGenerated(t *testing.T) {
	t.Parallel()
	got := generatedOpenAPI(t)
	if *update {
		if err := os.WriteFile("openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(server.OpenAPI, got) {
		t.Error("openapi.json is not what the generator makes: go test ./source/server -run TestOpenAPIFileIsGenerated -update")
	}
}
