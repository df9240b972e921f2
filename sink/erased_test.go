package sink_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestErasureKeepsFingerprints: erasing a person's identifying data keeps a keyed fingerprint
// of every email they had (their row, its history, their onboarding rows by id), never the
// email; ErasedEmail finds the erasure by any of them, however written; the ledger does not take
// such an email again; an erasure of other classes keeps none; lifting removes them.
func TestErasureKeepsFingerprints(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		sinktest.WalkEmployees(t, s, decodeEmployees(t,
			`{"id":42,"first_name":"Zorblax","last_name":"Quendrith","email":"zq-old@marker.example"}`,
			`{"id":43,"first_name":"Quinella","last_name":"Ostrander","email":"quinella@example.com"}`), 10, sink.MergeOptions{})
		nextMillisecond()
		sinktest.WalkEmployees(t, s, decodeEmployees(t,
			`{"id":42,"first_name":"Zorblax","last_name":"Quendrith","email":"zq-mail@marker.example"}`,
			`{"id":43,"first_name":"Quinella","last_name":"Ostrander","email":"quinella@example.com"}`), 10, sink.MergeOptions{})
		if err := s.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: "f1", FileName: "c.csv", Line: 2, Email: "zq-file@marker.example",
			Status: sink.RowCreated, EmployeeID: 42}); err != nil {
			t.Fatal(err)
		}
		if id, err := s.ErasedEmail(ctx, "zq-mail@marker.example"); err != nil || id != 0 {
			t.Fatalf("before any erasure: erasure %d, %v", id, err)
		}
		// Health alone: the person's emails stay, and nothing holds them back.
		if _, err := s.EraseEmployee(ctx, 42, []v1.Class{v1.Health}, "ticket 1"); err != nil {
			t.Fatal(err)
		}
		if id, err := s.ErasedEmail(ctx, "zq-mail@marker.example"); err != nil || id != 0 {
			t.Errorf("after an erasure of health: erasure %d, %v", id, err)
		}
		res, err := s.EraseEmployee(ctx, 42, nil, "ticket 2")
		if err != nil {
			t.Fatal(err)
		}
		erasure := res.IDs[0]
		for _, tc := range []struct {
			email string
			want  int64
		}{
			{"zq-mail@marker.example", erasure},
			{"  ZQ-Mail@Marker.EXAMPLE ", erasure},
			{"zq-old@marker.example", erasure},  // their history's
			{"zq-file@marker.example", erasure}, // their onboarding row's
			{"quinella@example.com", 0},
			{"", 0},
		} {
			if got, err := s.ErasedEmail(ctx, tc.email); err != nil || got != tc.want {
				t.Errorf("ErasedEmail(%q) = %d, %v; want %d", tc.email, got, err, tc.want)
			}
		}
		if got := sinktest.QueryString(t, s, `SELECT count(*) FROM erased_identities WHERE erasure_id = ?`, erasure); got != "3" {
			t.Errorf("%s fingerprints, want 3", got)
		}
		if got := sinktest.QueryString(t, s, `SELECT length(secret) FROM erasure_secret`); got != "32" {
			t.Errorf("the secret is %s bytes", got)
		}
		markers := []string{"zq-mail@marker.example", "zq-old@marker.example", "zq-file@marker.example", "Zorblax"}
		if found := markersIn(t, s, markers); len(found) > 0 {
			t.Errorf("after the erasure, found %q", found)
		}
		// The ledger does not take their email again, whoever writes it.
		if err := s.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: "f2", FileName: "d.csv", Line: 2, Email: "ZQ-mail@marker.example",
			Status: sink.RowRejected, Reason: "bad date", RequestHash: "rh"}); err != nil {
			t.Fatal(err)
		}
		if got := sinktest.QueryString(t, s, `SELECT email || '|' || coalesce(request_hash, 'null') FROM onboarding_rows WHERE file_hash = 'f2'`); got != "|null" {
			t.Errorf("a row of the erased person was written with %q", got)
		}
		// A second erasure of someone makes no second secret.
		if _, err := s.EraseEmployee(ctx, 43, nil, "ticket 3"); err != nil {
			t.Fatal(err)
		}
		if got := sinktest.QueryString(t, s, `SELECT count(*) FROM erasure_secret`); got != "1" {
			t.Errorf("%s secrets", got)
		}
		// Lifted: the fingerprints go, and the person may be onboarded again.
		if _, err := s.LiftErasure(ctx, erasure, "withdrawn"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ErasedEmail(ctx, "zq-mail@marker.example"); err != nil || got != 0 {
			t.Errorf("after the lift: erasure %d, %v", got, err)
		}
		if got := sinktest.QueryString(t, s, `SELECT count(*) FROM erased_identities WHERE erasure_id = ?`, erasure); got != "0" {
			t.Errorf("after the lift, %s fingerprints are kept", got)
		}
		if got, err := s.ErasedEmail(ctx, "quinella@example.com"); err != nil || got == 0 {
			t.Errorf("another erasure's fingerprint: erasure %d, %v", got, err)
		}
	})
}

// TestErasureSecretMadeOnce: two warehouses' handles erasing at once make one secret between
// them (INSERT … ON CONFLICT DO NOTHING, then SELECT), and each erasure's fingerprint is found
// by the other.
func TestErasureSecretMadeOnce(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			a, b, _, _ := sinktest.TwoStores(t, backend, sink.Options{})
			ctx := context.Background()
			sinktest.WalkEmployees(t, a, decodeEmployees(t,
				`{"id":1,"first_name":"A","email":"a@marker.example"}`, `{"id":2,"first_name":"B","email":"b@marker.example"}`), 10, sink.MergeOptions{})
			errs := make(chan error, 2)
			go func() { _, err := a.EraseEmployee(ctx, 1, nil, "t"); errs <- err }()
			go func() { _, err := b.EraseEmployee(ctx, 2, nil, "t"); errs <- err }()
			for range 2 {
				// On SQLite, one's scrub may meet the other's reader: the erasure is made all
				// the same (ErrNotScrubbed), which is not what this test is about.
				if err := <-errs; err != nil && !errors.Is(err, sink.ErrNotScrubbed) {
					t.Fatal(err)
				}
			}
			if got := sinktest.QueryString(t, a, `SELECT count(*) FROM erasure_secret`); got != "1" {
				t.Errorf("%s secrets", got)
			}
			for _, email := range []string{"a@marker.example", "b@marker.example"} {
				for _, s := range []*sink.Store{a, b} {
					if id, err := s.ErasedEmail(ctx, email); err != nil || id == 0 {
						t.Errorf("ErasedEmail(%s) = %d, %v", email, id, err)
					}
				}
			}
		})
	}
}

// TestErasureLeavesRecycledAddresses (issue 41, 6b): an onboarding row that names an employee
// is that employee's, whatever its email: the erased person's old address, given since to
// someone else, brings the other's row neither into the person's subject access nor into their
// erasure. A row that names no one (a create never answered, a refusal) is theirs by email, and
// its request hash goes with it.
func TestErasureLeavesRecycledAddresses(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		sinktest.WalkEmployees(t, s, decodeEmployees(t,
			`{"id":42,"first_name":"Zorblax","email":"shared@example.com"}`), 10, sink.MergeOptions{})
		nextMillisecond()
		sinktest.WalkEmployees(t, s, decodeEmployees(t,
			`{"id":42,"first_name":"Zorblax","email":"zq-mail@marker.example"}`,
			`{"id":77,"first_name":"Yselda","email":"shared@example.com"}`), 10, sink.MergeOptions{})
		for _, r := range []sink.OnboardingRow{
			{FileHash: "f1", FileName: "a.csv", Line: 2, Email: "shared@example.com", Status: sink.RowCreated, EmployeeID: 77},
			{FileHash: "f1", FileName: "a.csv", Line: 3, Email: "shared@example.com", Status: sink.RowSkipped, RequestHash: "rh-skipped", Reason: "the source already has this email"},
			{FileHash: "f1", FileName: "a.csv", Line: 4, Email: "zq-mail@marker.example", Status: sink.RowCreated, EmployeeID: 42},
		} {
			if err := s.PutOnboardingRow(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		x, err := s.SubjectAccess(ctx, 42)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, r := range subjectSection(x, "onboarding_rows").Rows {
			lines = append(lines, value(r, "line"))
		}
		if strings.Join(lines, ",") != "3,4" {
			t.Errorf("subject access of 42: onboarding lines %v, want 3,4 (line 2 is employee 77's)", lines)
		}
		if _, err := s.EraseEmployee(ctx, 42, nil, "ticket"); err != nil {
			t.Fatal(err)
		}
		for line, want := range map[int]string{
			2: "shared@example.com|null|77",
			3: "|null|null",
			4: "|null|42",
		} {
			got := sinktest.QueryString(t, s, `SELECT email || '|' || coalesce(request_hash, 'null') || '|' || coalesce(CAST(employee_id AS text), 'null') FROM onboarding_rows WHERE line = ?`, line)
			if got != want {
				t.Errorf("line %d after erasing 42: %s, want %s", line, got, want)
			}
		}
	})
}

// TestErasureDropsIdempotencyHash (issue 41, 6a): the request hash kept for a create of the
// erased person (an unsalted SHA-256 of their name, email, job title and join date) is replaced
// with one no request hashes to, and a retry under the key finds it so.
func TestErasureDropsIdempotencyHash(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		ne := v1.NewEmployee{FirstName: "Zorblax", LastName: "Quendrith", Email: "zq-mail@marker.example", JobTitle: "Chef", JoinDate: "2026-01-05"}
		claim := v1.IdempotencyClaim{Client: "hr-app", Key: "k1", Hash: ne.Hash(), TTL: time.Hour, Stale: time.Minute}
		if _, ok, err := s.ReserveIdempotency(ctx, claim); err != nil || !ok {
			t.Fatalf("reserve: %v %v", ok, err)
		}
		e, err := s.CreateEmployeeOnce(ctx, ne, "hr-app", "k1")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CompleteIdempotency(ctx, "hr-app", "k1", v1.IdempotencyRecord{Status: 201, EmployeeID: e.ID,
			Body: []byte(fmt.Sprintf(`{"employees":[{"id":%d,"first_name":"Zorblax","email":"zq-mail@marker.example"}]}`, e.ID))}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EraseEmployee(ctx, e.ID, nil, "ticket"); err != nil {
			t.Fatal(err)
		}
		if got := sinktest.QueryString(t, s, `SELECT request_hash FROM idempotency_keys WHERE idem_key = 'k1'`); got != v1.ErasedRequestHash {
			t.Errorf("request_hash after the erasure = %s, want %s", got, v1.ErasedRequestHash)
		}
		rec, reserved, err := s.ReserveIdempotency(ctx, claim)
		if err != nil || reserved || rec.Hash != v1.ErasedRequestHash {
			t.Errorf("a retry: %+v reserved %v, %v", rec, reserved, err)
		}
	})
}

// TestErasureRefreshesStatistics (issue 41, 2): the planner's statistics hold the values of the
// columns they sample (Postgres: pg_stats' most common values and histogram bounds; SQLite, built
// with STAT4: sqlite_stat4's sampled index keys) until the table is analyzed again. After an
// erase, and a retention run, none of them holds an erased value.
func TestErasureRefreshesStatistics(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		// 300 people and sicknesses: enough that ANALYZE keeps common values and histograms.
		// The erased values sort first, so that they are a histogram's first bound, and
		// repeat in their nested copies (line managers).
		var people []string
		people = append(people, `{"id":1,"first_name":"Aaazorblax","last_name":"Aaaquendrith","email":"aaa-zq@marker.example","job_title":"Chef","department":{"id":1,"name":"Dept 1"}}`)
		for i := 2; i <= 300; i++ {
			people = append(people, fmt.Sprintf(`{"id":%d,"first_name":"First%03d","last_name":"Last%03d","email":"p%03d@example.com","job_title":"Cook","department":{"id":1,"name":"Dept 1"},"line_manager":{"id":1,"first_name":"Aaazorblax","last_name":"Aaaquendrith"}}`, i, i, i, i))
		}
		sinktest.WalkEmployees(t, s, decodeEmployees(t, people...), 100, sink.MergeOptions{})
		var sick []string
		for i := 1; i <= 300; i++ {
			reason := fmt.Sprintf("reason %03d", i)
			if i%3 == 0 {
				reason = "Aaa-fever-note" // common: a most common value
			}
			sick = append(sick, fmt.Sprintf(`{"id":%d,"employee":{"id":%d},"start_date":"2019-02-01","end_date":"2019-02-03","deducted":"3.0","status":"returned","reason":%q}`, i, i%300+1, reason))
		}
		sinktest.WalkRecords(t, s, v1.Sicknesses, sinktest.Records(t, v1.Sicknesses, sick...), sink.MergeOptions{})
		// The onboarding ledger's email is indexed (sampled by STAT4 too): the person dropped in
		// forty files, among others.
		for i := 1; i <= 340; i++ {
			r := sink.OnboardingRow{FileHash: fmt.Sprintf("f%03d", i), FileName: "c.csv", Line: 2, Email: fmt.Sprintf("p%03d@example.com", i), Status: sink.RowCreated, EmployeeID: int64(i%299 + 2)}
			if i <= 40 {
				r.Email, r.EmployeeID = "aaa-zq@marker.example", 1
			}
			if err := s.PutOnboardingRow(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		db := sinktest.DB(s)
		// ANALYZE as an operator's shell would run it (a sync's PRAGMA optimize reads under an
		// analysis_limit, which takes no STAT4 samples).
		conn, err := db.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`PRAGMA analysis_limit = 0`, `ANALYZE`} {
			if s.Dialect() == schema.Postgres && strings.HasPrefix(q, "PRAGMA") {
				continue
			}
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		conn.Close()
		person := []string{"Aaazorblax", "Aaaquendrith", "aaa-zq@marker.example"}
		health := []string{"Aaa-fever-note"}
		stats := func(markers []string) []string {
			t.Helper()
			q := `SELECT tablename || '.' || attname || ': ' || coalesce(most_common_vals::text, '') || ' ' || coalesce(histogram_bounds::text, '')
FROM pg_stats WHERE schemaname = current_schema()`
			if s.Dialect() == schema.SQLite {
				var has bool
				if err := db.QueryRowContext(ctx, `SELECT count(*) > 0 FROM sqlite_master WHERE name = 'sqlite_stat4'`).Scan(&has); err != nil || !has {
					t.Fatalf("no sqlite_stat4 after ANALYZE (%v): this SQLite is not built with STAT4, and its samples need no test", err)
				}
				q = `SELECT tbl || '.' || idx || ': ' || CAST(sample AS TEXT) FROM sqlite_stat4`
			}
			var rows []string
			if err := db.SelectContext(ctx, &rows, q); err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, r := range rows {
				for _, m := range markers {
					if strings.Contains(strings.ToLower(r), strings.ToLower(m)) {
						found = append(found, strings.SplitN(r, ":", 2)[0]+": "+m)
					}
				}
			}
			return found
		}
		if found := stats(append(person, health...)); len(found) == 0 {
			t.Fatal("the statistics hold none of the values before the erasure: the test cannot fail")
		}
		if _, err := s.EraseEmployee(ctx, 1, nil, "ticket"); err != nil {
			t.Fatal(err)
		}
		if found := stats(person); len(found) > 0 {
			t.Errorf("after the erase, the statistics hold %q", found)
		}
		var ids []int64
		for i := int64(3); i <= 300; i += 3 {
			ids = append(ids, i)
		}
		if _, err := s.EraseBatches(ctx, []sink.ErasureBatch{{Kind: sink.ErasureRecord, Collection: "sicknesses", IDs: ids,
			Classes: []v1.Class{v1.Health}, Cause: sink.ErasureCauseRetention + "sickness details", Reason: "nightly"}}, sink.EraseOptions{}); err != nil {
			t.Fatal(err)
		}
		if found := stats(append(person, health...)); len(found) > 0 {
			t.Errorf("after retention, the statistics hold %q", found)
		}
	})
}

// TestErasureSaysOnceWhenStatisticsStay: a warehouse role that is not pg_statistic's owner (nor
// granted MAINTAIN) cannot rewrite it; its erasures still gather the statistics again (pg_stats
// shows no erased value), succeed, and say once, at WARN and without a value, what remains where.
func TestErasureSaysOnceWhenStatisticsStay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, schemaName := sinktest.Postgres(t)
	db, err := sql.Open("postgres", admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	role := "r_" + schemaName
	for _, q := range []string{`CREATE ROLE ` + role + ` LOGIN`, `GRANT CREATE ON DATABASE ` + sinktest.Database + ` TO ` + role,
		`CREATE SCHEMA ` + schemaName + ` AUTHORIZATION ` + role} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{`DROP OWNED BY ` + role + ` CASCADE`, `DROP ROLE ` + role} {
			if _, err := db.ExecContext(context.Background(), q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	u, err := neturl.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.User(role) // the test server trusts local connections
	var logs sinktest.Buffer
	opts := sink.Options{Schema: schemaName, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	if _, err := sink.Migrate(ctx, u.String(), opts); err != nil {
		t.Fatal(err)
	}
	s, err := sink.Open(ctx, u.String(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var people []string
	for i := 1; i <= 100; i++ {
		people = append(people, fmt.Sprintf(`{"id":%d,"first_name":"First%03d","email":"p%03d@example.com"}`, i, i, i))
	}
	people[0] = `{"id":1,"first_name":"Aaazorblax","email":"aaa-zq@marker.example"}`
	sinktest.WalkEmployees(t, s, decodeEmployees(t, people...), 100, sink.MergeOptions{})
	if _, err := sinktest.DB(s).ExecContext(ctx, `ANALYZE employees`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2} {
		if _, err := s.EraseEmployee(ctx, id, nil, "ticket"); err != nil {
			t.Fatalf("erase %d as a role that may not rewrite pg_statistic: %v", id, err)
		}
	}
	var held int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stats WHERE schemaname = $1
AND (coalesce(most_common_vals::text, '') || coalesce(histogram_bounds::text, '')) ILIKE '%aaa%'`, schemaName).Scan(&held); err != nil || held != 0 {
		t.Errorf("pg_stats holds the erased values in %d rows (%v)", held, err)
	}
	out := logs.String()
	if n := strings.Count(out, `"level":"WARN"`); n != 1 || !strings.Contains(out, "pg_catalog.pg_statistic") {
		t.Errorf("want one WARN naming pg_catalog.pg_statistic, logged:\n%s", out)
	}
	if strings.Contains(strings.ToLower(out), "aaa") {
		t.Errorf("the log holds an erased value:\n%s", out)
	}
}

// TestRetentionKeepsNoFingerprints: a retention rule that erases a leaver's identifying data ends
// the keeping of it, not the right to hire them again: no fingerprint is kept, so a rehire under
// the same email is onboarded as anyone else (lifting the rule's erasure instead would bring the
// old record back).
func TestRetentionKeepsNoFingerprints(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, s *sink.Store) {
		ctx := context.Background()
		sinktest.WalkEmployees(t, s, decodeEmployees(t,
			`{"id":42,"first_name":"Zorblax","last_name":"Quendrith","email":"zq-mail@marker.example"}`), 10, sink.MergeOptions{})
		res, err := s.EraseEmployees(ctx, []int64{42}, nil, sink.ErasureCauseRetention+"leavers", "nightly")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.IDs) != 1 {
			t.Fatalf("erasures %v, want one", res.IDs)
		}
		if got := sinktest.QueryString(t, s, `SELECT count(*) FROM erased_identities`); got != "0" {
			t.Errorf("a retention erasure kept %s fingerprints, want 0", got)
		}
		if got, err := s.ErasedEmail(ctx, "zq-mail@marker.example"); err != nil || got != 0 {
			t.Errorf("ErasedEmail after retention = %d, %v; want 0", got, err)
		}
		if found := markersIn(t, s, []string{"zq-mail@marker.example", "Zorblax"}); len(found) > 0 {
			t.Errorf("after the retention erasure, found %q", found)
		}
	})
}
