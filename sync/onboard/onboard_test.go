package onboard_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/onboard"
)

func hiresCSV(from, n int, extra ...string) []byte {
	var b strings.Builder
	b.WriteString("\ufeffFirst Name,Last Name,Email,Job Title,Start Date\r\n")
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "Zoë%d,\"Ødegård, Jr.\",new%d@example.com,Engineer,2026/12/%02d\r\n", i, i, i%28+1)
	}
	for _, row := range extra {
		b.WriteString(row + "\r\n")
	}
	return []byte(b.String())
}

// createdPerEmail counts the source's employees by email.
func createdPerEmail(up *sourcetest.Server) map[string]int {
	out := map[string]int{}
	for _, raw := range up.Employees() {
		var e v1.Employee
		if err := e.UnmarshalJSON(raw); err == nil {
			out[strings.ToLower(e.Email)]++
		}
	}
	return out
}

func outcomes(r onboard.FileResult) map[string]int {
	out := map[string]int{}
	for _, x := range r.Rows {
		out[x.Outcome]++
	}
	return out
}

// TestOnboardingExactlyOnceWhenAnswersAreLost is the done-when: a source that stores
// every second new hire and then drops the connection unanswered still ends with every valid
// row created exactly once.
func TestOnboardingExactlyOnceWhenAnswersAreLost(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			var posts atomic.Int32
			up := newUpstream(t, 20, fakeupstream.Options{Fault: func(_ int, r *http.Request) fakeupstream.Fault {
				if r.Method == http.MethodPost && posts.Add(1)%2 == 0 {
					return fakeupstream.Fault{DropAfterStore: true}
				}
				return fakeupstream.Fault{}
			}})
			store := sinktest.Store(t, backend, sink.Options{})
			o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{})
			data := hiresCSV(1, 40, "Bad,Row,not-an-email,,2026/12/01", "Dup,Licate,NEW3@example.com,,2026/12/01")
			r := o.ProcessFile(context.Background(), "cohort.csv", data)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if got := outcomes(r); got[onboard.OutcomeCreated] != 40 || got[onboard.OutcomeRejected] != 1 || got[onboard.OutcomeSkipped] != 1 || got[onboard.OutcomeUnresolved] != 0 {
				t.Errorf("outcomes %v", got)
			}
			per := createdPerEmail(up)
			for i := 1; i <= 40; i++ {
				if n := per[fmt.Sprintf("new%d@example.com", i)]; n != 1 {
					t.Errorf("new%d created %d times", i, n)
				}
			}
			// Every created hire is served at once, before any sync.
			if taken, _ := store.EmailTaken(context.Background(), "new17@example.com"); !taken {
				t.Error("a created hire is not in the warehouse")
			}
			// The same file again creates nobody; so does the same person in another file.
			before := up.Count("/v1/employees", 201)
			again := o.ProcessFile(context.Background(), "cohort (copy).csv", data)
			other := o.ProcessFile(context.Background(), "late.csv", hiresCSV(40, 2))
			if up.Count("/v1/employees", 201) != before+1 || outcomes(again)[onboard.OutcomeAlreadyDone] != 40 || outcomes(other)[onboard.OutcomeAlreadyDone] != 1 {
				t.Errorf("re-drop: %v, other file: %v, creates %d → %d", outcomes(again), outcomes(other), before, up.Count("/v1/employees", 201))
			}
		})
	}
}

// TestOnboardingResumesAfterACrash: the run stops between sending a create and its answer; the
// next run looks the person up first and creates nobody twice.
func TestOnboardingResumesAfterACrash(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var posts atomic.Int32
	up := newUpstream(t, 5, fakeupstream.Options{Fault: func(_ int, r *http.Request) fakeupstream.Fault {
		if r.Method == http.MethodPost && posts.Add(1) == 4 {
			cancel()                                        // the process dies while the fourth create is in flight…
			return fakeupstream.Fault{DropAfterStore: true} // …after the source stored it
		}
		return fakeupstream.Fault{}
	}})
	store := sinktest.Store(t, "postgres", sink.Options{})
	data := hiresCSV(1, 10)
	r := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{}).ProcessFile(ctx, "a.csv", data)
	if r.Err == nil || outcomes(r)[onboard.OutcomeCreated] != 3 {
		t.Fatalf("interrupted run: %v %v", outcomes(r), r.Err)
	}
	r = onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{}).ProcessFile(context.Background(), "a.csv", data)
	// The three confirmed before are already done; the fourth, stored by the source but never
	// answered, is found by email and confirmed now; the rest are created.
	if got := outcomes(r); r.Err != nil || got[onboard.OutcomeCreated] != 7 || got[onboard.OutcomeAlreadyDone] != 3 {
		t.Fatalf("resumed run: %v %v", outcomes(r), r.Err)
	}
	for email, n := range createdPerEmail(up) {
		if strings.HasPrefix(email, "new") && n != 1 {
			t.Errorf("%s created %d times", email, n)
		}
	}
}

func TestOnboardingStopsOnARefusedKey(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, 5, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	c, err := client.New(up.URL, "sandbox-wrong", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "hires.csv")
	if err := os.WriteFile(path, hiresCSV(1, 3), 0o600); err != nil {
		t.Fatal(err)
	}
	o := onboard.New(c, store, onboard.Options{})
	results, err := o.ProcessDir(context.Background(), dir, 0)
	if err != nil || len(results) != 1 || results[0].Err == nil || !strings.Contains(results[0].Err.Error(), "API key") {
		t.Fatalf("results %+v %v", results, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error("the file left the folder after a refused key")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the folder: a report left there would be read as a new file", len(entries))
	}
	if up.Count("/v1/employees", 401) != 1 {
		t.Errorf("%d refused requests, want 1 (the file stops)", up.Count("/v1/employees", 401))
	}
}

func TestOnboardingFolder(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, 5, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"good.csv":       hiresCSV(1, 3),
		"mixed.csv":      hiresCSV(10, 2, "=HYPERLINK(\"http://x\"),B,bad,,2026/13/40"),
		".partial.csv":   hiresCSV(20, 1),
		"notes.txt":      []byte("not a csv"),
		"unreadable.csv": []byte("\xff\xfeF\x00i\x00"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{})
	results, err := o.ProcessDir(context.Background(), dir, 0)
	if err != nil || len(results) != 4 {
		t.Fatalf("results %d %v", len(results), err)
	}
	// Every file but the dotfile is taken: notes.txt too, to failed/ with a report saying why.
	for _, f := range []string{"processed/good.csv", "processed/good.result.csv", "processed/mixed.csv", "processed/mixed.result.csv",
		"failed/unreadable.csv", "failed/unreadable.result.csv", ".partial.csv", "failed/notes.txt", "failed/notes.txt.result.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	report, _ := os.ReadFile(filepath.Join(dir, "processed/mixed.result.csv"))
	if !strings.HasPrefix(string(report), onboard.BOM+"row,email,outcome,employee_id,reason,first_name,last_name\n") || strings.Contains(string(report), "\n=") || strings.Contains(string(report), ",=") {
		t.Errorf("report:\n%s", report)
	}
}
