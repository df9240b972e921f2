package walk_test

import (
	"context"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/walk"
)

// TestSyncRefreshesModels: a sync that loads refreshes the models kept as tables at its end (the
// absence figures of the account it loaded, row for row its derived view), the models section's
// settings written into the warehouse first; a dry run does neither.
func TestSyncRefreshesModels(t *testing.T) {
	t.Parallel()
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 30, Seed: 5, AbsenceYears: 1})
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			_, store, c := newSync(t, backend, 0, acct.Options())
			ctx := context.Background()
			db := sinktest.DB(store)
			var before int64
			if err := db.Get(&before, `SELECT version FROM model_refreshes WHERE model = 'model_absence_monthly'`); err != nil {
				t.Fatal(err)
			}
			if _, err := walk.New(c, store, walk.Options{Concurrency: 2, DryRun: true}).Run(ctx, walk.Known); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := db.Get(&n, `SELECT count(*) FROM model_absence_monthly`); err != nil || n != 0 {
				t.Fatalf("after a dry run: %d rows (%v), want none", n, err)
			}
			var closures int
			if err := db.Get(&closures, `SELECT count(*) FROM model_closure_days`); err != nil || closures != 0 {
				t.Fatalf("after a dry run: %d closure days (%v), want none", closures, err)
			}
			models := sink.DefaultModelSettings()
			models.ClosureDays = []time.Time{time.Date(2025, 12, 29, 0, 0, 0, 0, time.UTC)}
			if _, err := walk.New(c, store, walk.Options{Concurrency: 2, Models: &models}).Run(ctx, walk.Known); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Rows, Extra, Missing, Closures, Holidays int
				Sick                                     float64
				Fresh                                    bool
			}
			err := db.Get(&got, `SELECT
  (SELECT count(*) FROM model_absence_monthly) AS rows,
  (SELECT count(*) FROM (SELECT * FROM model_absence_monthly EXCEPT SELECT * FROM model_absence_monthly_derived) a) AS extra,
  (SELECT count(*) FROM (SELECT * FROM model_absence_monthly_derived EXCEPT SELECT * FROM model_absence_monthly) b) AS missing,
  (SELECT coalesce(sum(sick_days + holiday_days), 0) FROM model_absence_monthly) AS sick,
  (SELECT count(*) FROM model_closure_days WHERE day = '2025-12-29') AS closures,
  (SELECT count(*) FROM model_holidays) AS holidays,
  (SELECT r.version = m.version FROM model_refreshes r, meta m WHERE r.model = 'model_absence_monthly') AS fresh`)
			if err != nil {
				t.Fatal(err)
			}
			if got.Rows == 0 || got.Sick == 0 || got.Extra != 0 || got.Missing != 0 || !got.Fresh || got.Closures != 1 || got.Holidays == 0 {
				t.Errorf("after a sync: %+v, want rows with days off, none extra or missing, fresh, the closure day and the holidays written", got)
			}
			var after int64
			if err := db.Get(&after, `SELECT version FROM model_refreshes WHERE model = 'model_absence_monthly'`); err != nil {
				t.Fatal(err)
			}
			if after <= before {
				t.Errorf("model_refreshes says version %d, as before the sync (%d)", after, before)
			}
		})
	}
}
