package sink_test

import (
	"context"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
)

// TestLastWalk: the newest finished run of a collection that walked the same part of it, a
// window or the whole, sizes a plan; a run that stopped part-way, or still runs, is passed over.
func TestLastWalk(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		at := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
		window := sink.NewWindow(at, 90, 365)
		for i, r := range []sink.Run{
			{Resource: "absences", Status: sink.RunOK, Pages: 900, Walks: 2},                 // whole, twice
			{Resource: "absences", Status: sink.RunOK, Pages: 40, Walks: 1, Window: &window}, // a window
			{Resource: "absences", Status: sink.RunFailed, Pages: 3, Walks: 1},               // stopped part-way
			{Resource: "absences", Status: sink.RunRunning},                                  // still running
			{Resource: "sicknesses", Status: sink.RunUnavailable, Walks: 1},
		} {
			id, err := s.StartRun(ctx, "run", r.Resource, at.Add(time.Duration(i)*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if r.Status == sink.RunRunning {
				continue
			}
			r.ID, r.FinishedAt, r.TotalReported = id, at.Add(time.Duration(i)*time.Hour+time.Minute), -1
			if err := s.FinishRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		for _, tt := range []struct {
			r        sink.Resource
			windowed bool
			ok       bool
			status   string
			pages    int64
		}{
			{"absences", false, true, sink.RunOK, 900},
			{"absences", true, true, sink.RunOK, 40},
			{"sicknesses", false, true, sink.RunUnavailable, 0},
			{"sicknesses", true, false, "", 0},
			{"leave_requests", false, false, "", 0},
		} {
			run, ok, err := s.LastWalk(ctx, tt.r, tt.windowed)
			if err != nil || ok != tt.ok || run.Status != tt.status || run.Pages != tt.pages {
				t.Errorf("LastWalk(%s, windowed %v) = %s %d pages, %v, %v; want %s %d pages, %v",
					tt.r, tt.windowed, run.Status, run.Pages, ok, err, tt.status, tt.pages, tt.ok)
			}
		}
	})
}
