package walk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/walk"
)

func TestMain(m *testing.M) { sinktest.Main(m) }

// seeds are the seed's two collections, which most of these tests' fake upstream serves alone.
var seeds = []sink.Resource{sink.WorkingPatterns, sink.Employees}

// fastClient is unpaced and retries at once, so fault tests take milliseconds.
func fastClient(t testing.TB, up *upstream, opts client.Options) *client.Client {
	t.Helper()
	c, err := up.NewFastClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// upstream is a fake source whose before-request hook a test may set mid-test.
type upstream struct {
	*sourcetest.Server
	mu   sync.Mutex
	hook func(s *fakeupstream.Service, n int, r *http.Request)
}

func (u *upstream) setHook(f func(s *fakeupstream.Service, n int, r *http.Request)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.hook = f
}

func newUpstream(t testing.TB, n int, opts fakeupstream.Options) *upstream {
	t.Helper()
	if opts.Employees == nil {
		opts.Employees = fakeupstream.Generate(n, 42)
	}
	u := &upstream{}
	opts.BeforeRequest = func(s *fakeupstream.Service, n int, r *http.Request) {
		u.mu.Lock()
		f := u.hook
		u.mu.Unlock()
		if f != nil {
			f(s, n, r)
		}
	}
	u.Server = sourcetest.NewServer(opts)
	t.Cleanup(u.Close)
	return u
}

// newSync is what most of these tests sync: a fake upstream as newUpstream makes it, a new
// warehouse on backend, and a fast client of the upstream.
func newSync(t testing.TB, backend string, n int, opts fakeupstream.Options) (*upstream, *sink.Store, *client.Client) {
	t.Helper()
	up := newUpstream(t, n, opts)
	return up, sinktest.Store(t, backend, sink.Options{}), fastClient(t, up, client.Options{})
}

// syncAgainWritesNothing syncs every known collection again, the upstream unchanged, and fails
// the test unless that writes nothing: no row new, changed or deleted, and the warehouse's
// version where it was.
func syncAgainWritesNothing(t *testing.T, c *client.Client, store *sink.Store) {
	t.Helper()
	ctx := context.Background()
	before, _ := store.Version(ctx)
	rs, err := walk.New(c, store, walk.Options{Concurrency: 2}).Run(ctx, walk.Known)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Inserted+r.Updated+r.Deleted != 0 {
			t.Errorf("second sync of %s wrote %d new, %d changed, %d deleted", r.Resource, r.Inserted, r.Updated, r.Deleted)
		}
	}
	if after, _ := store.Version(ctx); after != before {
		t.Errorf("an unchanged account moved the warehouse's version %d → %d", before, after)
	}
}

func syncAll(t *testing.T, c *client.Client, store *sink.Store, opts walk.Options) ([]walk.Result, error) {
	t.Helper()
	return walk.New(c, store, opts).Run(context.Background(), seeds)
}

func result(t *testing.T, rs []walk.Result, r sink.Resource) walk.Result {
	t.Helper()
	for _, x := range rs {
		if x.Resource == r {
			return x
		}
	}
	t.Fatalf("no result for %s", r)
	return walk.Result{}
}

// servedPages reads a collection through serve mode's HTTP interface, following rel="next".
func servedPages(t *testing.T, store *sink.Store, path string) map[int64]string {
	t.Helper()
	h, err := server.NewHandler(store, server.Options{APIKeys: []string{"k-7f3a9c2e5b1d8f4a6c0e9b2d"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	out := map[int64]string{}
	next := srv.URL + path + "?per_page=100"
	for next != "" {
		req, _ := http.NewRequest("GET", next, nil)
		req.Header.Set("X-API-KEY", "k-7f3a9c2e5b1d8f4a6c0e9b2d")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var env map[string][]json.RawMessage
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		for _, raw := range env[strings.TrimPrefix(path, "/v1/")] {
			// The id as served, which is as the source sent it: a number or a numeric string.
			var id struct{ ID json.Number }
			_ = json.Unmarshal(raw, &id)
			n, _ := id.ID.Int64()
			if _, dup := out[n]; dup {
				t.Errorf("%s served id %d twice", path, n)
			}
			out[n] = string(raw)
		}
		links, err := v1.ParseLink(resp.Header.Get("Link"))
		if err != nil {
			t.Fatal(err)
		}
		next = links["next"]
	}
	return out
}

// assertReplica is the main assertion: every record the source lists is served, field for
// field, as the source sent it (normalized as the seed prescribes), and nothing else is.
func assertReplica(t *testing.T, up *upstream, store *sink.Store, patterns bool) {
	t.Helper()
	want := map[int64]string{}
	for _, raw := range up.Employees() {
		var e v1.Employee
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		want[e.ID] = string(e.AppendJSON(nil))
	}
	got := servedPages(t, store, "/v1/employees")
	if len(got) != len(want) {
		t.Errorf("served %d employees, the source lists %d", len(got), len(want))
	}
	bad := 0
	for id, w := range want {
		if got[id] != w && bad < 3 {
			bad++
			t.Errorf("employee %d\n served %s\n source %s", id, got[id], w)
		}
	}
	if !patterns {
		return
	}
	wantWP := map[int64]string{}
	for _, raw := range up.WorkingPatterns() {
		var p v1.WorkingPattern
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		wantWP[p.ID] = string(p.AppendJSON(nil))
	}
	gotWP := servedPages(t, store, "/v1/working_patterns")
	if fmt.Sprint(gotWP) != fmt.Sprint(wantWP) {
		t.Errorf("working patterns\n served %v\n source %v", gotWP, wantWP)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			up, store, c := newSync(t, backend, 537, fakeupstream.Options{})
			// The first sync into a fresh warehouse retires its seeded pattern: no deletion.
			rs, err := syncAll(t, c, store, walk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			emp := result(t, rs, sink.Employees)
			if emp.Status != sink.RunOK || emp.Inserted != 537 || emp.Pages != 6 || emp.Walks != 1 || emp.TotalReported != 537 {
				t.Errorf("employees run %+v", emp.Run)
			}
			assertReplica(t, up, store, true)

			// The same source again writes nothing.
			v0, _ := store.Version(context.Background())
			rs, err = syncAll(t, c, store, walk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			emp = result(t, rs, sink.Employees)
			if emp.Inserted != 0 || emp.Updated != 0 || emp.Unchanged != 537 || emp.Deleted != 0 {
				t.Errorf("second sync %+v", emp.Run)
			}
			if v1, _ := store.Version(context.Background()); v1 != v0 {
				t.Errorf("an unchanged sync moved the warehouse version %d → %d", v0, v1)
			}
			runs, err := store.Runs(context.Background(), 10)
			if err != nil || len(runs) != 4 || runs[0].Status != sink.RunOK || runs[0].Requests != 6 {
				t.Errorf("ledger %+v %v", runs, err)
			}
		})
	}
}

// TestFaults: the source misbehaves in every way UPSTREAM.md describes and the load is still
// exact; the ledger counts what happened.
func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		faults      []fakeupstream.Fault
		retries     int64
		rateLimited int64
	}{
		{"429 without Retry-After", []fakeupstream.Fault{{}, {Status: 429}}, 1, 1},
		{"429 with Retry-After", []fakeupstream.Fault{{}, {Status: 429, Header: http.Header{"Retry-After": {"0"}}}}, 1, 1},
		{"5xx", []fakeupstream.Fault{{}, {Status: 502}, {Status: 503}, {Status: 500}}, 3, 0},
		// net/http itself retries a GET once when a reused connection closes before answering,
		// so one of these drops may never reach the client's retries: -1 means "at least one".
		{"dropped connections", []fakeupstream.Fault{{Drop: true}, {}, {Drop: true, Reset: true}}, -1, 0},
		{"slow pages", []fakeupstream.Fault{{Delay: 30 * time.Millisecond}, {Delay: 30 * time.Millisecond}}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, 250, fakeupstream.Options{WorkingPatterns: []json.RawMessage{}})
			store := sinktest.Store(t, "sqlite", sink.Options{})
			c := fastClient(t, up, client.Options{})
			up.InjectFaults(tt.faults...)
			rs, err := walk.New(c, store, walk.Options{Concurrency: 2}).Run(context.Background(), []sink.Resource{sink.Employees})
			if err != nil {
				t.Fatal(err)
			}
			r := result(t, rs, sink.Employees)
			retriesOK := r.Retries == tt.retries && r.Requests == 3+tt.retries
			if tt.retries < 0 {
				retriesOK = r.Retries >= 1 && r.Requests == 3+r.Retries
			}
			if r.Status != sink.RunOK || r.Inserted != 250 || !retriesOK || r.RateLimited != tt.rateLimited {
				t.Errorf("run %+v", r.Run)
			}
			assertReplica(t, up, store, false)
		})
	}
}

// TestCollectionChangesMidWalk: records removed and added while pages are read shift the
// pages; the sync notices, walks again, and ends exact.
func TestCollectionChangesMidWalk(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			up, store, c := newSync(t, backend, 300, fakeupstream.Options{WorkingPatterns: []json.RawMessage{}})
			if _, err := walk.New(c, store, walk.Options{}).Run(context.Background(), []sink.Resource{sink.Employees}); err != nil {
				t.Fatal(err)
			}
			first := up.Employees()
			var removed struct{ ID int64 }
			_ = json.Unmarshal(first[5], &removed)
			extra := fakeupstream.Generate(310, 7)[305]
			start := up.NumRequests()
			up.setHook(func(s *fakeupstream.Service, n int, r *http.Request) {
				if n == start+2 { // after page 1 of the first walk: page 1's records shift
					s.RemoveEmployee(removed.ID)
					s.AddEmployee(extra)
				}
			})
			rs, err := walk.New(c, store, walk.Options{Concurrency: 1}).Run(context.Background(), []sink.Resource{sink.Employees})
			if err != nil {
				t.Fatal(err)
			}
			// The shift hid one live record and kept the leaver: the counts hold, so the walk
			// looks consistent; its deletion candidate sends a second walk, which sees the
			// hidden record. Nobody who still works there is deleted; the leaver, seen by the
			// first walk, waits for the next sync.
			r := result(t, rs, sink.Employees)
			if r.Status != sink.RunOK || r.Walks != 2 || r.Inserted != 1 || r.Deleted != 0 {
				t.Errorf("run %+v", r.Run)
			}
			// The events tell the hire, and no leaver: not the live record the shift hid from
			// the first walk (paging drift), nor yet the leaver.
			var hired struct{ ID int64 }
			_ = json.Unmarshal(extra, &hired)
			evs, err := store.ListEvents(context.Background(), sink.EventFilter{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.EmployeeID != hired.ID || !strings.HasPrefix(e.Type, "joiner.") {
					t.Errorf("an event of the drifting walk: %d %s, want only %d's joining", e.EmployeeID, e.Type, hired.ID)
				}
			}
			if len(evs) == 0 {
				t.Errorf("no event for the hire %d", hired.ID)
			}
			up.setHook(nil)
			rs, err = walk.New(c, store, walk.Options{}).Run(context.Background(), []sink.Resource{sink.Employees})
			if err != nil {
				t.Fatal(err)
			}
			if r := result(t, rs, sink.Employees); r.Deleted != 1 || r.Walks != 2 {
				t.Errorf("next run %+v: want the leaver deleted after two walks", r.Run)
			}
			if evs, _ := store.ListEvents(context.Background(), sink.EventFilter{Type: sink.EventLeaverEffective}); len(evs) != 1 || evs[0].EmployeeID != removed.ID {
				t.Errorf("after the confirmed deletion, leaver events %+v, want %d's alone", evs, removed.ID)
			}
			assertReplica(t, up, store, false)
		})
	}
}

func TestCollectionNeverHoldsStill(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, 120, fakeupstream.Options{WorkingPatterns: []json.RawMessage{}})
	store := sinktest.Store(t, "postgres", sink.Options{})
	c := fastClient(t, up, client.Options{})
	if _, err := walk.New(c, store, walk.Options{}).Run(context.Background(), []sink.Resource{sink.Employees}); err != nil {
		t.Fatal(err)
	}
	up.RemoveEmployee(mustID(t, up.Employees()[0])) // gone before the run: a deletion a consistent walk would apply
	more := fakeupstream.Generate(400, 9)[200:]
	up.setHook(func(s *fakeupstream.Service, n int, r *http.Request) {
		s.InsertEmployee(0, more[n%len(more)]) // a hire on every request, listed first: every page after it shifts
	})
	rs, err := walk.New(c, store, walk.Options{MaxWalks: 2}).Run(context.Background(), []sink.Resource{sink.Employees})
	if !errors.Is(err, walk.ErrInconsistent) {
		t.Fatalf("err %v, want ErrInconsistent", err)
	}
	r := result(t, rs, sink.Employees)
	if r.Status != sink.RunInconsistent || r.Walks != 2 || r.Inserted == 0 || r.Deleted != 0 {
		t.Errorf("run %+v: want upserts applied, no deletions", r.Run)
	}
	runs, _ := store.Runs(context.Background(), 1)
	if runs[0].Status != sink.RunInconsistent {
		t.Errorf("ledger status %q", runs[0].Status)
	}
}

func mustID(t *testing.T, raw json.RawMessage) int64 {
	t.Helper()
	var e v1.Employee
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	t.Run("Link to another origin", func(t *testing.T) {
		up := newUpstream(t, 150, fakeupstream.Options{WorkingPatterns: []json.RawMessage{}})
		store := sinktest.Store(t, "sqlite", sink.Options{})
		up.InjectFaults(fakeupstream.Fault{LinkOrigin: "https://attacker.example"})
		rs, err := walk.New(fastClient(t, up, client.Options{}), store, walk.Options{}).Run(context.Background(), []sink.Resource{sink.Employees})
		if !errors.Is(err, walk.ErrForeignLink) || result(t, rs, sink.Employees).Status != sink.RunFailed {
			t.Fatalf("err %v", err)
		}
		if n, _ := store.Version(context.Background()); n != 1 && len(servedPages(t, store, "/v1/employees")) != 0 {
			t.Error("a refused walk loaded something")
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		up := newUpstream(t, 10, fakeupstream.Options{})
		store := sinktest.Store(t, "sqlite", sink.Options{})
		c, err := client.New(up.URL, "sandbox-wrong-key", client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := walk.New(c, store, walk.Options{}).Run(context.Background(), seeds)
		if !errors.Is(err, v1.ErrUnauthorized) || strings.Contains(err.Error(), "sandbox-wrong-key") {
			t.Fatalf("err %v", err)
		}
		if up.NumRequests() != 1 { // no retries, and no other collection: the key is the account's
			t.Errorf("%d requests, want 1", up.NumRequests())
		}
		if rs[0].Status != sink.RunFailed || !strings.Contains(rs[0].Error, "401") {
			t.Errorf("run %+v", rs[0].Run)
		}
		if len(rs) != 1 || strings.Count(err.Error(), "401") != 1 {
			t.Errorf("%d collections tried; the 401 said %d times: %v", len(rs), strings.Count(err.Error(), "401"), err)
		}
	})
	t.Run("collection empties", func(t *testing.T) {
		up := newUpstream(t, 80, fakeupstream.Options{WorkingPatterns: []json.RawMessage{}})
		store := sinktest.Store(t, "postgres", sink.Options{})
		c := fastClient(t, up, client.Options{})
		if _, err := walk.New(c, store, walk.Options{}).Run(context.Background(), []sink.Resource{sink.Employees}); err != nil {
			t.Fatal(err)
		}
		up.SetEmployees(nil)
		rs, err := walk.New(c, store, walk.Options{}).Run(context.Background(), []sink.Resource{sink.Employees})
		if !errors.Is(err, walk.ErrHeld) {
			t.Fatalf("err %v, want ErrHeld", err)
		}
		r := result(t, rs, sink.Employees)
		if r.Status != sink.RunHeld || r.DeletionsRefused != 80 || r.Deleted != 0 || !strings.Contains(r.Error, "lists none while the warehouse serves 80") {
			t.Errorf("run %+v", r.Run)
		}
		if n := len(servedPages(t, store, "/v1/employees")); n != 80 {
			t.Errorf("%d served after a guarded sync, want all 80", n)
		}
	})
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, 90, fakeupstream.Options{})
	store := sinktest.Store(t, "postgres", sink.Options{})
	v0, _ := store.Version(context.Background())
	rs, err := syncAll(t, fastClient(t, up, client.Options{}), store, walk.Options{DryRun: true, AllowMassDelete: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := result(t, rs, sink.Employees); r.Inserted != 90 {
		t.Errorf("dry run %+v", r.Run)
	}
	if v1, _ := store.Version(context.Background()); v1 != v0 {
		t.Error("the dry run wrote to the warehouse")
	}
	if runs, _ := store.Runs(context.Background(), 10); len(runs) != 0 {
		t.Errorf("the dry run wrote %d ledger rows", len(runs))
	}
}

// TestPacedSyncProvokesNo429 walks a source that enforces its limit, as the real one does, at
// a budget just inside it.
func TestPacedSyncProvokesNo429(t *testing.T) {
	// Not in parallel: its pacing is measured in the source's one-second windows.
	up := newUpstream(t, 700, fakeupstream.Options{RateLimit: 5, Window: time.Second, WorkingPatterns: []json.RawMessage{}})
	store := sinktest.Store(t, "sqlite", sink.Options{})
	c := fastClient(t, up, client.Options{RateLimit: 300}) // 5 a second
	rs, err := walk.New(c, store, walk.Options{Concurrency: 4}).Run(context.Background(), []sink.Resource{sink.Employees})
	if err != nil {
		t.Fatal(err)
	}
	if r := result(t, rs, sink.Employees); r.RateLimited != 0 || up.Count("/v1/employees", 429) != 0 || r.Inserted != 700 {
		t.Errorf("run %+v, 429s seen by the source %d", r.Run, up.Count("/v1/employees", 429))
	}
	if up.MaxInWindow() > 5 {
		t.Errorf("%d requests in one window, limit 5", up.MaxInWindow())
	}
}

// TestHiresDuringTheWalk: new hires created through the source while a sync walks (onboarding,
// forwarded creates, which share the account's budget with the walk). Where the source lists
// them last, nothing shifts: the walk reads the pages they add and is exact in one walk, the
// hires included, with the leaver deleted after the usual confirming walk. Where it lists them
// first, every page after shifts: the walk is inconsistent and walked again.
func TestHiresDuringTheWalk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		employees int // 450: the last page half full; 400: full, the hires make a page of their own
		at        int // InsertEmployee's index: -1 appends
		wantOK    bool
		wantWalks int64
	}{
		{"listed last", 450, -1, true, 2}, // the leaver's confirming walk
		{"listed last, on a page of their own", 400, -1, true, 2},
		{"listed first", 450, 0, false, 3},
	}
	for _, backend := range sinktest.Backends {
		for _, tt := range tests {
			t.Run(backend+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				up, store, c := newSync(t, backend, tt.employees+1, fakeupstream.Options{WorkingPatterns: []json.RawMessage{}})
				if _, err := walk.New(c, store, walk.Options{}).Run(context.Background(), []sink.Resource{sink.Employees}); err != nil {
					t.Fatal(err)
				}
				up.RemoveEmployee(mustID(t, up.Employees()[3])) // a leaver
				hires := fakeupstream.Generate(700, 11)[500:503]
				next := 0
				var mu sync.Mutex
				start := up.NumRequests()
				up.setHook(func(s *fakeupstream.Service, n int, r *http.Request) {
					mu.Lock()
					defer mu.Unlock()
					if n > start+1 && next < 3 { // three hires, once the first page has told the walk its pages
						s.InsertEmployee(tt.at, hires[next])
						next++
					}
				})
				rs, err := walk.New(c, store, walk.Options{Concurrency: 4}).Run(context.Background(), []sink.Resource{sink.Employees})
				r := result(t, rs, sink.Employees)
				if tt.wantOK {
					if err != nil || r.Status != sink.RunOK || r.Walks != tt.wantWalks || r.Inserted != 3 || r.Deleted != 1 {
						t.Fatalf("run %+v, %v: want ok in %d walks, 3 hires in, the leaver out", r.Run, err, tt.wantWalks)
					}
					if want := int64(tt.employees + 3); r.TotalReported != want {
						t.Errorf("total reported %d, want the grown %d", r.TotalReported, want)
					}
					assertReplica(t, up, store, false)
					return
				}
				// Listed first, each hire shifts the pages read after it: the walks that saw
				// one are inconsistent; the walk after the hires stopped is exact.
				if err != nil || r.Status != sink.RunOK || r.Walks < 2 || r.Inserted != 3 {
					t.Errorf("run %+v, %v: want the shifted walk walked again, then ok with the hires", r.Run, err)
				}
				assertReplica(t, up, store, false)
			})
		}
	}
}

func TestJobHeldOnly(t *testing.T) {
	t.Parallel()
	held := &walk.HeldError{Resource: sink.Employees}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"one held", errors.Join(fmt.Errorf("sync employees: %w", held)), true},
		{"two held", errors.Join(fmt.Errorf("sync employees: %w", held), fmt.Errorf("sync absences: %w", held)), true},
		{"held and failed", errors.Join(fmt.Errorf("sync employees: %w", held), errors.New("sync absences: 500")), false},
		{"failed", errors.Join(errors.New("sync absences: 500")), false},
	}
	for _, tt := range tests {
		if got := walk.HeldOnly(tt.err); got != tt.want {
			t.Errorf("%s: heldOnly = %v, want %v", tt.name, got, tt.want)
		}
	}
}
