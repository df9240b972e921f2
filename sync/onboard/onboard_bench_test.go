package onboard_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/v1"
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
		c := fastClient(b, up, client.Options{RateLimit: perMinute})
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

// BenchmarkOnboardLargeFile measures the memory onboarding a large file takes: a generated
// 50 MB CSV of 99,000 valid rows with a wide column nobody reads, in a dry run against a ledger
// in memory (so only reading and planning count). "limit raised" reads it whole (the limit set
// to 64 MiB); "default limit" refuses it unread. The figure is the peak of the heap's objects
// over the run, above what it held before, sampled every 100 µs (a lower bound of the peak).
// Before files were streamed, the 50 MB file peaked at 192 MiB.
//
//	go test -run '^$' -bench BenchmarkOnboardLargeFile -benchtime 3x ./sync/onboard/
func BenchmarkOnboardLargeFile(b *testing.B) {
	const rows, size = 99_000, 50 << 20
	path := filepath.Join(b.TempDir(), "big.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "First name,Last name,Email,Job title,Start date,Notes\n")
	note := strings.Repeat("x", size/rows-60)
	for i := range rows {
		fmt.Fprintf(w, "First%d,Last%d,p%d@example.com,Engineer,2026-12-01,%s\n", i, i, i, note)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		b.Fatal(err)
	}
	for _, bench := range []struct {
		name  string
		limit int64
		rows  int
	}{{"limit raised", 64 << 20, rows}, {"default limit", 0, 0}} {
		b.Run(bench.name, func(b *testing.B) {
			o := onboard.New(nil, memLedger{}, onboard.Options{DryRun: true, MaxFileBytes: bench.limit})
			for range b.N {
				var r onboard.FileResult
				var err error
				peak := peakHeap(func() { r, err = o.ProcessPath(context.Background(), path, "") })
				if err != nil || len(r.Rows) != bench.rows {
					b.Fatalf("%d rows, %v %v", len(r.Rows), err, r.Err)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			}
		})
	}
}

// peakHeap runs run and returns the peak of the heap's objects meanwhile, above what they were
// before, sampled every 100 µs.
func peakHeap(run func()) uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base, peak := s[0].Value.Uint64(), uint64(0)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	run()
	close(stop)
	<-done
	return peak - min(peak, base)
}

// memLedger is a ledger that knows nobody and keeps nothing.
type memLedger struct{}

func (memLedger) OnboardingRows(context.Context, string) (map[int]sink.OnboardingRow, error) {
	return map[int]sink.OnboardingRow{}, nil
}
func (memLedger) CreatedByEmail(context.Context, string) (sink.OnboardingRow, error) {
	return sink.OnboardingRow{}, v1.ErrNotFound
}
func (memLedger) PutOnboardingRow(context.Context, sink.OnboardingRow) error  { return nil }
func (memLedger) ConfirmSending(context.Context, string, int64, string) error { return nil }
func (memLedger) EmailTaken(context.Context, string) (bool, error)            { return false, nil }
func (memLedger) PutEmployee(context.Context, v1.Employee) error              { return nil }
func (memLedger) ErasedEmail(context.Context, string) (int64, error)          { return 0, nil }
