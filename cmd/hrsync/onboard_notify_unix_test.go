//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/sync/onboard"
)

// TestOnboardTellsHR is what HR gets of a dropped file, through hrsync onboard configured as an
// operator would: the results in processed/ and failed/ readable by the group named
// (onboarding.group; 0750 folders, 0640 files), the report read back by a CSV reader with its
// names intact (Excel's byte-order mark first), and a notification on the webhook for the file
// processed and for the file failed, naming nobody; the webhook's secret in no output.
func TestOnboardTellsHR(t *testing.T) {
	t.Parallel()
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	const secret = "/services/T0001/B0001/s3cr3tWebhookToken"
	var mu sync.Mutex
	var texts []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Text string }
		if r.URL.Path != secret || json.NewDecoder(r.Body).Decode(&body) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		texts = append(texts, body.Text)
		mu.Unlock()
	}))
	defer hook.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	gid := os.Getegid()
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_ONBOARDING_DIR=" + in,
		"HRSYNC_ONBOARDING_SETTLE_SECONDS=0", "HRSYNC_ONBOARDING_GROUP=" + strconv.Itoa(gid),
		"HRSYNC_ONBOARDING_NOTIFY_URL=" + hook.URL + secret}
	for name, data := range map[string]string{
		"cohort.csv":    spreadsheet,
		"workbook.xlsx": "PK\x03\x04 not a CSV",
	} {
		if err := os.WriteFile(filepath.Join(in, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out, errs bytes.Buffer
	err := run(context.Background(), []string{"onboard"}, env, &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 files not finished") {
		t.Fatalf("onboard: %v (%s)", err, out.String())
	}
	mu.Lock()
	got := strings.Join(texts, "\n---\n")
	n := len(texts)
	mu.Unlock()
	if n != 2 || !strings.Contains(got, "file: cohort.csv\n3 created, 0 already done, 0 skipped, 2 rejected, 0 unresolved\nreport: processed/cohort.result.csv") ||
		!strings.Contains(got, "a file failed: it is not a CSV of new hires") || !strings.Contains(got, "file: workbook.xlsx\n") {
		t.Errorf("the webhook received %d notifications:\n%s", n, got)
	}
	for _, personal := range []string{"Zoë", "Ødegård", "zoe@", "Lee"} {
		if strings.Contains(got, personal) {
			t.Errorf("a notification holds %q", personal)
		}
	}
	if all := out.String() + errs.String() + err.Error(); strings.Contains(all, "s3cr3t") {
		t.Errorf("the output holds the webhook's secret:\n%s", all)
	}
	for path, mode := range map[string]os.FileMode{
		"processed": 0o750, "failed": 0o750,
		"processed/cohort.csv": 0o640, "processed/cohort.result.csv": 0o640,
		"failed/workbook.xlsx": 0o640, "failed/workbook.xlsx.result.csv": 0o640,
	} {
		fi, err := os.Stat(filepath.Join(in, path))
		if err != nil {
			t.Error(err)
			continue
		}
		if fi.Mode().Perm() != mode || int(fi.Sys().(*syscall.Stat_t).Gid) != gid {
			t.Errorf("%s: mode %#o group %d, want %#o group %d", path, fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Gid, mode, gid)
		}
	}
	data, err := os.ReadFile(filepath.Join(in, "processed", "cohort.result.csv"))
	if err != nil {
		t.Fatal(err)
	}
	body, ok := bytes.CutPrefix(data, []byte(onboard.BOM))
	if !ok {
		t.Errorf("the report does not begin with UTF-8's byte-order mark: % x", data[:8])
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 || rows[0][0] != "row" || rows[1][1] != "zoe@example.com" || rows[1][5] != "Zoë" || rows[1][6] != "Ødegård" {
		t.Errorf("the report read back: %q", rows)
	}
}

// TestWorkerNotifiesTheWebhook: hrsync run tells the webhook of each file filed, counts each
// notification in hrsync_onboarding_notifications_total (sent; failed when the webhook refuses
// it: a revoked address, 404, tried once), logs the one not sent without the webhook's address,
// goes on onboarding either way, and stops.
func TestWorkerNotifiesTheWebhook(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	up := sourcetest.NewServer(fakeupstream.Options{})
	defer up.Close()
	const secret = "/services/T0001/B0001/s3cr3tWebhookToken"
	var mu sync.Mutex
	var texts []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Text string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		defer mu.Unlock()
		texts = append(texts, body.Text)
		if len(texts) > 1 {
			w.WriteHeader(http.StatusNotFound) // revoked after the first
		}
	}))
	defer hook.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_ONBOARDING_DIR=" + in,
		"HRSYNC_ONBOARDING_POLL_SECONDS=1", "HRSYNC_ONBOARDING_SETTLE_SECONDS=0",
		"HRSYNC_ONBOARDING_NOTIFY_URL=" + hook.URL + secret}
	if err := run(context.Background(), []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	p := startRun(t, bin, env)
	p.waitFor(t, "the folder watched", func() bool { return strings.Contains(p.stderr.String(), "onboarding folder watched") })
	drop := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(in, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	drop("first.csv", "First Name,Last Name,Email,Start Date\r\nAna,Lima,ana@example.com,2026-12-01\r\n")
	p.waitFor(t, "the first notification sent", func() bool {
		n, _ := seriesValue(t, p.scrape(t), "hrsync_onboarding_notifications_total", "outcome=sent")
		return n == 1
	})
	drop("second.csv", "First Name,Last Name,Email,Start Date\r\nBo,Ek,bo@example.com,2026-12-02\r\n")
	p.waitFor(t, "the second counted failed", func() bool {
		n, _ := seriesValue(t, p.scrape(t), "hrsync_onboarding_notifications_total", "outcome=failed")
		return n == 1
	})
	if _, err := os.Stat(filepath.Join(in, "processed", "second.csv")); err != nil {
		t.Errorf("the file whose notification failed is not filed: %v", err)
	}
	mu.Lock()
	got := strings.Join(texts, "\n---\n")
	mu.Unlock()
	if !strings.Contains(got, "file: first.csv\n1 created") || !strings.Contains(got, "file: second.csv\n1 created") {
		t.Errorf("the webhook received:\n%s", got)
	}
	p.stopWithin30s(t)
	logs := p.stderr.String()
	if !strings.Contains(logs, "the webhook answered 404") || !strings.Contains(logs, "file=second.csv") {
		t.Errorf("the notification not sent is not logged:\n%s", logs)
	}
	if strings.Contains(logs, "s3cr3t") || strings.Contains(logs, "/services/") {
		t.Errorf("the log holds the webhook's address:\n%s", logs)
	}
}
