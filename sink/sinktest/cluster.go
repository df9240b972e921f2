package sinktest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// pgLibDir is where Debian installs the server binaries, one directory per
// major version.
var pgLibDir = "/usr/lib/postgresql"

// throwaway is a cluster this process started.
type throwaway struct {
	dir     string // temp dir: data/, the socket, postgres.log
	data    string
	pgCtl   string
	port    int
	runAs   *osUser // nil unless running as root
	stopped bool
}

type osUser struct {
	name     string
	uid, gid uint32
}

var (
	clusterMu sync.Mutex
	cluster   *throwaway // the one this process started, if any
	dbClosed  bool
)

// startThrowaway starts a cluster and returns its admin URL.
func startThrowaway() (string, error) {
	if !mainRunning.Load() {
		return "", errors.New("not started: the package's tests do not run through sinktest.Main (add func TestMain(m *testing.M) { sinktest.Main(m) }), so it would never be stopped")
	}
	c, err := startCluster()
	if err != nil {
		return "", err
	}

	clusterMu.Lock()
	cluster = c
	clusterMu.Unlock()
	stopOnSignal()
	return c.url("postgres"), nil
}

// StartCluster starts a throwaway cluster from the installed initdb/pg_ctl (on PATH or under
// /usr/lib/postgresql/*/bin; as the postgres OS user when running as root), configured as the
// tests' own, and returns the libpq URL of its database postgres as user postgres. stop stops
// the server and removes its files; it may be called more than once, and only the first call
// does anything. It is for a program that holds one cluster for several test processes
// (sink/sinktest/cmd/testpg, which scripts/test.sh runs): the caller must call stop, since
// nothing else will.
func StartCluster() (adminURL string, stop func() error, err error) {
	c, err := startCluster()
	if err != nil {
		return "", nil, err
	}
	return c.url("postgres"), sync.OnceValue(c.stop), nil
}

// startCluster makes and starts a cluster with the tests' settings, removing what it made if
// it cannot start it.
func startCluster() (*throwaway, error) {
	initdb, pgCtl, err := findBinaries()
	if err != nil {
		return nil, err
	}
	c, err := newCluster(initdb, pgCtl, nil)
	if err != nil {
		return nil, err
	}
	if err := c.start(); err != nil {
		os.RemoveAll(c.dir)
		return nil, err
	}
	return c, nil
}

// newCluster makes a temp dir (owned by the postgres OS user when we are root) and, unless
// initdb is "", a cluster in its data/ subdirectory, configured for tests with extra appended
// to postgresql.conf. On failure it removes what it made.
func newCluster(initdb, pgCtl string, extra []string) (_ *throwaway, err error) {
	c := &throwaway{pgCtl: pgCtl}
	if os.Geteuid() == 0 {
		// initdb and pg_ctl refuse to run as root.
		u, err := lookupUser("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, so initdb must run as OS user postgres: %v", err)
		}
		c.runAs = u
	}
	parent := os.TempDir()
	if c.runAs != nil && !traversable(parent, c.runAs) {
		// e.g. TMPDIR=/root/tmp: the postgres user could not get in.
		if !traversable("/tmp", c.runAs) {
			return nil, fmt.Errorf("neither %s nor /tmp is accessible to OS user postgres", parent)
		}
		parent = "/tmp"
	}
	c.dir, err = os.MkdirTemp(parent, "hrsync-pgtest-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(c.dir)
		}
	}()
	if c.runAs != nil {
		if err := os.Chown(c.dir, int(c.runAs.uid), int(c.runAs.gid)); err != nil {
			return nil, err
		}
	}
	c.data = filepath.Join(c.dir, "data")
	if initdb == "" {
		return c, nil
	}

	if out, err := c.run(initdb, "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "-N"); err != nil {
		return nil, fmt.Errorf("%s: %v%s", initdb, err, lastLine(out))
	}
	conf := append([]string{
		"",
		"# added by sinktest",
		"listen_addresses = '127.0.0.1'",
		"unix_socket_directories = " + quoteConf(c.dir),
		"fsync = off",
		"synchronous_commit = off",
		"full_page_writes = off",
		"max_connections = 200",
	}, extra...)
	if err := appendFile(filepath.Join(c.data, "postgresql.conf"), strings.Join(conf, "\n")+"\n"); err != nil {
		return nil, err
	}
	return c, nil
}

// start starts the cluster on a free port, waiting (bounded) until it accepts connections.
func (c *throwaway) start() error {
	// The free port may be taken by someone else before the server binds
	// it (test processes start clusters in parallel): retry with another.
	logFile := filepath.Join(c.dir, "postgres.log")
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.port = port
		out, err := c.run(c.pgCtl, "-D", c.data, "-l", logFile, "-w", "-t", "60", "-o", "-p "+strconv.Itoa(c.port), "start")
		if err == nil {
			return nil
		}
		log, _ := os.ReadFile(logFile)
		if attempt < 5 && strings.Contains(string(log), "could not bind") {
			continue
		}
		return fmt.Errorf("%s start: %v%s (log%s)", c.pgCtl, err, lastLine(out), lastLine(log))
	}
}

// url is the libpq URL of database db on the cluster, as user postgres over TCP.
func (c *throwaway) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// shutdown closes the shared pool and stops the throwaway cluster, if any.
// It may be called more than once.
func shutdown() error {
	clusterMu.Lock()
	defer clusterMu.Unlock()
	var errs []error
	if theServer != nil && theServer.db != nil && !dbClosed {
		errs = append(errs, stopDropper(), dropTemplate(theServer))
		theServer.db.Close()
		dbClosed = true
	}
	if cluster == nil || cluster.stopped {
		return errors.Join(errs...)
	}
	return errors.Join(append(errs, cluster.stop())...)
}

func (c *throwaway) stop() error {
	c.stopped = true
	var errs []error
	if out, err := c.run(c.pgCtl, "-D", c.data, "-m", "immediate", "-w", "stop"); err != nil {
		errs = append(errs, fmt.Errorf("stopping throwaway cluster in %s: %v%s", c.dir, err, lastLine(out)))
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// stopOnSignal stops the cluster when the test process is interrupted, so
// that Ctrl-C does not leave a server behind. (A test timeout panics the
// process; that cannot be caught.)
func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		clusterMu.Lock()
		c := cluster
		if c != nil && !c.stopped {
			if err := c.stop(); err != nil {
				fmt.Fprintf(os.Stderr, "sinktest: %v\n", err)
			}
		}
		clusterMu.Unlock()
		fmt.Fprintf(os.Stderr, "sinktest: %v: stopped throwaway Postgres cluster\n", sig)
		os.Exit(1)
	}()
}

// run runs a server binary, as the postgres OS user when we are root, in
// the cluster's directory, and returns its combined output.
func (c *throwaway) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = c.dir
	cmd.Env = cleanEnv()
	// pg_ctl start leaves the server running; it does not hold our pipes
	// (its output goes to the log file), but never wait on them for long.
	cmd.WaitDelay = 5 * time.Second
	if c.runAs != nil {
		setCredential(cmd, c.runAs.uid, c.runAs.gid)
	}
	return cmd.CombinedOutput()
}

// cleanEnv is the environment minus PG* variables, which would point the
// server tools elsewhere, with a predictable locale.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C")
}

// findBinaries returns initdb and pg_ctl of the same installation: from
// PATH, else from the highest version under pgLibDir.
func findBinaries() (initdb, pgCtl string, err error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		candidates := []string{filepath.Dir(p)}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			candidates = append(candidates, filepath.Dir(real))
		}
		for _, dir := range candidates {
			if isExecutable(filepath.Join(dir, "pg_ctl")) {
				return filepath.Join(dir, "initdb"), filepath.Join(dir, "pg_ctl"), nil
			}
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(pgLibDir, "*", "bin"))
	sort.Slice(dirs, func(i, j int) bool {
		return versionLess(filepath.Base(filepath.Dir(dirs[j])), filepath.Base(filepath.Dir(dirs[i])))
	})
	for _, dir := range dirs {
		i, c := filepath.Join(dir, "initdb"), filepath.Join(dir, "pg_ctl")
		if isExecutable(i) && isExecutable(c) {
			return i, c, nil
		}
	}
	return "", "", fmt.Errorf("initdb and pg_ctl not found on PATH or in %s/*/bin (install Debian's postgresql package)", pgLibDir)
}

// versionLess compares dotted version numbers ("9.6" < "15"); parts that
// are not numbers sort first.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		x, y := -1, -1
		if i < len(as) {
			if n, err := strconv.Atoi(as[i]); err == nil {
				x = n
			}
		}
		if i < len(bs) {
			if n, err := strconv.Atoi(bs[i]); err == nil {
				y = n
			}
		}
		if x != y {
			return x < y
		}
	}
	return a < b
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func lookupUser(name string) (*osUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &osUser{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func appendFile(name, text string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// quoteConf quotes a postgresql.conf string value.
func quoteConf(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// lastLine is ": " and the last non-empty line of out, or "" if there is
// none, for one-line messages.
func lastLine(out []byte) string {
	text := strings.TrimSpace(string(out))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	return ": " + strings.TrimSpace(lines[len(lines)-1])
}

// traversable reports whether u can reach into dir (search permission on
// dir and all its parents; close enough for choosing a temp dir).
func traversable(dir string, u *osUser) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil {
			return false
		}
		perm := fi.Mode().Perm()
		uid, gid, ok := fileOwnerGroup(fi)
		switch {
		case !ok:
			return true // cannot tell: let initdb say
		case uid == u.uid:
			if perm&0o100 == 0 {
				return false
			}
		case gid == u.gid:
			if perm&0o010 == 0 {
				return false
			}
		default:
			if perm&0o001 == 0 {
				return false
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}
