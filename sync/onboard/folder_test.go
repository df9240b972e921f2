package onboard_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/internal/slowness"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/runner"
)

// ukCohort is a cohort exported by Excel in a UK locale: day-first dates.
const ukCohort = "First Name,Last Name,Email,Start Date\r\n" +
	"Ana,Lima,ana@example.com,25/12/2026\r\n" +
	"Bo,Ek,bo@example.com,24/12/2026\r\n" +
	"Cy,Ng,cy@example.com,31/12/2026\r\n"

// Date layouts that reject, then accept, ukCohort's dates: a US file's (month first: 25/12 is no
// date), then the UK's (day first).
const (
	rejectUK = "01/02/2006"
	acceptUK = "02/01/2006"
)

// workbook is what an .xlsx file starts with: a zip archive.
var workbook = append([]byte("PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00"), bytes.Repeat([]byte{0x9c, 0x00, 0x01}, 200)...)

// unicodeText is s as Excel's "Unicode Text" writes it: UTF-16LE with a byte-order mark.
func unicodeText(s string) []byte {
	b := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

// writeFiles writes name → content into dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// warned reports whether a WARN line of the text log names the file with the outcome.
func warned(logs, file, outcome string) bool {
	for line := range strings.Lines(logs) {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, " file="+file+" ") && strings.Contains(line, " outcome="+outcome+" ") {
			return true
		}
	}
	return false
}

// TestNothingDroppedIsSilentlyIgnored is issue 27's item 1: every file dropped in the folder is
// taken, but the few that are a program's while it works (an open workbook's owner file, a
// download in progress, hidden files): a workbook, UTF-16 text, a file with no rows and one whose
// rows were all rejected go to failed/ with a report saying why and how to fix it, each logged
// at WARN and counted; a file with some rows rejected goes ahead, at WARN.
func TestNothingDroppedIsSilentlyIgnored(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			up := newUpstream(t, 0, fakeupstream.Options{})
			store := sinktest.Store(t, backend, sink.Options{})
			dir := t.TempDir()
			ignored := []string{"~$cohort-march.xlsx", ".~lock.cohort.ods#", ".DS_Store", "Thumbs.db", "cohort.csv.crdownload", "cohort.csv.part", "copy.tmp"}
			files := map[string][]byte{
				"cohort-march.xlsx":  workbook,
				"cohort-unicode.txt": unicodeText("First Name\tLast Name\tEmail\tStart Date\r\nAna\tLima\tana@example.com\t2026/12/01\r\n"),
				"empty.csv":          []byte("First Name,Last Name,Email,Start Date\r\n\r\n"),
				"uk.csv":             []byte(ukCohort),
				"mixed.csv":          []byte("First Name,Last Name,Email,Start Date\nDi,Oz,di@example.com,2026/12/01\nEd,Ek,not-an-email,2026/12/02\n"),
				"good.csv":           hiresCSV(1, 2),
			}
			for _, name := range ignored {
				files[name] = workbook
			}
			writeFiles(t, dir, files)
			reg := prometheus.NewRegistry()
			var logs sinktest.Buffer
			o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{DateLayout: rejectUK,
				Metrics: onboard.NewMetrics(reg), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			results, err := o.ProcessDir(context.Background(), dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range results {
				got[r.Name] = r.Outcome()
			}
			want := map[string]string{"cohort-march.xlsx": onboard.FileUnreadable, "cohort-unicode.txt": onboard.FileUnreadable,
				"empty.csv": onboard.FileUnreadable, "uk.csv": onboard.FileRejected, "mixed.csv": onboard.FilePartlyRejected, "good.csv": onboard.FileDone}
			for name, outcome := range want {
				if got[name] != outcome {
					t.Errorf("%s: outcome %q, want %q", name, got[name], outcome)
				}
			}
			if len(got) != len(want) {
				t.Errorf("taken %v, want only %v", got, want)
			}
			reports := map[string][]string{
				"failed/cohort-march.xlsx.result.csv":  {",unreadable,", "spreadsheet workbook", "save it as CSV UTF-8"},
				"failed/cohort-unicode.txt.result.csv": {",unreadable,", "UTF-16", "save it as CSV UTF-8"},
				"failed/empty.result.csv":              {",unreadable,", "no rows"},
				"failed/uk.result.csv":                 {"ana@example.com,rejected,", "cy@example.com,rejected,", "join_date"},
				"processed/mixed.result.csv":           {"di@example.com,created,", "not-an-email,rejected,"},
				"processed/good.result.csv":            {"new1@example.com,created,"},
			}
			for report, says := range reports {
				data, err := os.ReadFile(filepath.Join(dir, report))
				if err != nil {
					t.Errorf("report: %v", err)
					continue
				}
				for _, s := range says {
					if !strings.Contains(string(data), s) {
						t.Errorf("%s does not say %q:\n%s", report, s, data)
					}
				}
			}
			for _, name := range ignored {
				if !exists(t, filepath.Join(dir, name)) {
					t.Errorf("%s was taken; it is a program's file, left alone", name)
				}
			}
			names, err := onboard.FailedFiles(dir)
			if slices.Sort(names); err != nil || !slices.Equal(names, []string{"cohort-march.xlsx", "cohort-unicode.txt", "empty.csv", "uk.csv"}) {
				t.Errorf("failed/ lists %v (%v)", names, err)
			}
			for name, outcome := range want {
				if isWarn := outcome != onboard.FileDone; warned(logs.String(), name, outcome) != isWarn {
					t.Errorf("%s (%s): logged at WARN %v, want %v:\n%s", name, outcome, !isWarn, isWarn, logs.String())
				}
			}
			for outcome, n := range map[string]float64{onboard.FileUnreadable: 3, onboard.FileRejected: 1, onboard.FilePartlyRejected: 1,
				onboard.FileDone: 1, onboard.FileUnresolved: 0} {
				if got := counterValue(t, reg, "hrsync_onboarding_files_total", "outcome", outcome); got != n {
					t.Errorf("hrsync_onboarding_files_total{outcome=%q} = %v, want %v", outcome, got, n)
				}
			}
			if got := counterValue(t, reg, "hrsync_onboarding_rows_total", "outcome", onboard.OutcomeRejected); got != 4 {
				t.Errorf("hrsync_onboarding_rows_total{outcome=\"rejected\"} = %v, want 4", got)
			}
			if n := up.Count("/v1/employees", http.StatusCreated); n != 3 {
				t.Errorf("%d created, want 3", n)
			}
		})
	}
}

// TestAFailingPassIsAFailedJob: a pass of the worker's job in which a file fails counts the job
// run failed (not ok); the worker goes on, the file put in failed/ for its content is not
// retried pass after pass, and the next passes are ok.
func TestAFailingPassIsAFailedJob(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, 0, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"cohort-march.xlsx": workbook})
	reg := prometheus.NewRegistry()
	var logs sinktest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{Metrics: onboard.NewMetrics(reg), Logger: log})
	jobs, err := runner.NewRunner(context.Background(), runner.RunnerOptions{Lock: store, Metrics: runner.NewMetrics(reg), Logger: log},
		o.Job(time.Second, onboard.PassOptions{Dir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	jobs.Start()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := jobs.Stop(ctx); err != nil {
			t.Error(err)
		}
	}()
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		slowness.Wait{For: 30 * time.Second, Detail: logs.String}.Until(t, what, cond)
	}
	runs := func(outcome string) float64 {
		return counterValue(t, reg, "hrsync_job_runs_total", "outcome", outcome)
	}
	waitUntil("failed run", func() bool { return runs("failed") == 1 })
	if !exists(t, filepath.Join(dir, "failed", "cohort-march.xlsx")) {
		t.Fatal("the workbook is not in failed/")
	}
	writeFiles(t, dir, map[string][]byte{"good.csv": hiresCSV(1, 2)})
	waitUntil("the next file onboarded", func() bool { return exists(t, filepath.Join(dir, "processed", "good.csv")) })
	waitUntil("ok run", func() bool { return runs("ok") >= 1 })
	if got := runs("failed"); got != 1 {
		t.Errorf("hrsync_job_runs_total{outcome=\"failed\"} = %v, want 1", got)
	}
	if got := counterValue(t, reg, "hrsync_onboarding_files_total", "outcome", onboard.FileUnreadable); got != 1 {
		t.Errorf("the workbook was taken %v times, want once", got)
	}
}

// TestAFixedFileIsTakenAgain is issue 27's item 3 as people-ops met it: a UK export rejected
// under one date layout, the layout set, the same bytes dropped again: everyone is created (not
// "rejected (done before)"), once; the copy left in failed/ is finished by the worker's next
// retry of it, creating nobody twice.
func TestAFixedFileIsTakenAgain(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			up := newUpstream(t, 0, fakeupstream.Options{})
			store := sinktest.Store(t, backend, sink.Options{})
			dir := t.TempDir()
			writeFiles(t, dir, map[string][]byte{"uk.csv": []byte(ukCohort)})
			now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
			before := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{DateLayout: rejectUK})
			rs, err := before.Pass(ctx, onboard.PassOptions{Dir: dir, Retries: &onboard.FailedRetries{Now: func() time.Time { return now }}})
			if err != nil || len(rs) != 1 || rs[0].Outcome() != onboard.FileRejected || !exists(t, filepath.Join(dir, "failed", "uk.csv")) {
				t.Fatalf("under %q: %+v %v", rejectUK, rs, err)
			}

			writeFiles(t, dir, map[string][]byte{"uk.csv": []byte(ukCohort)}) // the same bytes again
			retries := &onboard.FailedRetries{Now: func() time.Time { return now }}
			after := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{DateLayout: acceptUK})
			rs, err = after.Pass(ctx, onboard.PassOptions{Dir: dir, Retries: retries})
			if err != nil || len(rs) != 1 {
				t.Fatalf("under %q: %+v %v", acceptUK, rs, err)
			}
			if got := outcomes(rs[0]); got[onboard.OutcomeCreated] != 3 || len(got) != 1 {
				t.Errorf("the same bytes under %q: %v, want 3 created", acceptUK, rs[0].Rows)
			}
			now = now.Add(onboard.FailedRetryInitial)
			rs, err = after.Pass(ctx, onboard.PassOptions{Dir: dir, Retries: retries})
			if err != nil || len(rs) != 1 || outcomes(rs[0])[onboard.OutcomeAlreadyDone] != 3 {
				t.Errorf("the copy in failed/: %+v %v", rs, err)
			}
			if names, _ := onboard.FailedFiles(dir); len(names) != 0 {
				t.Errorf("failed/ still holds %v", names)
			}
			for email, n := range createdPerEmail(up) {
				if n != 1 {
					t.Errorf("%s created %d times", email, n)
				}
			}
			if n := up.Count("/v1/employees", http.StatusCreated); n != 3 {
				t.Errorf("%d created, want 3", n)
			}
		})
	}
}

// TestARestartedWorkerTakesAgainWhatItsSettingsRejected: a worker does not retry, pass after
// pass, a file it put in failed/ because every row was rejected; the worker restarted with a
// date layout that reads the rows gives that file one try, a minute after it starts, and the
// fix applies without anyone moving the file.
func TestARestartedWorkerTakesAgainWhatItsSettingsRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := newUpstream(t, 0, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"uk.csv": []byte(ukCohort)})
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	reg := prometheus.NewRegistry()
	first := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{DateLayout: rejectUK, Metrics: onboard.NewMetrics(reg)})
	pass := onboard.PassOptions{Dir: dir, Retries: &onboard.FailedRetries{Now: clock}}
	for _, after := range []time.Duration{0, onboard.FailedRetryInitial, time.Hour, 24 * time.Hour} {
		now = now.Add(after)
		if _, err := first.Pass(ctx, pass); err != nil {
			t.Fatal(err)
		}
	}
	if got := counterValue(t, reg, "hrsync_onboarding_files_total", "outcome", onboard.FileRejected); got != 1 {
		t.Errorf("the rejected file was taken %v times by the worker that rejected it, want once", got)
	}

	restarted := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{DateLayout: acceptUK})
	pass.Retries = &onboard.FailedRetries{Now: clock}
	for _, step := range []struct {
		after    time.Duration
		finished bool
	}{{0, false}, {onboard.FailedRetryInitial, true}} {
		now = now.Add(step.after)
		if _, err := restarted.Pass(ctx, pass); err != nil {
			t.Fatal(err)
		}
		if got := exists(t, filepath.Join(dir, "processed", "uk.csv")); got != step.finished {
			t.Fatalf("%s after the restart: finished %v, want %v", step.after, got, step.finished)
		}
	}
	if n := up.Count("/v1/employees", http.StatusCreated); n != 3 {
		t.Errorf("%d created, want 3", n)
	}
}

// refusing is a source that refuses (422) creates of one join date, counting the creates sent.
type refusing struct {
	onboard.Upstream
	date string
	sent atomic.Int32
}

func (r *refusing) CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error) {
	r.sent.Add(1)
	if ne.JoinDate == r.date {
		return v1.Employee{}, &v1.ValidationError{Problems: []v1.FieldProblem{{Field: "employee[join_date]", Reasons: []string{"is a company holiday"}}}}
	}
	return r.Upstream.CreateEmployee(ctx, ne)
}

// TestARefusedRowIsSentAgainOnlyWhenItsCreateChanged: a row the source refused (422) is not
// sent again for the same bytes read with the same settings, and is sent again when a setting
// changes what would be sent (the date layout reads its date otherwise).
func TestARefusedRowIsSentAgainOnlyWhenItsCreateChanged(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			up := newUpstream(t, 0, fakeupstream.Options{})
			store := sinktest.Store(t, backend, sink.Options{})
			src := &refusing{Upstream: fastClient(t, up, client.Options{}), date: "2026-02-01"}
			data := []byte("First Name,Last Name,Email,Start Date\nAna,Lima,ana@example.com,01/02/2026\n")
			dayFirst := onboard.New(src, store, onboard.Options{DateLayout: "02/01/2006"})
			for i, wantSent := range []int32{1, 1} {
				r := dayFirst.ProcessFile(ctx, "a.csv", data)
				if len(r.Rows) != 1 || r.Rows[0].Outcome != onboard.OutcomeRejected || !strings.Contains(r.Rows[0].Reason, "company holiday") || src.sent.Load() != wantSent {
					t.Fatalf("run %d: %+v, %d sent, want %d", i+1, r.Rows, src.sent.Load(), wantSent)
				}
			}
			monthFirst := onboard.New(src, store, onboard.Options{DateLayout: "01/02/2006"})
			r := monthFirst.ProcessFile(ctx, "a.csv", data)
			if len(r.Rows) != 1 || r.Rows[0].Outcome != onboard.OutcomeCreated || src.sent.Load() != 2 {
				t.Errorf("read month-first: %+v, %d sent, want 2", r.Rows, src.sent.Load())
			}
		})
	}
}

// takenEmails is a warehouse in which some emails are taken, as the test says.
type takenEmails struct {
	onboard.Ledger
	taken map[string]bool
}

func (l *takenEmails) EmailTaken(_ context.Context, email string) (bool, error) {
	return l.taken[email], nil
}

// TestASkippedRowIsCheckedAgain: a row skipped because its email was taken is checked again the
// next time its file is taken, and created once the email is free.
func TestASkippedRowIsCheckedAgain(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			up := newUpstream(t, 0, fakeupstream.Options{})
			ledger := &takenEmails{Ledger: sinktest.Store(t, backend, sink.Options{}), taken: map[string]bool{"ana@example.com": true}}
			o := onboard.New(fastClient(t, up, client.Options{}), ledger, onboard.Options{})
			data := []byte("First Name,Last Name,Email,Start Date\nAna,Lima,ana@example.com,2026/12/01\n")
			if r := o.ProcessFile(ctx, "a.csv", data); outcomes(r)[onboard.OutcomeSkipped] != 1 {
				t.Fatalf("taken: %+v", r.Rows)
			}
			ledger.taken = nil // the leaver's record gone, say
			if r := o.ProcessFile(ctx, "a.csv", data); outcomes(r)[onboard.OutcomeCreated] != 1 {
				t.Errorf("free again: %+v", r.Rows)
			}
		})
	}
}

// TestDocsShowWhatTheFolderSays holds docs/onboarding.md to what the folder pass logs and
// reports for a workbook, Excel's Unicode Text and a UK export under a layout that rejects it.
func TestDocsShowWhatTheFolderSays(t *testing.T) {
	t.Parallel()
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "onboarding.md"))
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, 0, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{
		"cohort-march.xlsx":  workbook,
		"cohort-unicode.txt": unicodeText("First Name\tLast Name\tEmail\tStart Date\r\nAna\tLima\tana@example.com\t2026/12/01\r\n"),
		"cohort-uk.csv":      []byte("First Name,Last Name,Email,Start Date\r\nAna,Lima,ana@example.com,25/12/2026\r\nBo,Ek,bo@example.com,24/12/2026\r\n"),
	})
	var logs sinktest.Buffer
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{DateLayout: rejectUK,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: noTime}))})
	if _, err := o.ProcessDir(context.Background(), dir, 0); err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(logs.String()) {
		if strings.HasPrefix(line, "level=WARN") {
			n++
			if !bytes.Contains(docs, []byte(line)) {
				t.Errorf("docs/onboarding.md does not show the line it logs:\n%s", line)
			}
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "failed", "cohort-march.xlsx.result.csv"))
	// The docs show the report as a reader does: without its byte-order mark.
	if err != nil || !bytes.HasPrefix(report, []byte(onboard.BOM)) || !bytes.Contains(docs, bytes.TrimPrefix(report, []byte(onboard.BOM))) {
		t.Errorf("docs/onboarding.md does not show the workbook's report (%v):\n%s", err, report)
	}
	if n != 3 {
		t.Errorf("%d WARN lines, want 3:\n%s", n, logs.String())
	}
}
