package onboard_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/onboard"
)

// The cohort of TestOnboardingRefusesErasedPeople as people-ops first exports it, and as they
// export it again: columns in another order, LF line ends, another row.
const (
	erasedCohort = "First Name,Last Name,Email,Start Date\r\n" +
		"Ana,Lima,ana@example.com,2026/12/01\r\n" +
		"Zorblax,Quendrith,zq-mail@marker.example,2026/12/02\r\n" +
		"Cy,Ng,cy@example.com,2026/12/03\r\n"
	erasedReexport = "Email,Start Date,Last Name,First Name\n" +
		"cy@example.com,2026/12/03,Ng,Cy\n" +
		"ZQ-Mail@Marker.example,2026/12/02,Quendrith,Zorblax\n" +
		"di@example.com,2026/12/04,Oz,Di\n"
)

// rowOf is the report's row of the email (case ignored).
func rowOf(t *testing.T, r onboard.FileResult, email string) onboard.RowResult {
	t.Helper()
	for _, x := range r.Rows {
		if strings.EqualFold(x.Email, email) {
			return x
		}
	}
	t.Fatalf("%s: no row of %s in %+v", r.Name, email, r.Rows)
	return onboard.RowResult{}
}

// TestOnboardingRefusesErasedPeople (issue 41, 1): once a person onboarded from a file is erased,
// neither the same file dropped again, nor a re-export of it (other bytes), nor another file
// sends them again, whether the source still has them or they were removed there; the ledger
// takes their email nowhere; the report says why and how to lift it; a dry run says the same.
// Lifted, a re-export onboards them again.
func TestOnboardingRefusesErasedPeople(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			up := newUpstream(t, 5, fakeupstream.Options{})
			store := sinktest.Store(t, backend, sink.Options{})
			o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{})
			first := o.ProcessFile(ctx, "cohort.csv", []byte(erasedCohort))
			if first.Err != nil || outcomes(first)[onboard.OutcomeCreated] != 3 {
				t.Fatalf("first drop: %v %v", first.Err, outcomes(first))
			}
			zq := rowOf(t, first, "zq-mail@marker.example").EmployeeID
			res, err := store.EraseEmployee(ctx, zq, nil, "ticket 9")
			if err != nil {
				t.Fatal(err)
			}
			erasure := res.IDs[0]
			posts := func() int {
				return up.Count("/v1/employees", http.StatusCreated) + up.Count("/v1/employees", http.StatusBadRequest)
			}
			sent := posts()
			// check: the erased person's row of r is skipped, saying why, and nothing of them was
			// sent or kept; the others' outcomes are wantOthers, and those created are all that
			// was sent.
			check := func(step string, r onboard.FileResult, wantOthers map[string]string) {
				t.Helper()
				if r.Err != nil {
					t.Fatalf("%s: %v", step, r.Err)
				}
				row := rowOf(t, r, "zq-mail@marker.example")
				want := fmt.Sprintf("this person's data was erased (erasure %d); lift the erasure (hrsync erase --lift %d", erasure, erasure)
				if row.Outcome != onboard.OutcomeSkipped || !strings.Contains(row.Reason, want) {
					t.Errorf("%s: the erased person's row: %+v, want skipped with %q", step, row, want)
				}
				for email, outcome := range wantOthers {
					if got := rowOf(t, r, email).Outcome; got != outcome {
						t.Errorf("%s: %s %s, want %s", step, email, got, outcome)
					}
					if outcome == onboard.OutcomeCreated {
						sent++
					}
				}
				if n := posts(); n != sent {
					t.Errorf("%s: %d creates sent of the erased person", step, n-sent)
					sent = n
				}
				if n := createdPerEmail(up)["zq-mail@marker.example"]; n > 1 {
					t.Errorf("%s: the source has the erased person %d times", step, n)
				}
				if found := sinktest.MarkersIn(t, store, []string{"zq-mail@marker.example", "Zorblax", "Quendrith"}); len(found) > 0 {
					t.Errorf("%s: the warehouse holds %q", step, found)
				}
			}
			done := map[string]string{"ana@example.com": onboard.OutcomeAlreadyDone, "cy@example.com": onboard.OutcomeAlreadyDone}
			check("the same file again", o.ProcessFile(ctx, "cohort-again.csv", []byte(erasedCohort)), done)
			dry := onboard.New(nil, store, onboard.Options{DryRun: true})
			check("a dry run of a re-export", dry.ProcessFile(ctx, "cohort.csv", []byte(erasedReexport)),
				map[string]string{"cy@example.com": onboard.OutcomeAlreadyDone, "di@example.com": onboard.OutcomeWouldCreate})
			check("a re-export", o.ProcessFile(ctx, "cohort.csv", []byte(erasedReexport)),
				map[string]string{"cy@example.com": onboard.OutcomeAlreadyDone, "di@example.com": onboard.OutcomeCreated})
			// Removed at the source, as docs/personal-data.md advises: still not created again.
			if !up.RemoveEmployee(zq) {
				t.Fatalf("the source has no employee %d", zq)
			}
			check("the same file, removed at the source", o.ProcessFile(ctx, "cohort.csv", []byte(erasedCohort)), done)
			check("a re-export, removed at the source", o.ProcessFile(ctx, "cohort.csv", []byte(erasedReexport+"\n")),
				map[string]string{"cy@example.com": onboard.OutcomeAlreadyDone, "di@example.com": onboard.OutcomeAlreadyDone})
			if n := createdPerEmail(up)["zq-mail@marker.example"]; n != 0 {
				t.Errorf("removed at the source, the erased person was created %d times", n)
			}

			// Lifted: a re-export onboards them again (the same file's row stays done: it created them).
			if _, err := store.LiftErasure(ctx, erasure, "withdrawn"); err != nil {
				t.Fatal(err)
			}
			again := o.ProcessFile(ctx, "cohort.csv", []byte(strings.ReplaceAll(erasedReexport, "\n", "\r\n")))
			if got := rowOf(t, again, "zq-mail@marker.example"); again.Err != nil || got.Outcome != onboard.OutcomeCreated {
				t.Errorf("after the lift: %+v, %v", got, again.Err)
			}
			if n := createdPerEmail(up)["zq-mail@marker.example"]; n != 1 {
				t.Errorf("after the lift, the source has the person %d times, want 1", n)
			}
		})
	}
}

// TestOnboardingDoesNotResolveErasedPeople: a create whose answer was lost (the ledger's row
// sending) of a person erased since is neither looked up nor sent again, nor confirmed with
// their email, when the file is dropped again.
func TestOnboardingDoesNotResolveErasedPeople(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			up := newUpstream(t, 5, fakeupstream.Options{})
			store := sinktest.Store(t, backend, sink.Options{})
			o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{})
			first := o.ProcessFile(ctx, "cohort.csv", []byte(erasedCohort))
			if first.Err != nil {
				t.Fatal(first.Err)
			}
			zq := rowOf(t, first, "zq-mail@marker.example")
			// As a crash between the send and its answer leaves it.
			sum := sha256.Sum256([]byte(erasedCohort))
			if err := store.PutOnboardingRow(ctx, sink.OnboardingRow{FileHash: hex.EncodeToString(sum[:]), FileName: "cohort.csv",
				Line: zq.Line, Email: zq.Email, Status: sink.RowSending}); err != nil {
				t.Fatal(err)
			}
			if _, err := store.EraseEmployee(ctx, zq.EmployeeID, nil, "ticket"); err != nil {
				t.Fatal(err)
			}
			lists, creates := up.Count("/v1/employees", http.StatusOK), up.Count("/v1/employees", http.StatusCreated)
			r := o.ProcessFile(ctx, "cohort.csv", []byte(erasedCohort))
			if got := rowOf(t, r, "zq-mail@marker.example"); r.Err != nil || got.Outcome != onboard.OutcomeSkipped || !strings.Contains(got.Reason, "erased") {
				t.Errorf("the erased person's sending row: %+v, %v", got, r.Err)
			}
			if up.Count("/v1/employees", http.StatusOK) != lists || up.Count("/v1/employees", http.StatusCreated) != creates {
				t.Error("the erased person was looked up or sent")
			}
			if got := sinktest.QueryString(t, store, `SELECT status || '|' || email FROM onboarding_rows WHERE line = ? AND file_name = 'cohort.csv'`, zq.Line); got != "sending|" {
				t.Errorf("the row is %q, want sending without the email", got)
			}
			if found := sinktest.MarkersIn(t, store, []string{"zq-mail@marker.example"}); len(found) > 0 {
				t.Errorf("the warehouse holds %q", found)
			}
		})
	}
}

// racedLedger is the warehouse as an onboarding run meets it when an erasure is made while a
// create is on its way: the first question about an email, the plan's, is answered as before the
// erasure (none); every later one as the warehouse answers it.
type racedLedger struct {
	*sink.Store
	asked map[string]bool
}

func (l *racedLedger) ErasedEmail(ctx context.Context, email string) (int64, error) {
	if !l.asked[email] {
		l.asked[email] = true
		return 0, nil
	}
	return l.Store.ErasedEmail(ctx, email)
}

// TestOnboardingConfirmsErasedPeopleWithoutTheirEmail: a person erased while their create was
// on its way is recorded as created (they were, under a new id), but their email is neither
// written back to the ledger nor their record kept in the warehouse, and the report says to
// erase the new id too.
func TestOnboardingConfirmsErasedPeopleWithoutTheirEmail(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			up := newUpstream(t, 5, fakeupstream.Options{})
			store := sinktest.Store(t, backend, sink.Options{})
			// The person as the warehouse held them (an earlier id), erased.
			sinktest.WalkEmployees(t, store, sinktest.Employees(t, `{"id":900,"first_name":"Zorblax","email":"zq-mail@marker.example"}`), 10, sink.MergeOptions{})
			res, err := store.EraseEmployee(ctx, 900, nil, "ticket")
			if err != nil {
				t.Fatal(err)
			}
			o := onboard.New(fastClient(t, up, client.Options{}), &racedLedger{Store: store, asked: map[string]bool{}}, onboard.Options{})
			r := o.ProcessFile(ctx, "cohort.csv", []byte(erasedCohort))
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			var got onboard.RowResult
			for _, x := range r.Rows {
				if x.Line == 3 {
					got = x
				}
			}
			want := fmt.Sprintf("but this person's data was erased meanwhile (erasure %d)", res.IDs[0])
			if got.Outcome != onboard.OutcomeCreated || got.EmployeeID == 0 || !strings.Contains(got.Reason, want) ||
				!strings.Contains(got.Reason, fmt.Sprintf("erase employee %d too", got.EmployeeID)) {
				t.Errorf("the row created meanwhile: %+v", got)
			}
			if row := sinktest.QueryString(t, store, `SELECT status || '|' || email || '|' || employee_id FROM onboarding_rows WHERE line = 3`); row != fmt.Sprintf("created||%d", got.EmployeeID) {
				t.Errorf("the ledger's row: %s", row)
			}
			if found := sinktest.MarkersIn(t, store, []string{"zq-mail@marker.example", "Zorblax", "Quendrith"}); len(found) > 0 {
				t.Errorf("the warehouse holds %q", found)
			}
		})
	}
}
