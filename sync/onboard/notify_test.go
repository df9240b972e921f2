package onboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/onboard"
)

// webhook is a test chat webhook: it keeps the text of each notification it accepts, and
// answers as answer says (200 when nil).
type webhook struct {
	*httptest.Server
	mu     sync.Mutex
	texts  []string
	tries  int
	answer func(try int) int
}

// secretPath is the part of a webhook's address that is its secret, as Slack's are.
const secretPath = "/services/T0001/B0001/s3cr3tWebhookToken"

func newWebhook(t *testing.T, answer func(try int) int) *webhook {
	t.Helper()
	w := &webhook{answer: answer}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.tries++
		try := w.tries
		w.mu.Unlock()
		code := http.StatusOK
		if w.answer != nil {
			code = w.answer(try)
		}
		var body struct{ Text string }
		data, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != secretPath || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(data, &body) != nil {
			t.Errorf("the webhook got %s %s (%s) %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"), data)
		}
		if code == http.StatusOK {
			w.mu.Lock()
			w.texts = append(w.texts, body.Text)
			w.mu.Unlock()
		}
		rw.WriteHeader(code)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhook) received() ([]string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.texts...), w.tries
}

// TestNotifyProcessedAndFailed: a file processed and a file failed from the drop folder each
// send one notification to the webhook: Slack's and Teams' JSON {"text"}, with how it ended, its
// counts, its name and its report's place; no name, email or cell of the file; counted sent.
func TestNotifyProcessedAndFailed(t *testing.T) {
	hook := newWebhook(t, nil)
	reg := prometheus.NewRegistry()
	m := onboard.NewMetrics(reg)
	var logs bytes.Buffer
	n, err := onboard.NewNotifier(onboard.NotifyOptions{URL: hook.URL + secretPath, Metrics: m, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, 0, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{
		"cohort.csv":   hiresCSV(1, 2, "Ann,Lee,ann@example,Engineer,2026/12/01"),
		"workbook.csv": []byte("\xff\xfeF\x00i\x00"),
	})
	o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{Notifier: n, Metrics: m})
	if _, err := o.ProcessDir(context.Background(), dir, 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	texts, _ := hook.received()
	if len(texts) != 2 {
		t.Fatalf("the webhook received %d notifications, want 2: %q", len(texts), texts)
	}
	all := strings.Join(texts, "\n---\n")
	for _, want := range []string{
		"hrsync onboarding: a file is processed, but some rows were rejected: see its report, correct them and drop them again.\nfile: cohort.csv\n2 created, 0 already done, 0 skipped, 1 rejected, 0 unresolved\nreport: processed/cohort.result.csv in the onboarding folder",
		"hrsync onboarding: a file failed: it is not a CSV of new hires. It is in failed/: its report says why; save it as CSV UTF-8 and drop it again.\nfile: workbook.csv\n0 created, 0 already done, 0 skipped, 0 rejected, 0 unresolved\nreport: failed/workbook.result.csv in the onboarding folder",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no notification says\n%s\ngot\n%s", want, all)
		}
	}
	for _, personal := range []string{"Zoë", "Ødegård", "Ann", "Lee", "@example", "Engineer", "2026"} {
		if strings.Contains(all, personal) {
			t.Errorf("a notification holds %q:\n%s", personal, all)
		}
	}
	if got := counterValue(t, reg, "hrsync_onboarding_notifications_total", "outcome", onboard.NoticeSent); got != 2 {
		t.Errorf("sent = %v, want 2", got)
	}
	if got := counterValue(t, reg, "hrsync_onboarding_notifications_total", "outcome", onboard.NoticeFailed); got != 0 {
		t.Errorf("failed = %v, want 0", got)
	}
	if logs.Len() > 0 {
		t.Errorf("logged:\n%s", logs.String())
	}
}

// TestNotifyFailingWebhook: a webhook that does not answer holds nobody up: the pass ends, its
// files filed, while the notification waits; a webhook answering 500 is tried again with backoff
// up to the bound, then the notification is counted failed and logged without the webhook's
// address; one answering 404 (a revoked address) is not tried again. Onboarding's outcome is
// the same either way.
func TestNotifyFailingWebhook(t *testing.T) {
	release := make(chan struct{})
	hook := newWebhook(t, func(try int) int {
		switch {
		case try == 1:
			<-release // no answer until the pass is over
			return http.StatusServiceUnavailable
		case try <= 3:
			return http.StatusInternalServerError
		}
		return http.StatusNotFound
	})
	reg := prometheus.NewRegistry()
	m := onboard.NewMetrics(reg)
	var logs sinktest.Buffer
	n, err := onboard.NewNotifier(onboard.NotifyOptions{URL: hook.URL + secretPath, Attempts: 3, RetryInitial: time.Millisecond, RetryMax: 5 * time.Millisecond,
		Timeout: 20 * time.Second, Metrics: m, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, 0, fakeupstream.Options{})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"a.csv": hiresCSV(1, 1), "b.csv": hiresCSV(5, 1)})
	o := onboard.New(fastClient(t, up, client.Options{}), store, onboard.Options{Notifier: n, Metrics: m})
	passed := make(chan []onboard.FileResult)
	go func() {
		results, err := o.ProcessDir(context.Background(), dir, 0)
		if err != nil {
			t.Error(err)
		}
		passed <- results
	}()
	var results []onboard.FileResult
	select {
	case results = <-passed:
	case <-time.After(15 * time.Second):
		t.Fatal("the pass waited for the webhook")
	}
	close(release)
	for _, r := range results {
		if r.Err != nil || r.Count(onboard.OutcomeCreated) != 1 {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	for _, f := range []string{"processed/a.csv", "processed/b.csv"} {
		if !exists(t, filepath.Join(dir, f)) {
			t.Errorf("%s is not filed", f)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// a.csv: 503, 500, 500: three tries, the bound; b.csv: 404, once.
	if texts, tries := hook.received(); len(texts) != 0 || tries != 4 {
		t.Errorf("the webhook accepted %d and was tried %d times, want 0 and 4", len(texts), tries)
	}
	if got := counterValue(t, reg, "hrsync_onboarding_notifications_total", "outcome", onboard.NoticeFailed); got != 2 {
		t.Errorf("failed = %v, want 2", got)
	}
	if got := counterValue(t, reg, "hrsync_onboarding_notifications_total", "outcome", onboard.NoticeSent); got != 0 {
		t.Errorf("sent = %v, want 0", got)
	}
	out := logs.String()
	if strings.Count(out, "level=WARN") != 2 || !strings.Contains(out, "answered 500") || !strings.Contains(out, "answered 404") || !strings.Contains(out, "file=a.csv") {
		t.Errorf("the log does not say each notification failed, and why:\n%s", out)
	}
	if strings.Contains(out, "s3cr3t") || strings.Contains(out, "/services/") {
		t.Errorf("the log holds the webhook's address:\n%s", out)
	}
}

// TestNotifyUnreachableWebhook: a webhook no one answers at is tried to the bound and counted
// failed; the error logged names neither its address nor its secret. Close, its context over
// while a notification is still being tried, stops it and counts it failed.
func TestNotifyUnreachableWebhook(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	addr := dead.URL
	dead.Close()
	reg := prometheus.NewRegistry()
	m := onboard.NewMetrics(reg)
	var logs sinktest.Buffer
	n, err := onboard.NewNotifier(onboard.NotifyOptions{URL: addr + secretPath, Attempts: 2, RetryInitial: time.Millisecond,
		Metrics: m, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(onboard.FileResult{Name: "x.csv"}, "processed/x.result.csv")
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := counterValue(t, reg, "hrsync_onboarding_notifications_total", "outcome", onboard.NoticeFailed); got != 1 {
		t.Errorf("failed = %v, want 1", got)
	}
	if out := logs.String(); strings.Contains(out, "s3cr3t") || !strings.Contains(out, "tries=2") {
		t.Errorf("log:\n%s", out)
	}
	n.Notify(onboard.FileResult{Name: "late.csv"}, "")
	if got := counterValue(t, reg, "hrsync_onboarding_notifications_total", "outcome", onboard.NoticeFailed); got != 2 {
		t.Errorf("a notification after Close: failed = %v, want 2", got)
	}

	hang := make(chan struct{})
	hook := newWebhook(t, func(int) int { <-hang; return http.StatusOK })
	defer close(hang)
	n, err = onboard.NewNotifier(onboard.NotifyOptions{URL: hook.URL + secretPath, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	n.Notify(onboard.FileResult{Name: "y.csv"}, "")
	n.Notify(onboard.FileResult{Name: "z.csv"}, "")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := n.Close(ctx); err == nil {
		t.Error("Close with a webhook that never answers: no error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if got := counterValue(t, reg, "hrsync_onboarding_notifications_total", "outcome", onboard.NoticeFailed); got != 4 {
		t.Errorf("failed = %v, want 4 (both stopped at Close)", got)
	}
}

// TestNoticeText: what a notification says, by how the file ended; with names, the line, name
// and outcome of each row someone has to act on, never an email; the file's name and people's
// names made safe for the chat (no line breaks, Slack's markup escaped).
func TestNoticeText(t *testing.T) {
	rows := []onboard.RowResult{
		{Line: 2, Email: "zoe@example.com", Outcome: onboard.OutcomeCreated, FirstName: "Zoë", LastName: "Brontë"},
		{Line: 3, Email: "ann@example", Outcome: onboard.OutcomeRejected, Reason: "email: not an address", FirstName: "Ann", LastName: "<!channel>"},
	}
	tests := []struct {
		name    string
		r       onboard.FileResult
		report  string
		account string
		names   bool
		want    string
	}{
		{"done", onboard.FileResult{Name: "a.csv", Rows: rows[:1]}, "processed/a.result.csv", "", false,
			"hrsync onboarding: a file is done, every row onboarded.\nfile: a.csv\n1 created, 0 already done, 0 skipped, 0 rejected, 0 unresolved\nreport: processed/a.result.csv in the onboarding folder"},
		{"rejected, an account, names", onboard.FileResult{Name: "b\n<x>.csv", Rows: rows[1:]}, "failed/b.result.csv", "acme", true,
			"hrsync onboarding (account acme): a file failed: nobody could be onboarded, its rows were rejected. It is in failed/: see its report, correct the rows and drop the file again.\n" +
				"file: b?&lt;x&gt;.csv\n0 created, 0 already done, 0 skipped, 1 rejected, 0 unresolved\nreport: failed/b.result.csv in the onboarding folder\nline 3: Ann &lt;!channel&gt;: rejected"},
		{"unresolved", onboard.FileResult{Name: "c.csv", Rows: []onboard.RowResult{{Line: 2, Outcome: onboard.OutcomeUnresolved}}}, "failed/c.result.csv", "", true,
			"hrsync onboarding: a file is not finished: rows are unresolved (the HR system could not be reached, or did not confirm them). It is in failed/ and retried on its own; nobody is created twice.\n" +
				"file: c.csv\n0 created, 0 already done, 0 skipped, 0 rejected, 1 unresolved\nreport: failed/c.result.csv in the onboarding folder\nline 2: unresolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onboard.NoticeText(tt.r, tt.report, tt.account, tt.names); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestNotifierRefusesABadAddress: a webhook address that is not absolute http(s) is refused,
// and the error does not repeat it.
func TestNotifierRefusesABadAddress(t *testing.T) {
	for _, u := range []string{"", "hooks.slack.com/services/s3cr3t", "ftp://example.com/s3cr3t", "https:///s3cr3t"} {
		_, err := onboard.NewNotifier(onboard.NotifyOptions{URL: u})
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: %v", u, err)
		}
	}
}

// FuzzNoticeText: whatever a file's name and its people's names hold, a notification is valid
// UTF-8, has its fixed lines (how it ended, the file, the counts, the report, a line a row named)
// and no more, and leaves none of Slack's markup characters (<, >) raw.
func FuzzNoticeText(f *testing.F) {
	f.Add("cohort.csv", "Zoë", "Brontë")
	f.Add("a\nb\r<!channel>.csv", "<@U123>", "&lt;")
	f.Add("\xff\xfe.csv", "\u2028", "\x1b[31m")
	f.Fuzz(func(t *testing.T, name, first, last string) {
		r := onboard.FileResult{Name: name, Rows: []onboard.RowResult{{Line: 2, Outcome: onboard.OutcomeRejected, FirstName: first, LastName: last}}}
		text := onboard.NoticeText(r, "failed/"+name, "acme", true)
		if !utf8.ValidString(text) {
			t.Errorf("not UTF-8: %q", text)
		}
		if n := strings.Count(text, "\n"); n != 4 {
			t.Errorf("%d line breaks, want 4: %q", n, text)
		}
		if strings.ContainsAny(text, "<>\r") {
			t.Errorf("raw markup or a carriage return: %q", text)
		}
	})
}
