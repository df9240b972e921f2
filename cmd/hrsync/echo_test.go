package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest"
)

// echoingSource answers every request with an error whose body echoes the request, headers
// (the API key among them) and body (a new hire's values among them), as some gateways and
// misconfigured services do: GETs with getStatuses in turn, POSTs with postStatuses in turn. A
// 400 or 422 names fields whose reasons echo too.
func echoingSource(t *testing.T, getStatuses, postStatuses []int) *httptest.Server {
	var gets, posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		echo := fmt.Sprintf("%s %s headers=%v body=%s form=%v", r.Method, r.URL, r.Header, body, form)
		status := getStatuses[int(gets.Add(1)-1)%len(getStatuses)]
		if r.Method == http.MethodPost {
			status = postStatuses[int(posts.Add(1)-1)%len(postStatuses)]
		}
		msg := map[string]any{"type": http.StatusText(status), "message": echo}
		if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity {
			msg["employee[email]"] = []string{"is not accepted here: " + echo}
		}
		b, _ := json.Marshal(map[string]any{"error": msg})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestEchoingSourceLeavesNothingInTheLog: a sync and an onboarding against a source that echoes
// every request into its error bodies write neither its API key nor the new hires' names and
// emails (as sent or percent-encoded) in the log, at any level, in either format; the rejected
// row's reason is in its private report.
func TestEchoingSourceLeavesNothingInTheLog(t *testing.T) {
	t.Parallel()
	fastOnboardRetries(t)
	const key = "echo-src-key-3e9b1f7a2c"
	hires := [][3]string{{"Zorblaxine", "Quendrithova", "zorblaxine.q@echo.example"}, {"Marvolette", "Pindlewick", "marvolette.p@echo.example"}}
	secret := []string{key}
	csv := "first_name,last_name,email,job_title,join_date\n"
	for _, h := range hires {
		csv += h[0] + "," + h[1] + "," + h[2] + ",Chef,2026-12-01\n"
		for _, s := range h {
			secret = append(secret, s, url.QueryEscape(s))
		}
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			if err := os.MkdirAll(in, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(in, "cohort.csv"), []byte(csv), 0o600); err != nil {
				t.Fatal(err)
			}
			// GETs: refused with field problems, then a plain 409; POSTs: 422 (the first hire
			// rejected), then 500 (the second's create unanswered: looked up, by GETs answered 500).
			src := echoingSource(t, []int{400, 409, 500}, []int{422, 500})
			env := []string{"HRSYNC_SOURCE_URL=" + src.URL, "HRSYNC_SOURCE_API_KEY=" + key, "HRSYNC_SOURCE_RATE_LIMIT=0",
				"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_ONBOARDING_DIR=" + in,
				"HRSYNC_ONBOARDING_SETTLE_SECONDS=0", "HRSYNC_LOG_LEVEL=debug", "HRSYNC_LOG_FORMAT=" + format}
			var logs sinktest.Buffer
			syncErr := run(context.Background(), []string{"sync", "--resource", "employees"}, env, io.Discard, &logs)
			onboardErr := run(context.Background(), []string{"onboard"}, env, io.Discard, &logs)
			if syncErr == nil || onboardErr == nil {
				t.Fatalf("sync: %v; onboard: %v; want both to fail", syncErr, onboardErr)
			}
			got := logs.String() + syncErr.Error() + "\n" + onboardErr.Error()
			for _, s := range secret {
				if strings.Contains(got, s) {
					t.Errorf("the log or the errors hold %q:\n%s", s, got)
				}
			}
			if !strings.Contains(logs.String(), "source answered 4") || !strings.Contains(logs.String(), "source answered 500") {
				t.Errorf("the log does not say what the source answered:\n%s", logs.String())
			}
			// The rejected row's reason, the source's own words, is kept: in the report (0600).
			reports, _ := filepath.Glob(filepath.Join(in, "*", "*.csv"))
			all := ""
			for _, r := range reports {
				b, _ := os.ReadFile(r)
				all += string(b)
			}
			if !strings.Contains(all, "is not accepted here: POST") {
				t.Errorf("no report keeps the source's reason (reports %q):\n%s", reports, all)
			}
		})
	}
}
