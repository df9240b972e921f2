package hrreport_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/browsertest"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/hrreport"
)

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
	browser := browsertest.Chromium(t)
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
			t.Fatalf("%s %s: %v\n%s", browser, strings.Join(extra, " "), err, browsertest.LastLines([]byte(stderr.String()), 30))
		}
		return out
	}

	dom := string(run("--dump-dom"))
	for _, want := range []string{"Headcount at each month's end", "Headcount by department at each month's end", "FTE by department at each month's end", "Starters and leavers in each month",
		"Turnover over the 12 months to each month's end", "Sickness absence rate by department", `id="bradford"`, "<polyline", "<rect"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %s", want)
		}
	}
	if n := strings.Count(dom, "<figure"); n != 6 {
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
// make of its own accord (browserOwn). An empty line is a connection that asked for nothing
// (Chromium opens some it never uses, and closes them under load before sending a line): not a
// request.
func pageRequests(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && !slices.ContainsFunc(browserOwn, func(h string) bool {
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

// textProbe, put at the end of a page, measures it as laid out and writes what it found into
// an attribute of the body, which --dump-dom shows: every pair of text boxes that overlap (the
// SVG charts' text elements, and each line of every other text), every text box outside the
// box that holds it (a chart's text outside its SVG; other text outside its figure, section or
// page), every shape of a chart outside its drawing, whether the page scrolls sideways, the
// month axes' labels and the page's text.
const textProbe = `<script>
(() => {
  const out = {overlaps: [], outside: [], texts: 0, xlabels: [], sideways: false, text: ''};
  const seen = r => r.width > 0.5 && r.height > 0.5;
  const name = el => (el.nodeType === 3 ? el.textContent : Array.from(el.childNodes).filter(c => c.nodeType === 3).map(c => c.textContent).join('')).trim();
  const within = (r, h) => r.left >= h.left - 0.5 && r.right <= h.right + 0.5 && r.top >= h.top - 0.5 && r.bottom <= h.bottom + 0.5;
  const box = r => [r.left, r.top, r.right, r.bottom].map(Math.round);
  const boxes = [];
  for (const t of document.querySelectorAll('svg text')) {
    const r = t.getBoundingClientRect();
    if (!seen(r)) continue;
    boxes.push({r, el: t});
    const svg = t.ownerSVGElement.getBoundingClientRect();
    if (!within(r, svg)) out.outside.push({text: name(t), box: box(r), holder: box(svg)});
  }
  for (const svg of document.querySelectorAll('figure > svg')) {
    const vb = svg.viewBox.baseVal;
    for (const el of svg.querySelectorAll('polyline, rect, circle, line')) {
      const b = el.getBBox();
      if (b.x < -1 || b.y < -1 || b.x + b.width > vb.width + 1 || b.y + b.height > vb.height + 1)
        out.outside.push({text: el.tagName + ' of ' + svg.parentElement.id, box: [b.x, b.y, b.x + b.width, b.y + b.height].map(Math.round), holder: [0, 0, vb.width, vb.height]});
    }
  }
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode;
    const p = n.parentElement;
    if (!n.textContent.trim() || p.closest('svg, script, style, title')) continue;
    const holder = p.closest('figure, section, main').getBoundingClientRect();
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) {
      if (!seen(r)) continue;
      boxes.push({r, el: n});
      if (!within(r, holder)) out.outside.push({text: name(n), box: box(r), holder: box(holder)});
    }
  }
  boxes.sort((a, b) => a.r.top - b.r.top);
  for (let i = 0; i < boxes.length; i++) {
    const a = boxes[i];
    for (let j = i + 1; j < boxes.length && boxes[j].r.top < a.r.bottom; j++) {
      const b = boxes[j];
      if (a.el === b.el) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 1 && h > 1) out.overlaps.push([name(a.el), box(a.r), name(b.el), box(b.r)]);
    }
  }
  out.texts = boxes.length;
  out.xlabels = Array.from(document.querySelectorAll('svg text.axis-x'), t => t.textContent);
  out.sideways = document.documentElement.scrollWidth > document.documentElement.clientWidth;
  out.text = document.body.innerText;
  document.body.setAttribute('data-check', JSON.stringify(out));
})();
</script>`

// pageCheck is what textProbe found.
type pageCheck struct {
	Overlaps [][]any `json:"overlaps"`
	Outside  []struct {
		Text   string    `json:"text"`
		Box    []float64 `json:"box"`
		Holder []float64 `json:"holder"`
	} `json:"outside"`
	Texts    int      `json:"texts"`
	XLabels  []string `json:"xlabels"`
	Sideways bool     `json:"sideways"`
	Text     string   `json:"text"`
}

// shortMonth is a month written the ambiguous way ("Jul 24": the 24th of July?).
var shortMonth = regexp.MustCompile(`\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2}\b`)

// monthYear is a month written "Jul 2024".
var monthYear = regexp.MustCompile(`^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4}$`)

// measurePage opens page in headless Chromium at a laptop's width with textProbe at its end,
// and returns what the probe found; the page and its screenshot are left in dir.
func measurePage(t *testing.T, browser, dir, name, page string) pageCheck {
	t.Helper()
	file := filepath.Join(dir, name+".html")
	if err := os.WriteFile(file, []byte(strings.Replace(page, "</body>", textProbe+"</body>", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--proxy-server=http://127.0.0.1:9",
		"--window-size=1280,4000", "--screenshot="+filepath.Join(dir, name+".png"), "--dump-dom", "file://"+file)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, browsertest.LastLines([]byte(stderr.String()), 30))
	}
	m := regexp.MustCompile(`data-check="([^"]*)"`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the page did not say what it measured:\n%s", browsertest.LastLines(out, 20))
	}
	var c pageCheck
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &c); err != nil {
		t.Fatalf("the probe's answer: %v", err)
	}
	return c
}

// TestReportBrowserDepartments: the report of 1, 8, 41 and 200 departments (syntheticReport)
// as headless Chromium lays it out at 1280 px: no two pieces of text overlap, none leaves its
// chart (or its figure, section, page), no chart's line or bar leaves its drawing, the page
// does not scroll sideways, every department is named on it, and every month is written
// "Jul 2024". Each count's page and screenshot are in the test's artifacts
// (go test -artifacts -outputdir DIR).
func TestReportBrowserDepartments(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	browser := browsertest.Chromium(t)
	for _, n := range []int{1, 8, 41, 200} {
		t.Run(fmt.Sprintf("%d departments", n), func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := hrreport.Render(&b, syntheticReport(n), hrreport.Options{Generated: generated, Version: "test"}); err != nil {
				t.Fatal(err)
			}
			dir := t.ArtifactDir()
			c := measurePage(t, browser, dir, fmt.Sprintf("report-%d", n), b.String())
			t.Logf("%d text boxes measured; screenshot %s", c.Texts, filepath.Join(dir, fmt.Sprintf("report-%d.png", n)))
			if c.Texts < 100 {
				t.Errorf("only %d text boxes measured: the probe saw no page", c.Texts)
			}
			for i, o := range c.Overlaps {
				if i == 10 {
					t.Errorf("… and %d more overlaps", len(c.Overlaps)-10)
					break
				}
				t.Errorf("text overlaps text: %q %v and %q %v", o[0], o[1], o[2], o[3])
			}
			for i, o := range c.Outside {
				if i == 10 {
					t.Errorf("… and %d more outside their box", len(c.Outside)-10)
					break
				}
				t.Errorf("%q %v is outside its box %v", o.Text, o.Box, o.Holder)
			}
			if c.Sideways {
				t.Error("the page scrolls sideways")
			}
			for i, name := range departmentNames(n) {
				if name == "" {
					name = fmt.Sprintf("Department %d", 100+i)
				}
				if !strings.Contains(c.Text, name) {
					t.Errorf("the page does not name %q", name)
				}
			}
			if len(c.XLabels) == 0 {
				t.Error("no month axis labels")
			}
			for _, l := range c.XLabels {
				if !monthYear.MatchString(l) {
					t.Errorf("month axis label %q, want a month written like Jul 2024", l)
				}
			}
			if m := shortMonth.FindAllString(c.Text, 5); m != nil {
				t.Errorf("months written short (%q): want Jul 2024", m)
			}
			for _, want := range []string{"Jul 2024 to Jun 2026", "As of 30 Jun 2026", "sickness in the 52 weeks to 30 Jun 2026", "How to read this report"} {
				if !strings.Contains(c.Text, want) {
					t.Errorf("the page does not say %q", want)
				}
			}
		})
	}
}
