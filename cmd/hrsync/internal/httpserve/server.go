// Package httpserve runs hrsync's HTTP servers (the /v1 replica, the metrics and health port):
// bounded timeouts, a graceful shutdown when the context ends, HTTPS with a certificate reloaded
// when its files change or on SIGHUP, cleartext HTTP/2 on request, and the health endpoints
// answered in JSON.
package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server timeouts: a slow or stalled client cannot hold a connection or a goroutine for long.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	ShutdownTimeout   = 15 * time.Second
)

// Server is one HTTP server of the process: its name in logs, its address (empty: none), its
// handler and the attributes of its start line.
type Server struct {
	Name    string
	Addr    string
	Handler http.Handler
	Attrs   []slog.Attr
	// TLS, when set, serves HTTPS (HTTP/1.1 and HTTP/2) with its certificate, reloaded when
	// it changes.
	TLS *CertReloader
	// H2C also accepts cleartext HTTP/2 with prior knowledge (without tls).
	H2C bool
}

// ServeAll runs the servers until ctx ends, then shuts them down; the first that fails stops
// the others. Every address is bound before any server starts: one that cannot be (in use by
// another process) fails the call at once, with no server having answered a request. With no
// server to run (every addr empty) it waits for ctx all the same.
func ServeAll(ctx context.Context, log *slog.Logger, servers []Server) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lns := make([]net.Listener, len(servers))
	for i, s := range servers {
		if s.Addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", s.Addr)
		if err != nil {
			for _, l := range lns[:i] {
				if l != nil {
					_ = l.Close()
				}
			}
			return &ListenError{Name: s.Name, Addr: s.Addr, Err: err}
		}
		lns[i] = ln
	}
	errc := make(chan error, len(servers))
	n := 0
	for i, s := range servers {
		if lns[i] == nil {
			continue
		}
		n++
		go func() {
			err := ServeOn(ctx, log, lns[i], s)
			if err != nil {
				cancel()
			}
			errc <- err
		}()
	}
	if n == 0 {
		// Nothing to serve: the caller's other work (the worker's schedule, its folder) still
		// runs until it is told to stop, so "no servers" must not look like "servers ended".
		<-ctx.Done()
		return nil
	}
	var errs []error
	for range n {
		if err := <-errc; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ListenError is a server's address that could not be bound (in use, not an address of this
// host, a port below 1024 for a user without the right): the caller names the setting to change.
type ListenError struct {
	Name string // the server's
	Addr string
	Err  error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("%s: listen on %s: %v", e.Name, e.Addr, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// ServeOn serves s on a listener already open (s.Addr unused) until ctx ends, then drains
// in-flight requests within ShutdownTimeout; it closes ln.
func ServeOn(ctx context.Context, log *slog.Logger, ln net.Listener, s Server) error {
	what := s.Name
	srv := &http.Server{
		Handler:           s.Handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          errorLog(log),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	args := []any{"addr", ln.Addr().String()}
	switch {
	case s.TLS != nil:
		srv.Protocols.SetHTTP2(true)
		srv.TLSConfig = s.TLS.tlsConfig()
		args = append(args, "tls", true)
		wctx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		s.TLS.watch(wctx)
	case s.H2C:
		srv.Protocols.SetUnencryptedHTTP2(true)
		args = append(args, "h2c", true)
	}
	for _, a := range s.Attrs {
		args = append(args, a)
	}
	log.Info(what+" listening", args...)
	errc := make(chan error, 1)
	go func() {
		if s.TLS != nil {
			errc <- srv.ServeTLS(ln, "", "") // the certificate comes from TLSConfig.GetCertificate
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %w", what, err)
	case <-ctx.Done():
	}
	log.Info(what + " shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("%s: shutdown: %w", what, err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// maxServerErrorBytes bounds a line of the HTTP server's own log: its messages may quote what
// a client sent (a TLS handshake's protocols, an HTTP/2 preface), and a client must not grow
// the log by what it sends.
const maxServerErrorBytes = 512

// errorLog is the HTTP server's ErrorLog: its lines at WARN, each cut to
// maxServerErrorBytes and marked so.
func errorLog(log *slog.Logger) *stdlog.Logger {
	return stdlog.New(cutLines{slog.NewLogLogger(log.Handler(), slog.LevelWarn).Writer(), maxServerErrorBytes}, "", 0)
}

// cutLines writes each message cut to max bytes, with " …(cut, N bytes)" when it was longer.
type cutLines struct {
	w   io.Writer
	max int
}

func (c cutLines) Write(p []byte) (int, error) {
	if len(p) <= c.max {
		return c.w.Write(p)
	}
	msg := append(bytes.Clone(p[:c.max]), fmt.Sprintf(" …(cut, %d bytes)", len(p))...)
	if _, err := c.w.Write(msg); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeHealth answers a health check: {"status":…} and, when given, "reason", encoded by
// encoding/json (a reason may hold any byte an error message does).
func writeHealth(w http.ResponseWriter, status int, state, reason, warehouse string) {
	body, err := json.Marshal(struct {
		Status    string `json:"status"`
		Reason    string `json:"reason,omitempty"`
		Warehouse string `json:"warehouse,omitempty"`
	}{state, reason, warehouse})
	if err != nil { // cannot happen: two strings
		body = []byte(`{"status":"unavailable"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
