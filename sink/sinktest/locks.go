package sinktest

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// TerminateLockHolder ends the Postgres session that holds the named hrsync lock of the
// warehouse in schema (sink.Store.TryLock's advisory lock), from an admin connection of its own,
// as an operator's `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'`
// would; then it waits (up to 30 s) until the session is gone and the lock free. It returns how
// many sessions it ended.
func TerminateLockHolder(t testing.TB, url, schema, name string) int {
	t.Helper()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The lock's 64-bit key is split into classid (high half) and objid (low half).
	const holders = `FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted
    AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('hrsync:' || $1 || ':' || $2, 0)`
	var ended int
	if err := db.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) `+holders, schema, name).Scan(&ended); err != nil {
		t.Fatalf("terminate the %s lock's session: %v", name, err)
	}
	for {
		var left int
		if err := db.QueryRowContext(ctx, `SELECT count(*) `+holders, schema, name).Scan(&left); err != nil {
			t.Fatalf("wait for the %s lock's session to end: %v", name, err)
		}
		if left == 0 {
			return ended
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the %s lock's session did not end within 30 s", name)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
