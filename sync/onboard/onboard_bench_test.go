package onboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/onboard"
)

// BenchmarkOnboardingPaced onboards a cohort against a source that enforces the real limit as
// the real one does (60 requests in any 60 s, counted on arrival), with the client paced at that
// budget. 90 rows, so the window is tested, not just the rate; about 90 s an iteration. The
// figures: rows a second against the budget (the ceiling: one create a request), and the 429s
// provoked (must be 0). Scaling the limit down (10 a second in a 1 s window) is harsher than
// the real thing: the client's 2% headroom shrinks from 1.2 s to 20 ms while network jitter does not.
//
//	go test -run '^$' -bench BenchmarkOnboardingPaced -benchtime 1x ./sync/onboard/
func BenchmarkOnboardingPaced(b *testing.B) {
	const rows, perMinute = 90, 60
	for range b.N {
		b.StopTimer()
		up := newUpstream(b, 0, fakeupstream.Options{RateLimit: perMinute, Window: time.Minute})
		store := sinktest.Store(b, "postgres", sink.Options{})
		c := fastClient(b, up, source.ClientOptions{RateLimit: perMinute})
		o := onboard.New(c, store, onboard.Options{})
		data := hiresCSV(1, rows)
		b.StartTimer()
		start := time.Now()
		r := o.ProcessFile(context.Background(), "cohort.csv", data)
		elapsed := time.Since(start)
		b.StopTimer()
		if r.Err != nil || outcomes(r)[onboard.OutcomeCreated] != rows {
			b.Fatalf("onboarding: %v %v", outcomes(r), r.Err)
		}
		b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
		b.ReportMetric(float64(rows)/elapsed.Seconds()/(perMinute/60.0), "share-of-budget")
		b.ReportMetric(float64(up.Count("/v1/employees", 429)), "429s")
		b.ReportMetric(float64(up.MaxInWindow()), "max-in-window")
	}
}
