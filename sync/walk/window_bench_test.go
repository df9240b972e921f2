package walk_test

import (
	"context"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/walk"
)

// BenchmarkNightly is what a nightly sync of every collection (walk.Resources) costs on a
// realistic account, 2,000 employees and ten years of events (fakeupstream.GenerateAccount),
// walking everything whole (mode=full: what every night cost before windows, and what the
// weekly full walk costs) against the default window, 90 days back and 365 ahead
// (mode=windowed), in the same run, from an unpaced loopback source into a Postgres warehouse
// that holds the previous night's load. requests/op is exact, the requests the client sent;
// minutes-at-60/op is what they cost against the real service's 60 requests a minute; time/op
// is this machine's unpaced cost. docs/benchmarks.md ("Windowed walks") has the figures.
func BenchmarkNightly(b *testing.B) {
	ctx := context.Background()
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 2000, Seed: 42, AbsenceYears: 10})
	up := newUpstream(b, 0, acct.Options())
	c := fastClient(b, up, client.Options{})
	store := sinktest.Store(b, "postgres", sink.Options{})
	policy := &walk.WindowPolicy{DaysBack: 90, DaysAhead: 365, FullEvery: 7 * 24 * time.Hour}
	today := fakeupstream.Today().Add(2 * time.Hour) // the data's today, at 02:00
	opts := func(full bool, now time.Time) walk.Options {
		return walk.Options{Concurrency: 4, Window: policy, Full: full, Now: func() time.Time { return now }}
	}
	// Last night's full walk: the warehouse holds the account, and the next full walk is days
	// away.
	if _, err := walk.New(c, store, opts(true, today.Add(-24*time.Hour))).Run(ctx, walk.Resources); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		full bool
	}{{"full", true}, {"windowed", false}} {
		b.Run("mode="+mode.name, func(b *testing.B) {
			var requests, pages int64
			for b.Loop() {
				rs, err := walk.New(c, store, opts(mode.full, today)).Run(ctx, walk.Resources)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range rs {
					if r.Inserted+r.Updated+r.Deleted != 0 || (r.Window == nil) != (mode.full || !isWindowed(r.Resource)) {
						b.Fatalf("%s: walked %v, wrote %d new, %d changed, %d deleted", r.Resource, r.Window, r.Inserted, r.Updated, r.Deleted)
					}
					requests += r.Requests
					pages += r.Pages
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(requests)/n, "requests/op")
			b.ReportMetric(float64(pages)/n, "pages/op")
			b.ReportMetric(float64(requests)/n/60, "minutes-at-60/op")
		})
	}
}

// isWindowed reports whether a windowed run walks r by date window: the source filters it by
// date (its declaration's Window).
func isWindowed(r sink.Resource) bool {
	c := v1.CollectionNamed(string(r))
	return c != nil && c.Window != nil
}
