package server_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/source/v1"
)

func TestMain(m *testing.M) { sinktest.Main(m) }

const testKey = "sandbox-test-key-9f2c4e7a1b3d5f60a8e2"

var fixedNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

type fixture struct {
	store *sink.Store
	srv   *httptest.Server
}

func newFixture(t *testing.T, backend string, opts server.Options) *fixture {
	t.Helper()
	store := sinktest.Store(t, backend, sink.Options{Now: func() time.Time { return fixedNow }})
	return fixtureOver(t, store, store, opts)
}

// fixtureOver serves over, a wrapper of store (or store itself), with the test keys unless opts
// names keys.
func fixtureOver(t *testing.T, store *sink.Store, over server.Store, opts server.Options) *fixture {
	t.Helper()
	if opts.APIKeys == nil {
		opts.APIKeys = []string{"another-key-9f2c4e7a1b3d5f60a8e2", testKey}
	}
	h, err := server.NewHandler(over, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{store: store, srv: srv}
}

// do sends a request with the test key (unless a header overrides it) and reads the answer.
func (f *fixture) do(t *testing.T, method, path string, body io.Reader, header ...string) (*http.Response, []byte) {
	t.Helper()
	return send(t, method, f.srv.URL+path, testKey, body, header...)
}

// send sends a request with key in X-API-KEY and the header pairs (an empty value removes the
// header, the key included), and reads the answer.
func send(t *testing.T, method, url, key string, body io.Reader, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", key)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	return sourcetest.Do(t, plainClient, req)
}

func (f *fixture) put(t *testing.T, records ...string) {
	t.Helper()
	for _, r := range records {
		var e v1.Employee
		if err := json.Unmarshal([]byte(r), &e); err != nil {
			t.Fatal(err)
		}
		if err := f.store.PutEmployee(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

// walk loads a complete walk of a collection the wire declares, its records as the source
// sends them.
func (f *fixture) walk(t *testing.T, c *v1.Collection, records ...string) {
	t.Helper()
	ctx := context.Background()
	var recs []v1.Record
	for _, raw := range records {
		r, err := c.Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	l, err := f.store.BeginLoad(ctx, sink.Resource(c.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AddRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Merge(ctx, sink.MergeOptions{Complete: true}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) putN(t *testing.T, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		f.put(t, fmt.Sprintf(`{"id":%d,"first_name":"F%d","last_name":"L","email":"e%d@example.com"}`, i, i, i))
	}
}

func assertStatus(t *testing.T, resp *http.Response, body []byte, want int) {
	t.Helper()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, want, body)
	}
}

// assertJSONError checks an error answer: the status, a JSON Content-Type and a body that is
// valid JSON in the service's error shape.
func assertJSONError(t *testing.T, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d; body %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if !json.Valid(body) {
		t.Errorf("body is not JSON: %q", body)
	}
	want := http.StatusText(status)
	if status == http.StatusUnauthorized {
		want = "401 Unauthorized" // the service's own 401 body
	}
	if pe, err := v1.ParseErrorBody(body); err != nil || pe.Type != want {
		t.Errorf("error body %s: %+v %v", body, pe, err)
	}
}

// plainClient sends no Accept-Encoding of its own (http.DefaultClient asks for gzip and
// decompresses behind the test's back): a test sees the bytes served to a client that asked
// for what the test asked for.
var plainClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")
