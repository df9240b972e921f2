package sink_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestRefreshModels: the models kept as tables are written from their derived views when the
// warehouse has changed since their last refresh, and only then (or when forced), on both
// backends.
func TestRefreshModels(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		loadAbsenceFixture(t, s) // refreshes
		refresh := func(force bool) []string {
			t.Helper()
			r, err := s.RefreshModels(ctx, force)
			if err != nil {
				t.Fatal(err)
			}
			return r.Models
		}
		if got := refresh(false); len(got) != 0 {
			t.Errorf("nothing changed, yet refreshed %v", got)
		}
		checkRows(t, "the refresh's version", modelRows(t, s, `SELECT CASE WHEN r.version = m.version THEN 'same' END FROM model_refreshes r, meta m
WHERE r.model = 'model_absence_monthly'`), []string{"same"})
		april := `SELECT sick_days, days_lost FROM model_absence_monthly WHERE month = '2024-04-01' AND department_id = 10`
		checkRows(t, "before", modelRows(t, s, april), []string{"3|3"})

		// A sickness more for 31 (Sales): Tuesday 2024-04-16 to Wednesday the 17th, 2 days.
		if _, err := sinktest.DB(s).Exec(`INSERT INTO sicknesses (id, employee_id, start_date, end_date, half_start, half_end, status, listed, origin)
VALUES (12, 31, '2024-04-16', '2024-04-17', FALSE, FALSE, 'returned', TRUE, 'source')`); err != nil {
			t.Fatal(err)
		}
		checkRows(t, "not yet refreshed", modelRows(t, s, april), []string{"3|3"})
		checkRows(t, "the derived view follows at once", modelRows(t, s, `SELECT sick_days FROM model_absence_monthly_derived
WHERE month = '2024-04-01' AND department_id = 10`), []string{"5"})
		if got := refresh(false); !slices.Equal(got, sink.RefreshedModels) {
			t.Errorf("after a write refreshed %v, want %v", got, sink.RefreshedModels)
		}
		checkRows(t, "refreshed", modelRows(t, s, april), []string{"5|5"})
		if got := refresh(true); !slices.Equal(got, sink.RefreshedModels) {
			t.Errorf("forced, refreshed %v, want %v", got, sink.RefreshedModels)
		}
		checkRows(t, "refreshed again, the same", modelRows(t, s, april), []string{"5|5"})
	})
}
