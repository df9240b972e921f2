package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/hrsync/hrsync/internal/releasebuild"
)

// bound is how long any one step may take: starting a cluster (initdb, pg_ctl start), its
// stopping, a process's exit.
const bound = 60 * time.Second

// TestStdinClosedStopsCluster runs testpg as scripts/test.sh does: the URL it prints is a
// server the tests can use, and closing its standard input stops the server, removes its files
// and ends testpg with status 0.
func TestStdinClosedStopsCluster(t *testing.T) {
	bin := build(t)
	cmd := exec.Command(bin)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	done := false
	t.Cleanup(func() {
		// After a failure: SIGTERM also stops the cluster.
		if !done {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(bound):
				t.Errorf("testpg (pid %d) still running %v after SIGTERM", cmd.Process.Pid, bound)
			}
		}
	})

	dir, port := useCluster(t, readURL(t, stdout))

	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		done = true
		if err != nil {
			t.Fatalf("testpg after its standard input closed: %v", err)
		}
	case <-time.After(bound):
		t.Fatalf("testpg still running %v after its standard input closed", bound)
	}
	checkGone(t, dir, port)
}

// TestCallerKilledStopsCluster kills the script that started testpg as a coprocess, as
// scripts/test.sh does, with SIGKILL (no trap runs), while a child of the script (go test, in
// scripts/test.sh) still runs: the cluster must go anyway.
func TestCallerKilledStopsCluster(t *testing.T) {
	bin := build(t)
	// cat stands for go test: a child of the script that outlives it (until the test closes
	// its standard input).
	script := `coproc TESTPG { exec "$1"; }
read -r url <&"${TESTPG[0]}" || exit 1
echo "$url"
echo "$TESTPG_PID"
cat >/dev/null`
	cmd := exec.Command("bash", "-c", script, "bash", bin)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() }) // ends cat
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	lines := bufio.NewReader(stdout)
	u := readURL(t, lines)
	pid, err := strconv.Atoi(strings.TrimSpace(readLine(t, lines)))
	if err != nil {
		t.Fatalf("testpg's pid: %v", err)
	}
	// The coprocess's pid is testpg's (the coprocess execs it), which scripts/test.sh
	// signals at its exit, and the cleanup below after a failure.
	if comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm")); err == nil && strings.TrimSpace(string(comm)) != "testpg" {
		t.Fatalf("the coprocess (pid %d) is %q, not testpg", pid, strings.TrimSpace(string(comm)))
	}
	dir := ""
	t.Cleanup(func() {
		// After a failure, do not leave the cluster behind: SIGTERM stops it too. Only while
		// its files are there (or not yet known): once testpg is gone its pid may be another's.
		if t.Failed() && (dir == "" || exists(dir)) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	})

	dir, port := useCluster(t, u)

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(bound):
		t.Fatalf("the script still running %v after SIGKILL", bound)
	}
	// testpg is no child of this test's: wait (bounded) for what it leaves.
	deadline := time.Now().Add(bound)
	for exists(dir) {
		if time.Now().After(deadline) {
			t.Fatalf("%v after the script was killed, the cluster's dir %s is still there", bound, dir)
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkGone(t, dir, port)
}

var binDir string // where build puts testpg, once for all tests

func TestMain(m *testing.M) {
	var err error
	binDir, err = os.MkdirTemp("", "testpg-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
)

// build builds testpg (once), skipping the test when no cluster could be started here.
func build(t *testing.T) string {
	t.Helper()
	if !initdbInstalled() {
		t.Skip("no initdb on PATH or in /usr/lib/postgresql/*/bin: testpg cannot start a cluster here (apt-get install postgresql)")
	}
	bin := filepath.Join(binDir, "testpg")
	buildOnce.Do(func() {
		// As scripts/test.sh builds it, and as a release is: the packages go vet compiled.
		buildErr = releasebuild.Build(context.Background(), "", ".", bin, "")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

func initdbInstalled() bool {
	if _, err := exec.LookPath("initdb"); err == nil {
		return true
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(found) > 0
}

// readURL reads testpg's one line, a postgres:// URL, in a bounded time.
func readURL(t *testing.T, r io.Reader) string {
	t.Helper()
	u := readLine(t, r)
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "postgres" || p.Hostname() != "127.0.0.1" || p.Port() == "" || p.Port() == "5432" {
		t.Fatalf("testpg printed %q, not the URL of a throwaway cluster on 127.0.0.1 (err %v)", u, err)
	}
	return u
}

func readLine(t *testing.T, r io.Reader) string {
	t.Helper()
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	type result struct {
		line string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := br.ReadString('\n')
		got <- result{line, err}
	}()
	select {
	case res := <-got:
		if res.err != nil {
			t.Fatalf("reading testpg's output: %v (got %q)", res.err, res.line)
		}
		return strings.TrimSuffix(res.line, "\n")
	case <-time.After(bound):
		t.Fatalf("no line from testpg within %v", bound)
		return ""
	}
}

// useCluster creates a table on the cluster at u, writes and reads a row, and returns the
// cluster's directory (the data directory's parent, which testpg removes) and its port.
func useCluster(t *testing.T, u string) (dir string, port int) {
	t.Helper()
	db, err := sql.Open("postgres", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE TABLE held (n int)"); err != nil {
		t.Fatalf("creating a table: %v", err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO held VALUES (42)"); err != nil {
		t.Fatalf("inserting: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT n FROM held").Scan(&n); err != nil || n != 42 {
		t.Fatalf("reading back: %d, %v", n, err)
	}
	var data, portText string
	if err := db.QueryRowContext(ctx, "SELECT current_setting('data_directory'), current_setting('port')").Scan(&data, &portText); err != nil {
		t.Fatal(err)
	}
	if port, err = strconv.Atoi(portText); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Dir(data)
	if !strings.HasPrefix(filepath.Base(dir), "hrsync-pgtest-") {
		t.Fatalf("data directory %s is not in a throwaway cluster's dir", data)
	}
	if os.Geteuid() == 0 {
		// As root, initdb and the server run as the postgres OS user.
		checkOwner(t, data, "postgres")
	}
	return dir, port
}

func checkOwner(t *testing.T, path, name string) {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if strconv.FormatUint(uint64(st.Uid), 10) != u.Uid {
		t.Errorf("%s owned by uid %d, not by OS user %s (uid %s)", path, st.Uid, name, u.Uid)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// checkGone checks that the cluster's files are removed and nothing listens on its port.
func checkGone(t *testing.T, dir string, port int) {
	t.Helper()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cluster's dir %s is still there (%v)", dir, err)
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second); err == nil {
		conn.Close()
		t.Errorf("something still listens on the cluster's port %d", port)
	}
}
