package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// The cohort people-ops drop, and the same people exported again: other columns' order, LF line
// ends, another new hire.
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

// TestEraseThenDropAgainAsAnOperatorWould is issue 41's first evidence, run as people-ops and an
// operator would: a cohort onboarded and synced; one of them erased on request; then the same
// file dropped again, with the person still at the source or removed there first (as
// docs/personal-data.md advises), or a re-export of the cohort; onboard and sync. Nobody is
// created again, the erased email and name are nowhere in the warehouse (ledger included), and
// the report says why and how to lift the erasure. Lifted, the re-export onboards them again.
func TestEraseThenDropAgainAsAnOperatorWould(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		for _, tc := range []struct {
			name    string
			removed bool   // the person removed at the source before the drop
			file    string // what is dropped again
		}{
			{"same file, still at the source", false, erasedCohort},
			{"same file, removed at the source", true, erasedCohort},
			{"re-export, still at the source", false, erasedReexport},
			{"re-export, removed at the source", true, erasedReexport},
		} {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				eraseThenDropAgain(t, backend, tc.removed, tc.file)
			})
		}
	}
}

func eraseThenDropAgain(t *testing.T, backend string, removed bool, file string) {
	ctx := context.Background()
	up := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(30, 7)})
	defer up.Close()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_ONBOARDING_DIR=" + in, "HRSYNC_ONBOARDING_SETTLE_SECONDS=0"}
	var opts sink.Options
	var url string
	if backend == "postgres" {
		url, opts.Schema = sinktest.Postgres(t)
		env = append(env, "HRSYNC_WAREHOUSE_URL="+url, "HRSYNC_WAREHOUSE_SCHEMA="+opts.Schema)
		if err := run(ctx, []string{"migrate"}, env, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	} else {
		url = warehouseFile(t, filepath.Join(dir, "w.db"))
		env = append(env, "HRSYNC_WAREHOUSE_URL="+url)
	}
	step := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, args, env, &out, io.Discard); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, out.String())
		}
		return out.String()
	}
	drop := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(in, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	atSource := func() (id int64, n int) {
		for _, raw := range up.Employees() {
			var e struct {
				ID    int64  `json:"id"`
				Email string `json:"email"`
			}
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			if strings.EqualFold(e.Email, "zq-mail@marker.example") {
				id, n = e.ID, n+1
			}
		}
		return id, n
	}

	drop("cohort.csv", erasedCohort)
	if out := step("onboard"); !strings.Contains(out, "cohort.csv: 3 created") {
		t.Fatalf("onboard said %q", out)
	}
	step("sync")
	zq, _ := atSource()
	if out := step("erase", "--employee", strconv.FormatInt(zq, 10), "--reason", "ticket 9"); !strings.Contains(out, "(erasure 1;") {
		t.Fatalf("erase said %q", out)
	}
	if removed && !up.RemoveEmployee(zq) {
		t.Fatalf("the source has no employee %d", zq)
	}
	creates := up.Count("/v1/employees", http.StatusCreated)

	drop("cohort-again.csv", file)
	out := step("onboard")
	if !strings.Contains(out, "cohort-again.csv: ") || !strings.Contains(out, ", 1 skipped, 0 rejected, 0 unresolved") {
		t.Errorf("the drop again: onboard said %q", out)
	}
	step("sync")
	wantCreates := creates
	if file == erasedReexport {
		wantCreates++ // Di, new in the re-export
	}
	if got := up.Count("/v1/employees", http.StatusCreated); got != wantCreates {
		t.Errorf("%d created at the source after the erasure, want %d", got-creates, wantCreates-creates)
	}
	if _, n := atSource(); n != map[bool]int{false: 1, true: 0}[removed] {
		t.Errorf("the source has the erased person %d times", n)
	}
	report, err := os.ReadFile(filepath.Join(in, "processed", "cohort-again.result.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), ",skipped,,this person's data was erased (erasure 1); lift the erasure (hrsync erase --lift 1") {
		t.Errorf("the report does not say why:\n%s", report)
	}
	s, err := sink.Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if found := sinktest.MarkersIn(t, s, []string{"zq-mail@marker.example", "Zorblax", "Quendrith"}); len(found) > 0 {
		t.Errorf("the warehouse holds %q", found)
	}
	if file != erasedReexport || !removed {
		return
	}
	// Lifted, the person (gone from the source) is onboarded again from a re-export.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	step("erase", "--lift", "1", "--reason", "withdrawn")
	drop("cohort-lifted.csv", strings.ReplaceAll(erasedReexport, "\n", "\r\n"))
	if out := step("onboard"); !strings.Contains(out, "cohort-lifted.csv: 1 created, 2 already done, 0 skipped") {
		t.Errorf("after the lift, onboard said %q", out)
	}
	if _, n := atSource(); n != 1 {
		t.Errorf("after the lift, the source has the person %d times, want 1", n)
	}
}
