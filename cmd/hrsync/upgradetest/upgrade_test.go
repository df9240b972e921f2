package upgradetest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hrsync/hrsync/internal/releasebuild"
	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

func TestMain(m *testing.M) { sinktest.Main(m) }

const apiKey = "k1-4f9a0c7e2b1d8e6f3a5c9b0d"

// TestOlderBinaryAgainstNewerSchema is the rolling upgrade of docs/operations.md#upgrading, with
// the hrsync of the commit before the newest migration was added as the older release: it
// migrates a warehouse, then serves it; this build's code migrates it further while that serve
// runs; and the older binary then does what the docs say. Its running serve stops being ready
// (/readyz 503) and keeps answering /v1 for the warehouse it has open; a new serve, a sync, the
// worker and migrate each refuse with one line naming both versions, before reading the source
// or writing anything.
func TestOlderBinaryAgainstNewerSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an older commit's hrsync (a minute or more): skipped with -short")
	}
	docsSay(t)
	old, oldLatest := buildOlder(t)

	for _, d := range []schema.Dialect{schema.SQLite, schema.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			latest := schema.Latest(d)
			if oldLatest >= latest {
				t.Fatalf("the older commit knows %d migrations, this build %d: want fewer", oldLatest, latest)
			}
			var target string
			var opts sink.Options
			env := []string{"HRSYNC_SERVE_API_KEYS=" + apiKey}
			if d == schema.Postgres {
				target, opts.Schema = sinktest.Postgres(t)
				env = append(env, "HRSYNC_WAREHOUSE_SCHEMA="+opts.Schema)
			} else {
				target = filepath.Join(t.TempDir(), "w.db")
			}
			env = append(env, "HRSYNC_WAREHOUSE_URL="+target)

			// The older release set the warehouse up and serves it.
			if out, err := old.run(t, env, "migrate"); err != nil {
				t.Fatalf("older migrate: %v\n%s", err, out)
			}
			st, err := sink.MigrationStatus(ctx, target, opts)
			if err != nil || st.Applied != oldLatest || len(st.Pending) != latest-oldLatest || st.Pending[0].Version != oldLatest+1 {
				t.Fatalf("this build's status of the older release's warehouse: %+v (%v), want version %d with %d pending", st, err, oldLatest, latest-oldLatest)
			}
			metrics := freeAddr(t)
			base, _ := old.serve(t, append(slices.Clone(env), "HRSYNC_SERVE_ADDR="+freeAddr(t), "HRSYNC_METRICS_ADDR="+metrics))
			if code, body := get(t, base+"/v1/employees"); code != http.StatusOK {
				t.Fatalf("older serve before the migration: %d %s", code, body)
			}
			// A second one, asked nothing before the migration: its warehouse is not open.
			unopened, unopenedLog := old.serve(t, append(slices.Clone(env), "HRSYNC_SERVE_ADDR="+freeAddr(t)))

			// This build migrates it (hrsync migrate, the upgrade's first step).
			applied, err := sink.Migrate(ctx, target, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(applied, pendingVersions(st.Pending)) {
				t.Fatalf("migrate applied %v, the status said %v", applied, pendingVersions(st.Pending))
			}
			said := fmt.Sprintf("(version %d, this build knows %d)", latest, oldLatest)

			// The older serve still running: not ready (its metrics port's /readyz saying why);
			// the warehouse it has open still answers.
			if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable {
				t.Errorf("older serve's /readyz after the migration: %d %s; want 503", code, body)
			}
			if code, body := get(t, "http://"+metrics+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "newer than this build") {
				t.Errorf("older serve's /readyz on the metrics port after the migration: %d %s; want 503, newer than this build", code, body)
			}
			if code, body := get(t, base+"/v1/employees"); code != http.StatusOK {
				t.Errorf("older serve's /v1/employees after the migration: %d %s; want 200 (its warehouse is open)", code, body)
			}
			// The one whose warehouse was not open opens it at the request, and is refused: 503
			// from the release that added it on, 500 before.
			want := http.StatusInternalServerError
			if old.unreachable503 {
				want = http.StatusServiceUnavailable
			}
			if code, body := get(t, unopened+"/v1/employees"); code != want {
				t.Errorf("older serve's first /v1/employees after the migration: %d %s; want %d", code, body, want)
			}
			// Its log line may follow the answer: it is waited for, a bounded while.
			logs := unopenedLog.String()
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs, said) && time.Now().Before(deadline); logs = unopenedLog.String() {
				time.Sleep(20 * time.Millisecond)
			}
			if !strings.Contains(logs, said) {
				t.Errorf("older serve's log after a refused request does not say %q:\n%s", said, logs)
			}

			// A source that counts what is asked of it: the older sync and worker must ask nothing.
			var asked atomic.Int64
			src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked.Add(1)
				http.Error(w, "not here", http.StatusInternalServerError)
			}))
			defer src.Close()
			withSource := append(slices.Clone(env), "HRSYNC_SOURCE_URL="+src.URL, "HRSYNC_SOURCE_API_KEY=test", "HRSYNC_SCHEDULE=0 2 * * *",
				"HRSYNC_METRICS_ADDR="+freeAddr(t))
			before := state(t, ctx, target, opts)
			for _, args := range [][]string{{"serve"}, {"sync"}, {"run"}, {"migrate"}} {
				e := env
				if args[0] == "sync" || args[0] == "run" {
					e = withSource
				}
				if args[0] == "serve" {
					e = append(slices.Clone(env), "HRSYNC_SERVE_ADDR="+freeAddr(t))
				}
				out, err := old.run(t, e, args...)
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 1 {
					t.Errorf("older %s: %v, want exit status 1\n%s", args[0], err, out)
					continue
				}
				lines := strings.Split(strings.TrimSpace(lastLines(out)), "\n")
				if last := lines[len(lines)-1]; !strings.Contains(last, "newer than this build") || !strings.Contains(last, said) {
					t.Errorf("older %s said %q; want one line with \"newer than this build\" and %q", args[0], last, said)
				}
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("the older sync and worker asked the source %d times, want none", n)
			}
			if after := state(t, ctx, target, opts); after != before {
				t.Errorf("the older binary changed the warehouse: %s, then %s", before, after)
			}

			// This build opens it.
			s, err := sink.Open(ctx, target, opts)
			if err != nil {
				t.Fatalf("this build after the older binary: %v", err)
			}
			_ = s.Close()
		})
	}
}

// state is what the older binary must not change: the ledger and the runs.
func state(t *testing.T, ctx context.Context, target string, opts sink.Options) string {
	t.Helper()
	st, err := sink.MigrationStatus(ctx, target, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sink.Open(ctx, target, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var runs, maxID int64
	rows, err := s.Query(ctx, `SELECT count(*), coalesce(max(id), 0) FROM sync_runs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal("no row")
	}
	if err := rows.Scan(&runs, &maxID); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("version %d, %d runs up to id %d", st.Applied, runs, maxID)
}

func pendingVersions(ps []sink.Pending) []int {
	var v []int
	for _, p := range ps {
		v = append(v, p.Version)
	}
	return v
}

// olderBinary is an older commit's hrsync, run with no configuration but the environment given.
type olderBinary struct {
	path string
	dir  string // its working directory: empty, so that no config.yaml is found
	// unreachable503 says the older release answers a warehouse it cannot open (a newer
	// schema among the causes) 503 with Retry-After, as releases from the one that added
	// sink/unreachable.go do; those before answered 500 (docs/operations.md#upgrading).
	unreachable503 bool
}

// buildOlder builds the hrsync of the commit before the newest migration was added, from this
// repository's history (git archive into a temporary directory, go build from the module
// cache), and returns it with the number of migrations it knows. Without git or the history (a
// shallow clone), the test is skipped, saying so.
func buildOlder(t *testing.T) (*olderBinary, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	git := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
		}
		return strings.TrimSpace(out.String()), nil
	}
	root, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		t.Skipf("no git repository to build an older release from: %v", err)
	}
	added, err := git("-C", root, "log", "-1", "--diff-filter=A", "--format=%H", "--", "schema/postgres", "schema/sqlite")
	if err != nil || added == "" {
		t.Skipf("no commit adding a migration in the history (a shallow clone?): %v", err)
	}
	older := added + "^"
	if _, err := git("-C", root, "cat-file", "-e", older+"^{commit}"); err != nil {
		t.Skipf("the commit before %s is not in the history (a shallow clone?): %v", added[:12], err)
	}
	src := t.TempDir()
	var archive, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", older)
	cmd.Stdout, cmd.Stderr = &archive, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git archive %s: %v: %s", older, err, errb.String())
	}
	if err := untar(&archive, src); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(src, "schema", "sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	known := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			known++
		}
	}
	bin := filepath.Join(t.TempDir(), "hrsync-older")
	start := time.Now()
	// As its release was built (package releasebuild), which also reuses what this build's
	// tests compiled of the modules both use. The module cache serves the older go.mod's modules
	// (-mod=mod: no vendor directory, and a go.sum the build may complete); no other toolchain
	// is fetched.
	if err := releasebuild.Build(ctx, src, "./cmd/hrsync", bin, "", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off"); err != nil {
		t.Fatalf("build the older hrsync (%s): %v", older, err)
	}
	t.Logf("built the hrsync of %s (%d migrations) in %s", older, known, time.Since(start).Round(time.Second))
	_, err = os.Stat(filepath.Join(src, "sink", "unreachable.go"))
	return &olderBinary{path: bin, dir: t.TempDir(), unreachable503: err == nil}, known
}

// untar writes the tar stream's regular files and directories under dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, dir+string(filepath.Separator)) {
			return fmt.Errorf("untar: %s is outside the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}

// environ is env with only what the binary needs of this process's environment: none of its
// HRSYNC_ settings.
func (b *olderBinary) environ(env []string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "TZ=UTC"}, env...)
}

// run runs the older binary to its end (at most a minute) and returns its stdout and stderr.
func (b *olderBinary) run(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.path, args...)
	cmd.Dir, cmd.Env = b.dir, b.environ(env)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("older %s did not end within a minute:\n%s", strings.Join(args, " "), out)
	}
	return string(out), err
}

// serve starts the older binary's serve (env names its address) and returns its base URL once
// /healthz answers, and its log; it is stopped when the test ends.
func (b *olderBinary) serve(t *testing.T, env []string) (string, *lockedBuffer) {
	t.Helper()
	var addr string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HRSYNC_SERVE_ADDR="); ok {
			addr = v
		}
	}
	logs := &lockedBuffer{}
	cmd := exec.Command(b.path, "serve")
	cmd.Dir, cmd.Env = b.dir, b.environ(env)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("older serve ended at start: %v\n%s", err, logs.String())
		default:
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			_ = resp.Body.Close()
			return base, logs
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("older serve did not answer within a minute:\n%s", logs.String())
	return "", nil
}

// lockedBuffer is a process's output, read while it writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// lastLines is the output without the log lines (JSON or key=value) before the error's.
func lastLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "hrsync: ") {
			keep = append(keep, l)
		}
	}
	if keep == nil {
		return out
	}
	return strings.Join(keep, "\n")
}

// docsSay fails unless docs/operations.md's Upgrading section says what the test checks.
func docsSay(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Upgrading\n")
	section, _, _ = strings.Cut(section, "\n## ")
	section = strings.Join(strings.Fields(section), " ")
	for _, said := range []string{
		"| `serve`, started after the migration | exits `1` with the line above |",
		"| `serve`, running across the migration | `/readyz` answers `503` (on the metrics port, with the reason `the warehouse schema is newer than this build: upgrade hrsync`)",
		"requests that still reach it are answered from a warehouse it has open, and for one it opens afresh",
		"with `503` and `Retry-After` from this release on (`500` before; its log says why either way)",
		"| `sync` | exits `1` with the line above, before asking the source anything; writes nothing |",
		"| `run` | at start, exits `1` with the line above when no account's warehouse opens",
		"| `migrate` | exits `1` with the line above; changes nothing |",
		"(version 31, this build knows 30)",
	} {
		if !ok || !strings.Contains(section, said) {
			t.Errorf("docs/operations.md#upgrading no longer says %q", said)
		}
	}
}
