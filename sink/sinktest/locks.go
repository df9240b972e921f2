package sinktest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/lib/pq"
)

// ExpireLock ends the lease of the named hrsync lock of the Postgres warehouse in schema
// (sink.Store.TryLock's), from an admin connection of its own, as the database finds a lease
// whose holder stalled longer than its TTL (a paused process, a network partition): expired,
// its token unchanged, free for the next taker. Its holder's renewals then find it expired and
// never renew it again. It returns how many live leases it ended (1 if the lock was held).
func ExpireLock(t testing.TB, url, schema, name string) int {
	t.Helper()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := db.ExecContext(ctx, `UPDATE `+pq.QuoteIdentifier(schema)+`.locks SET expires_at = clock_timestamp() - interval '1 second'
WHERE name = $1 AND expires_at > clock_timestamp()`, name)
	if err != nil {
		t.Fatalf("expire the %s lock's lease: %v", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}
