package sinktest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// replicationWait bounds each wait for the standby: to stream after it starts, and to replay
// what the primary wrote.
const replicationWait = 60 * time.Second

// Standby is a throwaway primary cluster and a hot standby streaming from it, made as an
// operator would: pg_basebackup -R of the primary, started on a port of its own. The standby
// takes no writes (every transaction on it is read-only) and shows what the primary committed
// once it has replayed it (WaitReplay).
type Standby struct {
	// PrimaryURL and StandbyURL are libpq URLs of database postgres on each, as user postgres.
	PrimaryURL, StandbyURL string
	primary, standby       *throwaway
}

// NewStandby starts a primary and a hot standby of it, both stopped and removed when the test
// ends (or at once, if making them fails). It skips the test when the Postgres server binaries
// (initdb, pg_ctl, pg_basebackup: on PATH or under /usr/lib/postgresql/*/bin) are not installed;
// scripts/test.sh installs them on a fresh machine. Every wait is bounded.
func NewStandby(t testing.TB) *Standby {
	t.Helper()
	initdb, pgCtl, err := findBinaries()
	if err != nil {
		t.Skipf("sinktest: no hot standby: %v", err)
	}
	basebackup, ok := beside(pgCtl, "pg_basebackup")
	if !ok {
		t.Skipf("sinktest: no hot standby: no pg_basebackup beside %s (install Debian's postgresql package)", pgCtl)
	}
	s := &Standby{}
	t.Cleanup(func() {
		// The standby first: stopped after its primary, it would log reconnection attempts.
		for _, c := range []*throwaway{s.standby, s.primary} {
			switch {
			case c == nil:
			case c.stopped: // never started, or stopped by Stop (which removed its files)
				os.RemoveAll(c.dir)
			default:
				if err := c.stop(); err != nil {
					t.Errorf("sinktest: %v", err)
				}
			}
		}
	})

	// wal_level replica is Postgres's default since 10; said here so that a changed default
	// fails to start a standby loudly rather than mysteriously. A base backup of a primary
	// without full-page writes cannot be trusted: they stay on. initdb's pg_hba.conf trusts
	// local and 127.0.0.1 replication connections (initdb -A trust); the line is added anyway.
	p, err := newCluster(initdb, pgCtl, []string{
		"wal_level = replica",
		"max_wal_senders = 4",
		"full_page_writes = on",
		"",
	})
	if err != nil {
		t.Fatalf("sinktest: primary: %v", err)
	}
	if err := appendFile(filepath.Join(p.data, "pg_hba.conf"), "\n# added by sinktest\nlocal replication all trust\nhost replication all 127.0.0.1/32 trust\n"); err != nil {
		os.RemoveAll(p.dir)
		t.Fatalf("sinktest: primary: %v", err)
	}
	if err := p.start(); err != nil {
		os.RemoveAll(p.dir)
		t.Fatalf("sinktest: primary: %v", err)
	}
	s.primary, s.PrimaryURL = p, p.url("postgres")

	st, err := newCluster("", pgCtl, nil)
	if err != nil {
		t.Fatalf("sinktest: standby: %v", err)
	}
	s.standby = st
	st.stopped = true // nothing to stop until it starts
	// -R writes standby.signal and the primary's conninfo (its socket directory and port);
	// -X stream copies the WAL the backup needs alongside it; -c fast checkpoints at once.
	// pg_basebackup has no timeout of its own: the context bounds it.
	ctx, cancel := context.WithTimeout(context.Background(), replicationWait)
	defer cancel()
	if out, err := st.runContext(ctx, basebackup, "-D", st.data, "-R", "-X", "stream", "-c", "fast",
		"-h", p.dir, "-p", fmt.Sprint(p.port), "-U", "postgres", "--no-sync"); err != nil {
		t.Fatalf("sinktest: pg_basebackup of the primary: %v%s", err, lastLine(out))
	}
	st.stopped = false
	if err := st.start(); err != nil {
		t.Fatalf("sinktest: standby: %v", err)
	}
	s.StandbyURL = st.url("postgres")
	s.waitStreaming(t)
	return s
}

// waitStreaming waits until the primary reports the standby streaming.
func (s *Standby) waitStreaming(t testing.TB) {
	t.Helper()
	db := openDB(t, s.PrimaryURL)
	defer db.Close()
	poll(t, "the standby to stream from the primary", func(ctx context.Context) (bool, error) {
		var n int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'`).Scan(&n)
		return n > 0, err
	})
}

// WaitReplay waits until the standby has replayed everything the primary had written when it
// was called: a commit made on the primary before WaitReplay is visible on the standby after.
func (s *Standby) WaitReplay(t testing.TB) {
	t.Helper()
	p, st := openDB(t, s.PrimaryURL), openDB(t, s.StandbyURL)
	defer p.Close()
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The insert position, not pg_current_wal_lsn (the write position): a commit made with
	// synchronous_commit off may be inserted and not yet written, and must be waited for too.
	var lsn string
	if err := p.QueryRowContext(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn); err != nil {
		t.Fatalf("sinktest: primary's WAL position: %v", err)
	}
	poll(t, "the standby to replay the primary's WAL up to "+lsn, func(ctx context.Context) (bool, error) {
		var done bool
		err := st.QueryRowContext(ctx, `SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`, lsn).Scan(&done)
		return done, err
	})
}

// Stop stops the standby now (for a test of what its readers see when it is gone); the
// primary stays up until the test ends.
func (s *Standby) Stop(t testing.TB) {
	t.Helper()
	if err := s.standby.stop(); err != nil {
		t.Fatalf("sinktest: %v", err)
	}
}

func openDB(t testing.TB, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", withParam(url, "connect_timeout", connectTimeout))
	if err != nil {
		t.Fatalf("sinktest: %v", err)
	}
	return db
}

// poll calls check every 50 ms until it reports done, failing the test after replicationWait
// with the last error, if any.
func poll(t testing.TB, what string, check func(context.Context) (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(replicationWait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		done, err := check(ctx)
		cancel()
		if done && err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sinktest: waited %s for %s (last error: %v)", replicationWait, what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// beside finds the server tool name in the directory of pgCtl, or of the file pgCtl links to
// (/usr/local/bin/pg_ctl -> /usr/lib/postgresql/15/bin/pg_ctl).
func beside(pgCtl, name string) (string, bool) {
	dirs := []string{filepath.Dir(pgCtl)}
	if real, err := filepath.EvalSymlinks(pgCtl); err == nil {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, dir := range dirs {
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p, true
		}
	}
	return "", false
}

// runContext is run, ended (killed) when ctx ends.
func (c *throwaway) runContext(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.dir
	cmd.Env = cleanEnv()
	cmd.WaitDelay = 5 * time.Second
	if c.runAs != nil {
		setCredential(cmd, c.runAs.uid, c.runAs.gid)
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return out, err
}
