package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/account"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/prom"
	"github.com/hrsync/hrsync/cmd/hrsync/internal/tlstest"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/sync/retention"
	"github.com/hrsync/hrsync/sync/walk"
)

// The docs and the deployment kit say which metrics hrsync exports and with which labels; these
// tests hold them to what the code registers.

// descRecorder is a prometheus.Registerer that keeps the descriptions of what is registered.
type descRecorder struct{ descs []*prometheus.Desc }

func (r *descRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		r.descs = append(r.descs, d)
	}
	return nil
}

func (r *descRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *descRecorder) Unregister(prometheus.Collector) bool { return false }

// descPattern reads a Desc's String: the name, the constant labels and the variable ones.
var descPattern = regexp.MustCompile(`^Desc\{fqName: "([^"]+)", .*, constLabels: \{([^}]*)\}, variableLabels: \{([^}]*)\}\}$`)

// registeredMetrics are the hrsync_* metrics a process of hrsync registers, each with its label
// names, sorted: `run --serve` with every option that adds one (a schedule, a drop folder, a
// retention rule, the
// shared request budget, the answer cache, a TLS certificate), as the commands build them.
func registeredMetrics(t *testing.T) map[string][]string {
	t.Helper()
	rec := &descRecorder{}
	a := &config.Account{Name: "default"}
	a.Schedule, a.Onboarding.Dir = "@daily", t.TempDir()
	a.Retention = retention.Rules{SicknessDetails: retention.Period{Years: 1}}
	// The sync's, the job runner's, onboarding's and retention's, and the shared budget's.
	account.NewSetup(a, account.NewMetricSets(rec))
	sm := prom.NewServe(rec)
	_ = sm.RegisterCache(nil)
	dir := t.TempDir()
	cfg := config.Defaults()
	cfg.Serve.TLSCert, cfg.Serve.TLSKey = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	tlstest.NewCA(t).Issue(t, 2, cfg.Serve.TLSCert, cfg.Serve.TLSKey)
	if _, err := account.APIServer(parsed(t, cfg), rec, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range rec.descs {
		m := descPattern.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the description %s", d)
		}
		var labels []string
		for _, cl := range strings.Split(m[2], ",") {
			if name, _, ok := strings.Cut(cl, "="); ok {
				labels = append(labels, name)
			}
		}
		for _, vl := range strings.Split(m[3], ",") {
			if vl != "" {
				labels = append(labels, strings.TrimSuffix(strings.TrimPrefix(vl, "c("), ")"))
			}
		}
		sort.Strings(labels)
		out[m[1]] = labels
	}
	families, err := newRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "hrsync_") {
			var labels []string
			for _, l := range f.GetMetric()[0].GetLabel() {
				labels = append(labels, l.GetName())
			}
			out[f.GetName()] = labels
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d metrics registered: %v", len(out), out)
	}
	return out
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	parenthesized = regexp.MustCompile(`\([^()]*\)`)
	backticked    = regexp.MustCompile("`([^`]+)`")
)

// tableLabels reads the label names of a docs table's labels cell: the first backticked word
// of each part separated by ; or , once the parenthesized remarks are gone ("`resource` (…);
// `status` = `ok` \| …" names resource and status).
func tableLabels(cell string) []string {
	for prev := ""; prev != cell; {
		prev, cell = cell, parenthesized.ReplaceAllString(cell, "")
	}
	var out []string
	for _, part := range regexp.MustCompile(`[;,]`).Split(cell, -1) {
		if m := backticked.FindStringSubmatch(part); m != nil {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// documentedMetrics reads a Markdown table of metrics: name → its labels cell.
func documentedMetrics(t *testing.T, file string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for line := range strings.Lines(readRepoFile(t, file)) {
		if !strings.HasPrefix(line, "| `hrsync_") {
			continue
		}
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "¦"), "|")
		if len(cells) < 4 {
			t.Fatalf("%s: a metric's row with fewer than three cells: %s", file, line)
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		out[name] = strings.ReplaceAll(cells[3], "¦", `\|`)
	}
	return out
}

// perProcess are the metrics without an account label, one a process, as the docs say.
var perProcess = []string{"hrsync_build_info", "hrsync_serve_tls_cert_expiry_timestamp_seconds"}

// TestMetricTablesMatchTheCode: docs/operations.md's Metrics table lists every metric hrsync
// registers and no other, each with its labels (the table may leave out account, which it says
// every metric but the perProcess ones carries), and is the only such table: README and the
// other docs pages link to it; deploy/check.sh's contract is the same list.
func TestMetricTablesMatchTheCode(t *testing.T) {
	t.Parallel()
	registered := registeredMetrics(t)
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	for _, file := range append([]string{"README.md"}, docs...) {
		file = strings.TrimPrefix(filepath.ToSlash(file), "../../")
		if file == "docs/operations.md" {
			continue
		}
		if rows := documentedMetrics(t, file); len(rows) > 0 {
			t.Errorf("%s has a table of metrics (%d rows): docs/operations.md is the one; link to it", file, len(rows))
		}
	}
	for _, file := range []string{"docs/operations.md"} {
		documented := documentedMetrics(t, file)
		for name, labels := range registered {
			cell, ok := documented[name]
			if !ok {
				t.Errorf("%s does not document %s", file, name)
				continue
			}
			got := tableLabels(cell)
			if !slices.Contains(perProcess, name) && !slices.Contains(got, "account") {
				got = append(got, "account")
				sort.Strings(got)
			}
			if !slices.Equal(got, labels) {
				t.Errorf("%s: %s has the labels %v, the code's are %v", file, name, got, labels)
			}
		}
		for name := range documented {
			if _, ok := registered[name]; !ok {
				t.Errorf("%s documents %s, which hrsync does not export", file, name)
			}
		}
	}
	check := readRepoFile(t, "deploy/check.sh")
	start := strings.Index(check, "CONTRACT=(")
	end := strings.Index(check[start:], ")")
	contract := strings.Fields(check[start+len("CONTRACT=(") : start+end])
	var names []string
	for name := range registered {
		names = append(names, name)
	}
	sort.Strings(names)
	sort.Strings(contract)
	if !slices.Equal(contract, names) {
		t.Errorf("deploy/check.sh's CONTRACT is %v, the code registers %v", contract, names)
	}
}

// kitFiles are the files of the kit and the docs that name metrics in PromQL or in prose.
var kitFiles = []string{
	"deploy/prometheus/prometheus.yml", "deploy/prometheus/prometheus-kubernetes.yml",
	"deploy/prometheus/alerts.yml", "deploy/prometheus/alerts_test.yml",
	"deploy/grafana/hrsync-dashboard.json", "docs/operations.md",
}

var (
	// selector is a metric with label matchers: hrsync_x{a="b", c=~"d"}.
	selector = regexp.MustCompile(`\b(hrsync_[a-z_]*[a-z])\{([^}]*)\}`)
	matcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	// labelNamed is prose saying a metric has a label: "hrsync_x has a label named `y`".
	labelNamed   = regexp.MustCompile("\\b(hrsync_[a-z_]*[a-z])`? has (?:a )?label named `([^`]+)`")
	metricLike   = regexp.MustCompile(`\bhrsync_[a-z_]*[a-z]\b`)
	seriesSuffix = regexp.MustCompile(`_(bucket|sum|count)$`)
)

// TestKitNamesOnlyExportedMetricsAndLabels: every hrsync_* name in the Prometheus configs (their
// comments included), the rules and their tests, the dashboard and docs/operations.md is a
// metric hrsync exports (or a histogram's series); in those, README and docs/*.md, every label
// a selector matches on is one the metric has (or Prometheus's job and instance), and prose
// that says a metric has a label names one it has.
func TestKitNamesOnlyExportedMetricsAndLabels(t *testing.T) {
	t.Parallel()
	registered := registeredMetrics(t)
	labelsOf := func(name string) ([]string, bool) {
		if l, ok := registered[name]; ok {
			return l, true
		}
		if base := seriesSuffix.ReplaceAllString(name, ""); base != name {
			if l, ok := registered[base]; ok {
				return append(slices.Clone(l), "le"), true
			}
		}
		return nil, false
	}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, "docs/"+filepath.Base(d))
	}
	files = append(files, kitFiles...)
	for _, file := range files {
		text := strings.ReplaceAll(readRepoFile(t, file), `\"`, `"`)
		if slices.Contains(kitFiles, file) { // elsewhere hrsync_ also starts schemas and roles
			for _, name := range metricLike.FindAllString(text, -1) {
				if _, ok := labelsOf(name); !ok {
					t.Errorf("%s names %s, which hrsync does not export", file, name)
				}
			}
		}
		for _, m := range selector.FindAllStringSubmatch(text, -1) {
			labels, ok := labelsOf(m[1])
			if !ok {
				t.Errorf("%s: %s{%s}: hrsync exports no %s", file, m[1], m[2], m[1])
				continue
			}
			for _, lm := range matcher.FindAllStringSubmatch(m[2], -1) {
				if l := lm[1]; l != "job" && l != "instance" && !slices.Contains(labels, l) {
					t.Errorf("%s: %s{%s}: %s has no label %s (its labels: %v)", file, m[1], m[2], m[1], l, labels)
				}
			}
		}
		for _, m := range labelNamed.FindAllStringSubmatch(text, -1) {
			if labels, _ := labelsOf(m[1]); !slices.Contains(labels, m[2]) {
				t.Errorf("%s says %s has a label named %s; its labels: %v", file, m[1], m[2], labels)
			}
		}
	}
}

// labelValuesListed reads the item of docs/operations.md's Label values that begins with prefix
// (up to its colon): the backticked values of its first sentence, its parenthesized remarks
// left out.
func labelValuesListed(t *testing.T, ops, prefix string) []string {
	t.Helper()
	i := strings.Index(ops, "\n"+prefix)
	if i < 0 {
		t.Fatalf("docs/operations.md has no list beginning %q", prefix)
	}
	item := ops[i+1+len(prefix):]
	if end := strings.Index(item, "\n- "); end >= 0 {
		item = item[:end]
	}
	if end := strings.Index(item, "\n\n"); end >= 0 {
		item = item[:end]
	}
	for prev := ""; prev != item; {
		prev, item = item, parenthesized.ReplaceAllString(item, "")
	}
	if end := regexp.MustCompile(`\.\s`).FindStringIndex(item); end != nil {
		item = item[:end[0]] // the list ends with its sentence
	}
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(item, -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}

// TestLabelValuesDocumented: docs/operations.md lists every value of resource and of each route
// label, as the code declares them: the collections a sync knows, the paths the client asks
// for, and the replica's routes (serve.RouteLabels).
func TestLabelValuesDocumented(t *testing.T) {
	t.Parallel()
	ops := readRepoFile(t, "docs/operations.md")
	var resources, sourceRoutes []string
	for _, r := range walk.Known {
		resources = append(resources, string(r))
		sourceRoutes = append(sourceRoutes, "/v1/"+string(r)) // client.Client: "/v1/" + the collection
	}
	serveRoutes := server.RouteLabels()
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"- `resource`:", resources},
		{"- `route` of `hrsync_source_requests_total`:", sourceRoutes},
		{"- `route` of `hrsync_serve_requests_total` and `hrsync_serve_request_duration_seconds`:", serveRoutes},
	} {
		want := slices.Sorted(slices.Values(tc.want))
		if got := labelValuesListed(t, ops, tc.prefix); !slices.Equal(got, want) {
			t.Errorf("docs/operations.md %s\n lists %q\n the code: %q", tc.prefix, got, want)
		}
	}
}

// TestHealthAndMetricsNotCountedAsRoutes: the replica counts each request under its route, the
// OpenAPI document under its own; /healthz and /readyz, on the API port and the metrics port,
// and /metrics are not counted, as docs/operations.md says.
func TestHealthAndMetricsNotCountedAsRoutes(t *testing.T) {
	t.Parallel()
	cfg := config.Defaults()
	cfg.Serve.APIKeys = []string{"docs-test-key-9f2c4e7a1b3d5f60a8e2"}
	cfg.Metrics.Addr = "127.0.0.1:0"
	st := parsed(t, cfg)
	store, err := sink.Open(context.Background(), filepath.Join(t.TempDir(), "wh.db"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	reg := newRegistry()
	log := slog.New(slog.DiscardHandler)
	mux, err := account.APIMux(st, []account.Served{account.NewServed(st.Accounts[0], store)}, prom.NewServe(reg), log)
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(mux)
	defer api.Close()
	metrics := httptest.NewServer(prom.Mux(reg, account.ReadyAll{account.NewServed(st.Accounts[0], store)}, log))
	defer metrics.Close()
	get := func(base, path string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", path, resp.Status)
		}
	}
	get(api.URL, "/v1/openapi.json")
	for _, p := range []string{"/healthz", "/readyz"} {
		get(api.URL, p)
		get(metrics.URL, p)
	}
	get(metrics.URL, "/metrics")
	exposition := func() string {
		resp, err := http.Get(metrics.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// Observe runs once the answer is written: wait for the document's request to be counted.
	var text string
	for range 200 {
		if text = exposition(); strings.Contains(text, `hrsync_serve_requests_total{`) {
			break
		}
		time.Sleep(10 * time.Millisecond) // a bounded wait for an event, not a measure of time
	}
	var routes []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "hrsync_serve_requests_total{") {
			routes = append(routes, regexp.MustCompile(`route="([^"]*)"`).FindStringSubmatch(line)[1])
		}
	}
	if !slices.Equal(routes, []string{"/v1/openapi.json"}) {
		t.Errorf("requests counted under the routes %q, want only /v1/openapi.json:\n%s", routes, text)
	}
}
