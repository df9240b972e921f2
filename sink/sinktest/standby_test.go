package sinktest

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStandby: NewStandby makes a real hot standby: it refuses writes, shows a commit on the
// primary once WaitReplay returns, and is gone, files and port, when the test ends.
func TestStandby(t *testing.T) {
	var s *Standby
	t.Run("standby", func(t *testing.T) {
		s = NewStandby(t)
		p, st := open(t, s.PrimaryURL), open(t, s.StandbyURL)
		var inRecovery bool
		if err := st.QueryRow(`SELECT pg_is_in_recovery()`).Scan(&inRecovery); err != nil || !inRecovery {
			t.Fatalf("the standby is not in recovery: %v, %v", inRecovery, err)
		}
		if _, err := st.Exec(`CREATE TABLE nope (id int)`); err == nil || !strings.Contains(err.Error(), "read-only transaction") {
			t.Fatalf("a write on the standby: %v", err)
		}
		if _, err := p.Exec(`CREATE TABLE t (id int); INSERT INTO t VALUES (1), (2)`); err != nil {
			t.Fatal(err)
		}
		s.WaitReplay(t)
		var n int
		if err := st.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
			t.Fatalf("the standby holds %d rows of the primary's 2 (%v)", n, err)
		}
	})
	if s == nil {
		return // skipped
	}
	for _, c := range []*throwaway{s.primary, s.standby} {
		if !c.stopped {
			t.Errorf("cluster in %s not stopped", c.dir)
		}
		if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
			t.Errorf("cluster dir %s still there (%v)", c.dir, err)
		}
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)), time.Second); err == nil {
			conn.Close()
			t.Errorf("something still listens on port %d", c.port)
		}
	}
}
