package fakeupstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// shutdownTimeout bounds how long Server.Close waits for the answers under way.
const shutdownTimeout = 5 * time.Second

// Server is a Service served on a listener its caller chose: an address a person or another
// process can reach, as hrsync demo's upstream.
type Server struct {
	*Service
	// URL is http:// and the listener's address; the collections are under URL + "/v1".
	URL string

	srv       *http.Server
	served    chan error
	closeOnce sync.Once
	closeErr  error
}

// Start serves a Service configured by opts on ln until Close. The Server takes ln over: Close
// closes it.
func Start(ln net.Listener, opts Options) *Server {
	s := &Server{
		Service: New(opts),
		URL:     "http://" + ln.Addr().String(),
		served:  make(chan error, 1),
	}
	s.srv = &http.Server{Handler: s.Service, ReadHeaderTimeout: 10 * time.Second}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s
}

// Close cuts delayed answers short, stops listening and waits for the answers under way (at
// most shutdownTimeout; then their connections are closed). Later calls return the first's
// result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.Service.Close()
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
			s.closeErr = fmt.Errorf("fake upstream %s: shutdown: %w", s.URL, err)
		}
		if err := <-s.served; !errors.Is(err, http.ErrServerClosed) {
			s.closeErr = errors.Join(s.closeErr, fmt.Errorf("fake upstream %s: %w", s.URL, err))
		}
	})
	return s.closeErr
}
