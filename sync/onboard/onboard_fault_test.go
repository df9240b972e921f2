package onboard_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/onboard"
)

// cohort is a file as a spreadsheet exports it on Linux or a Mac: LF line ends.
const cohort = "First Name,Last Name,Email,Start Date\n" +
	"Ana,Lima,ana@example.com,2026/12/01\n" +
	"Bo,Ek,bo@example.com,2026/12/02\n" +
	"Cy,Ng,cy@example.com,2026/12/03\n" +
	"Di,Oz,di@example.com,2026/12/04\n"

// reExport is the same cohort exported again: CRLF line ends (sed 's/$/\r/'), the columns and
// the rows in another order.
const reExport = "Email,Start Date,Last Name,First Name\r\n" +
	"di@example.com,2026/12/04,Oz,Di\r\n" +
	"cy@example.com,2026/12/03,Ng,Cy\r\n" +
	"bo@example.com,2026/12/02,Ek,Bo\r\n" +
	"ana@example.com,2026/12/01,Lima,Ana\r\n"

// closedPortClient is a client of a source whose port refuses connections.
func closedPortClient(t *testing.T) *client.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c, err := client.New("http://"+addr+"/v1", fakeupstream.DefaultAPIKey, client.Options{
		RetryInitial: time.Millisecond, RetryMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	return err == nil
}

// TestOnboardingHealsAfterAnOutageAndAReExport is issue 11's evidence: the source is down for an
// onboarding (the file goes to failed/, its rows unresolved); people-ops re-export the cohort
// (CRLF, columns and rows reordered) and drop it again: everyone is created exactly once, and the
// file left in failed/ is finished by a retry that creates nobody.
func TestOnboardingHealsAfterAnOutageAndAReExport(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			store := sinktest.Store(t, backend, sink.Options{})
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "cohort.csv"), []byte(cohort), 0o600); err != nil {
				t.Fatal(err)
			}
			down := onboard.New(closedPortClient(t), store, onboard.Options{})
			rs, err := down.ProcessDir(ctx, dir, 0)
			if err != nil || len(rs) != 1 {
				t.Fatalf("outage: %v %v", rs, err)
			}
			if got := outcomes(rs[0]); !rs[0].Failed() || got[onboard.OutcomeUnresolved] != 4 || len(got) != 1 {
				t.Fatalf("outage: %v, failed %v, err %v", got, rs[0].Failed(), rs[0].Err)
			}
			if !exists(t, filepath.Join(dir, "failed", "cohort.csv")) || !exists(t, filepath.Join(dir, "failed", "cohort.result.csv")) {
				t.Fatal("the file is not in failed/ with its report")
			}

			up := newUpstream(t, 5, fakeupstream.Options{})
			o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{})
			if err := os.WriteFile(filepath.Join(dir, "cohort.csv"), []byte(reExport), 0o600); err != nil {
				t.Fatal(err)
			}
			rs, err = o.ProcessDir(ctx, dir, 0)
			if err != nil || len(rs) != 1 {
				t.Fatalf("re-export: %v %v", rs, err)
			}
			if got := outcomes(rs[0]); rs[0].Failed() || got[onboard.OutcomeCreated] != 4 || len(got) != 1 {
				t.Fatalf("re-export: %v, err %v", got, rs[0].Err)
			}
			per := createdPerEmail(up)
			for _, e := range []string{"ana", "bo", "cy", "di"} {
				if per[e+"@example.com"] != 1 {
					t.Errorf("%s created %d times", e, per[e+"@example.com"])
				}
			}

			// The file in failed/ is finished by a retry: everyone is already done, nothing is
			// sent, and it moves to processed/ with its report, the old report gone.
			names, err := onboard.FailedFiles(dir)
			if err != nil || !slices.Equal(names, []string{"cohort.csv"}) {
				t.Fatalf("failed files %v %v", names, err)
			}
			rs, err = o.RetryFailed(ctx, dir, nil)
			if err != nil || len(rs) != 1 {
				t.Fatalf("retry: %v %v", rs, err)
			}
			if got := outcomes(rs[0]); rs[0].Failed() || got[onboard.OutcomeAlreadyDone] != 4 || len(got) != 1 {
				t.Fatalf("retry: %v, err %v", got, rs[0].Err)
			}
			if entries, _ := os.ReadDir(filepath.Join(dir, "failed")); len(entries) != 0 {
				t.Errorf("failed/ still holds %d entries", len(entries))
			}
			if processed, _ := filepath.Glob(filepath.Join(dir, "processed", "cohort*.csv")); len(processed) != 4 {
				t.Errorf("processed/ holds %v, want both files and their reports", processed)
			}
			if n := up.Count("/v1/employees", http.StatusCreated); n != 4 {
				t.Errorf("%d creates, want 4", n)
			}
			if n := up.Count("/v1/employees", http.StatusBadRequest); n != 0 {
				t.Errorf("%d creates refused: someone was sent twice", n)
			}
		})
	}
}

// TestOnboardingFindsAnUnconfirmedCreateByEmail: every create reaches the source but its answer
// is lost, and the source stops answering the look-up too, so the rows stay unresolved. The
// next run, on a re-export, finds each person by email and sends nobody again.
func TestOnboardingFindsAnUnconfirmedCreateByEmail(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			var broken atomic.Bool
			broken.Store(true)
			up := newUpstream(t, 30, fakeupstream.Options{Fault: func(_ int, r *http.Request) fakeupstream.Fault {
				switch {
				case !broken.Load():
					return fakeupstream.Fault{}
				case r.Method == http.MethodPost:
					return fakeupstream.Fault{DropAfterStore: true}
				default:
					return fakeupstream.Fault{Status: http.StatusServiceUnavailable}
				}
			}})
			store := sinktest.Store(t, backend, sink.Options{})
			o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{})
			first := o.ProcessFile(ctx, "cohort.csv", []byte(cohort))
			if got := outcomes(first); !first.Failed() || got[onboard.OutcomeUnresolved] != 4 || len(got) != 1 {
				t.Fatalf("first run: %v, err %v", got, first.Err)
			}
			if n := len(createdPerEmail(up)); n != 34 {
				t.Fatalf("the source holds %d employees, want the 30 and the 4 sent", n)
			}
			posts := up.Count("/v1/employees", fakeupstream.StatusDropped)

			broken.Store(false)
			r := o.ProcessFile(ctx, "cohort (re-export).csv", []byte(reExport))
			if got := outcomes(r); r.Failed() || got[onboard.OutcomeCreated] != 4 || len(got) != 1 {
				t.Fatalf("second run: %v, err %v", got, r.Err)
			}
			for _, x := range r.Rows {
				if x.EmployeeID == 0 || !strings.Contains(x.Reason, "confirmed by looking it up") {
					t.Errorf("line %d: %+v", x.Line, x)
				}
			}
			if n := up.Count("/v1/employees", fakeupstream.StatusDropped) + up.Count("/v1/employees", http.StatusCreated) +
				up.Count("/v1/employees", http.StatusBadRequest); n != posts {
				t.Errorf("%d creates sent in all, want the first run's %d: someone was sent again", n, posts)
			}
			for email, n := range createdPerEmail(up) {
				if n != 1 {
					t.Errorf("%s created %d times", email, n)
				}
			}
			// The first file's rows were settled too: none is left sending, and dropped again,
			// the file is already done.
			rows, err := store.OnboardingRows(ctx, first.Hash)
			if err != nil || len(rows) != 4 {
				t.Fatalf("ledger of the first file: %v %v", rows, err)
			}
			for line, row := range rows {
				if row.Status != sink.RowCreated || row.EmployeeID == 0 {
					t.Errorf("first file line %d: %s, employee %d", line, row.Status, row.EmployeeID)
				}
			}
			r = o.ProcessFile(ctx, "cohort.csv", []byte(cohort))
			if got := outcomes(r); r.Failed() || got[onboard.OutcomeAlreadyDone] != 4 || len(got) != 1 {
				t.Fatalf("the first file again: %v, err %v", got, r.Err)
			}
		})
	}
}

// TestOnboardingDryRunReportStaysOutOfTheFolderScan: a dry run of a file in the drop folder
// leaves its report where the next folder pass does not take it for a new-hire file.
func TestOnboardingDryRunReportStaysOutOfTheFolderScan(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, 5, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "cohort.csv")
	if err := os.WriteFile(path, []byte(cohort), 0o600); err != nil {
		t.Fatal(err)
	}
	dry := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{DryRun: true, Folder: dir})
	if _, err := dry.ProcessPath(context.Background(), path, ""); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(dir, "reports", "cohort.csv.dry-run.csv"))
	if err != nil || !bytes.Contains(report, []byte("would-create")) {
		t.Fatalf("report %q %v", report, err)
	}
	o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{Folder: dir})
	rs, err := o.ProcessDir(context.Background(), dir, 0)
	if err != nil || len(rs) != 1 || rs[0].Name != "cohort.csv" || rs[0].Failed() {
		t.Fatalf("the folder pass took %+v (%v)", rs, err)
	}
	if exists(t, filepath.Join(dir, "failed")) {
		t.Error("the folder pass failed a file")
	}
}
