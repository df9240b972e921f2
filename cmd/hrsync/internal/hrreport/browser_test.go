package hrreport_test

import (
	"bufio"
	"context"
	"image"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// chromiumPaths are where Debian's and others' packages put Chromium.
var chromiumPaths = []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chromium"}

// chromium is the path of a headless-capable Chromium, installed with apt-get when missing and
// the test runs as root (as CI does, on a clean Debian with no stdin: scripts/test.sh installs
// what the tests need the same way); skipped otherwise, saying how to install it.
func chromium(t *testing.T) string {
	t.Helper()
	find := func() string {
		for _, p := range chromiumPaths {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		if p, err := exec.LookPath("chromium"); err == nil {
			return p
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	if os.Geteuid() != 0 {
		t.Skip("chromium is not installed and the test is not root: sudo apt-get install -y chromium")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("chromium is not installed and there is no apt-get to install it")
	}
	t.Log("installing chromium with apt-get (once per machine)")
	for _, args := range [][]string{
		{"-o", "DPkg::Lock::Timeout=600", "update"},
		{"-o", "DPkg::Lock::Timeout=600", "install", "-y", "--no-install-recommends", "chromium"},
	} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdin = nil
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("apt-get %s: %v\n%s", strings.Join(args, " "), err, lastLines(out, 20))
		}
	}
	p := find()
	if p == "" {
		t.Fatal("apt-get installed chromium, yet it is not found")
	}
	return p
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// proxyLog is a proxy that answers nothing and records every request a browser sends it: a
// page that loads nothing sends none.
type proxyLog struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

func newProxyLog(t *testing.T) *proxyLog {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxyLog{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				p.mu.Lock()
				p.seen = append(p.seen, strings.TrimSpace(line))
				p.mu.Unlock()
			}()
		}
	}()
	return p
}

func (p *proxyLog) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// TestReportBrowser opens the people account's report in headless Chromium: the DOM it builds
// has the charts and tables, the screenshot (in the test's artifacts: go test -artifacts) is a
// page with the charts' colours in it, and the browser asked for nothing (every request would
// go through a proxy that records it).
func TestReportBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	browser := chromium(t)
	_, _, page := pages(t, "sqlite")
	dir := t.ArtifactDir()
	html := filepath.Join(dir, "report.html")
	if err := os.WriteFile(html, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	proxy := newProxyLog(t)
	run := func(extra ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
			"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + t.TempDir(),
			"--proxy-server=http://" + proxy.ln.Addr().String(), "--proxy-bypass-list=<-loopback>",
			"--window-size=1280,2400"}, extra...)
		args = append(args, "file://"+html)
		cmd := exec.CommandContext(ctx, browser, args...)
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", browser, strings.Join(extra, " "), err, lastLines([]byte(stderr.String()), 30))
		}
		return out
	}

	dom := string(run("--dump-dom"))
	for _, want := range []string{"Headcount at each month's end", "Headcount by department at each month's end", "FTE by department at each month's end", "Starters and leavers per month",
		"Turnover over the last 12 months", "Absence by department", `id="bradford"`, "<polyline", "<rect"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %s", want)
		}
	}
	if n := strings.Count(dom, "<svg"); n != 6 {
		t.Errorf("%d charts in the DOM, want 6", n)
	}

	shot := filepath.Join(dir, "report.png")
	run("--screenshot=" + shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	t.Logf("screenshot: %s", shot)
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2400 {
		t.Errorf("screenshot %v, want 1280x2400", b)
	}
	// The charts were drawn: pixels of the palette's first colours (the first department's
	// line, the starters' bars, the leavers') are there in number.
	for _, c := range [][3]uint32{{0x00, 0x72, 0xb2}, {0x00, 0x9e, 0x73}, {0xd5, 0x5e, 0x00}} {
		if n := countColour(img, c); n < 200 {
			t.Errorf("%d pixels of #%02x%02x%02x in the screenshot, want at least 200: the charts were not drawn", n, c[0], c[1], c[2])
		}
	}
	if r := pageRequests(proxy.requests()); len(r) > 0 {
		t.Errorf("the browser asked the network for %q: the page is not self-contained", r)
	}

	// The check can fail: a page with an image from elsewhere is seen asking for it.
	if err := os.WriteFile(html, []byte(`<!DOCTYPE html><title>leak</title><img src="http://report-leak.test/x.png">`), 0o600); err != nil {
		t.Fatal(err)
	}
	run("--dump-dom")
	if r := pageRequests(proxy.requests()); !slices.ContainsFunc(r, func(s string) bool { return strings.Contains(s, "report-leak.test") }) {
		t.Errorf("a page loading an image from elsewhere was not seen asking for it (requests %q)", r)
	}
}

// browserOwn are the hosts Chromium asks of its own accord, whatever the page, even with
// background networking off (updates of its components, the clock they are signed against,
// its account service): not the page's requests. A font or style sheet from elsewhere
// (fonts.googleapis.com, a CDN) is not among them.
var browserOwn = []string{"update.googleapis.com", "clients2.google.com", "accounts.google.com",
	"safebrowsing.googleapis.com", "optimizationguide-pa.googleapis.com", "content-autofill.googleapis.com",
	"redirector.gvt1.com", "edgedl.me.gvt1.com", "www.gstatic.com/chrome/"}

// pageRequests are the requests of lines (a proxy's request lines) that the browser did not
// make of its own accord (browserOwn).
func pageRequests(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !slices.ContainsFunc(browserOwn, func(h string) bool {
			return strings.Contains(l, " "+h+":") || strings.Contains(l, "//"+h+"/") || strings.Contains(l, "//"+h)
		}) {
			out = append(out, l)
		}
	}
	return out
}

// countColour counts img's pixels within a few levels of c (anti-aliasing aside).
func countColour(img image.Image, c [3]uint32) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, c[0]) && near(g>>8, c[1]) && near(bl>>8, c[2]) {
				n++
			}
		}
	}
	return n
}

func near(a, b uint32) bool { return a+6 >= b && b+6 >= a }
