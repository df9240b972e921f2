package onboard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/onboard"
)

const (
	cutHeader = "First name,Last name,Email,Job title,Join date\n"
	cutDone   = "Ann,Lee,ann@example.com,Nurse,2026-12-01\n"
	noLineEnd = "the file ends inside this row (no line ending): it may be cut short; end the file with a line break and drop it again"
)

// TestReadHiresCutLastRow: a last row the file ends inside (no line ending, too few cells, an
// open quote) is rejected with its reason and never a hire, however valid its cells look; a
// file ending with a line ending reads as it always did.
func TestReadHiresCutLastRow(t *testing.T) {
	t.Parallel()
	ann := onboard.Hire{Line: 2, Employee: emp("Ann", "Lee", "ann@example.com", "Nurse", "2026-12-01")}
	tests := []struct {
		name string
		data string
		cut  int
		want []onboard.Hire
		prob []onboard.RowProblem
	}{{
		// The email column last: cut from .com, the row still looks valid.
		name: "email cut, no line ending",
		data: "First name,Last name,Join date,Email\nAnn,Lee,2026-12-01,ann@example.com\nTrunc,Two,2026-12-02,trunc2@example.co",
		cut:  3,
		want: []onboard.Hire{{Line: 2, Employee: emp("Ann", "Lee", "ann@example.com", "", "2026-12-01")}},
		prob: []onboard.RowProblem{{Line: 3, Email: "trunc2@example.co", Reason: noLineEnd}},
	}, {
		name: "fewer cells than the header",
		data: cutHeader + cutDone + "Trunc,Two,trunc2@example.co",
		cut:  3,
		want: []onboard.Hire{ann},
		prob: []onboard.RowProblem{{Line: 3, Email: "trunc2@example.co", Reason: "the file ends inside this row (no line ending), which has 3 of the header's 5 cells: it may be cut short; end the file with a line break and drop it again"}},
	}, {
		name: "open quote on the last line",
		data: cutHeader + cutDone + "Trunc,Two,trunc2@example.com,\"Head of",
		cut:  3,
		want: []onboard.Hire{ann},
		prob: []onboard.RowProblem{{Line: 3, Reason: "the file ends inside a quoted cell of this row (its closing quote is missing): it may be cut short; close the quote, end the file with a line break and drop it again"}},
	}, {
		name: "cut inside a character",
		data: cutHeader + cutDone + "Zo\xc3",
		cut:  3,
		want: []onboard.Hire{ann},
		prob: []onboard.RowProblem{{Line: 3, Reason: "the file ends inside this row (no line ending), which has 1 of the header's 5 cells: it may be cut short; end the file with a line break and drop it again"}},
	}, {
		name: "a whole row, no line ending",
		data: cutHeader + cutDone + "Bo,Ek,bo@example.com,Nurse,2026-12-02",
		cut:  3,
		want: []onboard.Hire{ann},
		prob: []onboard.RowProblem{{Line: 3, Email: "bo@example.com", Reason: noLineEnd}},
	}, {
		name: "a whole row, CRLF",
		data: strings.ReplaceAll(cutHeader+cutDone, "\n", "\r\n"),
		want: []onboard.Hire{ann},
	}, {
		name: "a whole row, LF",
		data: cutHeader + cutDone,
		want: []onboard.Hire{ann},
	}, {
		name: "a whole row, lone CR (old Excel for Mac)",
		data: strings.ReplaceAll(cutHeader+cutDone, "\n", "\r"),
		want: []onboard.Hire{ann},
	}, {
		name: "a line break inside a closed quoted cell at the end",
		data: "First name,Last name,Email,Join date,Notes\nAnn,Lee,ann@example.com,2026-12-01,\"Nurse\nDay shift\"\n",
		want: []onboard.Hire{{Line: 2, Employee: emp("Ann", "Lee", "ann@example.com", "", "2026-12-01")}},
	}, {
		name: "a blank last row without a line ending",
		data: cutHeader + cutDone + ",,,,",
		want: []onboard.Hire{ann},
	}, {
		name: "only a header, without a line ending",
		data: strings.TrimSuffix(cutHeader, "\n"),
		cut:  1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := onboard.ReadHireFile(strings.NewReader(tt.data), onboard.HireOptions{})
			checkHires(t, f.Hires, f.Problems, err, tt.want, tt.prob)
			if f.Cut != tt.cut {
				t.Errorf("Cut = %d, want %d", f.Cut, tt.cut)
			}
		})
	}
}

// TestReadHiresCutQuoteOverLines: a file that ends inside a quoted cell opened lines before is
// unreadable (the rows after the quote cannot be told apart), and says it may be cut short.
func TestReadHiresCutQuoteOverLines(t *testing.T) {
	t.Parallel()
	f, err := onboard.ReadHireFile(strings.NewReader(cutHeader+cutDone+"Bo,Ek,bo@example.com,\"Nurse\nDay"), onboard.HireOptions{})
	if err == nil || !strings.Contains(err.Error(), "lines 3-4: unbalanced quotes: the file ends inside a quoted cell") {
		t.Errorf("err = %v", err)
	}
	if f.Cut != 3 || f.Hires != nil {
		t.Errorf("Cut %d, hires %v", f.Cut, f.Hires)
	}
}

// TestReadHiresRowTooLong: a row longer than MaxRowBytes (a quote never closed) makes the file
// unreadable before it holds much memory; blank lines cost nothing.
func TestReadHiresRowTooLong(t *testing.T) {
	t.Parallel()
	long := cutHeader + cutDone + "Bo,\"Ek" + strings.Repeat("x", 200<<10) + "\",bo@example.com,,2026-12-01\n"
	_, err := onboard.ReadHireFile(strings.NewReader(long), onboard.HireOptions{})
	if err == nil || err.Error() != "a row after line 2 is longer than 64 KiB (a quote not closed, or not a CSV of new hires?): fix the file" {
		t.Errorf("err = %v", err)
	}
	_, err = onboard.ReadHireFile(strings.NewReader(cutHeader+strings.Repeat("x", 10_000)+"\n"), onboard.HireOptions{MaxRowBytes: 1 << 10})
	if err == nil || !strings.Contains(err.Error(), "longer than 1 KiB") {
		t.Errorf("err = %v", err)
	}
	// Rows shorter than the limit, however many the CSV reader reads at once, are not refused.
	many := cutHeader + strings.Repeat(cutDone, 500)
	if f, err := onboard.ReadHireFile(strings.NewReader(many), onboard.HireOptions{MaxRowBytes: 100}); err != nil || len(f.Problems) != 499 {
		t.Errorf("short rows under a small limit: %d problems, %v", len(f.Problems), err)
	}
	blank := cutHeader + strings.Repeat("\r\n", 100<<10) + cutDone
	f, err := onboard.ReadHireFile(strings.NewReader(blank), onboard.HireOptions{})
	if err != nil || len(f.Hires) != 1 || f.Hires[0].Line != 100<<10+2 {
		t.Errorf("blank lines: %v %v", f.Hires, err)
	}
}

// TestReadHiresKeepsNoRowText: the rows read keep their fields, not the text of their rows
// (here a wide column nobody reads): what a file's hires hold is a small part of the file.
func TestReadHiresKeepsNoRowText(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("First name,Last name,Email,Join date,Notes\n")
	notes := strings.Repeat("n", 800)
	for i := range 10_000 {
		fmt.Fprintf(&b, "F%d,L%d,p%d@example.com,2026-12-01,%s\n", i, i, i, notes)
	}
	data := b.Bytes()
	size := len(data)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := onboard.ReadHireFile(bytes.NewReader(data), onboard.HireOptions{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(data)
	if err != nil || len(f.Hires) != 10_000 {
		t.Fatalf("%d hires, %v", len(f.Hires), err)
	}
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("a file of %d KiB: its hires hold %d KiB", size>>10, kept>>10)
	if kept > int64(size)/4 {
		t.Errorf("the hires of a file of %d KiB hold %d KiB: the rows' text is kept", size>>10, kept>>10)
	}
	runtime.KeepAlive(f)
}

// writeAged writes a file into dir, last changed age ago.
func writeAged(t *testing.T, dir, name, data string, age time.Duration) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-age)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

// TestOnboardingFolderHoldsACutFile: in the drop folder, a file that ends inside its last row
// waits until it has been unchanged for another settle period: completed meanwhile by its
// writer, it is onboarded whole; left as it is, its complete rows are created and the cut row
// is rejected with its reason. Named to onboard, the cut row is rejected at once. The cut row
// (trunc2@example.co, the email cut from .com) is never created.
func TestOnboardingFolderHoldsACutFile(t *testing.T) {
	t.Parallel()
	const settle = time.Minute
	header := "First name,Last name,Join date,Email\n"
	done := "Ann,Lee,2026-12-01,ann@example.com\n"
	cut := header + done + "Trunc,Two,2026-12-02,trunc2@example.co"
	ctx := context.Background()

	t.Run("completed by its writer", func(t *testing.T) {
		up := newUpstream(t, 0, fakeupstream.Options{})
		o := onboard.New(fastClient(t, up, client.Options{}), sinktest.Store(t, "sqlite", sink.Options{}), onboard.Options{})
		dir := t.TempDir()
		writeAged(t, dir, "cohort.csv", cut, settle+time.Second) // settled, but cut
		results, err := o.ProcessDir(ctx, dir, settle)
		if err != nil || len(results) != 0 || !exists(t, filepath.Join(dir, "cohort.csv")) {
			t.Fatalf("a cut file was not held: %v %v", results, err)
		}
		if n := up.Count("/v1/employees", http.StatusCreated); n != 0 {
			t.Fatalf("%d created from a held file", n)
		}
		writeAged(t, dir, "cohort.csv", cut+"m\n", settle+time.Second) // the writer finishes it
		results, err = o.ProcessDir(ctx, dir, settle)
		if err != nil || len(results) != 1 {
			t.Fatalf("results %v %v", results, err)
		}
		if got := outcomes(results[0]); got[onboard.OutcomeCreated] != 2 || len(results[0].Rows) != 2 {
			t.Errorf("outcomes %v", got)
		}
		per := createdPerEmail(up)
		if per["trunc2@example.com"] != 1 || per["trunc2@example.co"] != 0 {
			t.Errorf("created %v", per)
		}
	})

	t.Run("left as it is", func(t *testing.T) {
		up := newUpstream(t, 0, fakeupstream.Options{})
		o := onboard.New(fastClient(t, up, client.Options{}), sinktest.Store(t, "sqlite", sink.Options{}), onboard.Options{})
		dir := t.TempDir()
		writeAged(t, dir, "cohort.csv", cut, 2*settle-time.Second)
		if results, err := o.ProcessDir(ctx, dir, settle); err != nil || len(results) != 0 {
			t.Fatalf("a cut file unchanged for less than two settle periods was not held: %v %v", results, err)
		}
		writeAged(t, dir, "cohort.csv", cut, 2*settle+time.Second)
		results, err := o.ProcessDir(ctx, dir, settle)
		if err != nil || len(results) != 1 {
			t.Fatalf("results %v %v", results, err)
		}
		want := []onboard.RowResult{
			{Line: 2, Email: "ann@example.com", Outcome: onboard.OutcomeCreated, EmployeeID: results[0].Rows[0].EmployeeID, FirstName: "Ann", LastName: "Lee"},
			{Line: 3, Email: "trunc2@example.co", Outcome: onboard.OutcomeRejected, Reason: noLineEnd, FirstName: "Trunc", LastName: "Two"},
		}
		if !slices.Equal(results[0].Rows, want) {
			t.Errorf("rows %+v, want %+v", results[0].Rows, want)
		}
		report, err := os.ReadFile(filepath.Join(dir, "processed", "cohort.result.csv"))
		if err != nil || !strings.Contains(string(report), "3,trunc2@example.co,rejected,,"+noLineEnd) {
			t.Errorf("report %s %v", report, err)
		}
		if per := createdPerEmail(up); per["trunc2@example.co"] != 0 || per["ann@example.com"] != 1 {
			t.Errorf("created %v", per)
		}
	})

	t.Run("named", func(t *testing.T) {
		up := newUpstream(t, 0, fakeupstream.Options{})
		o := onboard.New(fastClient(t, up, client.Options{}), sinktest.Store(t, "sqlite", sink.Options{}), onboard.Options{})
		dir := t.TempDir()
		writeAged(t, dir, "cohort.csv", cut, 0)
		r, err := o.ProcessPath(ctx, filepath.Join(dir, "cohort.csv"), "")
		if err != nil || r.Err != nil {
			t.Fatal(err, r.Err)
		}
		if got := outcomes(r); got[onboard.OutcomeCreated] != 1 || got[onboard.OutcomeRejected] != 1 {
			t.Errorf("outcomes %v", got)
		}
		if per := createdPerEmail(up); per["trunc2@example.co"] != 0 {
			t.Errorf("created %v", per)
		}
	})
}

// TestOnboardingRefusesALargeFile: a file over onboarding.max_file_bytes goes to failed/ unread,
// its report saying its size, the limit and the setting; nothing is created. Here 300 MB (a
// sparse file: it takes no disk), against the default limit, and a small file against a small
// limit.
func TestOnboardingRefusesALargeFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		size  int64
		limit int64
		say   string
	}{
		{"300 MB", 300 << 20, 0, "the file is 300 MiB (314572800 bytes), over the limit of 16 MiB (16777216 bytes) (onboarding.max_file_bytes, HRSYNC_ONBOARDING_MAX_FILE_BYTES)"},
		{"over a small limit", 2 << 10, 1 << 10, "the file is 2 KiB (2048 bytes), over the limit of 1 KiB (1024 bytes)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, 0, fakeupstream.Options{})
			o := onboard.New(fastClient(t, up, client.Options{}), sinktest.Store(t, "sqlite", sink.Options{}), onboard.Options{MaxFileBytes: tt.limit})
			dir := t.TempDir()
			f, err := os.Create(filepath.Join(dir, "big.csv"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.WriteString(cutHeader + cutDone)
			if err == nil {
				err = f.Truncate(tt.size)
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			results, err := o.ProcessDir(context.Background(), dir, 0)
			if err != nil || len(results) != 1 {
				t.Fatalf("results %v %v", results, err)
			}
			var big *onboard.FileTooLargeError
			if r := results[0]; !errors.Is(r.Err, onboard.ErrUnreadable) || !errors.As(r.Err, &big) || big.Size != tt.size || !strings.Contains(r.Err.Error(), tt.say) {
				t.Errorf("err %v", r.Err)
			}
			report, err := os.ReadFile(filepath.Join(dir, "failed", "big.result.csv"))
			if err != nil || !strings.Contains(string(report), tt.say) {
				t.Errorf("report %s %v", report, err)
			}
			if n := up.Count("/v1/employees", http.StatusCreated); n != 0 {
				t.Errorf("%d created", n)
			}
		})
	}
}
