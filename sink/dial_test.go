package sink_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// within runs f and fails the test when it has not returned within limit (a generous liveness
// bound, not a measurement).
func within(t *testing.T, limit time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("still waiting on the warehouse after %s", limit)
		return nil
	}
}

// proxied opens a migrated Postgres warehouse through a fault-injection proxy.
func proxied(t *testing.T, opts sink.Options) (*sinktest.Proxy, *sink.Store) {
	t.Helper()
	ctx := context.Background()
	url, schemaName := sinktest.Postgres(t)
	opts.Schema = schemaName
	if _, err := sink.Migrate(ctx, url, sink.Options{Schema: schemaName}); err != nil {
		t.Fatal(err)
	}
	proxy, purl := sinktest.ProxyURL(t, url)
	s, err := sink.Open(ctx, purl, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	t.Cleanup(proxy.Close) // first: whatever still waits on it ends
	return proxy, s
}

// Every way a statement can end while its host is silent, each within a bound.
func TestStatementsEndWhileTheHostIsSilent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts sink.Options
		// run issues a statement to the silent host; stop, when set, is what ends it (repeated
		// until it does: on a busy machine the statement may not be in flight yet).
		run  func(ctx context.Context, s *sink.Store) error
		stop func(cancel context.CancelFunc, s *sink.Store)
		want error
	}{
		{"statement timeout", sink.Options{StatementTimeout: time.Second},
			func(ctx context.Context, s *sink.Store) error {
				_, err := sinktest.DB(s).ExecContext(ctx, `SELECT 1`)
				return err
			}, nil, sink.ErrNoAnswer},
		{"context canceled", sink.Options{},
			func(ctx context.Context, s *sink.Store) error {
				_, err := sinktest.DB(s).ExecContext(ctx, `SELECT 1`)
				return err
			}, func(cancel context.CancelFunc, _ *sink.Store) { cancel() }, context.Canceled},
		{"interrupted", sink.Options{},
			func(_ context.Context, s *sink.Store) error {
				_, err := sinktest.DB(s).ExecContext(context.Background(), `SELECT 1`)
				return err
			}, func(_ context.CancelFunc, s *sink.Store) { s.Interrupt() }, sink.ErrInterrupted},
		{"in a transaction", sink.Options{},
			func(ctx context.Context, s *sink.Store) error {
				tx, err := sinktest.DB(s).BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				defer func() { _ = tx.Rollback() }()
				_, err = tx.ExecContext(ctx, `UPDATE meta SET version = version`)
				return err
			}, func(cancel context.CancelFunc, _ *sink.Store) { cancel() }, context.Canceled},
		{"ready", sink.Options{},
			func(ctx context.Context, s *sink.Store) error {
				rctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				return s.Ready(rctx)
			}, nil, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			proxy, s := proxied(t, tt.opts)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			proxy.Silence()
			returned := make(chan struct{})
			if tt.stop != nil {
				go func() {
					tick := time.NewTicker(200 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-returned:
							return
						case <-tick.C:
							tt.stop(cancel, s)
						}
					}
				}()
			}
			err := within(t, 30*time.Second, func() error { return tt.run(ctx, s) })
			close(returned)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			// Once the host is back, the store works: no dead connection is handed out again.
			proxy.Resume()
			if err := within(t, 30*time.Second, func() error { return s.Ready(context.Background()) }); err != nil {
				t.Fatalf("after the host came back: %v", err)
			}
		})
	}
}

// Connecting to a host that accepts the connection but never answers ends at the connect
// timeout.
func TestConnectingToASilentHostEnds(t *testing.T) {
	t.Parallel()
	url, schemaName := sinktest.Postgres(t)
	proxy, purl := sinktest.ProxyURL(t, url)
	proxy.Silence()
	err := within(t, 30*time.Second, func() error {
		_, err := sink.Open(context.Background(), purl, sink.Options{Schema: schemaName, ConnectTimeout: time.Second})
		return err
	})
	if err == nil {
		t.Fatal("opened a warehouse whose host never answered")
	}
}

// The statement timeout is the server's too: a statement that runs longer is stopped there.
func TestStatementTimeoutIsSetOnTheServer(t *testing.T) {
	t.Parallel()
	s := sinktest.Store(t, "postgres", sink.Options{StatementTimeout: 1500 * time.Millisecond})
	var stmt, idle string
	if err := sinktest.DB(s).QueryRowContext(context.Background(),
		`SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')`).Scan(&stmt, &idle); err != nil {
		t.Fatal(err)
	}
	if stmt != "1500ms" || idle != "1500ms" {
		t.Errorf("statement_timeout %s, idle_in_transaction_session_timeout %s; want 1500ms", stmt, idle)
	}
	_, err := sinktest.DB(s).ExecContext(context.Background(), `SELECT pg_sleep(5)`)
	if e := pq.As(err, "57014"); e == nil {
		t.Errorf("a 5 s statement: %v, want the server's statement timeout", err)
	}
}

// SQLite stops a statement whose context ends.
func TestSQLiteStatementEndsWithItsContext(t *testing.T) {
	t.Parallel()
	s, err := sink.Open(context.Background(), filepath.Join(t.TempDir(), "hrsync.db"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = within(t, 30*time.Second, func() error {
		var n int64
		return sinktest.DB(s).QueryRowContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000)
SELECT count(*) FROM c`).Scan(&n)
	})
	if err == nil {
		t.Fatal("a billion-row count finished within its 200 ms context")
	}
}

// The rows of a Postgres statement pass lib/pq's column types through the wrapper that watches
// their context.
func TestRowsPassColumnTypesThrough(t *testing.T) {
	t.Parallel()
	_, s := proxied(t, sink.Options{})
	rows, err := sinktest.DB(s).QueryContext(context.Background(), `SELECT 1::int4 AS n, 'a'::text AS s, 1.5::numeric(4,2) AS d`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ct := range cts {
		got = append(got, ct.DatabaseTypeName()+" "+ct.ScanType().String())
	}
	want := []string{"INT4 int32", "TEXT string", "NUMERIC interface {}"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("column types: %v, want %v", got, want)
	}
	if p, sc, ok := cts[2].DecimalSize(); !ok || p != 4 || sc != 2 {
		t.Errorf("numeric(4,2) size: %d, %d, %v", p, sc, ok)
	}
}
