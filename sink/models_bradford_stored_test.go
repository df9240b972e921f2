package sink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/sink/sinktest/hrdata"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestBradfordStoredAgreesWithLive: model_bradford gives the same rows, to the type and text of
// each value, whether it reads the sicknesses' working days a refresh stored
// (model_sickness_working_days, schema 0029) or works every piece out at the read (the table
// stale), for every month end: on the hand-made accounts of the absence and working-day tests
// and on a generated firm, on both backends. And a write after the refresh is seen at once.
func TestBradfordStoredAgreesWithLive(t *testing.T) {
	t.Parallel()
	fixtures := []struct {
		name string
		load func(t *testing.T, s *sink.Store)
	}{
		{"absences", loadAbsenceFixture},
		{"workdays", loadWorkdaysFixture},
		{"generated", func(t *testing.T, s *sink.Store) {
			ctx := context.Background()
			if _, err := hrdata.Load(ctx, s, hrdata.Options{Employees: 120, Years: 4, Seed: 7}); err != nil {
				t.Fatal(err)
			}
			m := sink.DefaultModelSettings()
			m.Bradford.ExcludeSicknessTypes = []string{"Pregnancy related"}
			if _, err := s.ApplyModelSettings(ctx, m); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RefreshModels(ctx, false); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			backends(t, func(t *testing.T, s *sink.Store) {
				f.load(t, s)
				db := sinktest.DB(s)
				// Every month end since 2022 (the fixtures' sicknesses are all later): the earlier ones
				// cost a read each and hold no row.
				const all = `SELECT * FROM model_bradford WHERE as_of >= '2022-01-31' ORDER BY as_of, employee_id`
				checkRows(t, "the stored table is fresh", modelRows(t, s, `SELECT CASE WHEN r.version = m.version THEN 'same' END
FROM model_refreshes r, meta m WHERE r.model = 'model_sickness_working_days'`), []string{"same"})
				n := modelRows(t, s, `SELECT count(*) FROM model_sickness_working_days`)
				if len(n) != 1 || n[0] == "0" {
					t.Fatalf("model_sickness_working_days holds %v rows, want some", n)
				}
				stored := typedRows(t, s, all)
				if len(stored) == 0 {
					t.Fatal("model_bradford has no rows")
				}
				stale := func() {
					t.Helper()
					if _, err := db.Exec(`UPDATE model_refreshes SET version = -1 WHERE model = 'model_sickness_working_days'`); err != nil {
						t.Fatal(err)
					}
				}
				stale()
				live := typedRows(t, s, all)
				if !slices.Equal(stored, live) {
					t.Errorf("model_bradford from the stored table differs from the live rules:\n%s", rowsDiff(stored, live))
				}

				// A sickness more after a refresh: the view follows it at once (the table is stale),
				// and the refresh after it gives the same.
				if r, err := s.RefreshModels(context.Background(), false); err != nil || !slices.Equal(r.Tables, []string{"model_sickness_working_days"}) {
					t.Fatalf("refresh: %v, %v; want the table written", r.Tables, err)
				}
				if _, err := db.Exec(db.Rebind(`INSERT INTO sicknesses (id, employee_id, start_date, end_date, half_start, half_end, status, listed, origin)
SELECT 990001, employee_id, end_date, end_date, FALSE, FALSE, 'returned', TRUE, 'source'
FROM sicknesses WHERE end_date IS NOT NULL ORDER BY id LIMIT 1`)); err != nil {
					t.Fatal(err)
				}
				followed := typedRows(t, s, all)
				if slices.Equal(followed, stored) {
					t.Errorf("a sickness more changed no Bradford row")
				}
				if _, err := s.RefreshModels(context.Background(), false); err != nil {
					t.Fatal(err)
				}
				if again := typedRows(t, s, all); !slices.Equal(followed, again) {
					t.Errorf("after the refresh model_bradford differs from what it read before it:\n%s", rowsDiff(followed, again))
				}

				// A sickness changed (a half day more) and one gone: the refresh rewrites their rows, and
				// the table gives what the rules give.
				if _, err := db.Exec(db.Rebind(`UPDATE sicknesses SET half_start = TRUE WHERE id = (SELECT min(id) FROM sicknesses WHERE listed)`)); err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(db.Rebind(`DELETE FROM sicknesses WHERE id = 990001`)); err != nil {
					t.Fatal(err)
				}
				r, err := s.RefreshModels(context.Background(), false)
				if err != nil {
					t.Fatal(err)
				}
				// Only the rows of the two sicknesses are written (a piece each, deleted and
				// inserted again, or deleted), not the table's every row.
				if r.TableRows == 0 || r.TableRows > 4 {
					t.Errorf("the refresh after two sicknesses changed wrote %d rows of the table, want 1 to 4", r.TableRows)
				}
				if r, err := s.RefreshModels(context.Background(), true); err != nil || r.TableRows != 0 {
					t.Errorf("a forced refresh with nothing changed wrote %d rows of the table (%v), want none", r.TableRows, err)
				}
				fresh := typedRows(t, s, all)
				stale()
				if live := typedRows(t, s, all); !slices.Equal(fresh, live) {
					t.Errorf("after a change and its refresh, model_bradford from the stored table differs from the live rules:\n%s", rowsDiff(fresh, live))
				}
			})
		})
	}
}

// typedRows is modelRows with each value's Go type beside its text, nothing normalized: 2 and
// 2.0 differ, as a client reading them sees.
func typedRows(t *testing.T, s *sink.Store, query string) []string {
	t.Helper()
	return queryRows(t, s, func(v any) string {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		return fmt.Sprintf("%T:%v", v, v)
	}, query)
}

// rowsDiff names the first rows where a and b differ.
func rowsDiff(a, b []string) string {
	var out []string
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("row %d:\n  %s\n  %s", i, x, y))
			if len(out) == 5 {
				break
			}
		}
	}
	return fmt.Sprintf("%d and %d rows; %s", len(a), len(b), strings.Join(out, "\n"))
}

// TestErasureDeletesSicknessDays: an erasure of a person, or of one of their sicknesses, deletes
// what the models' refresh stored of it (model_sickness_working_days: health data), and says so
// in its counts; the other rows stay, on both backends.
func TestErasureDeletesSicknessDays(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		loadAbsenceFixture(t, s)
		rowsOf := func(where string) []string {
			t.Helper()
			return modelRows(t, s, `SELECT count(*) FROM model_sickness_working_days WHERE `+where)
		}
		checkRows(t, "34's rows before", rowsOf("employee_id = 34"), []string{"4"})
		others := rowsOf("employee_id NOT IN (34, 31)")
		res, err := s.EraseEmployee(ctx, 34, []v1.Class{v1.Health}, "asked")
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Rows["model_sickness_working_days"]; got != 4 {
			t.Errorf("the erasure counts %d rows of model_sickness_working_days, want 4 (%v)", got, res.Rows)
		}
		checkRows(t, "34's rows after", rowsOf("employee_id = 34"), []string{"0"})
		checkRows(t, "the others' rows", rowsOf("employee_id NOT IN (34, 31)"), others)

		res, err = s.EraseRecords(ctx, "sicknesses", []int64{1}, []v1.Class{v1.Health}, sink.ErasureCauseRequest, "asked")
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, "sickness 1's rows after", rowsOf("id = 1"), []string{"0"})
		if res.Rows["model_sickness_working_days"] == 0 {
			t.Errorf("the record erasure counts no rows of model_sickness_working_days (%v)", res.Rows)
		}
	})
}

// TestBradfordWorksOutPatternWeeksOnce: on SQLite, model_bradford computes each working
// pattern's week once (schema 0030), not in each of its uses. SQLite flattens a joined view
// into the query and copies its expression into every place its column is read: 0029's
// model_bradford, joining model_pattern_weeks, compiled to hundreds of casts of the pattern's
// hours to real (eight a use of the week: 832 through this driver, 416 in the sqlite3 shell's
// older SQLite), and spent most of a month end's read on them (4.3 s at 20,000 employees
// through the Go driver; 1.0 s once). The bytecode of one as_of is counted: the eight casts of
// model_pattern_weeks itself, once. Postgres plans otherwise: the numbers themselves are held
// by the other Bradford tests on both backends.
func TestBradfordWorksOutPatternWeeksOnce(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	rows, err := sinktest.DB(s).QueryContext(context.Background(), `EXPLAIN SELECT * FROM model_bradford WHERE as_of = '2022-06-30'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	// addr, opcode, p1, p2, …: OP_Cast's p2 is the affinity cast to, 'E' for real.
	casts, ops := 0, 0
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		ops++
		if fmt.Sprint(vals[1]) == "Cast" && fmt.Sprint(vals[3]) == fmt.Sprint(int('E')) {
			casts++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if ops < 100 {
		t.Fatalf("EXPLAIN gave %d opcodes: not the bytecode of model_bradford", ops)
	}
	if casts == 0 || casts > 8 {
		t.Errorf("model_bradford's bytecode casts to real %d times, want 8 (model_pattern_weeks' hours, once): the week is worked out at each use again", casts)
	}
}

// TestModelsReadWithoutJIT: on Postgres, hrsync's sessions compile no plan. model_bradford over
// the hand-made account, whose tables have no statistics, is costed over jit_above_cost; with JIT
// a read took 4.3 s, 4.2 s of it LLVM's, for 90 ms of work.
func TestModelsReadWithoutJIT(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	loadAbsenceFixture(t, s)
	db := sinktest.DB(s)
	var out []byte
	if err := db.QueryRowContext(context.Background(), `EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM model_bradford WHERE as_of >= '2022-01-31'`).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plans []struct {
		Plan struct {
			TotalCost float64 `json:"Total Cost"`
		}
		JIT *struct {
			Functions int
		}
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN's JSON: %v\n%s", err, out)
	}
	// Whether this server could compile at all (pg_jit_available is false while jit is off).
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var above float64
	var available bool
	if err := tx.QueryRowContext(context.Background(), `SELECT set_config('jit', 'on', true) = 'on' AND pg_jit_available(), current_setting('jit_above_cost')::float8`).Scan(&available, &above); err != nil {
		t.Fatal(err)
	}
	if plans[0].JIT != nil {
		t.Errorf("the read JIT-compiled %d functions", plans[0].JIT.Functions)
	}
	// What makes the check bite: a plan the server would compile, were JIT on.
	if plans[0].Plan.TotalCost <= above || !available {
		t.Logf("the plan costs %.0f (jit_above_cost %.0f), JIT available: %t: this server would not have compiled it anyway", plans[0].Plan.TotalCost, above, available)
	}
}
