package walk_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/walk"
)

// answer is a fault that answers one collection's page with a status: the nth request for that
// page (from 1; 0: every one).
type answer struct {
	path   string
	page   string
	nth    int
	status int
}

// answering is a fakeupstream Fault function that answers as the answers say, counting the
// requests for each page.
func answering(answers ...answer) func(int, *http.Request) fakeupstream.Fault {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(_ int, r *http.Request) fakeupstream.Fault {
		page := r.URL.Query().Get("page")
		mu.Lock()
		seen[r.URL.Path+"?"+page]++
		n := seen[r.URL.Path+"?"+page]
		mu.Unlock()
		for _, a := range answers {
			if a.path == r.URL.Path && a.page == page && (a.nth == 0 || a.nth == n) {
				return fakeupstream.Fault{Status: a.status}
			}
		}
		return fakeupstream.Fault{}
	}
}

// runsCounter is hrsync_sync_runs_total{resource, status} as gathered from reg.
func runsCounter(t *testing.T, reg *prometheus.Registry, resource sink.Resource, status string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "hrsync_sync_runs_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["resource"] == string(resource) && labels["status"] == status {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series hrsync_sync_runs_total{resource=%q, status=%q}", resource, status)
	return 0
}

// TestUnavailableCollections: a collection the account does not offer (403 or 404 on its first
// page) is skipped as unavailable, in the results, the ledger and the metrics, and fails
// neither the run nor the other collections; the same answer later in a walk, a 401, or every
// collection unavailable still fail.
func TestUnavailableCollections(t *testing.T) {
	t.Parallel()
	const wp, emp = "/v1/working_patterns", "/v1/employees"
	tests := []struct {
		name    string
		answers []answer
		// hook, when set, runs before every request (n counts them from 1).
		hook    func(s *fakeupstream.Service, n int, r *http.Request)
		want    map[sink.Resource]string // each collection tried, and its status
		wantErr func(error) bool         // nil: the run succeeds
	}{
		{name: "404 on working patterns",
			answers: []answer{{path: wp, page: "1", status: 404}},
			want:    map[sink.Resource]string{sink.WorkingPatterns: sink.RunUnavailable, sink.Employees: sink.RunOK}},
		{name: "403 on working patterns",
			answers: []answer{{path: wp, page: "1", status: 403}},
			want:    map[sink.Resource]string{sink.WorkingPatterns: sink.RunUnavailable, sink.Employees: sink.RunOK}},
		{name: "404 on employees",
			answers: []answer{{path: emp, page: "1", status: 404}},
			want:    map[sink.Resource]string{sink.WorkingPatterns: sink.RunOK, sink.Employees: sink.RunUnavailable}},
		{name: "every collection unavailable",
			answers: []answer{{path: wp, page: "1", status: 404}, {path: emp, page: "1", status: 403}},
			want:    map[sink.Resource]string{sink.WorkingPatterns: sink.RunUnavailable, sink.Employees: sink.RunUnavailable},
			wantErr: func(err error) bool { return errors.Is(err, walk.ErrNothingOffered) }},
		{name: "404 on a later page breaks the walk",
			answers: []answer{{path: wp, page: "1", status: 404}, {path: emp, page: "2", status: 404}},
			want:    map[sink.Resource]string{sink.WorkingPatterns: sink.RunUnavailable, sink.Employees: sink.RunFailed},
			wantErr: func(err error) bool {
				var er *client.ErrorResponse
				return errors.As(err, &er) && er.Status == 404 && !errors.Is(err, walk.ErrNothingOffered)
			}},
		{name: "403 on a later page breaks the walk",
			answers: []answer{{path: emp, page: "3", status: 403}},
			want:    map[sink.Resource]string{sink.WorkingPatterns: sink.RunOK, sink.Employees: sink.RunFailed},
			wantErr: func(err error) bool { return errors.Is(err, v1.ErrUnauthorized) }},
		{name: "404 on a later walk's first page breaks the sync",
			// The first walk of employees sees the collection shift under it (inconsistent), so
			// a second walk starts, whose first page is answered 404: the collection was there
			// a walk ago.
			answers: []answer{{path: emp, page: "1", nth: 2, status: 404}},
			hook: func(s *fakeupstream.Service, _ int, r *http.Request) {
				if r.URL.Path == emp && r.URL.Query().Get("page") == "2" {
					s.InsertEmployee(0, fakeupstream.Generate(310, 7)[305]) // listed first: the pages shift
				}
			},
			want: map[sink.Resource]string{sink.WorkingPatterns: sink.RunOK, sink.Employees: sink.RunFailed},
			wantErr: func(err error) bool {
				var no *client.NotOfferedError
				return errors.As(err, &no) && no.Status == 404
			}},
		{name: "401 stops the sync",
			answers: []answer{{path: wp, page: "1", status: 401}},
			want:    map[sink.Resource]string{sink.WorkingPatterns: sink.RunFailed},
			wantErr: func(err error) bool { return errors.Is(err, v1.ErrUnauthorized) }},
	}
	for _, backend := range sinktest.Backends {
		for _, tt := range tests {
			t.Run(backend+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				up := newUpstream(t, 250, fakeupstream.Options{Fault: answering(tt.answers...)})
				up.setHook(tt.hook)
				store := sinktest.Store(t, backend, sink.Options{})
				reg := prometheus.NewRegistry()
				c := fastClient(t, up, client.Options{})
				rs, err := walk.New(c, store, walk.Options{Concurrency: 1, MaxWalks: 2, AllowMassDelete: true,
					Metrics: walk.NewMetrics(reg)}).Run(context.Background(), []sink.Resource{sink.WorkingPatterns, sink.Employees})
				switch {
				case tt.wantErr == nil && err != nil:
					t.Fatalf("err %v, want the run to succeed", err)
				case tt.wantErr != nil && (err == nil || !tt.wantErr(err)):
					t.Fatalf("err %v, not the error wanted", err)
				}
				if len(rs) != len(tt.want) {
					t.Errorf("%d collections tried, want %d: %+v", len(rs), len(tt.want), rs)
				}
				runs, lerr := store.Runs(context.Background(), 10)
				if lerr != nil {
					t.Fatal(lerr)
				}
				for _, r := range rs {
					if want := tt.want[r.Resource]; r.Status != want {
						t.Errorf("%s: status %s, want %s (%v)", r.Resource, r.Status, want, r.Err)
					}
					if got := runsCounter(t, reg, r.Resource, r.Status); got != 1 {
						t.Errorf("%s: hrsync_sync_runs_total{status=%q} = %v, want 1", r.Resource, r.Status, got)
					}
					var row *sink.Run
					for i := range runs {
						if runs[i].Resource == r.Resource {
							row = &runs[i]
						}
					}
					if row == nil || row.Status != r.Status {
						t.Errorf("%s: ledger row %+v, want status %s", r.Resource, row, r.Status)
						continue
					}
					if r.Status != sink.RunUnavailable {
						continue
					}
					if r.Err != nil || r.Inserted+r.Updated+r.Deleted != 0 || r.Requests != 1 ||
						!strings.Contains(row.Error, "the account does not offer "+string(r.Resource)+" (source answered 40") {
						t.Errorf("%s: unavailable run %+v (err %v), ledger error %q", r.Resource, r.Run, r.Err, row.Error)
					}
				}
				if tt.want[sink.Employees] == sink.RunOK {
					assertReplica(t, up, store, tt.want[sink.WorkingPatterns] == sink.RunOK)
				}
				if tt.want[sink.WorkingPatterns] == sink.RunUnavailable {
					// Skipped: the warehouse's own pattern is still served, nothing retired it.
					if n := len(servedPages(t, store, "/v1/working_patterns")); n == 0 {
						t.Error("an unavailable collection's served records were deleted")
					}
				}
			})
		}
	}
}

// TestOrdered: whatever order the configuration names the collections in, a sync loads them in
// the order of Known, each once.
func TestOrdered(t *testing.T) {
	t.Parallel()
	got := walk.Ordered([]sink.Resource{sink.Employees, sink.WorkingPatterns, "absences", sink.Employees, "departments", "payslips"})
	if want := []sink.Resource{"departments", sink.WorkingPatterns, sink.Employees, "absences"}; !slices.Equal(got, want) {
		t.Errorf("Ordered = %v, want %v", got, want)
	}
	if got := walk.Ordered([]sink.Resource{sink.Employees}); len(got) != 1 || got[0] != sink.Employees {
		t.Errorf("Ordered = %v", got)
	}
}

// TestUnavailableIsLoggedAsSuch: a scheduled sync logs each unavailable collection at INFO, and
// a run in which every one was unavailable once at ERROR (the job runner adds nothing).
func TestUnavailableIsLoggedAsSuch(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		answers []answer
		errors  int
	}{
		{"one unavailable", []answer{{path: "/v1/working_patterns", page: "1", status: 404}}, 0},
		{"every one unavailable", []answer{{path: "/v1/working_patterns", page: "1", status: 404}, {path: "/v1/employees", page: "1", status: 404}}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, 20, fakeupstream.Options{Fault: answering(tt.answers...)})
			logs := scheduledRunLogs(t, context.Background(), fastClient(t, up, client.Options{}))
			if n := strings.Count(logs, "level=ERROR"); n != tt.errors {
				t.Errorf("%d ERROR lines, want %d:\n%s", n, tt.errors, logs)
			}
			if n := strings.Count(logs, "sync skipped: the account does not offer this collection"); n != len(tt.answers) {
				t.Errorf("%d collections logged unavailable, want %d:\n%s", n, len(tt.answers), logs)
			}
		})
	}
}
