package sinktest

import (
	"bytes"
	"errors"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Proxy is a TCP proxy for fault injection: it forwards connections to a target (a Postgres
// server) until told to go silent, when it keeps every connection open and forwards no byte in
// either direction, as a host does that hangs or a network that drops everything; Resume
// delivers what it held back and forwards again. Make one with [NewProxy]; it stops when the
// test ends.
type Proxy struct {
	t       testing.TB
	network string // of the target: "tcp" or "unix"
	target  string
	ln      net.Listener

	mu      sync.Mutex
	silent  chan struct{} // non-nil while silent; closed by Resume
	closed  bool
	conns   map[net.Conn]struct{}
	pattern []byte        // SilenceOn's
	went    chan struct{} // closed when the proxy goes silent
	wg      sync.WaitGroup
}

// NewProxy listens on a free port of 127.0.0.1 and forwards every connection to target
// (host:port).
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	return newProxy(t, "tcp", target)
}

func newProxy(t testing.TB, network, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("sinktest: proxy: %v", err)
	}
	p := &Proxy{t: t, network: network, target: target, ln: ln, conns: map[net.Conn]struct{}{}, went: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// ProxyURL starts a Proxy in front of the server of the postgres:// URL rawURL (over TCP, or
// a Unix socket named by a host=/dir parameter) and returns it with rawURL pointed at it.
func ProxyURL(t testing.TB, rawURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("sinktest: proxy: %s is not a URL", redact(rawURL))
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	var p *Proxy
	q := u.Query()
	switch dir := q.Get("host"); {
	case strings.HasPrefix(dir, "/"):
		p = newProxy(t, "unix", filepath.Join(dir, ".s.PGSQL."+port))
		q.Del("host")
		u.RawQuery = q.Encode()
	case u.Hostname() != "":
		p = newProxy(t, "tcp", net.JoinHostPort(u.Hostname(), port))
	default:
		t.Fatalf("sinktest: proxy: %s names no server", redact(rawURL))
	}
	u.Host = p.Addr()
	return p, u.String()
}

// Addr is where the proxy listens.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Silence stops forwarding: connections stay open, new ones are accepted, no byte goes through.
func (p *Proxy) Silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silenceLocked()
}

func (p *Proxy) silenceLocked() {
	if p.silent == nil {
		p.silent = make(chan struct{})
		select {
		case <-p.went:
		default:
			close(p.went)
		}
	}
}

// SilenceOn makes the proxy go silent as soon as a client sends bytes containing pattern (in
// one read), once they have reached the server: the server runs the statement, its answer is
// held back.
func (p *Proxy) SilenceOn(pattern string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pattern = []byte(pattern)
}

// Silenced is closed once the proxy has gone silent (by Silence or SilenceOn).
func (p *Proxy) Silenced() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.went
}

// Resume forwards again, starting with what was held back.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pattern = nil
	if p.silent != nil {
		close(p.silent)
		p.silent = nil
	}
	p.went = make(chan struct{})
}

// CloseConns drops every connection open through the proxy (both ends).
func (p *Proxy) CloseConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	if p.silent != nil {
		close(p.silent)
		p.silent = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial(p.network, p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !p.track(client, server) {
			return
		}
		p.wg.Add(2)
		go p.pipe(server, client, true)
		go p.pipe(client, server, false)
	}
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	_ = c.Close()
}

// gate waits while the proxy is silent; false once it is closed.
func (p *Proxy) gate() bool {
	for {
		p.mu.Lock()
		silent, closed := p.silent, p.closed
		p.mu.Unlock()
		if closed {
			return false
		}
		if silent == nil {
			return true
		}
		<-silent
	}
}

// pipe copies src to dst through the gate; an end of src (after the gate) closes dst.
func (p *Proxy) pipe(dst, src net.Conn, fromClient bool) {
	defer p.wg.Done()
	defer p.untrack(dst)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			through := false // the bytes that silence the proxy still reach the server
			if fromClient {
				p.mu.Lock()
				if p.pattern != nil && bytes.Contains(buf[:n], p.pattern) {
					p.pattern = nil
					p.silenceLocked()
					through = true
				}
				p.mu.Unlock()
			}
			if !through && !p.gate() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				p.gate() // an end is news the silent host would not pass on either
			}
			return
		}
	}
}
