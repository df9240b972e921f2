package hrreport_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/browsertest"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/hrreport"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// bidiControls are the characters that reorder the text after them (embeddings, overrides,
// isolates, marks): a name holding one can make the cells after it read backwards.
const bidiControls = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"

// longName is a name of 300 characters with no space to break at, a right-to-left override
// in it, and a left-to-right isolate that is never closed.
var longName = "Wolfeschlegel\u202esteinhausen\u2066" + strings.Repeat("bergerdorff", 26) + "x"

// bradfordPage renders the people account's report with names, the first of the Bradford list
// renamed name.
func bradfordPage(t *testing.T, name string) string {
	t.Helper()
	s := sinktest.Store(t, "sqlite", sink.Options{})
	sinktest.People(t, s)
	sinktest.AbsenceContract(t, s)
	asOf, _ := time.Parse(time.DateOnly, sinktest.PeopleAsOf)
	r, err := s.PeopleReport(context.Background(), sink.PeopleReportOptions{AsOf: asOf, Months: 24, BradfordTop: 20, Names: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Bradford) == 0 {
		t.Fatal("no Bradford list")
	}
	r.Bradford[0].Name = name
	var b bytes.Buffer
	if err := hrreport.Render(&b, r, hrreport.Options{Generated: generated, Version: "test", Names: true}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReportNamesAreContained: a name in the Bradford list is shown isolated (<bdi>), without
// the characters that reorder text, cut with an ellipsis when very long (the whole of it in
// the cell's title), and the table's text cells wrap anywhere rather than widen the page.
func TestReportNamesAreContained(t *testing.T) {
	page := bradfordPage(t, longName)
	if strings.ContainsAny(page, bidiControls) {
		t.Errorf("the page holds a bidirectional control character")
	}
	cell := regexp.MustCompile(`<td class="text name"><bdi title="([^"]*)">([^<]*)</bdi></td>`).FindStringSubmatch(page)
	if cell == nil {
		t.Fatalf("no name cell with a title and a <bdi> in the Bradford list:\n%s", page)
	}
	title, shown := html.UnescapeString(cell[1]), html.UnescapeString(cell[2])
	if want := strings.Map(func(r rune) rune {
		if strings.ContainsRune(bidiControls, r) {
			return -1
		}
		return r
	}, longName); title != want {
		t.Errorf("title %q, want the whole name without its controls %q", title, want)
	}
	if n := utf8.RuneCountInString(shown); n > 61 || !strings.HasSuffix(shown, "…") || !strings.HasPrefix(title, strings.TrimSuffix(shown, "…")) {
		t.Errorf("shown %q (%d characters), want the name's start cut with an ellipsis", shown, n)
	}
	if !strings.Contains(page, "overflow-wrap: anywhere") {
		t.Errorf("the table's text cells do not wrap anywhere")
	}
	// A short name is shown whole, isolated, with no title.
	if page := bradfordPage(t, "Ada \u202eLovelace"); !strings.Contains(page, `<td class="text name"><bdi>Ada Lovelace</bdi></td>`) {
		t.Errorf("a short name is not shown whole in a <bdi> without its control")
	}
}

// layoutProbe, put at the end of a page, writes where the Bradford table ends and how wide the
// page is (its viewport, and its content) into an attribute of the body, which --dump-dom shows.
const layoutProbe = `<script>
const r = document.getElementById('bradford').getBoundingClientRect();
document.body.setAttribute('data-layout', [Math.ceil(r.right), document.documentElement.clientWidth, document.documentElement.scrollWidth].join(' '));
</script>`

// TestReportLongNameInBrowser: in headless Chromium, at a laptop's width and a phone's, the
// Bradford table with a 300-character name ends within the page, and the page does not scroll
// sideways.
func TestReportLongNameInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	browser := browsertest.Chromium(t)
	page := bradfordPage(t, longName)
	dir := t.ArtifactDir()
	file := filepath.Join(dir, "long-name.html")
	if err := os.WriteFile(file, []byte(strings.Replace(page, "</body>", layoutProbe+"</body>", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 720} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
			"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--proxy-server=http://127.0.0.1:9",
			fmt.Sprintf("--window-size=%d,2400", width), "--dump-dom", "file://"+file)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s", browser, err, browsertest.LastLines([]byte(stderr.String()), 30))
		}
		m := regexp.MustCompile(`data-layout="(\d+) (\d+) (\d+)"`).FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("width %d: the page did not say its layout:\n%s", width, browsertest.LastLines(out, 20))
		}
		right, _ := strconv.Atoi(m[1])
		viewport, _ := strconv.Atoi(m[2])
		content, _ := strconv.Atoi(m[3])
		t.Logf("width %d: the Bradford table ends at %d px of a %d px page, content %d px wide", width, right, viewport, content)
		if right > viewport || content > viewport {
			t.Errorf("width %d: the Bradford table ends at %d px, the content is %d px wide, of a %d px page", width, right, content, viewport)
		}
	}
}
