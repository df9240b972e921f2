// Package sourcetest holds the test conveniences around the stand-in upstream of package
// fakeupstream: NewServer starts one on an httptest server (a loopback port of httptest's
// choosing) and NewFastClient makes a client of it that does not pace or wait between retries.
// The upstream itself, its options, faults and generated records are fakeupstream's.
package sourcetest

import (
	"net/http/httptest"

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
