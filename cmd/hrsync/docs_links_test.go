package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// mdLink is an inline Markdown link or image: [text](target) or [text](target "title").
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^()\s]+(?:\([^()\s]*\))?[^()\s]*)(?:\s+"[^"]*")?\)`)

// inlineCode is a code span: what it holds is not a link.
var inlineCode = regexp.MustCompile("`+[^`]*`+")

// headingSlug is the anchor GitHub gives a heading's text: lower case, the text of code spans
// and links kept, every character but letters, digits, marks, connector punctuation, spaces and
// hyphens dropped, spaces made hyphens.
func headingSlug(text string) string {
	text = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.Pc):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownLines yields the lines of a Markdown file outside fenced code blocks.
func markdownLines(text string) []string {
	var out []string
	fence := ""
	for line := range strings.Lines(text) {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		out = append(out, strings.TrimRight(line, "\r\n"))
	}
	return out
}

// headingAnchors are the anchors of a Markdown file's headings, numbered as GitHub numbers a
// repeated one (name, name-1, name-2, …).
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range markdownLines(text) {
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level == 0 || level > 6 || !strings.HasPrefix(line[level:], " ") {
			continue
		}
		slug := headingSlug(strings.TrimRight(strings.TrimSpace(line[level:]), "#"))
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// brokenLinks lists the relative links of the Markdown file at root/name that point at no file,
// or at no heading of a Markdown file: each as "name: target (why)".
func brokenLinks(root, name string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		return nil, err
	}
	var broken []string
	anchorsOf := map[string]map[string]bool{}
	for _, line := range markdownLines(string(data)) {
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := name
			if path != "" {
				file = filepath.ToSlash(filepath.Join(filepath.Dir(name), path))
				if strings.HasPrefix(file, "../") {
					broken = append(broken, fmt.Sprintf("%s: %s (outside the repository)", name, target))
					continue
				}
				if _, err := os.Stat(filepath.Join(root, file)); err != nil {
					broken = append(broken, fmt.Sprintf("%s: %s (no file %s)", name, target, file))
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(file, ".md") {
				broken = append(broken, fmt.Sprintf("%s: %s (an anchor in a file that is not Markdown)", name, target))
				continue
			}
			anchors, ok := anchorsOf[file]
			if !ok {
				text, err := os.ReadFile(filepath.Join(root, file))
				if err != nil {
					return nil, err
				}
				anchors = headingAnchors(string(text))
				anchorsOf[file] = anchors
			}
			if !anchors[anchor] {
				broken = append(broken, fmt.Sprintf("%s: %s (no heading #%s in %s)", name, target, anchor, file))
			}
		}
	}
	return broken, nil
}

// TestDocsLinksResolve: every relative link of README.md and docs/*.md points at a file of the
// repository, and every anchor at a heading of the page it names.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, "docs/"+filepath.Base(d))
	}
	for _, f := range files {
		broken, err := brokenLinks(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range broken {
			t.Error(b)
		}
	}
}

// TestBrokenLinksFindsWhatIsBroken: the checker itself, on a small tree with a link of each
// kind, good and bad.
func TestBrokenLinksFindsWhatIsBroken(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeDoc(t, root, "docs/a.md", "# A page\n\n## Serve mode: the cache (2026-11-24)\n\n"+
		"## TLS and HTTP/2\n\n## The worker: `hrsync run`\n\n## Repeated\n\n## Repeated\n\n"+
		"```sh\n# not a heading\n[no](nowhere.md)\n```\n")
	writeDoc(t, root, "config.yaml", "")
	writeDoc(t, root, "README.md", "# Top\n\n"+
		"[ok](docs/a.md) [ok](docs/a.md#serve-mode-the-cache-2026-11-24) [ok](docs/a.md#tls-and-http2)\n"+
		"[ok](docs/a.md#the-worker-hrsync-run) [ok](docs/a.md#repeated-1) [ok](#top) [ok](config.yaml)\n"+
		"[ok](https://example.com/x.md) `[not a link](gone.md)`\n"+
		"[bad](docs/b.md) [bad](docs/a.md#nope) [bad](#not-a-heading) [bad](docs/a.md#repeated-2)\n"+
		"[bad](config.yaml#key) [bad](../outside.md)\n")
	got, err := brokenLinks(root, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, b := range got {
		targets = append(targets, strings.Fields(strings.TrimPrefix(b, "README.md: "))[0])
	}
	want := []string{"docs/b.md", "docs/a.md#nope", "#not-a-heading", "docs/a.md#repeated-2", "config.yaml#key", "../outside.md"}
	if !slices.Equal(targets, want) {
		t.Errorf("broken links found\n %q\nwant\n %q", targets, want)
	}
	if got, err := brokenLinks(root, "docs/a.md"); err != nil || len(got) != 0 {
		t.Errorf("docs/a.md: %v, %v; the link inside the code block is not a link", got, err)
	}
}

func writeDoc(t *testing.T, root, name, text string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConfigurationTableIsOne: the table of keys and their HRSYNC_ variables is
// docs/configuration.md's alone (TestReadmeDocumentsEveryKey holds it to the code); README and
// the other pages link to it rather than keep a copy that could drift.
func TestConfigurationTableIsOne(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		if name := "docs/" + filepath.Base(d); name != "docs/configuration.md" {
			files = append(files, name)
		}
	}
	for _, file := range files {
		rows := 0
		for line := range strings.Lines(readRepoFile(t, file)) {
			cells := strings.Split(line, "|")
			if len(cells) > 3 && strings.HasPrefix(strings.TrimSpace(cells[2]), "`HRSYNC_") {
				rows++
			}
		}
		if rows > 0 {
			t.Errorf("%s has %d rows of the configuration table: docs/configuration.md is the one; link to it", file, rows)
		}
	}
}
