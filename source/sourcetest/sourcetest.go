// Package sourcetest holds the test conveniences around the stand-in upstream of package
// fakeupstream: NewServer starts one on an httptest server (a loopback port of httptest's
// choosing) and NewFastClient makes a client of it that does not pace or wait between retries;
// Do sends a request to any test server and reads its answer. The upstream itself, its options, faults and generated records are fakeupstream's.
package sourcetest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hrsync/hrsync/source/fakeupstream"
)

// Server is a fakeupstream.Service on an httptest server. Close it when done.
type Server struct {
	*httptest.Server
	*fakeupstream.Service
}

// NewServer starts a fake upstream configured by opts on a loopback port of httptest's choosing.
func NewServer(opts fakeupstream.Options) *Server {
	svc := fakeupstream.New(opts)
	return &Server{Server: httptest.NewServer(svc), Service: svc}
}

// Close stops the server, cutting short any delayed answer.
func (s *Server) Close() {
	s.Service.Close()
	s.Server.Close()
}

// Do sends req through c (http.DefaultClient when nil) and returns the answer with its body read
// and closed; any error fails the test.
func Do(t testing.TB, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
