package sink_test

import (
	"context"
	"database/sql"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// servedRecord is one record of a declared collection as serve mode writes it.
func servedRecord(t *testing.T, s *sink.Store, c *v1.Collection, id int64) string {
	t.Helper()
	r, _, err := s.Record(context.Background(), c.Name, id)
	if err != nil {
		t.Fatal(err)
	}
	return string(c.AppendJSON(nil, &r))
}

// TestRecordFormsAreKeptApart: records that differ only in a member's form ("" or null or absent,
// a number or its string) have the same typed columns, yet each is stored, served and kept in
// the history as sent: a change of form alone is a change, and an unchanged form none.
func TestRecordFormsAreKeptApart(t *testing.T) {
	t.Parallel()
	forms := []string{
		`{"id":41,"employee":{"id":1},"start_date":"2026-03-02","notes":"","deducted":"1.5","half_start_am_pm":""}`,
		`{"id":41,"employee":{"id":1},"start_date":"2026-03-02","notes":null,"deducted":"1.5","half_start_am_pm":""}`,
		`{"id":41,"employee":{"id":1},"start_date":"2026-03-02","deducted":"1.5","half_start_am_pm":""}`,
		`{"id":41,"employee":{"id":1},"start_date":"2026-03-02","deducted":1.5,"half_start_am_pm":null}`,
	}
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		c := v1.Absences
		complete := sink.MergeOptions{Complete: true}
		for i, form := range forms {
			nextMillisecond()
			res := sinktest.WalkRecords(t, s, c, sinktest.Records(t, c, form), complete)
			if i > 0 && res.Updated != 1 {
				t.Errorf("form %d: %+v, want the record updated", i, res)
			}
			if got := servedRecord(t, s, c, 41); got != form {
				t.Errorf("form %d served as\n %s\nwant\n %s", i, got, form)
			}
			var notes sql.NullString
			if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT notes FROM absences WHERE id = 41`).Scan(&notes); err != nil || notes.Valid {
				t.Errorf("form %d: the analysts' notes %+v (%v), want NULL", i, notes, err)
			}
			nextMillisecond()
			if res := sinktest.WalkRecords(t, s, c, sinktest.Records(t, c, form), complete); res.Unchanged != 1 {
				t.Errorf("form %d again: %+v, want it unchanged", i, res)
			}
		}
		rows, err := sinktest.DB(s).QueryContext(ctx, `SELECT CAST(sent AS text) FROM absences_history WHERE id = 41 ORDER BY valid_from`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var history []string
		for rows.Next() {
			var sent string
			if err := rows.Scan(&sent); err != nil {
				t.Fatal(err)
			}
			history = append(history, sent)
		}
		if len(history) != len(forms) {
			t.Fatalf("history %q, want one version per form", history)
		}
		for i := range forms {
			if history[i] != forms[i] {
				t.Errorf("version %d keeps\n %s\nwant\n %s", i, history[i], forms[i])
			}
		}
	})
}

// TestUpgradeKeepsRecordsAsSent: a record stored before 0014 (no sent) is served from its typed
// columns after the upgrade; the next walk writes its sent form once (one history version), and
// the walk after it nothing. A sent value that is not a JSON object (edited by hand) is not
// served: the typed columns are.
func TestUpgradeKeepsRecordsAsSent(t *testing.T) {
	t.Parallel()
	for _, d := range []schema.Dialect{schema.Postgres, schema.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, target, opts := oldWarehouse(t, d, 13)
			defer db.Close()
			// As the build before 0014 stored {"id":41,"start_date":"2026-03-02","notes":"","type":"Holiday"}.
			if _, err := db.ExecContext(ctx, `INSERT INTO absences (id, start_date, notes, type) VALUES (41, '2026-03-02', NULL, 'Holiday')`); err != nil {
				t.Fatal(err)
			}
			s := upgraded(t, db, d, target, opts)

			c := v1.Absences
			old, err := c.Decode([]byte(`{"id":41,"start_date":"2026-03-02","notes":"","type":"Holiday"}`))
			if err != nil {
				t.Fatal(err)
			}
			old.Sent = nil
			if got, want := servedRecord(t, s, c, 41), string(c.AppendJSON(nil, &old)); got != want {
				t.Errorf("after the upgrade, served\n %s\nwant the typed columns' form\n %s", got, want)
			}
			versions := func() int {
				var n int
				if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT count(*) FROM absences_history WHERE id = 41`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			before := versions()
			sent := `{"id":41,"start_date":"2026-03-02","notes":"","type":"Holiday"}`
			nextMillisecond()
			if res := sinktest.WalkRecords(t, s, c, sinktest.Records(t, c, sent), sink.MergeOptions{Complete: true}); res.Updated != 1 {
				t.Errorf("the first walk after the upgrade: %+v, want the record updated with its sent form", res)
			}
			if got := servedRecord(t, s, c, 41); got != sent {
				t.Errorf("served\n %s\nwant\n %s", got, sent)
			}
			if n := versions(); n != before+1 {
				t.Errorf("%d history versions after the first walk, want %d", n, before+1)
			}
			nextMillisecond()
			if res := sinktest.WalkRecords(t, s, c, sinktest.Records(t, c, sent), sink.MergeOptions{Complete: true}); res.Unchanged != 1 {
				t.Errorf("the second walk: %+v, want the record unchanged", res)
			}
			if n := versions(); n != before+1 {
				t.Errorf("%d history versions after the second walk, want %d", n, before+1)
			}

			// Hand-edited into something that is not a record: the typed columns are served.
			if _, err := sinktest.DB(s).ExecContext(ctx, `UPDATE absences SET sent = '[1]' WHERE id = 41`); err != nil {
				t.Fatal(err)
			}
			if got, want := servedRecord(t, s, c, 41), string(c.AppendJSON(nil, &old)); got != want {
				t.Errorf("with sent edited by hand, served\n %s\nwant\n %s", got, want)
			}
		})
	}
}

// TestEmployeeFormsAreKeptApart: employees and working patterns are kept and served as sent
// (join_date under its name, "" apart from null, a date or nested object sent as "", "77", an
// offset), though their typed columns hold the normal forms; a change of form alone is a change,
// kept in the history, and the same form again is none.
func TestEmployeeFormsAreKeptApart(t *testing.T) {
	t.Parallel()
	employees := []string{
		`{"id":7,"account_id":"77","first_name":"Ana","job_title":"","age":"","join_date":"2020/01/05","job_start_date":"","department":"","created_at":"2020-01-01T09:00:00+01:00","x":null}`,
		`{"id":7,"account_id":"77","first_name":"Ana","job_title":null,"age":"","join_date":"2020/01/05","job_start_date":"","department":"","created_at":"2020-01-01T09:00:00+01:00","x":null}`,
		`{"id":7,"account_id":77,"first_name":"Ana","job_title":null,"age":"","company_join_date":"2020-01-05","department":null,"created_at":"2020-01-01T08:00:00Z"}`,
	}
	patterns := []string{
		`{"id":3,"name":"Office","default":"true","total_hours":40,"mon":1,"sun_hr":"","updated_at":"2024-03-01T10:00:00+01:00"}`,
		`{"id":3,"name":"Office","default":true,"total_hours":"40","mon":true,"sun_hr":null,"updated_at":"2024-03-01T09:00:00Z"}`,
	}
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		historyOf7 := func() (n int) {
			t.Helper()
			if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT count(*) FROM employees_history WHERE id = 7`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		for i, raw := range append(employees, employees[len(employees)-1]) {
			var e v1.Employee
			if err := e.UnmarshalJSON([]byte(raw)); err != nil {
				t.Fatal(err)
			}
			nextMillisecond()
			res := sinktest.WalkEmployees(t, s, []v1.Employee{e}, 10, sink.MergeOptions{})
			if again := i == len(employees); again != (res.Unchanged == 1) {
				t.Errorf("employee form %d: %+v (the same form again: %v)", i, res, again)
			}
			got, _, err := s.Employee(ctx, 7)
			if err != nil {
				t.Fatal(err)
			}
			if served := string(got.AppendJSON(nil)); served != raw {
				t.Errorf("employee form %d served as\n %s\nwant\n %s", i, served, raw)
			}
			var title, start, created sql.NullString
			var joined string
			var account int64
			err = sinktest.DB(s).QueryRowContext(ctx, `SELECT job_title, CAST(company_join_date AS text), CAST(job_start_date AS text),
    account_id, CAST(created_at AS text) FROM employees WHERE id = 7`).Scan(&title, &joined, &start, &account, &created)
			if err != nil {
				t.Fatal(err)
			}
			if title.Valid || !strings.HasPrefix(joined, "2020-01-05") || start.Valid || account != 77 ||
				!strings.HasPrefix(strings.ReplaceAll(created.String, " ", "T"), "2020-01-01T08:00:00") {
				t.Errorf("employee form %d: the analysts' columns %v %q %v %d %q, want NULL, 2020-01-05, NULL, 77, 08:00 UTC",
					i, title, joined, start, account, created.String)
			}
			if n, want := historyOf7(), min(i, len(employees)-1)+1; n != want {
				t.Errorf("employee form %d: %d history versions, want %d", i, n, want)
			}
		}
		var sent string
		if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT CAST(sent AS text) FROM employees_history WHERE id = 7 ORDER BY valid_from LIMIT 1`).Scan(&sent); err != nil || sent != employees[0] {
			t.Errorf("the first version keeps %s (%v), want %s", sent, err, employees[0])
		}

		for i, raw := range append(patterns, patterns[len(patterns)-1]) {
			var p v1.WorkingPattern
			if err := p.UnmarshalJSON([]byte(raw)); err != nil {
				t.Fatal(err)
			}
			l, err := s.BeginLoad(ctx, sink.WorkingPatterns)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.AddWorkingPatterns(ctx, []v1.WorkingPattern{p}); err != nil {
				t.Fatal(err)
			}
			res, err := l.Merge(ctx, sink.MergeOptions{})
			_ = l.Close()
			if err != nil {
				t.Fatal(err)
			}
			if again := i == len(patterns); again != (res.Unchanged == 1) || (!again && res.Inserted+res.Updated != 1) {
				t.Errorf("pattern form %d: %+v (the same form again: %v)", i, res, again)
			}
			list, err := s.ListWorkingPatterns(ctx, v1.Page{Number: 1, Size: 25})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, got := range list.Items {
				if got.ID == 3 {
					found = true
					if served := string(got.AppendJSON(nil)); served != raw {
						t.Errorf("pattern form %d served as\n %s\nwant\n %s", i, served, raw)
					}
				}
			}
			if !found {
				t.Errorf("pattern form %d: not listed", i)
			}
			var total, sun sql.NullString
			if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT CAST(total_hours AS text), sun_hr FROM working_patterns WHERE id = 3`).Scan(&total, &sun); err != nil ||
				!strings.HasPrefix(total.String, "40") || sun.Valid {
				t.Errorf("pattern form %d: the analysts' columns %v %v (%v), want 40 and NULL", i, total, sun, err)
			}
		}
	})
}

// TestCreatedEmployeeAges: an employee created here keeps no sent form: it is served from its
// typed columns, its length of service reckoned when it is read, so it grows with the clock.
func TestCreatedEmployeeAges(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var now atomic.Int64
			now.Store(fixedNow.UnixNano())
			s := sinktest.Store(t, backend, sink.Options{Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }})
			ctx := context.Background()
			e, err := s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Zoë", LastName: "Ng", Email: "zoe@example.com", JoinDate: "2025-08-31"})
			if err != nil {
				t.Fatal(err)
			}
			if e.Sent != nil || !strings.Contains(string(e.AppendJSON(nil)), `"company_join_date":"2025-08-31","job_start_date":"2025-08-31","length_of_service_in_months":14,`) {
				t.Errorf("created: sent %s, served %s", e.Sent, e.AppendJSON(nil))
			}
			var sent sql.NullString
			if err := sinktest.DB(s).QueryRowContext(ctx, `SELECT CAST(sent AS text) FROM employees WHERE id = $1`, e.ID).Scan(&sent); err != nil || sent.Valid {
				t.Errorf("a created employee's sent %v (%v), want NULL", sent, err)
			}
			now.Store(fixedNow.AddDate(0, 3, 0).UnixNano())
			got, _, err := s.Employee(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(got.AppendJSON(nil)), `"length_of_service_in_months":17,`) {
				t.Errorf("three months later, served %s, want 17 months of service", got.AppendJSON(nil))
			}
		})
	}
}
