package server_test

import (
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/server"
)

func TestAuth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "sqlite", server.Options{})
	tests := []struct {
		name   string
		header []string
		want   int
	}{
		{"no key", []string{"X-API-KEY", ""}, 401},
		{"wrong key", []string{"X-API-KEY", "sandbox-wrong"}, 401},
		{"prefix of the key", []string{"X-API-KEY", testKey[:5]}, 401},
		{"upper case header", []string{"X-API-KEY", testKey}, 200},
		{"mixed case header", []string{"X-Api-Key", testKey}, 200},
		{"lower case header", []string{"x-api-key", testKey}, 200},
		{"second configured key", []string{"X-API-KEY", "another-key-9f2c4e7a1b3d5f60a8e2"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, "GET", "/v1/employees", nil, tt.header...)
			assertStatus(t, resp, body, tt.want)
			if tt.want == 401 && string(body) != "{\"error\":\"401 Unauthorized\"}\n" {
				t.Errorf("401 body %q", body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); (tt.want == 401) != (got != "") || (got != "" && got != server.Challenge) {
				t.Errorf("WWW-Authenticate %q on a %d", got, tt.want)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q", ct)
			}
		})
	}
	// Every path needs the key, so a client cannot probe which exist.
	resp, body := f.do(t, "GET", "/v1/nowhere", nil, "X-API-KEY", "")
	assertStatus(t, resp, body, 401)
}
