package sink_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

func TestMain(m *testing.M) { sinktest.Main(m) }

var fixedNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// backends runs a storage test against both warehouses, so both keep one behaviour.
func backends(t *testing.T, test func(t *testing.T, s *sink.Store)) {
	t.Helper()
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		test(t, openPostgres(t))
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		test(t, openSQLite(t))
	})
}

func openPostgres(t testing.TB) *sink.Store {
	t.Helper()
	url, schemaName := sinktest.MigratedPostgres(t)
	opts := sink.Options{Schema: schemaName, Now: func() time.Time { return fixedNow }}
	ctx := context.Background()
	s, err := sink.Open(ctx, url, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openSQLite(t testing.TB) *sink.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hrsync.db")
	sinktest.SQLiteFile(t, path)
	s, err := sink.Open(context.Background(), path, sink.Options{Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestFreshWarehouseIsSeeded(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		wps, err := s.ListWorkingPatterns(ctx, v1.Page{Number: 1, Size: 25})
		if err != nil {
			t.Fatal(err)
		}
		if wps.Total != 1 || len(wps.Items) != 1 {
			t.Fatalf("working patterns: total %d, %d items; want 1, 1", wps.Total, len(wps.Items))
		}
		wp := wps.Items[0]
		got := string(wp.AppendJSON(nil))
		want := `{"id":1,"name":"Standard","default":true,"total_hours":"37.5","mon":true,"tue":true,"wed":true,"thu":true,"fri":true,"sat":false,"sun":false,"mon_hr":"7.5","tue_hr":"7.5","wed_hr":"7.5","thu_hr":"7.5","fri_hr":"7.5","sat_hr":"0.0","sun_hr":"0.0","created_at":"` + wp.CreatedAt + `","updated_at":"` + wp.UpdatedAt + `"}`
		if got != want {
			t.Errorf("seeded pattern\n got %s\nwant %s", got, want)
		}
		if _, err := time.Parse(v1.TimestampLayout, wp.CreatedAt); err != nil {
			t.Errorf("created_at %q: %v", wp.CreatedAt, err)
		}
		has, err := s.ListRecords(ctx, "holiday_allowances", v1.Page{Number: 1, Size: 25})
		if err != nil || has.Total != 1 || len(has.Items) != 1 {
			t.Fatalf("holiday allowances: %+v, %v", has, err)
		}
		emps, err := s.ListEmployees(ctx, v1.Page{Number: 1, Size: 25})
		if err != nil || emps.Total != 0 || len(emps.Items) != 0 || emps.Items == nil {
			t.Fatalf("employees: %+v, %v", emps, err)
		}
	})
}

func TestCreateEmployee(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		v0, err := s.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Zoë", LastName: "Ødegård", Email: "zoe@example.com", JoinDate: "2025-08-31"})
		if err != nil {
			t.Fatal(err)
		}
		got := string(e.AppendJSON(nil))
		want := `{"id":1,"account_id":1,"first_name":"Zoë","last_name":"Ødegård","email":"zoe@example.com","job_title":null,"status":"Current employee","company_join_date":"2025-08-31","job_start_date":"2025-08-31","length_of_service_in_months":14,"age":null,"full_or_part_time":null,"notice_period":null,"working_pattern":{"id":1,"name":"Standard","total_hours":"37.5","default":true},"holiday_allowance":{"id":1,"name":"Standard"},"line_manager":null,"holiday_approver":null,"department":null,"receives_statutory_holidays":false,"hr":false,"created_at":"2026-11-22T12:00:00Z","updated_at":"2026-11-22T12:00:00Z"}`
		if got != want {
			t.Errorf("created\n got %s\nwant %s", got, want)
		}
		if v1, _ := s.Version(ctx); v1 == v0 {
			t.Errorf("version did not change on create")
		}
		e2, err := s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "A", LastName: "B", Email: "a@example.com", JobTitle: "Nurse", JoinDate: "2026-12-01"})
		if err != nil {
			t.Fatal(err)
		}
		if e2.ID != 2 || e2.JobTitle != "Nurse" || *e2.LengthOfServiceInMonths != 0 {
			t.Errorf("second create: id %d, title %q, service %d", e2.ID, e2.JobTitle, *e2.LengthOfServiceInMonths)
		}
		_, err = s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Z", LastName: "Z", Email: "ZOE@Example.com", JoinDate: "2025-01-01"})
		if !errors.Is(err, v1.ErrEmailTaken) {
			t.Errorf("duplicate email (other case): err %v, want ErrEmailTaken", err)
		}
		list, err := s.ListEmployees(ctx, v1.Page{Number: 1, Size: 25})
		if err != nil || list.Total != 2 || len(list.Items) != 2 {
			t.Fatalf("list after creates: total %d, items %d, err %v", list.Total, len(list.Items), err)
		}
	})
}

func TestConcurrentCreatesSameEmail(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Dup", LastName: "Licate", Email: "dup@example.com", JoinDate: "2025-01-01"})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, v1.ErrEmailTaken):
				t.Errorf("unexpected error: %v", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d creates succeeded, want exactly 1", ok)
		}
	})
}

// synced is an employee as the real service sends one: nested references, a manager the
// collection does not list, fields the seed does not model, decimals as strings, "" for a
// notice period, join_date for company_join_date, a timestamp's offset: served as sent.
const synced = `{"id":42,"account_id":7,"first_name":"Ana","middle_name":"Maria","last_name":"Lopez","email":"ana@example.com","job_title":"Engineer","status":"Pending leaver","join_date":"2019/03/01","job_start_date":"2019-03-04","length_of_service_in_months":92,"age":null,"full_or_part_time":"Full Time","notice_period":"","working_pattern":{"id":9,"name":"Four day week","total_hours":"30.0","default":false},"holiday_allowance":{"id":3,"name":"Senior"},"line_manager":{"id":900,"name":"Gone Boss","email":"boss@example.com"},"holiday_approver":{"id":900,"name":"Gone Boss","email":"boss@example.com"},"department":{"id":5,"name":"R&D","code":"RD"},"receives_statutory_holidays":true,"hr":false,"created_at":"2019-02-20T09:00:00+01:00","updated_at":"2026-01-02T03:04:05Z","custom_fields":{"shoe":"42"},"dob":"1990-01-01"}`

func TestPutEmployeeKeepsEverything(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		var e v1.Employee
		if err := json.Unmarshal([]byte(synced), &e); err != nil {
			t.Fatal(err)
		}
		if err := s.PutEmployee(ctx, e); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.Employee(ctx, 42)
		if err != nil {
			t.Fatal(err)
		}
		want := synced
		if s := string(got.AppendJSON(nil)); s != want {
			t.Errorf("round trip\n got %s\nwant %s", s, want)
		}
		// The manager who left is kept, never listed, never served.
		list, err := s.ListEmployees(ctx, v1.Page{Number: 1, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		if list.Total != 1 || len(list.Items) != 1 || list.Items[0].ID != 42 {
			t.Errorf("listed: total %d, items %v", list.Total, ids(list.Items))
		}
		if _, _, err := s.Employee(ctx, 900); !errors.Is(err, v1.ErrNotFound) {
			t.Errorf("unlisted manager served: %v", err)
		}
		var managerFK, listed int64
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT line_manager_id, (SELECT count(*) FROM employees WHERE id = 900 AND NOT listed) FROM employees WHERE id = 42`).Scan(&managerFK, &listed); err != nil {
			t.Fatal(err)
		}
		if managerFK != 900 || listed != 1 {
			t.Errorf("manager reference: fk %d, unlisted rows %d", managerFK, listed)
		}
		// The pattern, the department and the allowance only seen nested are not listed (the
		// seeded pattern and allowance are): kept as rows, as the reference carried them.
		wps, _ := s.ListWorkingPatterns(ctx, v1.Page{Number: 1, Size: 25})
		deps, _ := s.ListRecords(ctx, "departments", v1.Page{Number: 1, Size: 25})
		has, _ := s.ListRecords(ctx, "holiday_allowances", v1.Page{Number: 1, Size: 25})
		if wps.Total != 1 || deps.Total != 0 || has.Total != 1 {
			t.Errorf("totals: patterns %d (want 1), departments %d (want 0), allowances %d (want 1)", wps.Total, deps.Total, has.Total)
		}
		var depName, depExtra string
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT name, CAST(extra AS text) FROM departments WHERE id = 5 AND NOT listed`).Scan(&depName, &depExtra); err != nil || depName != "R&D" || depExtra != `{"code":"RD"}` {
			t.Errorf("unlisted department 5: %q %q (%v)", depName, depExtra, err)
		}
		// Storing it again changes nothing that is served.
		if err := s.PutEmployee(ctx, e); err != nil {
			t.Fatal(err)
		}
		again, _, _ := s.Employee(ctx, 42)
		if string(again.AppendJSON(nil)) != want {
			t.Errorf("second put changed the record")
		}
	})
}

func ids(es []v1.Employee) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func putN(t *testing.T, s *sink.Store, idsToPut ...int64) {
	t.Helper()
	for _, id := range idsToPut {
		e := v1.Employee{ID: id, FirstName: "F", LastName: fmt.Sprint(id), Email: fmt.Sprintf("e%d@example.com", id)}
		if err := s.PutEmployee(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPagingVisitsEveryRecordOnce walks the collection at many page sizes.
func TestPagingVisitsEveryRecordOnce(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		var all []int64
		for i := int64(1); i <= 53; i++ {
			all = append(all, i*3) // gaps in the ids
		}
		putN(t, s, all...)
		for _, size := range []int64{1, 2, 7, 10, 25, 52, 53, 54, 100} {
			var seen []int64
			for page := int64(1); ; page++ {
				list, err := s.ListEmployees(ctx, v1.Page{Number: page, Size: size})
				if err != nil {
					t.Fatal(err)
				}
				if list.Total != 53 {
					t.Fatalf("size %d page %d: total %d", size, page, list.Total)
				}
				if len(list.Items) == 0 {
					if want := v1.LastPage(53, size) + 1; page != want {
						t.Fatalf("size %d: empty page at %d, want first empty page %d", size, page, want)
					}
					break
				}
				seen = append(seen, ids(list.Items)...)
			}
			if fmt.Sprint(seen) != fmt.Sprint(all) {
				t.Errorf("size %d: saw %v", size, seen)
			}
		}
	})
}

// TestPagingFollowsWrites checks the id cache never serves a page of an older warehouse.
func TestPagingFollowsWrites(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		putN(t, s, 10, 20, 30)
		first, err := s.ListEmployees(ctx, v1.Page{Number: 1, Size: 2})
		if err != nil || fmt.Sprint(ids(first.Items)) != "[10 20]" {
			t.Fatalf("page 1: %v %v", ids(first.Items), err)
		}
		putN(t, s, 5)
		again, err := s.ListEmployees(ctx, v1.Page{Number: 1, Size: 2})
		if err != nil || fmt.Sprint(ids(again.Items)) != "[5 10]" || again.Total != 4 || again.Version == first.Version {
			t.Fatalf("page 1 after insert: %v total %d version %d→%d %v", ids(again.Items), again.Total, first.Version, again.Version, err)
		}
		last, err := s.ListEmployees(ctx, v1.Page{Number: 2, Size: 2})
		if err != nil || fmt.Sprint(ids(last.Items)) != "[20 30]" {
			t.Fatalf("page 2 after insert: %v %v", ids(last.Items), err)
		}
	})
}

func TestVersionOnlyMovesOnChange(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		v0, _ := s.Version(ctx)
		if _, err := sinktest.DB(s).ExecContext(ctx, `UPDATE employees SET first_name = 'x' WHERE id = -1`); err != nil {
			t.Fatal(err)
		}
		if v1, _ := s.Version(ctx); v1 != v0 {
			t.Errorf("a statement changing no rows moved the version %d→%d", v0, v1)
		}
		if _, err := sinktest.DB(s).ExecContext(ctx, `UPDATE departments SET name = 'x' WHERE id = -1`); err != nil {
			t.Fatal(err)
		}
		putN(t, s, 1)
		v2, _ := s.Version(ctx)
		if _, err := sinktest.DB(s).ExecContext(ctx, `UPDATE employees SET first_name = 'y' WHERE id = 1`); err != nil {
			t.Fatal(err)
		}
		if v3, _ := s.Version(ctx); v3 == v2 {
			t.Errorf("a direct SQL update did not move the version")
		}
	})
}

func TestSchemaBehindIsRefused(t *testing.T) {
	t.Parallel()
	url, schemaName := sinktest.Postgres(t)
	ctx := context.Background()
	_, err := sink.Open(ctx, url, sink.Options{Schema: schemaName})
	var behind *schema.BehindError
	if !errors.As(err, &behind) || behind.Current != 0 || behind.Latest != schema.Latest(schema.Postgres) {
		t.Fatalf("open before migrate: %v, want a BehindError at 0", err)
	}
	applied, err := sink.Migrate(ctx, url, sink.Options{Schema: schemaName})
	if err != nil || len(applied) != schema.Latest(schema.Postgres) {
		t.Fatalf("migrate: applied %v, %v", applied, err)
	}
	applied, err = sink.Migrate(ctx, url, sink.Options{Schema: schemaName})
	if err != nil || len(applied) != 0 {
		t.Fatalf("second migrate: applied %v, %v (want nothing)", applied, err)
	}
	s, err := sink.Open(ctx, url, sink.Options{Schema: schemaName})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("ready: %v", err)
	}
}

func TestOpenRejectsBadURLs(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "mysql://x/y", "sqlite:"} {
		if _, err := sink.Open(context.Background(), u, sink.Options{}); !errors.Is(err, sink.ErrBadURL) {
			t.Errorf("Open(%q): %v, want ErrBadURL", u, err)
		}
	}
	if _, err := sink.Open(context.Background(), "postgres://localhost/x", sink.Options{Schema: "Robert'); DROP"}); !errors.Is(err, sink.ErrBadURL) {
		t.Errorf("bad schema name: %v", err)
	}
}

// TestDeclarationsMatchMigrations: the declared collections and the migrated schema agree on
// both backends: every declared column exists with its kind's type, every column is declared,
// every reference points at a declared table with the columns it carries.
func TestDeclarationsMatchMigrations(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		bad, err := sink.DeclarationMismatches(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Error(b)
		}
	})
}

// TestDeclarationsMatchMigrationsCatchesAHistoryGap: a column added to a historied table (as a
// field added to a declaration brings) fails the comparison until its history has it too.
func TestDeclarationsMatchMigrationsCatchesAHistoryGap(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		gap := "sicknesses_history.fit_note_date: in sicknesses, missing from its history"
		for _, step := range []struct {
			alter   string
			flagged bool
		}{
			{`ALTER TABLE sicknesses ADD COLUMN fit_note_date text`, true},
			{`ALTER TABLE sicknesses_history ADD COLUMN fit_note_date text`, false},
		} {
			if _, err := sinktest.DB(s).ExecContext(ctx, step.alter); err != nil {
				t.Fatal(err)
			}
			bad, err := sink.DeclarationMismatches(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(bad, gap) != step.flagged {
				t.Errorf("after %s: mismatches %q, want %q flagged: %v", step.alter, bad, gap, step.flagged)
			}
		}
	})
}
