package sink_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// eventChanges are the collections whose records change after they are first synced (the events,
// and the reference data they point at, renamed now and then), each with
// a record as first synced (id 41), the same record after the change a later sync brings, and an
// expression reading the changed field as text on both backends.
var eventChanges = []struct {
	c             *v1.Collection
	before, after string
	field         string
	was, is       string
}{
	{v1.Absences,
		`{"id":41,"employee":{"id":1},"start_date":"2026-10-05","end_date":"2026-10-06","cancelled":false,"type":"Holiday"}`,
		`{"id":41,"employee":{"id":1},"start_date":"2026-10-05","end_date":"2026-10-06","cancelled":true,"type":"Holiday"}`,
		`CASE WHEN cancelled THEN 'cancelled' ELSE 'booked' END`, "booked", "cancelled"},
	{v1.Sicknesses,
		`{"id":41,"employee":{"id":1},"start_date":"2026-10-05","end_date":null,"status":"off_sick"}`,
		`{"id":41,"employee":{"id":1},"start_date":"2026-10-05","end_date":"2026-10-09","status":"off_sick"}`,
		`coalesce(CAST(end_date AS TEXT), 'ongoing')`, "ongoing", "2026-10-09"},
	{v1.LeaveRequests,
		`{"id":41,"employee":{"id":1},"start_date":"2026-10-20","end_date":"2026-10-24","status":"pending"}`,
		`{"id":41,"employee":{"id":1},"approved_by":{"id":2},"start_date":"2026-10-20","end_date":"2026-10-24","status":"approved"}`,
		`status`, "pending", "approved"},
	{v1.EmployeeTrainingCourses,
		`{"id":41,"name":"First aid","start_on":"2026-10-12","status":"booked","outcome":null,"employee":{"id":1}}`,
		`{"id":41,"name":"First aid","start_on":"2026-10-12","status":"completed","outcome":"passed","employee":{"id":1}}`,
		`coalesce(outcome, 'none')`, "none", "passed"},
	{v1.Departments, `{"id":41,"name":"Sales"}`, `{"id":41,"name":"Sales & Marketing"}`, `name`, "Sales", "Sales & Marketing"},
	{v1.Locations, `{"id":41,"name":"Leeds"}`, `{"id":41,"name":"Leeds (Wellington Place)"}`, `name`, "Leeds", "Leeds (Wellington Place)"},
	{v1.OtherLeaveReasons, `{"id":41,"name":"Jury duty"}`, `{"id":41,"name":"Jury service"}`, `name`, "Jury duty", "Jury service"},
}

// version is one row of a history, its timestamps as the driver reads them (text on SQLite, a
// time on Postgres: each compares with its own backend's values).
type version struct {
	from    string
	to      sql.NullString
	value   string
	deleted bool
}

func versions(t *testing.T, s *sink.Store, table, field string, id int64) []version {
	t.Helper()
	rows, err := sinktest.DB(s).QueryContext(context.Background(), sinktest.DB(s).Rebind(`SELECT valid_from, valid_to, `+field+`, deleted_at IS NOT NULL
FROM `+table+`_history WHERE id = ? ORDER BY valid_from`), id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []version
	for rows.Next() {
		var v version
		if err := rows.Scan(&v.from, &v.to, &v.value, &v.deleted); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// asOf is the changed field of record id as it stood at time at, by the query the README shows.
func asOf(t *testing.T, s *sink.Store, table, field string, id int64, at string) string {
	t.Helper()
	var v string
	err := sinktest.DB(s).QueryRowContext(context.Background(), sinktest.DB(s).Rebind(`SELECT `+field+` FROM `+table+`_history
WHERE id = ? AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?) AND listed AND deleted_at IS NULL`), id, at, at).Scan(&v)
	if err != nil {
		t.Fatalf("%s %d as of %s: %v", table, id, at, err)
	}
	return v
}

// nextMillisecond waits until the clock has moved on: SQLite's periods are to the millisecond,
// and a second write of a row within one replaces that millisecond's version (as on Postgres
// within one transaction).
func nextMillisecond() { time.Sleep(2 * time.Millisecond) }

// TestEventHistory: the merge of each changing collection keeps its history: a first sync
// writes one open version a record; an unchanged sync writes none; a change closes the version
// and opens the next, so the record reads as it was at any time; a soft delete closes the
// version and opens one with deleted_at; a hard delete by hand closes it.
func TestEventHistory(t *testing.T) {
	t.Parallel()
	for _, tc := range eventChanges {
		t.Run(tc.c.Name, func(t *testing.T) {
			t.Parallel()
			backends(t, func(t *testing.T, s *sink.Store) {
				ctx := context.Background()
				table := tc.c.Name
				other := strings.Replace(tc.before, `{"id":41,`, `{"id":42,`, 1)
				complete := sink.MergeOptions{Complete: true}

				sinktest.WalkRecords(t, s, tc.c, sinktest.Records(t, tc.c, tc.before, other), complete)
				first := versions(t, s, table, tc.field, 41)
				if len(first) != 1 || first[0].to.Valid || first[0].value != tc.was {
					t.Fatalf("after the first sync: %+v, want one open version with %q", first, tc.was)
				}

				nextMillisecond()
				if res := sinktest.WalkRecords(t, s, tc.c, sinktest.Records(t, tc.c, tc.before, other), complete); res.Unchanged != 2 {
					t.Fatalf("unchanged sync: %+v", res)
				}
				var n int
				if err := sinktest.DB(s).GetContext(ctx, &n, `SELECT count(*) FROM `+table+`_history`); err != nil || n != 2 {
					t.Errorf("an unchanged sync left %d versions (%v), want 2", n, err)
				}

				nextMillisecond()
				if res := sinktest.WalkRecords(t, s, tc.c, sinktest.Records(t, tc.c, tc.after, other), complete); res.Updated != 1 || res.Unchanged != 1 {
					t.Fatalf("sync of the change: %+v, want 1 updated, 1 unchanged", res)
				}
				vs := versions(t, s, table, tc.field, 41)
				if len(vs) != 2 {
					t.Fatalf("after the change: %+v, want two versions", vs)
				}
				if vs[0].from != first[0].from || vs[0].value != tc.was || vs[0].to.String != vs[1].from {
					t.Errorf("the first version after the change is %+v, want %q from %s, closed at %s", vs[0], tc.was, first[0].from, vs[1].from)
				}
				if vs[1].to.Valid || vs[1].value != tc.is || vs[1].deleted {
					t.Errorf("the current version is %+v, want %q, open", vs[1], tc.is)
				}
				if got := asOf(t, s, table, tc.field, 41, vs[0].from); got != tc.was {
					t.Errorf("as it stood when first synced: %q, want %q", got, tc.was)
				}
				if got := asOf(t, s, table, tc.field, 41, vs[1].from); got != tc.is {
					t.Errorf("as it stood after the change: %q, want %q", got, tc.is)
				}
				if others := versions(t, s, table, tc.field, 42); len(others) != 1 {
					t.Errorf("the unchanged record has %d versions, want 1", len(others))
				}

				nextMillisecond()
				if res := sinktest.WalkRecords(t, s, tc.c, sinktest.Records(t, tc.c, tc.after), sink.MergeOptions{Complete: true, AllowMassDelete: true}); res.Deleted != 1 {
					t.Fatalf("sync without record 42: %+v, want 1 deleted", res)
				}
				gone := versions(t, s, table, tc.field, 42)
				if len(gone) != 2 || gone[0].deleted || gone[0].to.String != gone[1].from || !gone[1].deleted || gone[1].to.Valid {
					t.Errorf("record 42 after its deletion: %+v, want its version closed and an open one with deleted_at", gone)
				}
				var current int
				if err := sinktest.DB(s).GetContext(ctx, &current, `SELECT count(*) FROM `+table+`_history WHERE valid_to IS NULL AND listed AND deleted_at IS NULL`); err != nil || current != 1 {
					t.Errorf("%d current versions (%v), want 1: record 41", current, err)
				}

				nextMillisecond()
				if _, err := sinktest.DB(s).ExecContext(ctx, `DELETE FROM `+table+` WHERE id = 41`); err != nil {
					t.Fatal(err)
				}
				vs = versions(t, s, table, tc.field, 41)
				if len(vs) != 2 || !vs[1].to.Valid {
					t.Errorf("record 41 after a hard delete: %+v, want its last version closed", vs)
				}
			})
		})
	}
}

// TestEventHistoryKeepsTheLastWriteOfATransaction: on Postgres, two writes of a row in one
// transaction leave one version, the last, and the version before it closed once. (SQLite's
// periods are per millisecond, not per transaction: see nextMillisecond.)
func TestEventHistoryKeepsTheLastWriteOfATransaction(t *testing.T) {
	t.Parallel()
	s := openPostgres(t)
	ctx := context.Background()
	{
		tc := eventChanges[2] // leave requests
		sinktest.WalkRecords(t, s, tc.c, sinktest.Records(t, tc.c, tc.before), sink.MergeOptions{Complete: true})
		nextMillisecond()
		tx, err := sinktest.DB(s).BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		for _, st := range []string{"approved", "cancelled"} {
			if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE leave_requests SET status = ? WHERE id = 41`), st); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		vs := versions(t, s, "leave_requests", "status", 41)
		if len(vs) != 2 || vs[0].value != "pending" || vs[0].to.String != vs[1].from || vs[1].value != "cancelled" || vs[1].to.Valid {
			t.Errorf("versions %+v, want pending closed, then cancelled open", vs)
		}
	}
}

// TestEventHistoryUpgrade: rows a warehouse holds when it is upgraded to history get their first
// version in the migration, and their next change closes it.
func TestEventHistoryUpgrade(t *testing.T) {
	t.Parallel()
	for _, d := range []schema.Dialect{schema.Postgres, schema.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			db := openRawDB(t, d)
			ms, err := schema.Migrations(d)
			if err != nil {
				t.Fatal(err)
			}
			before := slices.IndexFunc(ms, func(m schema.Migration) bool { return m.Name == "event_history" })
			if before < 0 {
				t.Fatal("no event_history migration")
			}
			migrateTo(t, db, d, before) // the build before history
			for _, tc := range eventChanges {
				if _, err := db.ExecContext(ctx, `INSERT INTO `+tc.c.Name+` (id) VALUES (7)`); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := sink.MigrateDB(ctx, db, d); err != nil {
				t.Fatal(err)
			}
			nextMillisecond()
			for _, tc := range eventChanges {
				var n, open int
				if err := db.QueryRowContext(ctx, `SELECT count(*), count(valid_to) FROM `+tc.c.Name+`_history WHERE id = 7 AND listed AND origin = 'source'`).Scan(&n, &open); err != nil || n != 1 || open != 0 {
					t.Errorf("%s: %d versions, %d closed (%v), want one open version of the existing row", tc.c.Name, n, open, err)
				}
				if _, err := db.ExecContext(ctx, `UPDATE `+tc.c.Name+` SET deleted_at = synced_at WHERE id = 7`); err != nil {
					t.Fatal(err)
				}
				if err := db.QueryRowContext(ctx, `SELECT count(*), count(valid_to) FROM `+tc.c.Name+`_history WHERE id = 7`).Scan(&n, &open); err != nil || n != 2 || open != 1 {
					t.Errorf("%s after a change: %d versions, %d closed (%v), want 2 and 1", tc.c.Name, n, open, err)
				}
			}
		})
	}
}

// TestHistoryTriggersFollowTheDeclarations: the history triggers are made from the declarations,
// not by hand: one dropped by hand is flagged by DeclarationMismatches and made again by the
// next migrate (no migration left to apply), after which an update writes its version again and
// a hard delete closes it, as in every other history.
func TestHistoryTriggersFollowTheDeclarations(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		e, err := s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Zoë", LastName: "Ng", Email: "zoe@example.com", JoinDate: "2025-08-31"})
		if err != nil {
			t.Fatal(err)
		}
		drop := `DROP TRIGGER employees_history_upd`
		if s.Dialect() == schema.Postgres {
			drop += ` ON employees`
		}
		if _, err := sinktest.DB(s).ExecContext(ctx, drop); err != nil {
			t.Fatal(err)
		}
		flag := "history triggers differ from the declarations: CREATE TRIGGER employees_history_upd AFTER…"
		bad, err := sink.DeclarationMismatches(ctx, s)
		if err != nil || !slices.Contains(bad, flag) {
			t.Errorf("with a history trigger dropped: mismatches %q (%v), want %q", bad, err, flag)
		}
		if applied, err := sink.MigrateDB(ctx, sinktest.DB(s).DB, s.Dialect()); err != nil || len(applied) != 0 {
			t.Fatalf("migrate: applied %v, %v; want nothing to apply", applied, err)
		}
		if bad, err := sink.DeclarationMismatches(ctx, s); err != nil || len(bad) != 0 {
			t.Errorf("after migrate: mismatches %q (%v), want none", bad, err)
		}
		nextMillisecond()
		if _, err := sinktest.DB(s).ExecContext(ctx, sinktest.DB(s).Rebind(`UPDATE employees SET job_title = 'Chief' WHERE id = ?`), e.ID); err != nil {
			t.Fatal(err)
		}
		vs := versions(t, s, "employees", "coalesce(job_title, '')", e.ID)
		if len(vs) != 2 || vs[0].to != (sql.NullString{String: vs[1].from, Valid: true}) || vs[1].to.Valid ||
			vs[0].value != "" || vs[1].value != "Chief" {
			t.Fatalf("versions after an update %+v, want the created one closed and Chief open", vs)
		}
		nextMillisecond()
		if _, err := sinktest.DB(s).ExecContext(ctx, sinktest.DB(s).Rebind(`DELETE FROM employees WHERE id = ?`), e.ID); err != nil {
			t.Fatal(err)
		}
		if vs := versions(t, s, "employees", "coalesce(job_title, '')", e.ID); len(vs) != 2 || !vs[1].to.Valid {
			t.Errorf("versions after a hard delete %+v, want the last one closed", vs)
		}
	})
}

// TestAFieldAddedToEmployeesIsHistoried: a field added to employees takes one line in their
// declaration (collections.go) and one migration per dialect adding the column to employees and
// to employees_history; the triggers made from the declarations then keep it in every version.
// Here the migration is its two statements and the line a copy of the declarations with the
// column (sink.RemakeHistoryWith, what migrate does with the real ones).
func TestAFieldAddedToEmployeesIsHistoried(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		e, err := s.CreateEmployee(ctx, v1.NewEmployee{FirstName: "Zoë", LastName: "Ng", Email: "zoe@example.com", JoinDate: "2025-08-31"})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`ALTER TABLE employees ADD COLUMN nickname text`, `ALTER TABLE employees_history ADD COLUMN nickname text`} {
			if _, err := sinktest.DB(s).ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if err := sink.RemakeHistoryWith(ctx, s, "employees", "nickname"); err != nil {
			t.Fatal(err)
		}
		nextMillisecond()
		if _, err := sinktest.DB(s).ExecContext(ctx, sinktest.DB(s).Rebind(`UPDATE employees SET nickname = 'Zo' WHERE id = ?`), e.ID); err != nil {
			t.Fatal(err)
		}
		vs := versions(t, s, "employees", "coalesce(nickname, '-')", e.ID)
		if len(vs) != 2 || vs[0].value != "-" || vs[1].value != "Zo" || vs[1].to.Valid {
			t.Errorf("versions %+v, want the created one without a nickname and the current one Zo", vs)
		}
	})
}
